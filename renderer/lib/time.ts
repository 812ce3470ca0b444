// Timestamps in the person's locale and configured time zone; relative while recent.
// Pure (Intl only) so it can be tested in Node.

export interface TimeLabels {
  justNow: string;
  yesterdayEarly: string;
  yesterdayMorning: string;
  yesterdayAfternoon: string;
  yesterdayEvening: string;
  yesterdayNight: string;
}

export interface WhenOptions {
  now: Date;
  locale: string;
  /** IANA zone; undefined means the runtime's own. */
  timeZone?: string;
  labels: TimeLabels;
  /** Lists want it short ("Tuesday"); messages want the hour too ("Tuesday 14:05"). */
  withTime?: boolean;
}

const dtfCache = new Map<string, Intl.DateTimeFormat>();
function dtf(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${JSON.stringify(options)}`;
  let f = dtfCache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, options);
    dtfCache.set(key, f);
  }
  return f;
}

function safeZone(timeZone: string | undefined): string | undefined {
  if (!timeZone) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}

/** Calendar date and hour of an instant as seen in a time zone. */
export function zonedParts(date: Date, timeZone?: string): { dayNumber: number; hour: number; year: number } {
  const parts = dtf('en-US', {
    timeZone: safeZone(timeZone),
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const year = get('year');
  const dayNumber = Math.floor(Date.UTC(year, get('month') - 1, get('day')) / 86_400_000);
  return { dayNumber, hour: get('hour') % 24, year };
}

/** How many calendar days apart two instants are in a zone (0 = same day, 1 = yesterday). */
export function calendarDaysBetween(earlier: Date, later: Date, timeZone?: string): number {
  return zonedParts(later, timeZone).dayNumber - zonedParts(earlier, timeZone).dayNumber;
}

export function partOfDay(hour: number): keyof Omit<TimeLabels, 'justNow'> {
  if (hour < 5) return 'yesterdayEarly';
  if (hour < 12) return 'yesterdayMorning';
  if (hour < 17) return 'yesterdayAfternoon';
  if (hour < 21) return 'yesterdayEvening';
  return 'yesterdayNight';
}

export function formatClock(date: Date, locale: string, timeZone?: string): string {
  return dtf(locale, { timeZone: safeZone(timeZone), timeStyle: 'short' }).format(date);
}

export function formatFull(date: Date, locale: string, timeZone?: string): string {
  return dtf(locale, { timeZone: safeZone(timeZone), dateStyle: 'full', timeStyle: 'short' }).format(date);
}

/** A day heading: "Today" and "Yesterday" come from the caller; older days are spelled out. */
export function formatDay(date: Date, locale: string, timeZone: string | undefined, now: Date): string {
  const sameYear = zonedParts(date, timeZone).year === zonedParts(now, timeZone).year;
  return dtf(locale, {
    timeZone: safeZone(timeZone),
    weekday: 'long',
    month: 'long',
    day: 'numeric',
    ...(sameYear ? {} : { year: 'numeric' }),
  }).format(date);
}

export function formatWhen(value: Date | string, options: WhenOptions): string {
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return '';
  const { now, locale, labels } = options;
  const timeZone = safeZone(options.timeZone);
  const seconds = (now.getTime() - date.getTime()) / 1000;

  // A little clock skew between host and renderer must not read as "in 2 seconds".
  if (seconds < 45) return labels.justNow;
  if (seconds < 60 * 60) {
    const rtf = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'long' });
    return rtf.format(-Math.max(1, Math.round(seconds / 60)), 'minute');
  }

  const days = calendarDaysBetween(date, now, timeZone);
  const clock = formatClock(date, locale, timeZone);
  if (days <= 0) {
    if (seconds < 6 * 60 * 60 && !options.withTime) {
      const rtf = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'long' });
      return rtf.format(-Math.round(seconds / 3600), 'hour');
    }
    return clock;
  }
  if (days === 1) {
    const words = labels[partOfDay(zonedParts(date, timeZone).hour)];
    return options.withTime ? `${words} · ${clock}` : words;
  }
  if (days < 7) {
    const weekday = dtf(locale, { timeZone, weekday: 'long' }).format(date);
    return options.withTime ? `${weekday} ${clock}` : weekday;
  }
  const sameYear = zonedParts(date, timeZone).year === zonedParts(now, timeZone).year;
  const day = dtf(locale, {
    timeZone,
    month: 'short',
    day: 'numeric',
    ...(sameYear ? {} : { year: 'numeric' }),
  }).format(date);
  return options.withTime ? `${day} ${clock}` : day;
}

/** "02:00" as this locale writes a time of day ("2:00 AM" in the US), for a wall-clock setting. */
export function formatWallClock(hhmm: string, locale: string): string {
  const match = /^(\d{1,2}):(\d{2})$/.exec(hhmm);
  if (!match) return hhmm;
  const d = new Date(2000, 0, 1, Number(match[1]), Number(match[2]));
  return dtf(locale, { timeStyle: 'short' }).format(d);
}
