// A night that did not work says so: the failed step's words (in the person's language when the host
// said why in numbers — every answer unusable, or no answer at all), a way to the calls in the audit
// log, and "try again". The Diary's and Dreams' empty states show the same words with a way to Sleep,
// instead of an empty page that does not say why.
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import type { SleepRun, SleepStepInfo } from '../../../shared/api.js';
import { Icon } from '../../components/Icon.js';
import { reportError, useApp } from '../../stores/app.js';
import { useSleep, type AuditFilter } from '../../stores/sleep.js';

/** The element the audit log renders under, for "see the calls". */
export const AUDIT_ANCHOR = 'sleep-audit';

/** The first failed step of a run, if any. */
export function failedStep(run: SleepRun | null | undefined): SleepStepInfo | null {
  return run?.steps.find((s) => s.status === 'failed') ?? null;
}

/** Which of the host's counted reasons a failed step carries: every answer unusable, or no answer at all. */
function failureKind(step: SleepStepInfo): 'unusable' | 'unreachable' | null {
  if ((step.stats?.unusable_answers ?? 0) > 0) return 'unusable';
  if ((step.stats?.failed_calls ?? 0) > 0) return 'unreachable';
  return null;
}

/** A failed step's words: the translated reason when the host counted one, else its own message. */
export function useFailureWords() {
  const { t } = useTranslation();
  return (step: SleepStepInfo): string => {
    const kind = failureKind(step);
    return kind ? t(`sleep.failed.${kind}`) : (step.error ?? t('sleep.failed.unknown'));
  };
}

/** Opens the audit log on the failed calls and scrolls to it. */
function showCalls(step: SleepStepInfo): void {
  const filter: AuditFilter = failureKind(step) === 'unreachable' ? 'error' : failureKind(step) === 'unusable' ? 'invalid' : 'all';
  useSleep.getState().setAuditFilter(filter);
  const el = document.getElementById(AUDIT_ANCHOR);
  el?.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  el?.focus({ preventScroll: true });
}

/** Under a failed step of the latest night, in the Sleep view: why, the calls, try again. */
export function FailedStepNote({ step, latest }: { step: SleepStepInfo; latest: boolean }) {
  const { t } = useTranslation();
  const words = useFailureWords();
  const running = useSleep((s) => s.progress !== null || Boolean(s.status.data?.running) || s.starting);
  return (
    <div className="night-failed" data-testid="step-failed-note" data-kind={failureKind(step) ?? 'other'}>
      <p className="night-failed-words">{words(step)}</p>
      <div className="night-failed-actions">
        <button type="button" className="link-button" data-testid="see-calls" onClick={() => showCalls(step)}>
          {t('sleep.failed.seeCalls')}
        </button>
        {latest ? (
          <button
            type="button"
            className="button small"
            data-testid="sleep-try-again"
            disabled={running}
            onClick={() => void useSleep.getState().sleepNow().catch(reportError)}
          >
            <Icon name="regenerate" size={14} />
            {t('sleep.failed.tryAgain')}
          </button>
        ) : null}
      </div>
    </div>
  );
}

/**
 * For an empty Diary or Dreams page: when the last night failed, says so and why, with a way to the
 * Sleep view; nothing otherwise (the page's own empty words stay).
 */
export function LastNightFailed({ testId }: { testId: string }) {
  const { t } = useTranslation();
  const lastRun = useSleep((s) => s.status.data?.lastRun ?? null);
  const words = useFailureWords();
  useEffect(() => {
    void useSleep.getState().refreshStatus();
  }, []);
  if (lastRun?.status !== 'failed') return null;
  const step = failedStep(lastRun);
  return (
    <div className="night-failed night-failed-banner" role="note" data-testid={testId}>
      <p className="night-failed-title">
        <Icon name="alert" size={16} />
        <span>{t('sleep.failed.lastNight')}</span>
      </p>
      <p className="night-failed-words">
        {step ? words(step) : (lastRun.error ?? t('sleep.failed.unknown'))} {t('sleep.failed.nothingNew')}
      </p>
      <button type="button" className="button small" data-testid={`${testId}-open-sleep`} onClick={() => useApp.getState().setView('sleep')}>
        <Icon name="sleep" size={14} />
        {t('sleep.failed.openSleep')}
      </button>
    </div>
  );
}
