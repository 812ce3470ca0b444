// The sleep day: the day that ends at the sleep time (default 02:00) in the person's time zone,
// not at midnight. A conversation at 01:30 still belongs to the evening before.

export const DEFAULT_SLEEP_TIME = '02:00';

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

// Building an Intl.DateTimeFormat costs far more than using one (a sleep cycle asks for thousands of
// messages' days): one per time zone, kept.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function localParts(at: Date, timeZone: string): LocalParts {
  const parts = formatterFor(timeZone).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute') };
}

/** "2026-12-01 20:14" in `timeZone`. */
export function localStamp(at: Date, timeZone: string): string {
  const p = localParts(at, timeZone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${two(p.month)}-${two(p.day)} ${two(p.hour)}:${two(p.minute)}`;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The sleep day (YYYY-MM-DD) that `at` falls in. */
export function sleepDay(at: Date, sleepTime: string, timeZone: string): string {
  const [h, m] = sleepTime.split(':').map(Number) as [number, number];
  const local = localParts(at, timeZone);
  // Calendar arithmetic on the local date only (UTC as a neutral calendar), so DST shifts cannot move it.
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day));
  if (local.hour * 60 + local.minute < h * 60 + m) date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;

/** What the wall clock in `timeZone` reads at instant `t`, as a UTC timestamp of that date and time (minutes). */
function wallClock(t: number, timeZone: string): number {
  const p = localParts(new Date(t), timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
}

/**
 * The first instant at which local wall time in `timeZone` reads `dateIso` (YYYY-MM-DD) `hh:mm` or
 * later — the moment sleepDay() moves on. On a daylight-saving day the offsets before and after the
 * change differ: a wall time that happens twice (clocks set back) counts from its first occurrence,
 * and one that never happens (clocks set forward past it) from the moment the clocks jumped.
 */
function localInstant(dateIso: string, hh: number, mm: number, timeZone: string): Date {
  const [y, mo, d] = dateIso.split('-').map(Number) as [number, number, number];
  const wanted = Date.UTC(y, mo - 1, d, hh, mm);
  // The zone's offset a day before and a day after: the candidates for when the wall shows `wanted`.
  const candidates = [wanted - DAY_MS, wanted + DAY_MS].map((t) => wanted - (wallClock(t, timeZone) - t));
  const exact = candidates.filter((t) => wallClock(t, timeZone) === wanted);
  if (exact.length > 0) return new Date(Math.min(...exact));
  // Skipped: the clocks jumped from before `wanted` to after it somewhere between the candidates.
  let lo = Math.min(...candidates);
  let hi = Math.max(...candidates);
  while (hi - lo > 60_000) {
    const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
    if (wallClock(mid, timeZone) >= wanted) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}

/**
 * When sleep day `day` began: that date at the sleep time, local — the instant sleepDay() turns to
 * `day`. On a daylight-saving night whose sleep time does not exist (02:00 skipped), this is the
 * moment the clocks jumped past it; when it happens twice (clocks set back), the first time.
 */
export function sleepDayStart(day: string, sleepTime: string, timeZone: string): Date {
  const [h, m] = sleepTime.split(':').map(Number) as [number, number];
  return localInstant(day, h, m, timeZone);
}

/** The day after `day` (YYYY-MM-DD), as calendar arithmetic. */
export function nextDay(day: string, delta = 1): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + delta);
  return d.toISOString().slice(0, 10);
}
