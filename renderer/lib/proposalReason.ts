// Why deep sleep proposes a pin or an unpin, in the window's language: the host's reasons come as a code
// with its values (shared/api/sleep.ts ProposalReason) and are worded here; a reason without a code (a
// row from before codes) shows as stored. Pure: tested with both languages.
import type { SleepProposal } from '../../shared/api.js';
import { spellDay, type DaySpelling } from './days.js';

type Translate = (key: string, values?: Record<string, string | number>) => string;

/**
 * A proposal's reason in the window's language. The day a pin was last used is spelled out like the
 * digest's other days (the year only when it is not the current day's year).
 */
export function proposalReasonWords(proposal: Pick<SleepProposal, 'reason' | 'reasonCode'>, t: Translate, days: DaySpelling): string {
  const code = proposal.reasonCode;
  if (!code) return proposal.reason;
  switch (code.code) {
    case 'unused_since':
      return t('sleep.digest.reasons.unused_since', { day: spellDay(code.day, days) });
    case 'never_used':
      return t('sleep.digest.reasons.never_used');
    case 'carried_uncited':
      return t('sleep.digest.reasons.carried_uncited', {
        days: t('sleep.digest.reasonCounts.days', { count: code.days }),
        shown: t('sleep.digest.reasonCounts.times', { count: code.shown }),
      });
    case 'much_used':
      return t('sleep.digest.reasons.much_used', { count: code.replies });
  }
}
