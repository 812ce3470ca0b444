import { memo, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { ConversationSummary } from '../../../shared/api.js';
import { api } from '../../api/index.js';
import { startNewConversation } from '../../app/actions.js';
import { useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { modKeyLabel } from '../../lib/platform.js';
import { plainText } from '../../lib/text.js';
import { reportError, useApp } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { useConversations } from '../../stores/conversations.js';

/** Marks the searched words inside a snippet. */
function Highlight({ text, query }: { text: string; query: string }) {
  const terms = query
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0 && !/^(AND|OR|NOT)$/.test(w))
    .map((w) => w.replace(/^"|"$/g, ''))
    .filter(Boolean);
  if (!terms.length) return <>{text}</>;
  const pattern = new RegExp(`(${terms.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi');
  const parts = text.split(pattern);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}

interface ItemProps {
  conversation: ConversationSummary;
  active: boolean;
  writing: boolean;
  query: string;
  when: string;
  fullWhen: string;
}

const ConversationItem = memo(function ConversationItem({ conversation: c, active, writing, query, when, fullWhen }: ItemProps) {
  const { t } = useTranslation();
  const [renaming, setRenaming] = useState(false);
  const [draft, setDraft] = useState('');
  const title = c.title.trim() || t('conversations.untitled');
  const snippet = c.matchSnippet ? plainText(c.matchSnippet) : '';
  const preview = c.preview ? plainText(c.preview) : '';
  const skipBlurSave = useRef(false);

  const open = () => {
    useApp.getState().setView('chat');
    if (useChat.getState().openId !== c.id) void useChat.getState().open(c.id);
    else useChat.getState().requestFocus();
  };

  const beginRename = () => {
    setDraft(c.title);
    skipBlurSave.current = false;
    setRenaming(true);
  };

  const commitRename = async () => {
    setRenaming(false);
    const next = draft.trim();
    if (!next || next === c.title) return;
    try {
      await useConversations.getState().rename(c.id, next);
      const chat = useChat.getState();
      if (chat.conversation?.id === c.id) chat.setConversation({ ...chat.conversation, title: next });
    } catch (err) {
      reportError(err);
    }
  };

  const toggleArchive = async () => {
    const archive = !c.archived;
    try {
      await useConversations.getState().setArchivedFlag(c.id, archive);
      if (archive && useChat.getState().openId === c.id) useChat.getState().close();
      useApp.getState().toast({
        tone: 'info',
        text: t(archive ? 'conversations.archivedToast' : 'conversations.unarchivedToast', { title }),
        action: {
          label: t('common.undo'),
          run: () => {
            void useConversations
              .getState()
              .setArchivedFlag(c.id, !archive)
              .then(() => {
                void useConversations.getState().refresh();
                if (archive) void useChat.getState().open(c.id);
              })
              .catch(reportError);
          },
        },
      });
    } catch (err) {
      reportError(err);
    }
  };

  const remove = async () => {
    try {
      await useConversations.getState().remove(c.id);
      const wasOpen = useChat.getState().openId === c.id;
      if (wasOpen) useChat.getState().close();
      useApp.getState().toast({
        tone: 'info',
        text: t('trash.deletedToast', { title }),
        action: {
          label: t('common.undo'),
          run: () => {
            void useConversations
              .getState()
              .restore(c.id)
              .then(() => {
                if (wasOpen) void useChat.getState().open(c.id);
              })
              .catch(reportError);
          },
        },
      });
    } catch (err) {
      reportError(err);
    }
  };

  const toggleOffRecord = async () => {
    const off = !c.offRecord;
    try {
      const updated = await useConversations.getState().setOffRecord(c.id, off);
      const chat = useChat.getState();
      if (chat.conversation?.id === c.id) chat.setConversation(updated);
      useApp.getState().toast({ tone: 'info', text: t(off ? 'trash.offRecordOnToast' : 'trash.offRecordOffToast', { title }) });
    } catch (err) {
      reportError(err);
    }
  };

  const onRenameKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter' && !e.nativeEvent.isComposing) {
      e.preventDefault();
      skipBlurSave.current = true;
      void commitRename();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      skipBlurSave.current = true;
      setRenaming(false);
    }
  };

  return (
    <li
      className={active ? 'conv-item active' : 'conv-item'}
      data-testid="conversation-item"
      data-id={c.id}
      data-archived={c.archived}
      data-off-record={c.offRecord ? 'true' : undefined}
    >
      {renaming ? (
        <div className="conv-rename">
          <input
            className="input"
            aria-label={t('conversations.renameLabel')}
            data-testid="conversation-rename-input"
            value={draft}
            maxLength={200}
            autoFocus
            onFocus={(e) => e.currentTarget.select()}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onRenameKey}
            onBlur={() => {
              if (!skipBlurSave.current) void commitRename();
            }}
          />
        </div>
      ) : (
        <button type="button" className="conv-open" onClick={open} aria-current={active ? 'true' : undefined}>
          <span className="conv-top">
            <span className="conv-title">{title}</span>
            {c.offRecord ? (
              <span className="conv-badge" data-testid="off-record-badge" title={t('trash.offRecordHelp')}>
                <Icon name="offRecord" size={12} />
                {t('trash.offRecordBadge')}
              </span>
            ) : null}
            <time className="conv-time" dateTime={c.updatedAt} title={fullWhen}>
              {when}
            </time>
          </span>
          {writing ? (
            <span className="conv-preview conv-writing">
              <span className="pulse-dot" aria-hidden="true" />
              {t('conversations.writing')}
            </span>
          ) : snippet ? (
            <span className="conv-preview conv-snippet">
              <Highlight text={snippet} query={query} />
            </span>
          ) : preview ? (
            <span className="conv-preview">{query ? <Highlight text={preview} query={query} /> : preview}</span>
          ) : null}
        </button>
      )}
      {!renaming ? (
        <div className="conv-actions" role="group" aria-label={t('conversations.actions', { title })}>
          <button
            type="button"
            className="icon-button small"
            title={t('conversations.rename')}
            aria-label={t('conversations.rename')}
            data-testid="conversation-rename"
            onClick={beginRename}
          >
            <Icon name="pencil" size={16} />
          </button>
          <button
            type="button"
            className="icon-button small"
            title={t(c.archived ? 'conversations.unarchive' : 'conversations.archive')}
            aria-label={t(c.archived ? 'conversations.unarchive' : 'conversations.archive')}
            data-testid={c.archived ? 'conversation-unarchive' : 'conversation-archive'}
            onClick={() => void toggleArchive()}
          >
            <Icon name={c.archived ? 'unarchive' : 'archive'} size={16} />
          </button>
          <button
            type="button"
            className="icon-button small"
            title={t(c.offRecord ? 'trash.offRecordOff' : 'trash.offRecordOn')}
            aria-label={t(c.offRecord ? 'trash.offRecordOff' : 'trash.offRecordOn')}
            aria-pressed={Boolean(c.offRecord)}
            data-testid="conversation-off-record"
            onClick={() => void toggleOffRecord()}
          >
            <Icon name="offRecord" size={16} />
          </button>
          <button
            type="button"
            className="icon-button small"
            title={t('trash.delete')}
            aria-label={t('trash.delete')}
            data-testid="conversation-delete"
            onClick={() => void remove()}
          >
            <Icon name="trash" size={16} />
          </button>
        </div>
      ) : null}
    </li>
  );
});

/** A new conversation, off the record from its first message. */
async function startOffRecord(): Promise<void> {
  try {
    useApp.getState().setView('chat');
    if (useConversations.getState().archived || useConversations.getState().query) useConversations.setState({ archived: false, query: '' });
    const conversation = await api().call('conversations.create', { offRecord: true });
    useChat.getState().openNew(conversation);
    useConversations.getState().prepend(conversation);
    void useConversations.getState().refresh();
  } catch (err) {
    reportError(err);
  }
}

export function ConversationList() {
  const { t } = useTranslation();
  const { items, loaded, query, archived, error } = useConversations();
  const setQuery = useConversations((s) => s.setQuery);
  const setArchived = useConversations((s) => s.setArchived);
  const openId = useChat((s) => s.openId);
  const streaming = useChat((s) => s.streaming);
  const { when, full } = useTimeFormat();
  const searchRef = useRef<HTMLInputElement>(null);
  const mod = modKeyLabel();

  useEffect(() => {
    void useConversations.getState().refresh();
  }, []);

  const emptyText = query.trim()
    ? t('conversations.emptySearch', { query: query.trim() })
    : archived
      ? t('conversations.emptyArchived')
      : t('conversations.empty');

  return (
    <aside className="conv-pane" aria-label={t('conversations.label')}>
      <div className="conv-pane-head">
        <h2 className="pane-title">{t('conversations.label')}</h2>
        <button
          type="button"
          className="button primary small"
          data-testid="new-conversation"
          title={t('conversations.newShortcut', { key: mod })}
          aria-label={t('conversations.new')}
          aria-keyshortcuts={mod === '⌘' ? 'Meta+N' : 'Control+N'}
          onClick={() => void startNewConversation()}
        >
          <Icon name="plus" size={16} />
          {t('conversations.newShort')}
        </button>
        <button
          type="button"
          className="icon-button small"
          data-testid="new-off-record"
          title={t('trash.newOffRecordHelp')}
          aria-label={t('trash.newOffRecordHelp')}
          onClick={() => void startOffRecord()}
        >
          <Icon name="offRecord" size={18} />
        </button>
      </div>
      <div className="conv-search">
        <Icon name="search" size={16} className="conv-search-icon" />
        <input
          ref={searchRef}
          type="search"
          className="input"
          data-testid="conversation-search"
          aria-label={t('conversations.searchLabel')}
          placeholder={t('conversations.searchPlaceholder')}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && query) {
              e.preventDefault();
              setQuery('');
            }
          }}
        />
        {query ? (
          <button
            type="button"
            className="icon-button small conv-search-clear"
            aria-label={t('conversations.clearSearch')}
            onClick={() => {
              setQuery('');
              searchRef.current?.focus();
            }}
          >
            <Icon name="close" size={14} />
          </button>
        ) : null}
      </div>
      <div className="conv-filter">
        <button
          type="button"
          className="toggle-chip"
          aria-pressed={archived}
          data-testid="archived-toggle"
          title={t('conversations.showArchived')}
          onClick={() => setArchived(!archived)}
        >
          <Icon name="archive" size={15} />
          {t('conversations.archivedToggle')}
        </button>
      </div>
      {error && !items.length ? (
        <p className="conv-empty" role="alert">
          {t('errors.internal.what')}{' '}
          <button type="button" className="link-button" onClick={() => void useConversations.getState().refresh()}>
            {t('common.retry')}
          </button>
        </p>
      ) : loaded && !items.length ? (
        <p className="conv-empty">{emptyText}</p>
      ) : (
        <ul className="conv-list">
          {items.map((c) => (
            <ConversationItem
              key={c.id}
              conversation={c}
              active={c.id === openId}
              writing={Boolean(streaming[c.id])}
              query={query}
              when={when(c.updatedAt)}
              fullWhen={full(c.updatedAt)}
            />
          ))}
        </ul>
      )}
    </aside>
  );
}
