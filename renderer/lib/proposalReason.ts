// Why deep sleep proposes a pin or an unpin, in the window's language: the host's reasons come as a code
// with its values (shared/api/sleep.ts ProposalReason) and are worded here; a reason without a code (a
// row from before codes) shows as stored. Pure: tested with both languages.
import type { SleepProposal } from '../../shared/api.js';
import { dayAsDate } from './days.js';
import { formatDay } from './time.js';

type Translate = (key: string, values?: Record<string, string | number>) => string;

/**
 * A proposal's reason in the window's language. The day a pin was last used is spelled out in `locale`
 * like the digest's other days (the year only when it is not `currentDay`'s year).
 */
export function proposalReasonWords(proposal: Pick<SleepProposal, 'reason' | 'reasonCode'>, t: Translate, locale: string, currentDay: string): string {
  const code = proposal.reasonCode;
  if (!code) return proposal.reason;
  switch (code.code) {
    case 'unused_since':
      return t('sleep.digest.reasons.unused_since', { day: formatDay(dayAsDate(code.day), locale, 'UTC', dayAsDate(currentDay)) });
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
