// [[anima:ID]] in a message: a small chip saying a memory was used. Hover or focus shows the memory;
// a click opens it in the Memories view. A memory that is gone or no longer current shows muted.
import { useEffect, useId, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { useTranslation } from 'react-i18next';
import { openMemory } from '../app/actions.js';
import { memoryIdOf, splitCitations } from '../lib/citations.js';
import { chipState } from '../lib/memories.js';
import { useMemories } from '../stores/memories.js';
import { Icon } from './Icon.js';
import { MemoryCounts, TypeBadge } from './MemoryBits.js';

const OPEN_DELAY_MS = 180;
const CLOSE_DELAY_MS = 160;
const MARGIN = 8;

function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function CitationChip({ rawId }: { rawId: string }) {
  const { t } = useTranslation();
  const id = memoryIdOf(rawId);
  const entry = useMemories((s) => (id === null ? undefined : s.cache[id]));
  const peek = useMemories((s) => (id === null ? undefined : s.peek[id]));
  const [open, setOpen] = useState(false);
  const anchor = useRef<HTMLButtonElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const popId = useId();

  useEffect(() => {
    if (id !== null) void useMemories.getState().ensure(id);
  }, [id]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const state = id === null ? 'missing' : chipState(entry);
  const memory = entry?.memory ?? null;
  // Gone for good (or never a memory id): nothing to open.
  const gone = id === null || entry?.status === 'missing';
  const text = memory?.content ?? peek?.content ?? '';

  const show = (delay = OPEN_DELAY_MS) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setOpen(true), delay);
  };
  const hide = (delay = CLOSE_DELAY_MS) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setOpen(false), delay);
  };

  const label =
    state === 'missing'
      ? memory?.status === 'superseded'
        ? t('citation.labelReplaced', { text: clip(memory.content) })
        : t('citation.labelMissing')
      : text && memory?.status !== 'expired'
        ? t('citation.label', { text: clip(text) })
        : t('citation.labelLoading');

  return (
    <>
      <button
        ref={anchor}
        type="button"
        className={`memory-chip memory-chip-${state}`}
        data-testid="citation-chip"
        data-id={rawId}
        data-state={state}
        aria-label={label}
        aria-describedby={open ? popId : undefined}
        aria-busy={entry?.status === 'loading' || undefined}
        aria-disabled={gone || undefined}
        onMouseEnter={() => show()}
        onMouseLeave={() => hide()}
        onFocus={() => show(0)}
        onBlur={() => hide(0)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && open) {
            e.stopPropagation();
            setOpen(false);
          }
        }}
        onClick={() => {
          if (gone || id === null) return;
          setOpen(false);
          openMemory(id);
        }}
      >
        <Icon name="sparkle" size={11} strokeWidth={2} />
        <span>{state === 'active' ? t('citation.chip') : memory?.status === 'superseded' ? t('citation.chipReplaced') : t('citation.chipMissing')}</span>
      </button>
      {open
        ? createPortal(
            <Popover anchor={anchor.current} id={popId}>
              <CitationCard id={id} gone={gone} />
            </Popover>,
            document.body,
          )
        : null}
    </>
  );
}

function CitationCard({ id, gone }: { id: number | null; gone: boolean }) {
  const { t } = useTranslation();
  const entry = useMemories((s) => (id === null ? undefined : s.cache[id]));
  const peek = useMemories((s) => (id === null ? undefined : s.peek[id]));
  const memory = entry?.memory ?? null;

  if (gone) {
    return (
      <>
        <p className="pop-title">{t('citation.missing')}</p>
        <p className="pop-muted">{t('citation.missingBody')}</p>
      </>
    );
  }
  if (!memory) {
    if (entry?.status === 'error') return <p className="pop-muted">{t('citation.lookupFailed')}</p>;
    if (peek) {
      return (
        <>
          <div className="pop-head">
            <TypeBadge type={peek.type} />
          </div>
          <p className="pop-text">{peek.content}</p>
        </>
      );
    }
    return <p className="pop-muted">{t('citation.loading')}</p>;
  }
  if (memory.status === 'expired') {
    return (
      <>
        <p className="pop-title">{t('citation.forgotten')}</p>
        <p className="pop-hint">{t('citation.openHint')}</p>
      </>
    );
  }
  return (
    <>
      <div className="pop-head">
        <span className="pop-kicker">{t('citation.heading')}</span>
        <TypeBadge type={memory.type} />
      </div>
      {memory.status === 'superseded' ? <p className="pop-title">{t('citation.replaced')}</p> : null}
      <p className={memory.status === 'active' ? 'pop-text' : 'pop-text muted'}>{memory.content}</p>
      <MemoryCounts memory={memory} className="pop-counts" />
      <p className="pop-hint">{t('citation.openHint')}</p>
    </>
  );
}

/** A small card above (or below) an anchor, outside any scrolling box so it is never clipped. */
export function Popover({ anchor, id, children }: { anchor: HTMLElement | null; id: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<{ top: number; left: number; below: boolean } | null>(null);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !anchor) return;
    const place = () => {
      const a = anchor.getBoundingClientRect();
      const w = el.offsetWidth;
      const h = el.offsetHeight;
      const below = a.top - h - MARGIN < MARGIN;
      const top = below ? Math.min(a.bottom + MARGIN, window.innerHeight - h - MARGIN) : a.top - h - MARGIN;
      const left = Math.max(MARGIN, Math.min(a.left + a.width / 2 - w / 2, window.innerWidth - w - MARGIN));
      setPos({ top, left, below });
    };
    place();
    window.addEventListener('resize', place);
    window.addEventListener('scroll', place, true);
    return () => {
      window.removeEventListener('resize', place);
      window.removeEventListener('scroll', place, true);
    };
  }, [anchor, children]);

  return (
    <div
      ref={ref}
      id={id}
      role="tooltip"
      className={pos?.below ? 'popover below' : 'popover'}
      style={pos ? { top: pos.top, left: pos.left } : { top: -9999, left: -9999 }}
    >
      {children}
    </div>
  );
}

/** A person's own message: plain text, with their citation markers (outside code) as chips too. */
export function CitedText({ text }: { text: string }) {
  const segments = splitCitations(text);
  if (segments.length === 1 && segments[0]!.kind === 'text') return <>{text}</>;
  return <>{segments.map((s, i) => (s.kind === 'text' ? <span key={i}>{s.text}</span> : <CitationChip key={i} rawId={s.id} />))}</>;
}
