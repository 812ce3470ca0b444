// The journal's reasons the memory store writes itself, kept as a code and its values (memory_changes.reason
// holds them as a small JSON object) so the window says them in its language. Reading gives the code and
// the English words for every other reader (the sleep digest, the CLI, a model); a reason in words — a
// model's, another room's, a row from before codes — reads back exactly as stored, without a code.
import type { MemoryChange, MemoryReason } from '../../shared/api.js';

const PREFIX = '{"code":';

/** The stored form of a host-written reason. */
export function encodeReason(reason: MemoryReason): string {
  return JSON.stringify(reason);
}

/** English words for a coded reason (the stored text of the rows written before codes). */
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
  }
}

function isId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

/** A stored reason as its code (when it is one this Anima knows; otherwise no code at all) and its words. */
export function decodeReason(stored: string | null): Pick<MemoryChange, 'reason' | 'reasonCode'> {
  if (stored === null || !stored.startsWith(PREFIX)) return { reason: stored };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return { reason: stored };
  }
  const r = parsed as Record<string, unknown>;
  let code: MemoryReason | null = null;
  if ((r.code === 'same_slot' || r.code === 'edited_new_value') && isId(r.memoryId)) code = { code: r.code, memoryId: r.memoryId };
  else if (r.code === 'near_duplicate') code = { code: 'near_duplicate' };
  else if (r.code === 'undo' && isId(r.changeId) && typeof r.action === 'string')
    code = { code: 'undo', changeId: r.changeId, action: r.action as MemoryChange['action'] };
  return code ? { reason: reasonWords(code), reasonCode: code } : { reason: stored };
}
