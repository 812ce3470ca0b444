// A journal entry's reason in the window's language: the host's own reasons come as a code with its
// values (shared/api/memory.ts MemoryReason) and are worded here; a reason in words (a model's,
// another room's, a row from before codes) shows as stored. Pure: tested with both languages.
import type { MemoryChange } from '../../shared/api.js';

type Translate = (key: string, values?: Record<string, string | number>) => string;

/** A journal entry's reason in the window's language, or null when it carries no reason. */
export function reasonWords(change: Pick<MemoryChange, 'reason' | 'reasonCode'>, t: Translate): string | null {
  const code = change.reasonCode;
  if (code) {
    const { code: name, ...values } = code;
    return t(`memories.detail.reasons.${name}`, values);
  }
  return change.reason || null;
}

/** "Why: …" for a journal entry, or null when it carries no reason. */
export function reasonLine(change: Pick<MemoryChange, 'reason' | 'reasonCode'>, t: Translate): string | null {
  const words = reasonWords(change, t);
  return words === null ? null : t('memories.detail.reason', { reason: words });
}
