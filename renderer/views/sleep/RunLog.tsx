// The last nights: the latest run laid out as a small DAG — each step in order, indented under what
// it waits for, with its status in an icon and a word, how long it took, its counts and why it was
// skipped or failed. Older runs fold away behind their one-line summary.
import { useId, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { SleepRun, SleepStepInfo, SleepStepStatus } from '../../../shared/api.js';
import { useDayLabels, useNow, useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { currentLocale } from '../../i18n/index.js';
import { useSleep } from '../../stores/sleep.js';
import { FailedStepNote } from './FailedNight.js';
import { durationMs, formatDuration, formatStat, layoutSteps, statChips, statLabel } from '../../lib/night.js';

/** A step's name in words; an id the UI does not know yet is shown as it is. */
export function useStepName() {
  const { t } = useTranslation();
  return (id: string | null | undefined) => (id ? t(`sleep.steps.${id}`, { defaultValue: id }) : '—');
}

export function StatusIcon({ status }: { status: SleepStepStatus | SleepRun['status'] }) {
  switch (status) {
    case 'done':
      return (
        <span className="step-icon is-done" aria-hidden="true">
          <Icon name="check" size={14} />
        </span>
      );
    case 'failed':
      return (
        <span className="step-icon is-failed" aria-hidden="true">
          <Icon name="alert" size={14} />
        </span>
      );
    case 'running':
      return (
        <span className="step-icon is-running" aria-hidden="true">
          <span className="spinner" />
        </span>
      );
    case 'skipped':
    case 'stopped':
      return (
        <span className={`step-icon is-${status}`} aria-hidden="true">
          <svg width="14" height="14" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round">
            <path d="M7 12h10" />
          </svg>
        </span>
      );
    default:
      return <span className="step-icon is-pending" aria-hidden="true" />;
  }
}

function Steps({ run, latest }: { run: SleepRun; latest: boolean }) {
  const { t } = useTranslation();
  const stepName = useStepName();
  const locale = currentLocale();
  // A running night's clock ticks each second; a finished one never changes.
  const now = useNow(run.status === 'running' ? 1000 : 3_600_000);
  const rows = layoutSteps(run.steps);
  // A step skipped for want of another is said in the person's language with that step's own name;
  // any other reason is the host's.
  const reasonInWords = (step: SleepStepInfo) =>
    step.waitedFor ? t(`sleep.needsStep.${step.waitedFor.how}`, { step: stepName(step.waitedFor.step) }) : step.reason;
  if (!rows.length) return <p className="help">{t('sleep.noSteps')}</p>;
  return (
    <ol className="dag" aria-label={t('sleep.stepsLabel')}>
      {rows.map(({ step, depth, after }) => {
        const ms = durationMs(step.startedAt, step.finishedAt, step.status === 'running' ? now : undefined);
        const chips = statChips(step.stats);
        return (
          <li
            key={step.stepId}
            className={`dag-step depth-${depth}`}
            data-testid="sleep-step"
            data-step={step.stepId}
            data-status={step.status}
            style={{ ['--depth' as string]: depth }}
          >
            <StatusIcon status={step.status} />
            <div className="dag-main">
              <div className="dag-top">
                <span className="dag-name">{stepName(step.stepId)}</span>
                <span className={`dag-status is-${step.status}`}>{t(`sleep.stepStatus.${step.status}`)}</span>
                {ms !== null ? <span className="dag-time">{formatDuration(ms, locale)}</span> : null}
              </div>
              {after.length ? (
                <p className="dag-after">
                  <span aria-hidden="true">↳ </span>
                  {t('sleep.after', { steps: after.map((a) => stepName(a)).join(', ') })}
                </p>
              ) : null}
              {chips.length ? (
                <ul className="chips" aria-label={t('sleep.statsLabel')}>
                  {chips.map((c) => (
                    <li key={c.key} className="chip">
                      {t(`sleep.stats.${c.key}`, { defaultValue: statLabel(c.key) })} <strong>{formatStat(c.key, c.value, locale)}</strong>
                    </li>
                  ))}
                </ul>
              ) : null}
              {step.status === 'failed' ? (
                <FailedStepNote step={step} latest={latest} />
              ) : step.error ? (
                <p className="dag-error">{step.error}</p>
              ) : step.reason ? (
                <p className="dag-reason">{reasonInWords(step)}</p>
              ) : null}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

function RunHead({ run, as = 'h3' }: { run: SleepRun; as?: 'h3' | 'span' }): ReactNode {
  const { t } = useTranslation();
  const { long, relative } = useDayLabels();
  const { when, full } = useTimeFormat();
  const locale = currentLocale();
  const ms = durationMs(run.startedAt, run.finishedAt);
  const Title = as;
  const rel = relative(run.sleepDay);
  return (
    <span className="run-head">
      <StatusIcon status={run.status} />
      <Title className="run-title">{rel ? t(`sleep.night.${rel}`) : t('sleep.night.other', { day: long(run.sleepDay) })}</Title>
      <span className={`run-status is-${run.status}`}>{t(`sleep.runStatus.${run.status}`)}</span>
      <span className="run-meta">
        <time dateTime={run.startedAt} title={full(run.startedAt)}>
          {when(run.startedAt, true)}
        </time>
        {' · '}
        {t(`sleep.trigger.${run.trigger}`)}
        {ms !== null && run.status !== 'running' ? ` · ${t('sleep.took', { duration: formatDuration(ms, locale) })}` : null}
      </span>
    </span>
  );
}

function RunCard({ run, latest }: { run: SleepRun; latest: boolean }) {
  const { t } = useTranslation();
  const stepName = useStepName();
  // A failed night names its failed steps in words (the host's "light-sleep failed" names ids).
  const failed = run.status === 'failed' ? run.steps.filter((s) => s.status === 'failed').map((s) => stepName(s.stepId)) : [];
  const errorNote = run.error ? (
    <p className={`run-error${run.status === 'failed' ? ' is-failed' : ''}`} role="note">
      <Icon name="alert" size={15} />
      <span>
        {run.status === 'stopped'
          ? t('sleep.stoppedBecause', { reason: run.error })
          : failed.length
            ? t('sleep.failed.stepsFailed', { steps: failed.join(', ') })
            : run.error}
      </span>
    </p>
  ) : null;
  if (latest) {
    return (
      <article className="run run-latest" data-testid="sleep-run" data-run-id={run.id} data-status={run.status}>
        <RunHead run={run} />
        {errorNote}
        <Steps run={run} latest />
      </article>
    );
  }
  return (
    <details className="run run-older" data-testid="sleep-run" data-run-id={run.id} data-status={run.status}>
      <summary aria-label={t('sleep.showRun')}>
        <RunHead run={run} as="span" />
      </summary>
      {errorNote}
      <Steps run={run} latest={false} />
    </details>
  );
}

export function RunLog() {
  const { t } = useTranslation();
  const runs = useSleep((s) => s.runs);
  const titleId = useId();
  return (
    <section className="sleep-card" aria-labelledby={titleId}>
      <h2 className="sleep-section-title" id={titleId}>
        {t('sleep.runsTitle')}
      </h2>
      <LoadPanel error={runs.items.length ? null : runs.error} loaded={runs.loaded} compact onRetry={() => void useSleep.getState().refreshRuns()}>
        {!runs.items.length ? (
          <p className="sleep-empty-note">{t('sleep.runsEmpty')}</p>
        ) : (
          <div className="runs">
            {runs.items.map((run, i) => (
              <RunCard key={run.id} run={run} latest={i === 0} />
            ))}
          </div>
        )}
      </LoadPanel>
    </section>
  );
}
