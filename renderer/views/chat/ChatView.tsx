import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useIsPhone } from '../../app/phone.js';
import { Icon } from '../../components/Icon.js';
import { RetryNote } from '../../components/LoadPanel.js';
import { reportError } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { useConversations } from '../../stores/conversations.js';
import { Composer } from './Composer.js';
import { ConversationList } from './ConversationList.js';
import { MessageList } from './MessageList.js';

function ConversationHeader({ menu }: { menu: ReactNode }) {
  const { t } = useTranslation();
  const openId = useChat((s) => s.openId);
  const conversation = useChat((s) => s.conversation);
  const listed = useConversations((s) => s.items.find((c) => c.id === openId));
  const title = (listed?.title ?? conversation?.title ?? '').trim() || t('conversations.untitled');
  const archived = listed?.archived ?? conversation?.archived ?? false;
  const offRecord = Boolean(listed ? listed.offRecord : conversation?.offRecord);
  if (!openId) return <header className="conv-header">{menu}</header>;
  return (
    <>
      <header className="conv-header">
        {menu}
        <h1 className="conv-header-title" id="conversation-title" data-testid="conversation-title">
          {title}
        </h1>
        {archived ? (
          <button
            type="button"
            className="button ghost small"
            onClick={() => {
              void useConversations
                .getState()
                .setArchivedFlag(openId, false)
                .then((c) => {
                  useChat.getState().setConversation(c);
                  void useConversations.getState().refresh();
                })
                .catch(reportError);
            }}
          >
            {t('conversations.unarchive')}
          </button>
        ) : null}
      </header>
      {offRecord ? (
        <div className="off-record-banner" role="note" data-testid="off-record-banner">
          <Icon name="offRecord" size={16} />
          <span>{t('trash.offRecordBanner')}</span>
          <button
            type="button"
            className="button ghost small"
            data-testid="off-record-end"
            onClick={() => {
              void useConversations
                .getState()
                .setOffRecord(openId, false)
                .then((c) => useChat.getState().setConversation(c))
                .catch(reportError);
            }}
          >
            {t('trash.offRecordOff')}
          </button>
        </div>
      ) : null}
    </>
  );
}

function Welcome({ hasConversation }: { hasConversation: boolean }) {
  const { t } = useTranslation();
  return (
    <div className="chat-welcome">
      <div className="chat-welcome-mark" aria-hidden="true" />
      <h2>{t('chat.emptyTitle')}</h2>
      <p>{hasConversation ? t('chat.emptyBody') : `${t('chat.emptyBody')} ${t('chat.pickOne')}`}</p>
    </div>
  );
}

export function ChatView() {
  const openId = useChat((s) => s.openId);
  const messages = useChat((s) => (s.openId ? s.messages[s.openId] : undefined));
  const streamingId = useChat((s) => (s.openId ? s.streaming[s.openId] : undefined));
  const stoppedByUser = useChat((s) => s.stoppedByUser);
  const loadingId = useChat((s) => s.loadingId);
  const loadError = useChat((s) => s.loadError);
  const first = useConversations((s) => (!s.archived && !s.query.trim() ? s.items[0]?.id : undefined));
  const listLoaded = useConversations((s) => s.loaded);

  useEffect(() => {
    // Coming home: the most recent conversation, as one would pick up a journal.
    if (!openId && listLoaded && first) void useChat.getState().open(first);
  }, [openId, listLoaded, first]);

  const isEmpty = Boolean(openId && messages && messages.length === 0);

  // On a phone the conversation list is a sheet over the chat, opened from the header.
  const phone = useIsPhone();
  const [listOpen, setListOpen] = useState(false);
  const sheet = phone && listOpen;
  useEffect(() => setListOpen(false), [openId]);
  useEffect(() => {
    if (!sheet) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setListOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [sheet]);
  // Picking a conversation (even the open one) or starting one closes the sheet.
  const onListClick = (e: MouseEvent) => {
    if (sheet && (e.target as Element).closest('.conv-open, [data-testid="new-conversation"], [data-testid="new-off-record"]')) setListOpen(false);
  };
  const { t } = useTranslation();
  const menu = phone ? (
    <button
      type="button"
      className="icon-button conv-menu"
      data-testid="conversations-open"
      aria-label={t('nav.openConversations')}
      aria-expanded={listOpen}
      onClick={() => setListOpen(true)}
    >
      <Icon name="menu" size={22} />
    </button>
  ) : null;

  return (
    <div className="chat-view" data-list={sheet ? 'open' : undefined} onClick={phone ? onListClick : undefined}>
      <ConversationList />
      {sheet ? (
        <button
          type="button"
          className="conv-sheet-backdrop"
          aria-label={t('nav.closeConversations')}
          data-testid="conversations-close"
          onClick={() => setListOpen(false)}
        />
      ) : null}
      <section className="conversation" aria-labelledby="conversation-title">
        <ConversationHeader menu={menu} />
        {loadError && !messages ? (
          <div className="conv-load-error">
            <RetryNote error={loadError} onRetry={() => openId && void useChat.getState().open(openId)} />
          </div>
        ) : openId && messages && !isEmpty ? (
          <MessageList key={openId} conversationId={openId} messages={messages} streamingId={streamingId} stoppedByUser={stoppedByUser} />
        ) : loadingId && !messages ? (
          <div className="msg-area" aria-busy="true" />
        ) : (
          <Welcome hasConversation={Boolean(openId)} />
        )}
        <Composer />
      </section>
    </div>
  );
}
