// Sleep: the night log. On top, when the next sleep comes, tonight's budget and "Sleep now" (with
// live progress and Stop while a cycle runs); then the last nights step by step, the morning digest
// with undo per item, and the audit log of every background model call.
import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon.js';
import { RetryNote } from '../../components/LoadPanel.js';
import { SleepNowButton, useNextSleepWords } from '../../components/SleepNow.js';
import { currentLocale } from '../../i18n/index.js';
import { formatCompact, share } from '../../lib/night.js';
import { reportError, useApp } from '../../stores/app.js';
import { useSleep } from '../../stores/sleep.js';
import { AuditLog } from './AuditLog.js';
import { Digest } from './Digest.js';
import { RunLog, useStepName } from './RunLog.js';

function Meter({ label, used, max, testId }: { label: string; used: number; max: number; testId: string }) {
  const value = share(used, max);
  return (
    <div className="budget-meter" data-testid={testId}>
      <span className="budget-label">{label}</span>
      <span
        className={`meter${value >= 1 ? ' full' : ''}`}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={Math.min(used, max)}
      >
        <span className="meter-fill" style={{ width: `${Math.round(value * 100)}%` }} />
      </span>
    </div>
  );
}

function Budget() {
  const { t } = useTranslation();
  const budget = useSleep((s) => s.status.data?.budget);
  const locale = currentLocale();
  if (!budget) return null;
  const n = (v: number) => formatCompact(v, locale);
  return (
    <div className="sleep-budget" aria-label={t('sleep.budget.title')} role="group">
      <span className="sleep-budget-title" title={t('sleep.budget.help')}>
        {t('sleep.budget.title')}
      </span>
      <Meter
        testId="budget-calls"
        label={t('sleep.budget.calls', { used: n(budget.calls), max: n(budget.maxCalls) })}
        used={budget.calls}
        max={budget.maxCalls}
      />
      <Meter
        testId="budget-tokens"
        label={t('sleep.budget.tokens', { used: n(budget.tokens), max: n(budget.maxTokens) })}
        used={budget.tokens}
        max={budget.maxTokens}
      />
    </div>
  );
}

function Progress() {
  const { t } = useTranslation();
  const progress = useSleep((s) => s.progress ?? s.status.data?.running ?? null);
  const stopping = useSleep((s) => s.stopping);
  const stepName = useStepName();
  if (!progress) return null;
  const { done, total } = progress;
  const text = progress.stepId ? t('sleep.progress', { step: stepName(progress.stepId), done, total }) : t('sleep.progressStarting', { done, total });
  const pct = total > 0 ? Math.round((Math.min(done, total) / total) * 100) : 0;
  return (
    <div className="sleep-progress" data-testid="sleep-progress" data-done={done} data-total={total} data-step={progress.stepId}>
      <div className="sleep-progress-top">
        <span className="pulse-dot" aria-hidden="true" />
        <span className="sleep-progress-text" aria-live="polite">
          {text}
        </span>
        <button
          type="button"
          className="button small"
          data-testid="sleep-stop"
          disabled={stopping}
          title={t('sleep.stopHelp')}
          onClick={() => {
            void useSleep
              .getState()
              .stop()
              .then((stopped) => {
                if (stopped) useApp.getState().toast({ tone: 'info', text: t('sleep.stopRequested') });
              })
              .catch(reportError);
          }}
        >
          <Icon name="stop" size={14} />
          {stopping ? t('sleep.stopping') : t('sleep.stop')}
        </button>
      </div>
      <div
        className="progress-track"
        role="progressbar"
        aria-label={t('sleep.progressLabel')}
        aria-valuemin={0}
        aria-valuemax={total || 1}
        aria-valuenow={done}
        aria-valuetext={text}
      >
        <span className="progress-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

function Header() {
  const { t } = useTranslation();
  const status = useSleep((s) => s.status);
  const running = useSleep((s) => s.progress !== null || Boolean(s.status.data?.running));
  const next = useNextSleepWords();
  const auto = useApp((s) => s.settings?.sleep?.auto ?? true);
  const timeZone = useApp((s) => s.settings?.timeZone) || Intl.DateTimeFormat().resolvedOptions().timeZone;
  const setView = useApp((s) => s.setView);
  const titleId = useId();

  return (
    <header className="sleep-card sleep-head" aria-labelledby={titleId}>
      <div className="sleep-head-row">
        <div className="sleep-head-text">
          <h1 className="page-title" id={titleId}>
            {t('sleep.title')}
          </h1>
          <p className="sleep-intro">{t('sleep.intro')}</p>
          <p className="sleep-next" data-testid="sleep-next">
            {auto ? (
              <>
                {t('sleep.nextLabel', { when: next })} <span className="sleep-zone">{timeZone.replace(/_/g, ' ')}</span>
              </>
            ) : (
              t('sleep.autoOff')
            )}{' '}
            <button type="button" className="link-button" onClick={() => setView('settings', 'memory')}>
              {t('sleep.settingsLink')}
            </button>
          </p>
        </div>
        {running ? null : <SleepNowButton />}
      </div>
      {status.error && !status.data ? <RetryNote error={status.error} compact onRetry={() => void useSleep.getState().refreshStatus()} /> : null}
      <Progress />
      <Budget />
    </header>
  );
}

export function SleepView() {
  useEffect(() => {
    useSleep.getState().refreshAll();
  }, []);
  return (
    <div className="sleep" data-testid="view-sleep">
      <div className="sleep-inner">
        <Header />
        <div className="sleep-grid">
          <RunLog />
          <Digest />
        </div>
        <AuditLog />
      </div>
    </div>
  );
}
