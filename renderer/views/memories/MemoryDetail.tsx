// One memory, in full: its words, where it came from, its versions and its history — and how to
// correct it, pin it or ask for it to be forgotten. Every change says so and can be undone.
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Memory, MemoryChange } from '../../../shared/api.js';
import { useCurrentSleepDay, useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { useBusy, useFocusAtEnd } from '../../components/useEditor.js';
import { MemoryCounts, StatusBadge, TypeBadge } from '../../components/MemoryBits.js';
import { historyKey, historyNewestFirst, latestForget, latestUndoable, replacedText, replacedType, sourceKey } from '../../lib/memories.js';
import { reportError, useApp } from '../../stores/app.js';
import { currentLocale } from '../../i18n/index.js';
import { isNotFound } from '../../stores/loadable.js';
import { useMemories, type MemoryDetail } from '../../stores/memories.js';
import { reasonLine } from '../../lib/memoryReason.js';
import { ForgetConfirm } from './ForgetConfirm.js';
import { MemoryFields, useMemoryDraft } from './MemoryForm.js';

function EditForm({ memory, onDone }: { memory: Memory; onDone: () => void }) {
  const { t } = useTranslation();
  const draft = useMemoryDraft(memory);
  useFocusAtEnd(draft.ref);

  const save = async () => {
    if (!draft.canSave) return;
    const content = draft.text.trim();
    const patch = {
      id: memory.id,
      ...(content !== memory.content ? { content } : {}),
      ...(draft.type !== memory.type ? { type: draft.type } : {}),
    };
    if (!('content' in patch) && !('type' in patch)) return onDone();
    await draft.run(async () => {
      const result = await useMemories.getState().update(patch);
      // A new value for the same slot is a new memory that supersedes this one (kept, under Versions).
      useMemories.getState().setFlash({ memoryId: result.memory.id, key: result.superseded !== undefined ? 'replaced' : 'edited', changeId: result.changeId });
      if (result.memory.id !== memory.id) useMemories.getState().select(result.memory.id);
      onDone();
    });
  };

  return (
    <div className="mem-edit" onKeyDown={draft.keys({ save, cancel: onDone })}>
      <MemoryFields
        draft={draft}
        labels={{ text: t('memories.edit.textLabel'), type: t('memories.edit.typeLabel'), save: t('memories.edit.save') }}
        testIds={{ text: 'memory-edit-input', type: 'memory-edit-type', save: 'memory-save' }}
        onSave={() => void save()}
        onCancel={onDone}
      />
    </div>
  );
}

function Flash({ memoryId }: { memoryId: number }) {
  const { t } = useTranslation();
  const flash = useMemories((s) => (s.flash?.memoryId === memoryId ? s.flash : null));
  const { busy, run } = useBusy({ report: reportError });
  if (!flash) return null;
  const undo = async () => {
    const changeId = flash.changeId;
    if (changeId === null) return;
    await run(async () => {
      const memory = await useMemories.getState().undo(changeId);
      useMemories.getState().setFlash({ memoryId: memory.id, key: 'undone', changeId: null });
      if (memory.id !== memoryId) useMemories.getState().select(memory.id);
    });
  };
  return (
    <div className="mem-flash" role="status" data-testid="memory-flash">
      <Icon name="check" size={16} />
      <span>{t(`memories.flash.${flash.key}`)}</span>
      {flash.changeId !== null ? (
        <button type="button" className="link-button" data-testid="memory-flash-undo" disabled={busy} onClick={() => void undo()}>
          {t('common.undo')}
        </button>
      ) : null}
      <button
        type="button"
        className="icon-button small mem-flash-close"
        aria-label={t('common.dismiss')}
        onClick={() => useMemories.getState().setFlash(null)}
      >
        <Icon name="close" size={14} />
      </button>
    </div>
  );
}

function Chain({ chain, currentId }: { chain: Memory[]; currentId: number }) {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  return (
    <section className="mem-section" aria-labelledby="mem-chain-title">
      <h3 className="mem-section-title" id="mem-chain-title">
        {t('memories.detail.chainTitle')}
      </h3>
      <p className="help">{t('memories.detail.chainHelp')}</p>
      <ol className="mem-chain" data-testid="memory-chain">
        {chain.map((m) => {
          const current = m.id === currentId;
          const body = (
            <>
              <span className="mem-chain-top">
                <StatusBadge status={m.status} />
                {current ? <span className="badge badge-accent">{t('memories.detail.chainThis')}</span> : null}
                <time dateTime={m.createdAt} title={full(m.createdAt)}>
                  {when(m.createdAt)}
                </time>
              </span>
              <span className="mem-chain-text">{m.content}</span>
            </>
          );
          return (
            <li key={m.id} className={current ? 'current' : undefined} data-id={m.id} aria-current={current ? 'true' : undefined}>
              {current ? (
                <div className="mem-chain-item">{body}</div>
              ) : (
                <button type="button" className="mem-chain-item" title={t('memories.detail.chainOpen')} onClick={() => useMemories.getState().select(m.id)}>
                  {body}
                </button>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function History({ history }: { history: MemoryChange[] }) {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  const reasonDays = { locale: currentLocale(), currentDay: useCurrentSleepDay() };
  const { busy, run } = useBusy({ report: reportError });
  const entries = historyNewestFirst(history);
  const undoable = latestUndoable(history);

  const undo = (change: MemoryChange) =>
    run(async () => {
      const memory = await useMemories.getState().undo(change.id);
      useMemories.getState().setFlash({ memoryId: memory.id, key: 'undone', changeId: null });
    });

  return (
    <section className="mem-section" aria-labelledby="mem-history-title" data-testid="memory-history">
      <h3 className="mem-section-title" id="mem-history-title">
        {t('memories.detail.historyTitle')}
      </h3>
      {entries.length ? (
        <ol className="mem-history">
          {entries.map((c) => {
            const before = replacedText(c);
            const typeBefore = replacedType(c);
            const why = reasonLine(c, t, reasonDays);
            return (
              <li key={c.id} className={c.undoneBy !== null ? 'undone' : undefined} data-action={c.action} data-actor={c.actor}>
                <span className="mem-history-dot" aria-hidden="true" />
                <div className="mem-history-body">
                  <p className="mem-history-what">
                    <span>{t(historyKey(c))}</span>
                    <span className="mem-history-when">
                      {' · '}
                      <time dateTime={c.createdAt} title={full(c.createdAt)}>
                        {when(c.createdAt)}
                      </time>
                    </span>
                    {c.undoneBy !== null ? <span className="badge">{t('memories.detail.undone')}</span> : null}
                  </p>
                  {before ? <p className="mem-history-note">{t('memories.detail.was', { text: before })}</p> : null}
                  {typeBefore ? <p className="mem-history-note">{t('memories.detail.typeWas', { type: t(`memories.types.${typeBefore}`) })}</p> : null}
                  {why ? <p className="mem-history-note">{why}</p> : null}
                  {undoable?.id === c.id ? (
                    <button
                      type="button"
                      className="link-button mem-history-undo"
                      data-testid="memory-history-undo"
                      disabled={busy}
                      onClick={() => void undo(c)}
                    >
                      {t('memories.detail.undo')}
                    </button>
                  ) : null}
                </div>
              </li>
            );
          })}
        </ol>
      ) : (
        <p className="help">{t('memories.detail.historyEmpty')}</p>
      )}
    </section>
  );
}

function Facts({ memory }: { memory: Memory }) {
  const { t } = useTranslation();
  const { full } = useTimeFormat();
  const changed = memory.updatedAt && memory.updatedAt !== memory.createdAt;
  return (
    <dl className="mem-facts">
      <div>
        <dt>{t('memories.detail.source')}</dt>
        <dd>
          {t(sourceKey(memory))}
          {memory.sourceMessageIds.length ? ` ${t('memories.detail.fromMessages', { count: memory.sourceMessageIds.length })}` : ''}
        </dd>
      </div>
      <div>
        <dt>{t('memories.detail.saved')}</dt>
        <dd>
          <time dateTime={memory.createdAt}>{full(memory.createdAt)}</time>
        </dd>
      </div>
      {changed ? (
        <div>
          <dt>{t('memories.detail.updated')}</dt>
          <dd>
            <time dateTime={memory.updatedAt}>{full(memory.updatedAt)}</time>
          </dd>
        </div>
      ) : null}
      {memory.validFrom ? (
        <div>
          <dt>{t('memories.detail.validFrom')}</dt>
          <dd>
            <time dateTime={memory.validFrom}>{full(memory.validFrom)}</time>
          </dd>
        </div>
      ) : null}
      {memory.validTo ? (
        <div>
          <dt>{t('memories.detail.validTo')}</dt>
          <dd>
            <time dateTime={memory.validTo}>{full(memory.validTo)}</time>
          </dd>
        </div>
      ) : null}
      {memory.entityNames.length ? (
        <div>
          <dt>{t('memories.detail.mentions')}</dt>
          <dd className="mem-entities">
            {memory.entityNames.map((n) => (
              <span key={n} className="badge">
                {n}
              </span>
            ))}
          </dd>
        </div>
      ) : null}
      <div>
        <dt>{t('memories.detail.uses')}</dt>
        <dd>
          <MemoryCounts memory={memory} />
        </dd>
      </div>
    </dl>
  );
}

function Loaded({ data }: { data: MemoryDetail }) {
  const { t } = useTranslation();
  const { memory, history, chain } = data;
  const sourceMessages = data.sourceMessages ?? 0;
  const [editing, setEditing] = useState(false);
  // Forget asks first only when there are messages it could hide too.
  const [confirming, setConfirming] = useState(false);
  const forgetButton = useRef<HTMLButtonElement>(null);
  const { busy, run } = useBusy({ report: reportError });
  const editButton = useRef<HTMLButtonElement>(null);
  const expired = memory.status === 'expired';
  const newer = memory.status === 'superseded' ? (chain.find((m) => m.id === memory.supersededBy) ?? null) : null;
  const forgetChange = expired ? latestForget(history) : null;

  const togglePin = () =>
    run(async () => {
      const result = await useMemories.getState().setPinned(memory.id, !memory.pinned);
      useMemories.getState().setFlash({ memoryId: memory.id, key: result.memory.pinned ? 'pinned' : 'unpinned', changeId: result.changeId });
    });

  const forget = (withSources = false) =>
    run(async () => {
      const result = await useMemories.getState().forget(memory.id, withSources);
      setConfirming(false);
      useMemories.getState().setFlash(null);
      const hidden = result.hiddenMessages ?? 0;
      useApp.getState().toast({
        tone: 'info',
        text: hidden > 0 ? t('memories.toasts.forgottenWithSources', { count: hidden }) : t('memories.toasts.forgotten'),
        action: {
          label: t('common.undo'),
          run: () => {
            void useMemories
              .getState()
              .undo(result.changeId)
              .then((m) => useMemories.getState().setFlash({ memoryId: m.id, key: 'restored', changeId: null }))
              .catch(reportError);
          },
        },
      });
    });

  const bringBack = (change: MemoryChange) =>
    run(async () => {
      const m = await useMemories.getState().undo(change.id);
      useMemories.getState().setFlash({ memoryId: m.id, key: 'restored', changeId: null });
    });

  return (
    <>
      <Flash memoryId={memory.id} />
      <div className="mem-detail-head">
        <TypeBadge type={memory.type} />
        <StatusBadge status={memory.status} />
        {memory.pinned ? (
          <span className="badge badge-accent">
            <Icon name="pins" size={12} />
            {t('memories.pinned')}
          </span>
        ) : null}
      </div>

      {editing ? (
        <EditForm
          memory={memory}
          onDone={() => {
            setEditing(false);
            requestAnimationFrame(() => editButton.current?.focus());
          }}
        />
      ) : (
        <>
          <p className={expired ? 'mem-detail-text muted' : 'mem-detail-text'}>{memory.content}</p>
          <div className="mem-detail-actions" role="group" aria-label={t('memories.actions.label')}>
            <button type="button" ref={editButton} className="button small" data-testid="memory-edit" disabled={busy} onClick={() => setEditing(true)}>
              <Icon name="pencil" size={15} />
              {t('memories.actions.edit')}
            </button>
            {!expired ? (
              <button
                type="button"
                className="button small"
                data-testid="memory-pin"
                aria-pressed={memory.pinned}
                disabled={busy}
                onClick={() => void togglePin()}
              >
                <Icon name="pins" size={15} />
                {memory.pinned ? t('memories.actions.unpin') : t('memories.actions.pin')}
              </button>
            ) : null}
            {expired ? (
              forgetChange ? (
                <button type="button" className="button small" data-testid="memory-restore" disabled={busy} onClick={() => void bringBack(forgetChange)}>
                  <Icon name="regenerate" size={15} />
                  {t('memories.detail.bringBack')}
                </button>
              ) : null
            ) : (
              <button
                type="button"
                ref={forgetButton}
                className="button small ghost mem-forget"
                data-testid="memory-forget"
                aria-expanded={sourceMessages > 0 ? confirming : undefined}
                disabled={busy || confirming}
                onClick={() => (sourceMessages > 0 ? setConfirming(true) : void forget())}
              >
                <Icon name="close" size={15} />
                {t('memories.actions.forget')}
              </button>
            )}
          </div>
          {confirming && !expired ? (
            <ForgetConfirm
              sourceMessages={sourceMessages}
              busy={busy}
              onForget={(withSources) => void forget(withSources)}
              onCancel={() => {
                setConfirming(false);
                requestAnimationFrame(() => forgetButton.current?.focus());
              }}
            />
          ) : null}
        </>
      )}

      {expired ? <p className="mem-note">{t('memories.detail.expiredNote')}</p> : null}
      {memory.status === 'superseded' ? (
        <p className="mem-note">
          {t('memories.detail.supersededNote')}{' '}
          {newer || memory.supersededBy ? (
            <button type="button" className="link-button" onClick={() => useMemories.getState().select(newer?.id ?? memory.supersededBy!)}>
              {t('memories.detail.seeNewer')}
            </button>
          ) : null}
        </p>
      ) : null}

      <Facts memory={memory} />
      {chain.length > 1 ? <Chain chain={chain} currentId={memory.id} /> : null}
      <History history={history} />
    </>
  );
}

export function MemoryDetailPanel({ id }: { id: number }) {
  const { t } = useTranslation();
  const detail = useMemories((s) => (s.detail?.id === id ? s.detail : null));
  const close = useMemories((s) => s.closePanel);

  return (
    <div className="mem-detail" data-testid="memory-detail" data-id={id}>
      <div className="mem-side-bar">
        <button type="button" className="button ghost small mem-back" onClick={close}>
          <Icon name="arrowDown" size={15} className="icon-left" />
          {t('memories.back')}
        </button>
        <h2 className="mem-side-title">{t('memories.detail.label')}</h2>
        <button type="button" className="icon-button small" aria-label={t('memories.closePanel')} title={t('memories.closePanel')} onClick={close}>
          <Icon name="close" size={16} />
        </button>
      </div>
      <div className="mem-side-body">
        {detail?.data ? (
          <Loaded data={detail.data} />
        ) : isNotFound(detail?.error) ? (
          <p className="mem-note">{t('memories.notFound')}</p>
        ) : (
          <LoadPanel error={detail?.error} loaded={false} onRetry={() => void useMemories.getState().loadDetail(id)} />
        )}
      </div>
    </div>
  );
}
