import { Fragment, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Message } from '../../../shared/api.js';
import { useTimeFormat } from '../../app/hooks.js';
import { useCompanionName } from '../../components/CompanionAvatar.js';
import { Icon } from '../../components/Icon.js';
import { visibleMessages } from '../../lib/chatReducer.js';
import { prefersReducedMotion } from '../../lib/platform.js';
import { MessageBubble } from './MessageBubble.js';

/** Rendering every message of a long conversation would freeze the window; older ones load on request. */
export const PAGE = 200;
/**
 * Even one page is too much work for one frame (markdown parsing dominates), so the newest rows come
 * first and older ones of the page are added a slice at a time, keeping input responsive meanwhile.
 */
const FIRST_SLICE = 30;
const SLICE = 15;
const NEAR_BOTTOM_PX = 80;

const EMPTY: Message[] = [];

/** Keyed by conversation in the parent: every conversation opens fresh, at its end. */
export function MessageList({
  conversationId,
  messages,
  streamingId,
  stoppedByUser,
}: {
  conversationId: string;
  messages: Message[] | undefined;
  streamingId: string | undefined;
  stoppedByUser: Record<string, true>;
}) {
  const { t } = useTranslation();
  const { when, full, day } = useTimeFormat();
  const visible = useMemo(() => visibleMessages(messages ?? EMPTY), [messages]);
  const [limit, setLimit] = useState(PAGE);
  const [rendered, setRendered] = useState(FIRST_SLICE);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [atBottom, setAtBottom] = useState(true);
  const restoreFrom = useRef<number | null>(null);
  const lastUserId = useRef<string | null>(null);

  const target = Math.min(limit, visible.length);
  const count = Math.min(target, rendered);
  const shown = count < visible.length ? visible.slice(visible.length - count) : visible;
  const hidden = visible.length - limit > 0 ? visible.length - limit : 0;
  const filling = count < target;

  useEffect(() => {
    if (!filling) return;
    const id = setTimeout(() => {
      const el = scroller.current;
      // Rows appear above the reader: keep what they are looking at where it is.
      if (el) restoreFrom.current = el.scrollHeight - el.scrollTop;
      setRendered((n) => n + SLICE);
    }, 16);
    return () => clearTimeout(id);
  }, [filling, rendered]);
  const lastVisible = visible[visible.length - 1];
  const lastUser = useMemo(() => [...visible].reverse().find((m) => m.role === 'user'), [visible]);
  const lastReply = lastVisible?.role === 'assistant' ? lastVisible : undefined;
  const busy = Boolean(streamingId);

  // The log itself is silent (a token-by-token announcement would be unbearable); a finished reply
  // is read out once instead.
  const [announce, setAnnounce] = useState('');
  const companion = useCompanionName();
  const watched = useRef<string | undefined>(streamingId);
  useEffect(() => {
    const was = watched.current;
    watched.current = streamingId;
    if (!was || was === streamingId) return;
    const done = visible.find((m) => m.id === was);
    if (done && done.status !== 'streaming') setAnnounce(`${companion}: ${done.content.slice(0, 600)}`);
  }, [streamingId, visible, companion]);

  // Formatting 200 timestamps on every streamed frame adds up; they only change when the clock
  // ticks or the language/zone changes (which gives new formatter functions).
  const cache = useRef({ key: when as unknown, map: new Map<string, { when: string; full: string; day: string }>() });
  if (cache.current.key !== when) cache.current = { key: when, map: new Map() };
  const metaOf = (m: Message) => {
    let meta = cache.current.map.get(m.id);
    if (!meta) {
      meta = { when: when(m.createdAt, true), full: full(m.createdAt), day: day(m.createdAt) };
      cache.current.map.set(m.id, meta);
    }
    return meta;
  };

  // Sending is a clear wish to see the answer, even when scrolled up.
  if (lastUser && lastUser.id !== lastUserId.current) {
    if (lastUserId.current !== null) stick.current = true;
    lastUserId.current = lastUser.id;
  }

  const tail = lastVisible ? `${lastVisible.id}:${lastVisible.content.length}:${lastVisible.status}` : '';
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (restoreFrom.current !== null) {
      // "Show earlier" added rows above: keep the reader's place.
      el.scrollTop = el.scrollHeight - restoreFrom.current;
      restoreFrom.current = null;
      return;
    }
    if (stick.current) el.scrollTop = el.scrollHeight;
  }, [tail, shown.length, conversationId]);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    const near = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
    stick.current = near;
    setAtBottom(near);
  }, []);

  useEffect(() => {
    // Fonts and markdown can change heights after the first layout.
    const el = scroller.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const inner = el.firstElementChild;
    if (!inner) return;
    const ro = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(inner);
    // The scroller itself shrinks when the composer grows (a long paste, a notice): the newest stays in view.
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const showEarlier = () => {
    const el = scroller.current;
    if (el) restoreFrom.current = el.scrollHeight - el.scrollTop;
    setLimit((n) => n + PAGE);
    setRendered((n) => n + SLICE);
  };

  const jump = () => {
    const el = scroller.current;
    if (!el) return;
    stick.current = true;
    el.scrollTo({ top: el.scrollHeight, behavior: prefersReducedMotion() ? 'auto' : 'smooth' });
  };

  return (
    <div className="msg-area">
      <div className="msg-scroller" ref={scroller} onScroll={onScroll} role="log" aria-label={t('chat.conversationLog')} aria-live="off" tabIndex={-1}>
        <div className="msg-column">
          {hidden > 0 && !filling ? (
            <div className="show-earlier">
              <button type="button" className="button ghost small" data-testid="show-earlier" onClick={showEarlier}>
                {t('chat.showEarlier', { count: Math.min(PAGE, hidden) })}
              </button>
            </div>
          ) : null}
          {shown.map((m, i) => {
            const before = visible.length - shown.length;
            const prev = i > 0 ? shown[i - 1] : before > 0 ? visible[before - 1] : undefined;
            const meta = metaOf(m);
            const newDay = !prev || metaOf(prev).day !== meta.day;
            return (
              <Fragment key={m.id}>
                {newDay ? (
                  <div className="day-divider" role="separator">
                    <span>{meta.day}</span>
                  </div>
                ) : null}
                <MessageBubble
                  message={m}
                  isLastUser={m === lastUser}
                  isLastReply={m === lastReply}
                  busy={busy}
                  stoppedByUser={Boolean(stoppedByUser[m.id])}
                  when={meta.when}
                  fullWhen={meta.full}
                />
              </Fragment>
            );
          })}
        </div>
      </div>
      <div className="visually-hidden" aria-live="polite">
        {announce}
      </div>
      {!atBottom && visible.length > 0 ? (
        <button type="button" className="jump-latest" onClick={jump} data-testid="jump-latest">
          <Icon name="arrowDown" size={16} />
          {t('chat.jumpToLatest')}
        </button>
      ) : null}
    </div>
  );
}
