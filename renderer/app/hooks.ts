import { useCallback, useEffect, useMemo, useState, type Dispatch, type SetStateAction } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_SLEEP_TIME, sleepDay } from '../../shared/sleep-day.js';
import { currentLocale } from '../i18n/index.js';
import { daysBetween, shortDayLabel, sleepDayLabel } from '../lib/days.js';
import { formatDay, formatFull, formatWhen, calendarDaysBetween } from '../lib/time.js';
import { useApp } from '../stores/app.js';

/** A clock that ticks so "5 minutes ago" does not stay true forever. */
export function useNow(intervalMs = 60_000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const id = setInterval(() => setNow(new Date()), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs]);
  return now;
}

/** Formatters bound to the UI language and the configured time zone. */
export function useTimeFormat() {
  const { t } = useTranslation();
  const timeZone = useApp((s) => s.settings?.timeZone);
  const now = useNow();
  const locale = currentLocale();

  const when = useCallback(
    (iso: string, withTime = false) =>
      formatWhen(iso, {
        now,
        locale,
        timeZone,
        withTime,
        labels: {
          justNow: t('time.justNow'),
          yesterdayEarly: t('time.yesterdayEarly'),
          yesterdayMorning: t('time.yesterdayMorning'),
          yesterdayAfternoon: t('time.yesterdayAfternoon'),
          yesterdayEvening: t('time.yesterdayEvening'),
          yesterdayNight: t('time.yesterdayNight'),
        },
      }),
    // t is a new function whenever the language changes, so the words follow it.
    [now, locale, timeZone, t],
  );

  const full = useCallback((iso: string) => formatFull(new Date(iso), locale, timeZone), [locale, timeZone]);

  const day = useCallback(
    (iso: string) => {
      const date = new Date(iso);
      const diff = calendarDaysBetween(date, now, timeZone);
      if (diff === 0) return t('time.today');
      if (diff === 1) return t('time.yesterday');
      return formatDay(date, locale, timeZone, now);
    },
    [now, locale, timeZone, t],
  );

  return { when, full, day, timeZone };
}

/** State that goes back to `rest` by itself, `ms` after it was set to anything else ("Copied", "Saved", a glow). */
export function useFleeting<T>(rest: T, ms: number): [T, Dispatch<SetStateAction<T>>] {
  const [value, setValue] = useState<T>(rest);
  useEffect(() => {
    if (value === rest) return;
    const id = setTimeout(() => setValue(rest), ms);
    return () => clearTimeout(id);
  }, [value, rest, ms]);
  return [value, setValue];
}

export function useMediaQuery(query: string): boolean {
  const [matches, setMatches] = useState(() => typeof matchMedia === 'function' && matchMedia(query).matches);
  useEffect(() => {
    if (typeof matchMedia !== 'function') return;
    const mq = matchMedia(query);
    const update = () => setMatches(mq.matches);
    update();
    mq.addEventListener('change', update);
    return () => mq.removeEventListener('change', update);
  }, [query]);
  return matches;
}

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
  const { t } = useTranslation();
  const current = useCurrentSleepDay();
  const locale = currentLocale();
  const long = useCallback(
    (day: string) => sleepDayLabel(day, current, locale, { today: t('time.today'), yesterday: t('time.yesterday') }),
    // t is a new function whenever the language changes, so the words follow it.
    [current, locale, t],
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
