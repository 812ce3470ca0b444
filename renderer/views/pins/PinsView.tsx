// Pins: the short list of memories the companion always carries, in the person's order, and the
// exact text that carrying produces ("what I carry now") with its size.
import { useCallback, useEffect, useRef, useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { Memory } from '../../../shared/api.js';
import { openMemory } from '../../app/actions.js';
import { CopyButton } from '../../components/CopyButton.js';
import { Icon } from '../../components/Icon.js';
import { Illustration } from '../../components/Illustration.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { MemoryCounts, StatusBadge, TypeBadge } from '../../components/MemoryBits.js';
import { currentLocale } from '../../i18n/index.js';
import { formatCount, moveBy, moveTo } from '../../lib/memories.js';
import { reportError, useApp } from '../../stores/app.js';
import { useMemories } from '../../stores/memories.js';

/** The host carries at most this many pins (ResidentPreview.pinnedCut counts the rest). */
export const RESIDENT_PIN_CAP = 40;

type Focus = { id: number; which: 'up' | 'down' } | null;

function PinItem({
  memory,
  index,
  total,
  onMove,
  onUnpin,
  focus,
  onFocused,
  dragging,
  dropTarget,
  dragProps,
}: {
  memory: Memory;
  index: number;
  total: number;
  onMove: (index: number, delta: -1 | 1) => void;
  onUnpin: (memory: Memory) => void;
  focus: Focus;
  onFocused: () => void;
  dragging: boolean;
  dropTarget: boolean;
  dragProps: {
    onDragStart: (e: DragEvent) => void;
    onDragEnd: () => void;
    onDragOver: (e: DragEvent) => void;
    onDrop: (e: DragEvent) => void;
  };
}) {
  const { t } = useTranslation();
  const up = useRef<HTMLButtonElement>(null);
  const down = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    // After a move the row is somewhere else; the keyboard stays on the button that moved it.
    if (focus?.id !== memory.id) return;
    const target = focus.which === 'up' ? (index > 0 ? up.current : down.current) : index < total - 1 ? down.current : up.current;
    target?.focus();
    onFocused();
  }, [focus, memory.id, index, total, onFocused]);

  return (
    <li
      className={`pin-item${dragging ? ' dragging' : ''}${dropTarget ? ' drop-target' : ''}`}
      data-testid="pin-item"
      data-id={memory.id}
      onDragOver={dragProps.onDragOver}
      onDrop={dragProps.onDrop}
    >
      <span className="pin-handle" draggable title={t('pins.drag')} aria-hidden="true" onDragStart={dragProps.onDragStart} onDragEnd={dragProps.onDragEnd}>
        <svg width="10" height="16" viewBox="0 0 10 16" aria-hidden="true">
          {[3, 8, 13].map((y) => (
            <g key={y}>
              <circle cx="2.5" cy={y} r="1.3" />
              <circle cx="7.5" cy={y} r="1.3" />
            </g>
          ))}
        </svg>
      </span>
      <span className="pin-index" aria-hidden="true">
        {index + 1}
      </span>
      <div className="pin-body">
        <div className="pin-top">
          <TypeBadge type={memory.type} />
          <StatusBadge status={memory.status} />
        </div>
        <button type="button" className="pin-text" onClick={() => openMemory(memory.id)}>
          {memory.content}
        </button>
        <MemoryCounts memory={memory} className="pin-counts" />
      </div>
      <div className="pin-actions">
        <button
          ref={up}
          type="button"
          className="icon-button small"
          data-testid="pin-up"
          aria-label={`${t('pins.moveUp')} — ${t('pins.position', { n: index + 1 })}`}
          title={t('pins.moveUp')}
          disabled={index === 0}
          onClick={() => onMove(index, -1)}
        >
          <Icon name="arrowDown" size={16} className="flip" />
        </button>
        <button
          ref={down}
          type="button"
          className="icon-button small"
          data-testid="pin-down"
          aria-label={`${t('pins.moveDown')} — ${t('pins.position', { n: index + 1 })}`}
          title={t('pins.moveDown')}
          disabled={index === total - 1}
          onClick={() => onMove(index, 1)}
        >
          <Icon name="arrowDown" size={16} />
        </button>
        <button
          type="button"
          className="icon-button small"
          data-testid="pin-unpin"
          aria-label={t('pins.unpin')}
          title={t('pins.unpin')}
          onClick={() => onUnpin(memory)}
        >
          <Icon name="close" size={16} />
        </button>
      </div>
    </li>
  );
}

function PinList() {
  const { t } = useTranslation();
  const items = useMemories((s) => s.pins.items);
  const [focus, setFocus] = useState<Focus>(null);
  const clearFocus = useCallback(() => setFocus(null), []);
  const [announce, setAnnounce] = useState('');
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [dragOver, setDragOver] = useState<number | null>(null);

  const commit = (next: Memory[], movedId: number) => {
    const at = next.findIndex((m) => m.id === movedId);
    setAnnounce(t('pins.moved', { n: at + 1, total: next.length }));
    void useMemories
      .getState()
      .reorderPins(next.map((m) => m.id))
      .catch(reportError);
  };

  const onMove = (index: number, delta: -1 | 1) => {
    const next = moveBy(items, index, delta);
    if (next === items) return;
    const id = items[index]!.id;
    setFocus({ id, which: delta < 0 ? 'up' : 'down' });
    commit(next, id);
  };

  const onUnpin = (memory: Memory) => {
    void (async () => {
      const result = await useMemories.getState().setPinned(memory.id, false);
      useApp.getState().toast({
        tone: 'info',
        text: t('pins.unpinned'),
        action: {
          label: t('common.undo'),
          run: () => {
            void useMemories.getState().undo(result.changeId).catch(reportError);
          },
        },
      });
    })().catch(reportError);
  };

  const dragProps = (index: number) => ({
    onDragStart: (e: DragEvent) => {
      setDragFrom(index);
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', String(items[index]!.id));
    },
    onDragEnd: () => {
      setDragFrom(null);
      setDragOver(null);
    },
    onDragOver: (e: DragEvent) => {
      if (dragFrom === null) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'move';
      if (dragOver !== index) setDragOver(index);
    },
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      if (dragFrom === null) return;
      const next = moveTo(items, dragFrom, index);
      const id = items[dragFrom]!.id;
      setDragFrom(null);
      setDragOver(null);
      if (next !== items) commit(next, id);
    },
  });

  return (
    <>
      <ol className="pin-list" aria-label={t('pins.listLabel')}>
        {items.map((m, i) => (
          <PinItem
            key={m.id}
            memory={m}
            index={i}
            total={items.length}
            onMove={onMove}
            onUnpin={onUnpin}
            focus={focus}
            onFocused={clearFocus}
            dragging={dragFrom === i}
            dropTarget={dragOver === i && dragFrom !== null && dragFrom !== i}
            dragProps={dragProps(i)}
          />
        ))}
      </ol>
      <div className="visually-hidden" aria-live="polite">
        {announce}
      </div>
    </>
  );
}

function Resident() {
  const { t } = useTranslation();
  const resident = useMemories((s) => s.resident);
  const locale = currentLocale();
  const data = resident.data;

  return (
    <section className="resident" aria-labelledby="resident-title">
      <div className="resident-head">
        <h2 className="resident-title" id="resident-title">
          {t('pins.resident.title')}
        </h2>
        {data?.text ? <CopyButton text={data.text} label={t('pins.resident.copy')} /> : null}
      </div>
      <p className="help">{t('pins.resident.intro')}</p>
      <LoadPanel error={data ? null : resident.error} loaded={Boolean(data)} compact onRetry={() => void useMemories.getState().refreshResident()}>
        {data ? (
          <>
            {data.chars > 0 ? (
              <p className="resident-size" data-testid="resident-size">
                <strong>{t('pins.resident.size', { chars: formatCount(data.chars, locale), tokens: formatCount(data.estimatedTokens, locale) })}</strong>
                <span className="resident-parts">
                  {' · '}
                  {t('pins.resident.parts', { pinned: formatCount(data.pinned, locale), referenced: formatCount(data.referenced, locale) })}
                </span>
              </p>
            ) : null}
            {data.pinnedCut > 0 ? (
              <p className="resident-cut" role="note" data-testid="resident-cut">
                <Icon name="alert" size={15} />
                {t('pins.resident.cut', { count: data.pinnedCut, max: RESIDENT_PIN_CAP })}
              </p>
            ) : null}
            {data.text ? (
              <pre className="resident-text" data-testid="resident-preview" tabIndex={0} aria-label={t('pins.resident.label')}>
                {data.text}
              </pre>
            ) : (
              <p className="resident-empty" data-testid="resident-preview">
                {t('pins.resident.empty')}
              </p>
            )}
          </>
        ) : null}
      </LoadPanel>
    </section>
  );
}

export function PinsView() {
  const { t } = useTranslation();
  const pins = useMemories((s) => s.pins);
  const anyAtAll = useMemories((s) => s.anyAtAll);
  const setView = useApp((s) => s.setView);

  useEffect(() => {
    const s = useMemories.getState();
    void s.refreshPins();
    void s.refreshResident();
    // Whether there is anything to pin yet decides what the empty state says.
    if (s.anyAtAll === null) void s.refreshList();
  }, []);

  const empty = pins.loaded && !pins.items.length && !pins.error;

  return (
    <div className="pins" data-testid="view-pins">
      <div className="pins-inner">
        <section className="pins-main" aria-labelledby="pins-title">
          <header className="pins-head">
            <h1 className="page-title" id="pins-title">
              {t('pins.title')}
            </h1>
            {pins.items.length ? <span className="mem-total">{formatCount(pins.items.length, currentLocale())}</span> : null}
          </header>
          {empty ? (
            <div className="pins-empty">
              <Illustration view="pins" />
              <h2 className="pins-empty-title">{t('pins.emptyTitle')}</h2>
              <p className="pins-empty-body">{anyAtAll === false ? t('pins.emptyNoMemories') : t('pins.emptyBody')}</p>
              <button type="button" className="button" onClick={() => setView('memories')}>
                {t('pins.goToMemories')}
              </button>
            </div>
          ) : (
            <>
              <p className="pins-intro">{t('pins.intro')}</p>
              <LoadPanel error={pins.items.length ? null : pins.error} loaded={pins.loaded} onRetry={() => void useMemories.getState().refreshPins()}>
                <PinList />
              </LoadPanel>
            </>
          )}
        </section>
        <Resident />
      </div>
    </div>
  );
}
