import { memo, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { Message } from '../../../shared/api.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { CopyButton } from '../../components/CopyButton.js';
import { CompanionAvatar, useCompanionName } from '../../components/CompanionAvatar.js';
import { useAutosize, useBusy, useFocusAtEnd } from '../../components/useEditor.js';
import { MarkdownText } from '../../components/Markdown.js';
import { reportError, useApp } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { useMemories } from '../../stores/memories.js';
import { InjectedLine } from './InjectedLine.js';
import { LongText } from './LongText.js';
import { MessageImages } from './MessageImages.js';

// Errors a person fixes in Settings get a button that goes there.
const SETTINGS_FIXES = new Set([
  'no_provider',
  'provider_auth',
  'provider_unreachable',
  'provider_model_not_found',
  'provider_bad_response',
  'provider_not_installed',
  'provider_context_overflow',
]);

export interface BubbleProps {
  message: Message;
  isLastUser: boolean;
  isLastReply: boolean;
  /** The conversation is writing a reply now (actions that start another wait). */
  busy: boolean;
  stoppedByUser: boolean;
  when: string;
  fullWhen: string;
}

/** Flips between a message's versions: ‹ n/m ›; ←/→ on the focused message do the same. */
function VersionSwitch({ message: m, disabled }: { message: Message; disabled: boolean }) {
  const { t } = useTranslation();
  const ids = m.versionIds!;
  const n = ids.indexOf(m.id) + 1;
  return (
    <div className="msg-versions" role="group" data-testid="versions" aria-label={t('versions.position', { n, count: ids.length })} title={t('versions.keys')}>
      <button
        type="button"
        className="msg-action msg-version-step"
        data-testid="version-previous"
        aria-label={t('versions.previous')}
        disabled={disabled || n <= 1}
        onClick={() => flipVersion(m, -1)}
      >
        ‹
      </button>
      <span className="msg-version-position" data-testid="version-position">
        {n}/{ids.length}
      </span>
      <button
        type="button"
        className="msg-action msg-version-step"
        data-testid="version-next"
        aria-label={t('versions.next')}
        disabled={disabled || n >= ids.length}
        onClick={() => flipVersion(m, 1)}
      >
        ›
      </button>
    </div>
  );
}

/** Chooses the version before or after this one; the focus follows to it, so ←/→ can go on. */
function flipVersion(m: Message, step: -1 | 1): void {
  const ids = m.versionIds;
  const to = ids?.[ids.indexOf(m.id) + step];
  if (!to) return;
  const hadFocus = document.activeElement?.closest('[data-testid="message"]') !== null;
  useChat
    .getState()
    .choose(to)
    .then(() => {
      if (hadFocus) document.querySelector<HTMLElement>(`[data-testid="message"][data-id="${CSS.escape(to)}"]`)?.focus();
    })
    .catch(reportError);
}

function onMessageKey(m: Message, busy: boolean) {
  return (e: KeyboardEvent<HTMLElement>) => {
    if (busy || !m.versionIds || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const target = e.target as HTMLElement;
    if (target.closest('textarea, input, [contenteditable="true"]')) return;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      e.preventDefault();
      flipVersion(m, e.key === 'ArrowLeft' ? -1 : 1);
    }
  };
}

/** Delete (with an undo in the toast) and "branch from here", for any finished message. */
function MessageTools({ message: m }: { message: Message }) {
  const { t } = useTranslation();
  const remove = () => {
    useChat
      .getState()
      .deleteMessage(m.id)
      .then((undo) =>
        useApp.getState().toast({
          tone: 'info',
          text: t('versions.deleted'),
          action: {
            label: t('versions.undo'),
            run: () => {
              undo()
                .then(() => useApp.getState().toast({ tone: 'info', text: t('versions.restored') }))
                .catch(reportError);
            },
          },
        }),
      )
      .catch(reportError);
  };
  const branch = () => {
    const title = useChat.getState().conversation?.title ?? '';
    useChat.getState().branch(m.id, t('versions.branchTitle', { title }).slice(0, 200)).catch(reportError);
  };
  return (
    <>
      <button type="button" className="msg-action" data-testid="branch" onClick={branch}>
        <span>{t('versions.branch')}</span>
      </button>
      <button type="button" className="msg-action" data-testid="delete" aria-label={t('versions.delete')} title={t('versions.delete')} onClick={remove}>
        <Icon name="trash" size={15} />
      </button>
    </>
  );
}

function EditBox({ messageId, initial, onDone }: { messageId: string; initial: string; onDone: () => void }) {
  const { t } = useTranslation();
  const [text, setText] = useState(initial);
  const { busy: saving, run } = useBusy({ report: reportError });
  const ref = useRef<HTMLTextAreaElement>(null);
  useFocusAtEnd(ref);
  useAutosize(ref, text, 320, 0);

  const submit = async () => {
    const content = text.trim();
    if (!content || saving) return;
    if (content === initial.trim()) return onDone();
    await run(async () => {
      await useChat.getState().edit(messageId, content);
      onDone();
      useChat.getState().requestFocus();
    });
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onDone();
      useChat.getState().requestFocus();
    }
  };

  return (
    <div className="msg-edit">
      <textarea
        ref={ref}
        className="msg-edit-input"
        aria-label={t('versions.editLabel')}
        title={t('versions.editHint')}
        data-testid="edit-input"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
      />
      <div className="msg-edit-actions">
        <button type="button" className="button ghost small" onClick={onDone}>
          {t('common.cancel')}
        </button>
        <button type="button" className="button primary small" data-testid="edit-save" disabled={!text.trim() || saving} onClick={() => void submit()}>
          {t('chat.editSave')}
        </button>
      </div>
    </div>
  );
}

const NO_IDS: number[] = [];

export const MessageBubble = memo(function MessageBubble({ message: m, isLastUser, isLastReply, busy, stoppedByUser, when, fullWhen }: BubbleProps) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState(false);
  // Stored with the reply once it is finished; while it is being written, from the chat.injected event.
  const live = useMemories((s) => (m.role === 'assistant' ? s.injectedLive[m.id] : undefined));
  // What the reply waits for before its first word (an on-device model loading), if anything.
  const waitingFor = useChat((s) => (m.role === 'assistant' ? s.replyStatus[m.id]?.status : undefined));
  const injected = m.injectedMemoryIds?.length ? m.injectedMemoryIds : (live ?? NO_IDS);
  const companion = useCompanionName();
  const who = m.role === 'user' ? t('chat.you') : companion;

  const regenerate = () => {
    // The last reply: as before (also "retry"); an earlier one: that reply, whatever followed it kept as a branch.
    void useChat
      .getState()
      .regenerate(isLastReply ? undefined : m.id)
      .catch(reportError);
  };
  // Every message takes focus from a tap (tabIndex -1 when ←/→ have nothing to flip): on a touch
  // screen, where nothing hovers, a tap on a message shows its actions through :focus-within.
  const onKeyDown = onMessageKey(m, busy);
  const versions = m.versionIds && m.versionIds.length > 1 ? <VersionSwitch message={m} disabled={busy} /> : null;

  if (m.role === 'user') {
    return (
      <article
        className={editing ? 'msg msg-user editing' : 'msg msg-user'}
        data-testid="message"
        data-role="user"
        data-status={m.status}
        data-id={m.id}
        aria-label={t('chat.messageFrom', { who, when: fullWhen })}
        tabIndex={versions ? 0 : -1}
        onKeyDown={versions ? onKeyDown : undefined}
      >
        {editing ? (
          <EditBox messageId={m.id} initial={m.content} onDone={() => setEditing(false)} />
        ) : (
          <>
            <MessageImages images={m.images}>
              {m.content ? (
                <div className="msg-bubble">
                  <LongText text={m.content} />
                </div>
              ) : null}
            </MessageImages>
            <div className="msg-actions">
              <time dateTime={m.createdAt} title={fullWhen}>
                {when}
              </time>
              <CopyButton text={m.content} className="msg-action" label={t('chat.copy')} copiedLabel={t('chat.copied')} wrapLabel />
              {!busy ? (
                <button type="button" className="msg-action" data-testid={isLastUser ? 'edit-last' : 'edit'} onClick={() => setEditing(true)}>
                  <Icon name="pencil" size={15} />
                  <span>{t('chat.edit')}</span>
                </button>
              ) : null}
              {!busy ? <MessageTools message={m} /> : null}
            </div>
            {versions}
          </>
        )}
      </article>
    );
  }

  const streaming = m.status === 'streaming';
  const empty = !m.content;
  return (
    <article
      className={`msg msg-assistant status-${m.status}`}
      data-testid="message"
      data-role="assistant"
      data-status={m.status}
      data-id={m.id}
      aria-label={t('chat.messageFrom', { who, when: fullWhen })}
      aria-busy={streaming || undefined}
      tabIndex={versions ? 0 : -1}
      onKeyDown={versions ? onKeyDown : undefined}
    >
      <div className="msg-from" data-testid="message-from" aria-hidden="true">
        <CompanionAvatar size={24} />
        <span>{companion}</span>
      </div>
      {injected.length ? <InjectedLine ids={injected} /> : null}
      {streaming && empty && (waitingFor === 'loading_model' || waitingFor === 'loading_server_model') ? (
        // Loading can take many seconds: say so in words instead of dots that look stuck. The app's
        // own words, not the host's text, which is English only.
        <p className="msg-thinking msg-loading-model" role="status" data-testid="loading-model">
          {waitingFor === 'loading_model' ? t('chat.loadingModel') : t('chat.loadingServerModel')}
        </p>
      ) : streaming && empty ? (
        <div className="msg-thinking" role="status">
          <span className="dots" aria-hidden="true">
            <i />
            <i />
            <i />
          </span>
          <span className="visually-hidden">{t('chat.thinking')}</span>
        </div>
      ) : !empty ? (
        <MarkdownText content={m.content} streaming={streaming} />
      ) : null}

      {m.status === 'partial' ? (
        // "cancelled" is the person's Stop; anything else (a crash, a cut stream) cut it off.
        <p className="msg-note" data-testid="partial-note" title={m.error?.message || undefined}>
          {stoppedByUser || m.error?.code === 'cancelled' ? t('chat.stopped') : t('chat.cutOff')}
        </p>
      ) : null}

      {m.status === 'error' ? (
        <ErrorNote error={m.error ?? { code: 'internal', message: '' }} compact>
          {isLastReply ? (
            <button type="button" className="button small" data-testid="retry" disabled={busy} onClick={regenerate}>
              <Icon name="regenerate" size={15} />
              {t('chat.retry')}
            </button>
          ) : null}
          {m.error && SETTINGS_FIXES.has(m.error.code) ? (
            <button type="button" className="button ghost small" onClick={() => useApp.getState().setView('settings', 'models')}>
              {m.error.code === 'no_provider' ? t('chat.noProviderAction') : t('longMessage.openSettings')}
            </button>
          ) : null}
        </ErrorNote>
      ) : null}

      {versions}
      {!streaming ? (
        <div className="msg-actions">
          <time dateTime={m.createdAt} title={m.model ? `${fullWhen} · ${t('chat.writtenBy', { model: m.model })}` : fullWhen}>
            {when}
          </time>
          {m.content ? <CopyButton text={m.content} className="msg-action" label={t('chat.copy')} copiedLabel={t('chat.copied')} wrapLabel /> : null}
          {m.status !== 'error' && !busy ? (
            <button type="button" className="msg-action" data-testid="regenerate" onClick={regenerate}>
              <Icon name="regenerate" size={15} />
              <span>{t('chat.regenerate')}</span>
            </button>
          ) : null}
          {isLastReply && !busy && m.content.trim() && (m.status === 'partial' || m.status === 'complete') ? (
            <button
              type="button"
              className="msg-action"
              data-testid="continue"
              title={t('versions.continueHint')}
              onClick={() => void useChat.getState().continueReply().catch(reportError)}
            >
              <span>{t('versions.continue')}</span>
            </button>
          ) : null}
          {!busy ? <MessageTools message={m} /> : null}
        </div>
      ) : null}
    </article>
  );
});
