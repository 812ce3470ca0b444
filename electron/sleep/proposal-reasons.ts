// Why the pin review proposes a pin or an unpin, kept as a code and its values (sleep_proposals.reason
// holds them as a small JSON object) so the window says it in its language. Reading gives the code and
// the English words for every other reader (the CLI, a model); a row from before codes, or anything
// else that is not a code this Anima knows with valid values, reads back exactly as stored, without a code.
import type { ProposalReason, SleepProposal } from '../../shared/api/sleep.js';
import { isCalendarDay } from '../../shared/text.js';
import { codedReasonFields } from '../memory/reasons.js';

/** The stored form of a proposal's reason. */
export function encodeProposalReason(reason: ProposalReason): string {
  return JSON.stringify(reason);
}

/** English words for a coded reason (the stored text of the rows written before codes). */
export function proposalReasonWords(reason: ProposalReason): string {
  switch (reason.code) {
    case 'unused_since':
      return `not used since ${reason.day}`;
    case 'never_used':
      return 'pinned, but never used in a reply';
    case 'carried_uncited':
      return `carried for ${reason.days} days and shown ${reason.shown} times, never cited`;
    case 'much_used':
      return `used in ${reason.replies} replies`;
  }
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isDay(v: unknown): v is string {
  return typeof v === 'string' && isCalendarDay(v);
}

/** A stored reason as its code (when it is one this Anima knows, with valid values) and its words. */
export function decodeProposalReason(stored: string): Pick<SleepProposal, 'reason' | 'reasonCode'> {
  const asStored = { reason: stored, reasonCode: null };
  const r = codedReasonFields(stored);
  if (!r) return asStored;
  let code: ProposalReason | null = null;
  if (r.code === 'unused_since' && isDay(r.day)) code = { code: 'unused_since', day: r.day };
  else if (r.code === 'never_used') code = { code: 'never_used' };
  else if (r.code === 'carried_uncited' && isCount(r.days) && isCount(r.shown)) code = { code: 'carried_uncited', days: r.days, shown: r.shown };
  else if (r.code === 'much_used' && isCount(r.replies)) code = { code: 'much_used', replies: r.replies };
  return code ? { reason: proposalReasonWords(code), reasonCode: code } : asStored;
}
