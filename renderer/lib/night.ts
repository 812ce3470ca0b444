// The Sleep view's pure parts: a run's steps laid out as a small DAG, durations, the next sleep in
// words, budget shares and step stats. No React; tested in Node.
import type { SleepStepInfo } from '../../shared/api.js';
import { calendarDaysBetween, zonedParts } from './time.js';

export interface StepRow {
  step: SleepStepInfo;
  /** Longest chain of dependencies before it (0 for a step that waits for nothing), capped. */
  depth: number;
  /** The steps it waits for, in run order. */
  after: string[];
}

export const MAX_DEPTH = 3;

/**
 * Steps in a stable run order (each after what it depends on, otherwise as given) with their depth
 * for indentation. Unknown dependencies are ignored; a cycle cannot hang it.
 */
export function layoutSteps(steps: readonly SleepStepInfo[]): StepRow[] {
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  const order: SleepStepInfo[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (s: SleepStepInfo) => {
    if (state.get(s.stepId)) return;
    state.set(s.stepId, 'visiting');
    for (const dep of s.dependsOn) {
      const d = byId.get(dep);
      if (d && !state.get(dep)) visit(d);
    }
    state.set(s.stepId, 'done');
    order.push(s);
  };
  for (const s of steps) visit(s);

  const depth = new Map<string, number>();
  const position = new Map(order.map((s, i) => [s.stepId, i]));
  for (const s of order) {
    let d = 0;
    for (const dep of s.dependsOn) {
      const dd = depth.get(dep);
      if (dd !== undefined) d = Math.max(d, dd + 1);
    }
    depth.set(s.stepId, d);
  }
  return order.map((step) => ({
    step,
    depth: Math.min(MAX_DEPTH, depth.get(step.stepId) ?? 0),
    after: step.dependsOn.filter((d) => byId.has(d)).sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0)),
  }));
}

/** Milliseconds between two ISO times; null unless both are there and in order. */
export function durationMs(startedAt: string | null, finishedAt: string | null, now?: Date): number | null {
  if (!startedAt) return null;
  const start = Date.parse(startedAt);
  const end = finishedAt ? Date.parse(finishedAt) : now ? now.getTime() : NaN;
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return null;
  return end - start;
}

/** "0.4 s", "12 s", "3 min 5 s" — in the locale's own unit words. */
export function formatDuration(ms: number, locale: string): string {
  const seconds = ms / 1000;
  const sec = (n: number, digits: number) =>
    new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'short', maximumFractionDigits: digits }).format(n);
  if (seconds < 10) return sec(Math.max(0, seconds), 1);
  if (seconds < 60) return sec(Math.round(seconds), 0);
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds - minutes * 60);
  const min = new Intl.NumberFormat(locale, { style: 'unit', unit: 'minute', unitDisplay: 'short' }).format(minutes);
  return rest ? `${min} ${sec(rest, 0)}` : min;
}

/** 1234 → "1,234"; 48 200 → "48K" (compact past ten thousand). */
export function formatCompact(n: number, locale: string): string {
  if (Math.abs(n) < 10_000) return new Intl.NumberFormat(locale).format(n);
  return new Intl.NumberFormat(locale, { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

/** Used over allowed, 0–1, for a meter (0 when nothing is allowed). */
export function share(used: number, max: number): number {
  if (!(max > 0)) return 0;
  return Math.max(0, Math.min(1, used / max));
}

/** "memoriesWritten" / "memories_written" → "memories written". */
export function statLabel(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();
}

/**
 * A step's stats as chips, in the order the step reported them. Zeros are left out (a wall of
 * "… 0" says nothing), unless every count is zero, when the first ones say so.
 */
export function statChips(stats: Record<string, number> | null, max = 12): { key: string; value: number }[] {
  if (!stats) return [];
  const all = Object.entries(stats)
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v))
    .map(([key, value]) => ({ key, value }));
  const nonZero = all.filter((c) => c.value !== 0);
  return (nonZero.length ? nonZero : all.slice(0, 2)).slice(0, max);
}

/** A stat's value: milliseconds as a duration, bytes as a size, anything else as a count. */
export function formatStat(key: string, value: number, locale: string): string {
  if (/(^ms$|Ms$|_ms$)/.test(key)) return formatDuration(value, locale);
  const mb = /(^mb$|Mb$|_mb$)/.test(key);
  if (mb || /(^bytes$|Bytes$|_bytes$)/.test(key)) {
    const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;
    let v = value;
    let u = mb ? 2 : 0;
    while (Math.abs(v) >= 1000 && u < units.length - 1) {
      v /= 1000;
      u++;
    }
    return new Intl.NumberFormat(locale, { style: 'unit', unit: units[u], unitDisplay: 'short', maximumFractionDigits: u ? 1 : 0 }).format(v);
  }
  return formatCompact(value, locale);
}

export type NextSleepKind = 'tonight' | 'today' | 'tomorrow' | 'date';

/**
 * When the next sleep is, in the words people use: a 02:00 sleep seen from the evening before is
 * "tonight", not "tomorrow"; later than tomorrow night it is a date.
 */
export function nextSleepKind(next: Date, now: Date, timeZone?: string): NextSleepKind {
  const days = calendarDaysBetween(now, next, timeZone);
  const hour = zonedParts(next, timeZone).hour;
  const nowHour = zonedParts(now, timeZone).hour;
  if (days === 0) return hour >= 18 || (hour < 6 && nowHour < 6) ? 'tonight' : 'today';
  if (days === 1) return hour < 6 && nowHour >= 6 ? 'tonight' : 'tomorrow';
  return 'date';
}
