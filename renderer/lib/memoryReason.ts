// A journal entry's reason in the window's language: the host's own reasons come as a code with its
// values (shared/api/memory.ts MemoryReason) and are worded here; a reason in words (a model's,
// another room's, a row from before codes) shows as stored. Pure: tested with both languages.
import type { MemoryChange } from '../../shared/api.js';
import { spellDay, type DaySpelling } from './days.js';

type Translate = (key: string, values?: Record<string, string | number>) => string;

/** The locale days are spelled in, and the sleep day it is now. */
export type ReasonDays = DaySpelling;

/** A list in the locale's way: "#3, #2 and #1" / "#3、#2和#1". */
function list(items: string[], locale: string): string {
  return new Intl.ListFormat(locale, { type: 'conjunction' }).format(items);
}

/** A journal entry's reason in the window's language, or null when it carries no reason. */
export function reasonWords(change: Pick<MemoryChange, 'reason' | 'reasonCode'>, t: Translate, days: ReasonDays): string | null {
  const code = change.reasonCode;
  if (!code) return change.reason || null;
  const key = `memories.detail.reasons.${code.code}`;
  const { locale } = days;
  const day = (d: string) => spellDay(d, days);
  const refs = (ids: number[]) =>
    list(
      ids.map((id) => `#${id}`),
      locale,
    );
  switch (code.code) {
    case 'same_slot':
    case 'edited_new_value':
    case 'split':
    case 'merged_into':
      return t(key, { memoryId: code.memoryId });
    case 'near_duplicate':
      return t(key);
    case 'undo':
      return t(key, { changeId: code.changeId });
    case 'nap':
      return t(key, { day: day(code.day) });
    case 'light_sleep':
    case 'imported_history':
      return t(key, { days: list(code.days.map(day), locale) });
    case 'split_into':
    case 'merge':
      return t(key, { memoryIds: refs(code.memoryIds), why: code.why });
    case 'profile':
      return t(key, { name: code.name, memoryIds: refs(code.memoryIds) });
  }
}

/** "Why: …" for a journal entry, or null when it carries no reason. */
export function reasonLine(change: Pick<MemoryChange, 'reason' | 'reasonCode'>, t: Translate, days: ReasonDays): string | null {
  const words = reasonWords(change, t, days);
  return words === null ? null : t('memories.detail.reason', { reason: words });
}
