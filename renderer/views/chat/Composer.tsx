import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { MAX_MESSAGE_CHARS } from '../../../shared/api.js';
import { ensureOpenConversation } from '../../app/actions.js';
import { Icon } from '../../components/Icon.js';
import { reportError, useApp } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { useProviders } from '../../stores/providers.js';

// Unsent text survives switching conversations (not a reload: it never leaves this window).
const drafts = new Map<string, string>();
const MAX_INPUT_PX = 260;

export function Composer() {
  const { t } = useTranslation();
  const openId = useChat((s) => s.openId);
  const streamingId = useChat((s) => (s.openId ? s.streaming[s.openId] : undefined));
  const focusRequest = useChat((s) => s.focusRequest);
  const providersLoaded = useProviders((s) => s.loaded);
  const noProvider = useProviders((s) => s.loaded && s.items.length === 0);
  const [text, setText] = useState(() => (openId ? (drafts.get(openId) ?? '') : ''));
  const [sending, setSending] = useState(false);
  const [stopping, setStopping] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const streaming = Boolean(streamingId);

  const previousId = useRef(openId);
  useEffect(() => {
    const was = previousId.current;
    previousId.current = openId;
    if (was === openId) return;
    // Text typed before any conversation existed belongs to the one just created for it.
    if (was === null && openId) {
      setText((current) => {
        if (current) drafts.set(openId, current);
        return current || drafts.get(openId) || '';
      });
      return;
    }
    setText(openId ? (drafts.get(openId) ?? '') : '');
  }, [openId]);

  useEffect(() => {
    input.current?.focus();
  }, [openId, focusRequest]);

  useEffect(() => {
    if (!streaming) setStopping(false);
  }, [streaming]);

  useEffect(() => {
    const el = input.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, MAX_INPUT_PX)}px`;
    el.style.overflowY = el.scrollHeight > MAX_INPUT_PX ? 'auto' : 'hidden';
  }, [text]);

  const update = (value: string) => {
    setText(value);
    if (openId) {
      if (value) drafts.set(openId, value);
      else drafts.delete(openId);
    }
  };

  const tooLong = text.length > MAX_MESSAGE_CHARS;
  const canSend = Boolean(text.trim()) && !streaming && !sending && !noProvider && !tooLong;

  const send = async () => {
    if (!canSend) return;
    const content = text;
    setSending(true);
    update('');
    try {
      await ensureOpenConversation();
      await useChat.getState().send(content);
    } catch (err) {
      // Nothing the person wrote is lost to a failed call.
      setText((current) => (current ? current : content));
      if (openId) drafts.set(openId, content);
      reportError(err);
    } finally {
      setSending(false);
      input.current?.focus();
    }
  };

  const stop = async () => {
    setStopping(true);
    try {
      await useChat.getState().stop();
    } catch (err) {
      setStopping(false);
      reportError(err);
    }
    input.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // isComposing: Enter that confirms a Chinese/Japanese IME candidate must not send.
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.nativeEvent.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      void send();
    } else if (e.key === 'Escape' && streaming) {
      e.preventDefault();
      void stop();
    }
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void send();
  };

  return (
    <div className="composer-wrap">
      {noProvider && providersLoaded ? (
        <div className="composer-notice" role="status" data-testid="no-provider">
          <span>{t('chat.noProvider')}</span>
          <button
            type="button"
            className="button primary small"
            data-testid="no-provider-action"
            onClick={() => useApp.getState().setView('settings', 'models')}
          >
            {t('chat.noProviderAction')}
          </button>
        </div>
      ) : null}
      {tooLong ? (
        // Said out loud instead of cutting the paste: nothing the person wrote is silently dropped.
        <div className="composer-notice" role="alert" data-testid="too-long">
          <span>{t('chat.tooLong', { count: text.length - MAX_MESSAGE_CHARS })}</span>
        </div>
      ) : null}
      <form className="composer" onSubmit={onSubmit}>
        <textarea
          ref={input}
          className="composer-input"
          data-testid="chat-input"
          aria-label={t('chat.inputLabel')}
          placeholder={t('chat.inputPlaceholder')}
          rows={1}
          value={text}
          autoFocus
          onChange={(e) => update(e.target.value)}
          onKeyDown={onKeyDown}
        />
        {streaming ? (
          <button
            type="button"
            className="composer-button stop"
            data-testid="stop-button"
            aria-label={t('chat.stop')}
            title={t('chat.stop')}
            disabled={stopping}
            onClick={() => void stop()}
          >
            <Icon name="stop" size={18} />
          </button>
        ) : (
          <button
            type="submit"
            className="composer-button send"
            data-testid="send-button"
            aria-label={t('chat.send')}
            title={t('chat.send')}
            disabled={!canSend}
          >
            <Icon name="send" size={18} />
          </button>
        )}
      </form>
      <p className="composer-hint" aria-hidden="true">
        {t('chat.sendHint')}
      </p>
    </div>
  );
}
