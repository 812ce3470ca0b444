// Sleep days ("YYYY-MM-DD") as calendar labels. A sleep day is not an instant: it is read on a
// neutral calendar (UTC) so no time zone can move it to the day before. Pure; tested in Node.
import { formatDay } from './time.js';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Noon UTC of the day: safely inside it, whatever the formatting does. */
export function dayAsDate(day: string): Date {
  const m = DAY.exec(day);
  if (!m) return new Date(NaN);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12));
}

/** The locale a day is spelled in, and the sleep day it is now (a day of another year shows its year). */
export interface DaySpelling {
  locale: string;
  currentDay: string;
}

/** A sleep day spelled out for the locale, as the digest spells its days. */
export function spellDay(day: string, { locale, currentDay }: DaySpelling): string {
  return formatDay(dayAsDate(day), locale, 'UTC', dayAsDate(currentDay));
}

export function shiftDay(day: string, days: number): string {
  const d = dayAsDate(day);
  if (Number.isNaN(d.getTime())) return day;
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (positive when b is later). */
export function daysBetween(a: string, b: string): number {
  return Math.round((dayAsDate(b).getTime() - dayAsDate(a).getTime()) / 86_400_000);
}

export interface DayWords {
  today: string;
  yesterday: string;
}

/**
 * "Today", "Yesterday" (relative to the current sleep day), else the day spelled out in the
 * person's locale ("Monday, 8 May"; the year only when it is not this year).
 */
export function sleepDayLabel(day: string, currentDay: string, locale: string, words: DayWords): string {
  const date = dayAsDate(day);
  if (Number.isNaN(date.getTime())) return day;
  const diff = daysBetween(day, currentDay);
  if (diff === 0) return words.today;
  if (diff === 1) return words.yesterday;
  return formatDay(date, locale, 'UTC', dayAsDate(currentDay));
}

/** A short label for chart axes: "8 May" / "5月8日". */
export function shortDayLabel(day: string, locale: string): string {
  const date = dayAsDate(day);
  if (Number.isNaN(date.getTime())) return day;
  return new Intl.DateTimeFormat(locale, { timeZone: 'UTC', month: 'short', day: 'numeric' }).format(date);
}

/** Text split into paragraphs at blank lines (single newlines stay inside a paragraph). */
export function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
}
