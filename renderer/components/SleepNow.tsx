// "Sleep now" — from the Sleep view's header and from the Diary's and Dreams' empty states — and the
// next scheduled sleep in words ("tonight at 02:00").
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_SLEEP_TIME } from '../../shared/sleep-day.js';
import { useNow } from '../app/hooks.js';
import { Icon } from './Icon.js';
import { errorWords } from '../i18n/errors.js';
import { currentLocale } from '../i18n/index.js';
import { formatClock, formatFull, formatWallClock } from '../lib/time.js';
import { reportError, useApp } from '../stores/app.js';
import { useSleep } from '../stores/sleep.js';
import { nextSleepKind } from '../lib/night.js';

/** "tonight at 02:00", "tomorrow at 02:00", or a date — from the host's schedule when known. */
export function useNextSleepWords(): string {
  const { t } = useTranslation();
  const now = useNow();
  const nextAt = useSleep((s) => s.status.data?.nextAt);
  const sleepTime = useApp((s) => s.settings?.sleepTime ?? DEFAULT_SLEEP_TIME);
  const timeZone = useApp((s) => s.settings?.timeZone) || undefined;
  const locale = currentLocale();
  const next = nextAt ? new Date(nextAt) : null;
  if (!next || Number.isNaN(next.getTime())) return t('sleep.next.tonight', { time: formatWallClock(sleepTime, locale) });
  const kind = nextSleepKind(next, now, timeZone);
  if (kind === 'date') return t('sleep.next.date', { date: formatFull(next, locale, timeZone) });
  return t(`sleep.next.${kind}`, { time: formatClock(next, locale, timeZone) });
}

/**
 * Starts a cycle now. Disabled, with the reason in words, while the host says it cannot (no model
 * connection) or while one is already running.
 */
export function SleepNowButton({
  testId = 'sleep-now',
  goToSleep = false,
  className = 'button primary',
}: {
  testId?: string;
  goToSleep?: boolean;
  className?: string;
}) {
  const { t } = useTranslation();
  const status = useSleep((s) => s.status);
  const running = useSleep((s) => s.progress !== null || Boolean(s.status.data?.running));
  const starting = useSleep((s) => s.starting);
  const blocked = status.data?.blocked ?? null;
  // The host's reason in the person's language when it has a code for it.
  const blockedCode = status.data?.blockedCode ?? null;
  const reason = blockedCode ? errorWords(t, { code: blockedCode, message: blocked ?? '' }).what : blocked;

  useEffect(() => {
    if (!useSleep.getState().status.loaded) void useSleep.getState().refreshStatus();
  }, []);

  const onClick = () => {
    void (async () => {
      const runId = await useSleep.getState().sleepNow();
      if (runId === null && !useSleep.getState().progress) {
        useApp.getState().toast({ tone: 'info', text: t('sleep.notStarted') });
        return;
      }
      if (goToSleep) useApp.getState().setView('sleep');
    })().catch(reportError);
  };

  const reasonId = `${testId}-reason`;
  return (
    <div className="sleep-now-wrap">
      <button
        type="button"
        className={className}
        data-testid={testId}
        disabled={Boolean(blocked) || running || starting}
        aria-describedby={blocked ? reasonId : undefined}
        onClick={onClick}
      >
        {starting ? <span className="spinner" aria-hidden="true" /> : <Icon name="sleep" size={17} />}
        {running ? t('sleep.sleeping') : starting ? t('sleep.starting') : t('sleep.now')}
      </button>
      {blocked ? (
        <p className="sleep-blocked" id={reasonId} data-testid="sleep-blocked">
          <Icon name="alert" size={15} />
          <span>
            {t('sleep.blocked', { reason })}
            <button type="button" className="link-button" onClick={() => useApp.getState().setView('settings', 'models')}>
              {t('sleep.connectModel')}
            </button>
          </span>
        </p>
      ) : null}
    </div>
  );
}
