import { useEffect, useMemo, useRef, useState, type ClipboardEvent, type DragEvent, type FormEvent, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE, MAX_MESSAGE_CHARS, seesImages, type ImageRef } from '../../../shared/api.js';
import { ensureOpenConversation } from '../../app/actions.js';
import { Icon } from '../../components/Icon.js';
import { messageLimit, picturesTokens, sizeOverLimit } from '../../lib/messageLimit.js';
import { reportError, useApp } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { useProviders } from '../../stores/providers.js';
import { ImageRefused, prepareImage, rememberUrl, sniffType, uploadImage } from './attach.js';

/** An image in the composer: being made ready and uploaded, then stored (`image`). */
interface Attachment {
  key: number;
  url: string | null;
  image: ImageRef | null;
}

let attachmentKeys = 0;

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
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [imageProblem, setImageProblem] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const streaming = Boolean(streamingId);
  // The chat model, for what it can take: pictures, and how long one message may be.
  const chatProviderId = useApp((s) => s.settings?.chatProviderId ?? null);
  const provider = useProviders((s) => s.items.find((p) => p.id === chatProviderId) ?? null);

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
    // Measured at 'auto' with the composer held at its height: were it to collapse for that moment,
    // the conversation above would grow, lose its place at the bottom, and the newest reply would end
    // up hidden behind a long paste.
    const wrap = el.closest<HTMLElement>('.composer-wrap');
    if (wrap) wrap.style.minHeight = `${wrap.offsetHeight}px`;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, MAX_INPUT_PX)}px`;
    el.style.overflowY = el.scrollHeight > MAX_INPUT_PX ? 'auto' : 'hidden';
    if (wrap) wrap.style.minHeight = '';
  }, [text]);

  const update = (value: string) => {
    setText(value);
    if (openId) {
      if (value) drafts.set(openId, value);
      else drafts.delete(openId);
    }
  };

  const tooLong = text.length > MAX_MESSAGE_CHARS;
  const preparing = attachments.some((a) => !a.image);
  const readyImages = useMemo(() => attachments.flatMap((a) => (a.image ? [a.image] : [])), [attachments]);
  const ready = readyImages.map((image) => image.id);
  // The model's own limit, in words, before anything is sent (the host would refuse it after storing
  // it): the words and the pictures, counted as the host's fit counts them for this model.
  const limit = useMemo(() => (provider ? messageLimit(provider) : null), [provider]);
  const pictures = provider ? picturesTokens(provider, readyImages) : 0;
  const size = useMemo(() => (limit ? sizeOverLimit(text, pictures, limit) : null), [text, pictures, limit]);
  const tooLongForModel = !tooLong && size !== null;
  const cantSee = attachments.length > 0 && provider !== null && !seesImages(provider, provider.abilities?.images);
  const canSend = (Boolean(text.trim()) || ready.length > 0) && !preparing && !streaming && !sending && !noProvider && !tooLong && !tooLongForModel;

  const attach = (files: File[]) => {
    setImageProblem(null);
    const room = MAX_IMAGES_PER_MESSAGE - attachments.length;
    if (files.length > room) setImageProblem(t('images.tooMany', { max: MAX_IMAGES_PER_MESSAGE }));
    for (const file of files.slice(0, Math.max(0, room))) {
      const key = ++attachmentKeys;
      setAttachments((list) => [...list, { key, url: null, image: null }]);
      void (async () => {
        try {
          const bytes = await prepareImage(file);
          const image = await uploadImage(bytes);
          const url = rememberUrl(image.id, bytes, sniffType(bytes.subarray(0, 16)) ?? image.type);
          setAttachments((list) => list.map((a) => (a.key === key ? { ...a, url, image } : a)));
        } catch (err) {
          setAttachments((list) => list.filter((a) => a.key !== key));
          setImageProblem(
            err instanceof ImageRefused
              ? err.reason === 'too_big'
                ? t('images.tooBig', { size: err.megabytes, max: MAX_IMAGE_BYTES / (1024 * 1024) })
                : t(err.reason === 'not_image' ? 'images.notImage' : 'images.unreadable')
              : t('images.uploadFailed'),
          );
        }
      })();
    }
  };

  const imageFiles = (list: FileList | null | undefined) => [...(list ?? [])].filter((f) => f.type.startsWith('image/') || f.type === '');

  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = imageFiles(e.clipboardData?.files);
    if (!files.length) return; // words paste as words
    e.preventDefault();
    attach(files);
  };

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    setDragging(false);
    if (!e.dataTransfer?.files?.length) return;
    e.preventDefault();
    attach([...e.dataTransfer.files]);
  };

  const onDragOver = (e: DragEvent<HTMLDivElement>) => {
    if (![...(e.dataTransfer?.types ?? [])].includes('Files')) return;
    e.preventDefault();
    setDragging(true);
  };

  const send = async () => {
    if (!canSend) return;
    const content = text;
    const sent = attachments;
    setSending(true);
    update('');
    setAttachments([]);
    setImageProblem(null);
    try {
      await ensureOpenConversation();
      await useChat.getState().send(content, ready.length ? ready : undefined);
    } catch (err) {
      // Nothing the person wrote or attached is lost to a failed call.
      setText((current) => (current ? current : content));
      setAttachments((current) => (current.length ? current : sent));
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
    <div
      className={dragging ? 'composer-wrap dragging' : 'composer-wrap'}
      onDragOver={onDragOver}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
      data-testid="composer"
    >
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
      ) : tooLongForModel && size !== null && limit && provider ? (
        <div className="composer-notice" role="alert" data-testid="too-long-for-model">
          <span>
            {t(pictures > 0 ? 'longMessage.tooLongWithPictures' : 'longMessage.tooLongForModel', {
              count: readyImages.length,
              size: size.toLocaleString(),
              limit: limit.tokens.toLocaleString(),
              window: limit.window.toLocaleString(),
              model: provider.model,
            })}
          </span>
        </div>
      ) : null}
      {cantSee ? (
        <div className="composer-notice" role="status" data-testid="cant-see">
          <span>{t('images.cantSee')}</span>
        </div>
      ) : null}
      {imageProblem ? (
        <div className="composer-notice" role="alert" data-testid="image-problem">
          <span>{imageProblem}</span>
          <button type="button" className="button ghost small" aria-label={t('common.close')} onClick={() => setImageProblem(null)}>
            <Icon name="close" size={14} />
          </button>
        </div>
      ) : null}
      {attachments.length ? (
        <ul className="composer-images" aria-label={t('images.attached', { count: attachments.length })} data-testid="composer-images">
          {attachments.map((a, i) => (
            <li key={a.key} className={a.image ? 'composer-image' : 'composer-image preparing'} data-testid="composer-image" data-ready={Boolean(a.image)}>
              {a.url ? <img src={a.url} alt={t('images.alt', { n: i + 1 })} /> : <span className="composer-image-wait">{t('images.preparing')}</span>}
              <button
                type="button"
                className="composer-image-remove"
                aria-label={t('images.remove', { n: i + 1 })}
                title={t('images.remove', { n: i + 1 })}
                onClick={() => setAttachments((list) => list.filter((x) => x.key !== a.key))}
              >
                <Icon name="close" size={12} />
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {dragging ? (
        <p className="composer-drop" aria-hidden="true">
          {t('images.dropHere')}
        </p>
      ) : null}
      <form className="composer" onSubmit={onSubmit}>
        <input
          ref={picker}
          type="file"
          accept={IMAGE_TYPES.join(',')}
          multiple
          hidden
          data-testid="attach-input"
          onChange={(e) => {
            attach(imageFiles(e.target.files));
            e.target.value = '';
          }}
        />
        <button
          type="button"
          className="composer-button attach"
          data-testid="attach-button"
          aria-label={t('images.attach')}
          title={t('images.attachHint', { max: MAX_IMAGES_PER_MESSAGE })}
          disabled={attachments.length >= MAX_IMAGES_PER_MESSAGE}
          onClick={() => picker.current?.click()}
        >
          <Icon name="image" size={18} />
        </button>
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
          onPaste={onPaste}
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
