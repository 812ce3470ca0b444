// The journal's reasons the host writes itself, as a code and its values so the window says them in its
// language. The memory store keeps its own as a small JSON object in memory_changes.reason; the sleep
// writes English sentences ("nap of 2026-12-05", "merge of #1, #2: …"), and a sentence that is exactly
// one of the sleep's reads back as its code, old rows included. Reading gives the code and the English
// words for every other reader (the sleep digest, the CLI, a model); a reason in words — a model's,
// another room's, a row from before codes, a sentence that is not exactly the sleep's — reads back
// exactly as stored, without a code.
import type { MemoryChange, MemoryReason } from '../../shared/api.js';
import { isCalendarDay } from '../../shared/text.js';

const PREFIX = '{"code":';

/** The stored form of a host-written reason: the sleep's codes as their sentence, the store's as JSON. */
export function encodeReason(reason: MemoryReason): string {
  return isSleepSentence(reason) ? reasonWords(reason) : JSON.stringify(reason);
}

function isSleepSentence(reason: MemoryReason): boolean {
  return !(reason.code === 'same_slot' || reason.code === 'near_duplicate' || reason.code === 'edited_new_value' || reason.code === 'undo');
}

const refs = (ids: number[]) => ids.map((id) => `#${id}`).join(', ');

/** English words for a coded reason: the stored text of the rows written before codes, and the sleep's own sentence. */
export function reasonWords(reason: MemoryReason): string {
  switch (reason.code) {
    case 'same_slot':
      return `replaces memory ${reason.memoryId}: the same slot, a new value`;
    case 'near_duplicate':
      return 'saved again: near-duplicate of an active memory';
    case 'edited_new_value':
      return `edited to a new value: replaces memory ${reason.memoryId}`;
    case 'undo':
      return `undo of change ${reason.changeId} (${reason.action})`;
    case 'nap':
      return `nap of ${reason.day}`;
    case 'light_sleep':
      return `light sleep of ${reason.days.join(', ')}`;
    case 'imported_history':
      return `reading imported history of ${reason.days.join(', ')}`;
    case 'split':
      return `split from memory ${reason.memoryId}`;
    case 'split_into':
      return `split into ${refs(reason.memoryIds)}: ${reason.why}`;
    case 'merge':
      return `merge of ${refs(reason.memoryIds)}: ${reason.why}`;
    case 'merged_into':
      return `merged into #${reason.memoryId}`;
    case 'profile':
      return `profile of ${reason.name} (entity ${reason.entityId}), from ${refs(reason.memoryIds)}`;
  }
}

function isId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

// The sleep's sentences, whole: a day is YYYY-MM-DD, an id a positive integer without leading zeros.
const DAY = String.raw`\d{4}-\d{2}-\d{2}`;
const DAYS = `${DAY}(?:, ${DAY})*`;
const ID = '[1-9]\\d*';
const REFS = `#${ID}(?:, #${ID})*`;
const MANY_REFS = `#${ID}(?:, #${ID})+`;
const SENTENCES: [RegExp, (m: RegExpExecArray) => MemoryReason | null][] = [
  [new RegExp(`^nap of (${DAY})$`), (m) => (isCalendarDay(m[1]!) ? { code: 'nap', day: m[1]! } : null)],
  [new RegExp(`^light sleep of (${DAYS})$`), (m) => withDays(m[1]!, (days) => ({ code: 'light_sleep', days }))],
  [new RegExp(`^reading imported history of (${DAYS})$`), (m) => withDays(m[1]!, (days) => ({ code: 'imported_history', days }))],
  [new RegExp(`^split from memory (${ID})$`), (m) => withIds(m[1]!, ([memoryId]) => ({ code: 'split', memoryId: memoryId! }))],
  [new RegExp(`^split into (${REFS}): ([\\s\\S]+)$`), (m) => withIds(m[1]!, (memoryIds) => ({ code: 'split_into', memoryIds, why: m[2]! }))],
  [new RegExp(`^merge of (${MANY_REFS}): ([\\s\\S]+)$`), (m) => withIds(m[1]!, (memoryIds) => ({ code: 'merge', memoryIds, why: m[2]! }))],
  [new RegExp(`^merged into #(${ID})$`), (m) => withIds(m[1]!, ([memoryId]) => ({ code: 'merged_into', memoryId: memoryId! }))],
  [
    new RegExp(`^profile of ([\\s\\S]+) \\(entity (${ID})\\), from (${REFS})$`),
    (m) => withIds(`${m[2]!}, ${m[3]!}`, ([entityId, ...memoryIds]) => ({ code: 'profile', name: m[1]!, entityId: entityId!, memoryIds })),
  ],
];

function withDays(list: string, code: (days: string[]) => MemoryReason): MemoryReason | null {
  const days = list.split(', ');
  return days.every(isCalendarDay) ? code(days) : null;
}

function withIds(list: string, code: (ids: number[]) => MemoryReason): MemoryReason | null {
  const ids = list.split(', ').map((ref) => Number(ref.replace('#', '')));
  return ids.every(isId) ? code(ids) : null;
}

function sleepCode(stored: string): MemoryReason | null {
  for (const [sentence, code] of SENTENCES) {
    const m = sentence.exec(stored);
    if (m) return code(m);
  }
  return null;
}

/**
 * The fields of a reason stored as a code (a JSON object that begins with its code), or null for
 * words — this journal's and the sleep proposals' (sleep/proposal-reasons.ts) alike. The caller checks
 * each value before it trusts it.
 */
export function codedReasonFields(stored: string): Record<string, unknown> | null {
  if (!stored.startsWith(PREFIX)) return null;
  try {
    const parsed: unknown = JSON.parse(stored);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A stored reason as its code (when it is one this Anima knows; otherwise no code at all) and its words. */
export function decodeReason(stored: string | null): Pick<MemoryChange, 'reason' | 'reasonCode'> {
  if (stored === null) return { reason: stored };
  const r = codedReasonFields(stored);
  if (!r) {
    const code = sleepCode(stored);
    return code ? { reason: stored, reasonCode: code } : { reason: stored };
  }
  let code: MemoryReason | null = null;
  if ((r.code === 'same_slot' || r.code === 'edited_new_value') && isId(r.memoryId)) code = { code: r.code, memoryId: r.memoryId };
  else if (r.code === 'near_duplicate') code = { code: 'near_duplicate' };
  else if (r.code === 'undo' && isId(r.changeId) && typeof r.action === 'string')
    code = { code: 'undo', changeId: r.changeId, action: r.action as MemoryChange['action'] };
  return code ? { reason: reasonWords(code), reasonCode: code } : { reason: stored };
}
