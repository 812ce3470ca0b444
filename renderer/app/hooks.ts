import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { currentLocale } from '../i18n/index.js';
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
  const { t, i18n } = useTranslation();
  const timeZone = useApp((s) => s.settings?.timeZone);
  const now = useNow();
  const locale = currentLocale();
  const lang = i18n.language;

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
    // lang: labels change with it even though t is stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [now, locale, timeZone, t, lang],
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
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [now, locale, timeZone, t, lang],
  );

  return { when, full, day, timeZone };
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
