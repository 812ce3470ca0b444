import { useCallback, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_SLEEP_TIME, sleepDay } from '../../../shared/sleep-day.js';
import { useNow } from '../../app/hooks.js';
import { currentLocale } from '../../i18n/index.js';
import { useApp } from '../../stores/app.js';
import { daysBetween, shortDayLabel, sleepDayLabel } from './days.js';

/** The sleep day it is now, in the configured sleep time and time zone. */
export function useCurrentSleepDay(): string {
  const now = useNow();
  const sleepTime = useApp((s) => s.settings?.sleepTime ?? DEFAULT_SLEEP_TIME);
  const timeZone = useApp((s) => s.settings?.timeZone) || Intl.DateTimeFormat().resolvedOptions().timeZone;
  return useMemo(() => {
    try {
      return sleepDay(now, sleepTime, timeZone);
    } catch {
      return now.toISOString().slice(0, 10);
    }
  }, [now, sleepTime, timeZone]);
}

/** Labels for sleep days: "Today", "Yesterday", "Monday, 8 May"; and a short one for axes. */
export function useDayLabels() {
  const { t, i18n } = useTranslation();
  const current = useCurrentSleepDay();
  const locale = currentLocale();
  const lang = i18n.language;
  const long = useCallback(
    (day: string) => sleepDayLabel(day, current, locale, { today: t('time.today'), yesterday: t('time.yesterday') }),
    // lang: the words change with it even though t is stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [current, locale, t, lang],
  );
  const short = useCallback((day: string) => shortDayLabel(day, locale), [locale]);
  /** 'today' / 'yesterday' relative to the current sleep day, else null. */
  const relative = useCallback(
    (day: string): 'today' | 'yesterday' | null => {
      const diff = daysBetween(day, current);
      return diff === 0 ? 'today' : diff === 1 ? 'yesterday' : null;
    },
    [current],
  );
  return { long, short, relative, current };
}
