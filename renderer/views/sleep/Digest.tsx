// The morning digest: what the night changed in memory, in the companion's words, each change with
// its own undo — and deep sleep's suggestions to pin or unpin, which are the person's to decide.
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { DigestChange, SleepProposal } from '../../../shared/api.js';
import { openMemory } from '../../app/actions.js';
import { useCurrentSleepDay, useDayLabels, useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { currentLocale } from '../../i18n/index.js';
import { reasonWords } from '../../lib/memoryReason.js';
import { proposalReasonWords } from '../../lib/proposalReason.js';
import { reportError } from '../../stores/app.js';
import { useSleep } from '../../stores/sleep.js';

/** One change of the night with its reason in the window's language and its undo. */
export function ChangeItem({ change }: { change: DigestChange }) {
  const { t } = useTranslation();
  const undoing = useSleep((s) => Boolean(s.undoing[change.changeId]));
  const undone = change.undoneBy !== null;
  const why = reasonWords(change, t, { locale: currentLocale(), currentDay: useCurrentSleepDay() });
  return (
    <li
      className={`digest-item${undone ? ' undone' : ''}`}
      data-testid="digest-item"
      data-change-id={change.changeId}
      data-memory-id={change.memoryId}
      data-undone={undone}
    >
      <div className="digest-item-body">
        <button type="button" className="digest-text" title={t('sleep.digest.openMemory')} onClick={() => openMemory(change.memoryId)}>
          {change.text}
        </button>
        {why !== null ? <p className="digest-reason">{t('sleep.digest.why', { reason: why })}</p> : null}
      </div>
      {undone ? (
        <span className="digest-undone" data-testid="digest-undone">
          {t('sleep.digest.undone')}
        </span>
      ) : (
        <button
          type="button"
          className="button ghost small digest-undo"
          data-testid="digest-undo"
          disabled={undoing}
          aria-label={`${t('common.undo')}: ${change.text}`}
          onClick={() => void useSleep.getState().undoChange(change.changeId).catch(reportError)}
        >
          {undoing ? <span className="spinner" aria-hidden="true" /> : <Icon name="regenerate" size={14} className="flip-x" />}
          {t('common.undo')}
        </button>
      )}
    </li>
  );
}

function Changes({ title, items, kind }: { title: string; items: DigestChange[]; kind: string }) {
  const id = useId();
  if (!items.length) return null;
  return (
    <section className="digest-group" data-group={kind} aria-labelledby={id}>
      <h3 className="digest-group-title" id={id}>
        {title} <span className="digest-count">{items.length}</span>
      </h3>
      <ul className="digest-list">
        {items.map((c) => (
          <ChangeItem key={c.changeId} change={c} />
        ))}
      </ul>
    </section>
  );
}

/** A pin suggestion with its reason in the window's language; accepting or dismissing it is the person's call. */
function Proposal({ proposal }: { proposal: SleepProposal }) {
  const { t } = useTranslation();
  const why = proposalReasonWords(proposal, t, { locale: currentLocale(), currentDay: useCurrentSleepDay() });
  const busy = useSleep((s) => Boolean(s.resolving[proposal.id]));
  const resolve = (accept: boolean) => void useSleep.getState().resolveProposal(proposal.id, accept).catch(reportError);
  return (
    <li className="digest-item digest-proposal" data-testid="digest-proposal" data-id={proposal.id} data-status={proposal.status}>
      <div className="digest-item-body">
        <p className="digest-ask">{proposal.action === 'pin' ? t('sleep.digest.proposePin') : t('sleep.digest.proposeUnpin')}</p>
        <button type="button" className="digest-text" title={t('sleep.digest.openMemory')} onClick={() => openMemory(proposal.memoryId)}>
          {proposal.text}
        </button>
        <p className="digest-reason" data-testid="proposal-reason">
          {t('sleep.digest.why', { reason: why })}
        </p>
      </div>
      {proposal.status === 'open' ? (
        <div className="digest-actions">
          <button type="button" className="button small" data-testid="proposal-accept" disabled={busy} onClick={() => resolve(true)}>
            {proposal.action === 'pin' ? t('sleep.digest.acceptPin') : t('sleep.digest.acceptUnpin')}
          </button>
          <button type="button" className="button ghost small" data-testid="proposal-dismiss" disabled={busy} onClick={() => resolve(false)}>
            {t('sleep.digest.dismiss')}
          </button>
        </div>
      ) : (
        <span className="digest-undone">{t(`sleep.digest.${proposal.status}`)}</span>
      )}
    </li>
  );
}

export function Digest() {
  const { t } = useTranslation();
  const digest = useSleep((s) => s.digest);
  const { long, relative } = useDayLabels();
  const { full, when } = useTimeFormat();
  const titleId = useId();
  const d = digest.data;
  const nothingChanged = d && !d.added.length && !d.changed.length && !d.superseded.length;

  return (
    <section className="sleep-card digest" data-testid="digest" data-day={d?.day} aria-labelledby={titleId}>
      <h2 className="sleep-section-title" id={titleId}>
        {t('sleep.digest.title')}
      </h2>
      <LoadPanel error={d ? null : digest.error} loaded={digest.loaded} compact onRetry={() => void useSleep.getState().refreshDigest()}>
        {!d ? (
          <p className="sleep-empty-note">{t('sleep.digest.none')}</p>
        ) : (
          <>
            <p className="digest-when">
              {relative(d.day) === 'today'
                ? t('sleep.digest.afterToday')
                : relative(d.day) === 'yesterday'
                  ? t('sleep.digest.afterYesterday')
                  : t('sleep.digest.after', { day: long(d.day) })}{' '}
              ·{' '}
              <time dateTime={d.createdAt} title={full(d.createdAt)}>
                {when(d.createdAt, true)}
              </time>
            </p>
            <p className="digest-summary" data-testid="digest-summary">
              {d.summary}
            </p>
            <ul className="chips digest-diary" aria-label={t('sleep.digest.diaryLabel')}>
              {(['anchors', 'imprints', 'narratives', 'dreams'] as const).map((k) => (
                <li key={k} className="chip">
                  {t(`sleep.digest.diaryParts.${k}`)} <strong>{d.diary[k]}</strong>
                </li>
              ))}
            </ul>
            {nothingChanged ? <p className="sleep-empty-note">{t('sleep.digest.nothingChanged')}</p> : null}
            <Changes kind="added" title={t('sleep.digest.added')} items={d.added} />
            <Changes kind="changed" title={t('sleep.digest.changed')} items={d.changed} />
            <Changes kind="superseded" title={t('sleep.digest.superseded')} items={d.superseded} />
            {d.proposals.length ? (
              <section className="digest-group" data-group="proposals" aria-labelledby={`${titleId}-p`}>
                <h3 className="digest-group-title" id={`${titleId}-p`}>
                  {t('sleep.digest.proposals')} <span className="digest-count">{d.proposals.length}</span>
                </h3>
                <p className="help">{t('sleep.digest.proposalsHelp')}</p>
                <ul className="digest-list">
                  {d.proposals.map((p) => (
                    <Proposal key={p.id} proposal={p} />
                  ))}
                </ul>
              </section>
            ) : null}
          </>
        )}
      </LoadPanel>
    </section>
  );
}
