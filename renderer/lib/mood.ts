// Mood as the Diary shows it: a colour for a feeling, words for it, and the small trend chart's
// geometry and summary. Pure (no React, no DOM) so it is tested in Node.
import type { Mood, MoodPoint } from '../../shared/api.js';

export const MOOD_RANGES = [7, 30] as const;
export type MoodRange = (typeof MOOD_RANGES)[number];

const clamp = (n: number, lo: number, hi: number) => (Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : 0);

/**
 * A feeling as a colour: low days lean blue, bright days lean amber, an even day is a warm grey; the
 * more intense (arousal) and the further from neutral (valence), the more saturated. Tuned for both
 * themes' backgrounds; the swatch carries a border, so a pale colour still reads as a shape.
 */
export function moodColor(valence: number, arousal: number, theme: 'light' | 'dark' = 'light'): string {
  const v = clamp(valence, -1, 1);
  const a = clamp(arousal, 0, 1);
  const hue = v < 0 ? 214 : 36;
  const sat = Math.round(10 + 62 * Math.pow(Math.abs(v), 0.8) * (0.55 + 0.45 * a));
  const light = theme === 'dark' ? Math.round(64 - 8 * a) : Math.round(60 - 10 * a);
  return `hsl(${hue} ${sat}% ${light}%)`;
}

export type ValenceWord = 'heavy' | 'low' | 'even' | 'good' | 'bright';
export type ArousalWord = 'calm' | 'lively' | 'intense';

export function valenceWord(v: number): ValenceWord {
  if (v <= -0.5) return 'heavy';
  if (v < -0.15) return 'low';
  if (v <= 0.15) return 'even';
  if (v < 0.5) return 'good';
  return 'bright';
}

export function arousalWord(a: number): ArousalWord {
  if (a < 0.34) return 'calm';
  if (a < 0.67) return 'lively';
  return 'intense';
}

/** The mood's own words (labels), de-duplicated, at most `max`. */
export function moodLabels(mood: Mood | null, max = 4): string[] {
  if (!mood) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of mood.labels) {
    const label = raw.trim();
    const key = label.toLocaleLowerCase();
    if (!label || seen.has(key)) continue;
    seen.add(key);
    out.push(label);
    if (out.length >= max) break;
  }
  return out;
}

// ---- the trend chart ----

export interface ChartSize {
  width: number;
  height: number;
  padLeft: number;
  padRight: number;
  padTop: number;
  padBottom: number;
}

export const CHART_SIZE: ChartSize = { width: 640, height: 190, padLeft: 52, padRight: 52, padTop: 14, padBottom: 30 };

export interface ChartPoint {
  day: string;
  x: number;
  valence: number;
  arousal: number;
  trend: number;
  yValence: number;
  yArousal: number;
  yTrend: number;
}

export interface MoodSummary {
  count: number;
  meanValence: number;
  meanArousal: number;
  /** From the first to the last point of the trend line. */
  direction: 'rising' | 'falling' | 'steady';
  highest: { day: string; valence: number };
  lowest: { day: string; valence: number };
}

export interface ChartModel {
  size: ChartSize;
  points: ChartPoint[];
  /** SVG path of the trailing mean (7- or 30-day) over the window. */
  trendPath: string;
  /** SVG path through the daily arousal values (drawn lighter). */
  arousalPath: string;
  /** y of valence 0 (the neutral line). */
  zeroY: number;
  top: number;
  bottom: number;
  /** Days labelled on the x axis. */
  ticks: { x: number; day: string }[];
  summary: MoodSummary | null;
}

/** Up to `max` evenly spaced indexes out of n, first and last included. */
export function tickIndexes(n: number, max = 4): number[] {
  if (n <= 0) return [];
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const out = new Set<number>();
  for (let k = 0; k < max; k++) out.add(Math.round((k * (n - 1)) / (max - 1)));
  return [...out].sort((a, b) => a - b);
}

function path(xy: [number, number][]): string {
  return xy.map(([x, y], i) => `${i ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)}`).join(' ');
}

/**
 * The chart of the last `range` days that have anchors (oldest left): daily valence as points,
 * arousal as a lighter line (0 calm at the bottom … 1 intense at the top, its own scale on the
 * right), and the trailing mean of valence over `range` days as the trend line.
 */
export function moodChart(all: readonly MoodPoint[], range: MoodRange, size: ChartSize = CHART_SIZE): ChartModel {
  const sorted = [...all].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  const window = sorted.slice(-range);
  const top = size.padTop;
  const bottom = size.height - size.padBottom;
  const left = size.padLeft;
  const right = size.width - size.padRight;
  const h = bottom - top;
  const yV = (v: number) => top + (1 - (clamp(v, -1, 1) + 1) / 2) * h;
  const yA = (a: number) => top + (1 - clamp(a, 0, 1)) * h;
  const n = window.length;
  const xAt = (i: number) => (n === 1 ? (left + right) / 2 : left + (i * (right - left)) / (n - 1));

  const points: ChartPoint[] = window.map((p, i) => {
    const trend = range === 7 ? p.valence7 : p.valence30;
    return {
      day: p.day,
      x: xAt(i),
      valence: p.valence,
      arousal: p.arousal,
      trend,
      yValence: yV(p.valence),
      yArousal: yA(p.arousal),
      yTrend: yV(trend),
    };
  });

  let summary: MoodSummary | null = null;
  if (n) {
    let highest = points[0]!;
    let lowest = points[0]!;
    for (const p of points) {
      if (p.valence > highest.valence) highest = p;
      if (p.valence < lowest.valence) lowest = p;
    }
    const delta = points[n - 1]!.trend - points[0]!.trend;
    summary = {
      count: n,
      meanValence: points.reduce((s, p) => s + p.valence, 0) / n,
      meanArousal: points.reduce((s, p) => s + p.arousal, 0) / n,
      direction: n < 2 || Math.abs(delta) < 0.1 ? 'steady' : delta > 0 ? 'rising' : 'falling',
      highest: { day: highest.day, valence: highest.valence },
      lowest: { day: lowest.day, valence: lowest.valence },
    };
  }

  return {
    size,
    points,
    trendPath: n > 1 ? path(points.map((p) => [p.x, p.yTrend])) : '',
    arousalPath: n > 1 ? path(points.map((p) => [p.x, p.yArousal])) : '',
    zeroY: yV(0),
    top,
    bottom,
    // Every day while they fit; past that, five spread evenly.
    ticks: tickIndexes(n, n <= 8 ? 8 : 5).map((i) => ({ x: points[i]!.x, day: points[i]!.day })),
    summary,
  };
}
