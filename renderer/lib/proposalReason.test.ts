// A pin proposal's reason worded per code in both languages, its day spelled for the locale; a reason
// without a code shows as stored.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProposalReason } from '../../shared/api/sleep.js';
import { translators } from '../i18n/testing.js';
import { proposalReasonWords } from './proposalReason.js';

let tIn: Awaited<ReturnType<typeof translators>>;
beforeAll(async () => {
  tIn = await translators();
});
const STORED = 'stored words';
const TODAY = '2026-12-06';
const english = (reasonCode: ProposalReason) => proposalReasonWords({ reason: STORED, reasonCode }, tIn('en'), { locale: 'en-GB', currentDay: TODAY });
const chinese = (reasonCode: ProposalReason) => proposalReasonWords({ reason: STORED, reasonCode }, tIn('zh-CN'), { locale: 'zh-CN', currentDay: TODAY });

describe('proposalReasonWords', () => {
  it('words each code in English and in Chinese, with its values', () => {
    expect(english({ code: 'unused_since', day: '2026-11-02' })).toBe('not used in a reply since Monday 2 November');
    expect(chinese({ code: 'unused_since', day: '2026-11-02' })).toBe('11月2日星期一之后再没在回复里用到过');
    expect(english({ code: 'never_used' })).toBe('pinned, but never used in a reply');
    expect(chinese({ code: 'never_used' })).toBe('置顶了，却从没在回复里用到过');
    expect(english({ code: 'carried_uncited', days: 30, shown: 50 })).toBe('pinned for 30 days and shown to me 50 times, but never used in a reply');
    expect(chinese({ code: 'carried_uncited', days: 30, shown: 50 })).toBe('已置顶 30 天，在我眼前出现过 50 次，却从没在回复里用到过');
    expect(english({ code: 'much_used', replies: 5 })).toBe('used in 5 replies');
    expect(chinese({ code: 'much_used', replies: 5 })).toBe('在 5 次回复里用到过');
  });

  it('counts in the singular when there is one', () => {
    expect(english({ code: 'much_used', replies: 1 })).toBe('used in 1 reply');
    expect(english({ code: 'carried_uncited', days: 1, shown: 1 })).toBe('pinned for 1 day and shown to me 1 time, but never used in a reply');
    expect(chinese({ code: 'carried_uncited', days: 1, shown: 1 })).toBe('已置顶 1 天，在我眼前出现过 1 次，却从没在回复里用到过');
  });

  it('spells the year of a day from another year, in the locale’s order', () => {
    expect(english({ code: 'unused_since', day: '2025-10-20' })).toBe('not used in a reply since Monday, 20 October 2025');
    expect(
      proposalReasonWords({ reason: STORED, reasonCode: { code: 'unused_since', day: '2025-10-20' } }, tIn('en'), { locale: 'en-US', currentDay: TODAY }),
    ).toBe('not used in a reply since Monday, October 20, 2025');
    expect(chinese({ code: 'unused_since', day: '2025-10-20' })).toBe('2025年10月20日星期一之后再没在回复里用到过');
  });

  it('leaves no key, placeholder or stored words in any coded reason', () => {
    const codes: ProposalReason[] = [
      { code: 'unused_since', day: '2026-10-01' },
      { code: 'never_used' },
      { code: 'carried_uncited', days: 21, shown: 30 },
      { code: 'much_used', replies: 9 },
    ];
    for (const code of codes) {
      for (const line of [english(code), chinese(code)]) {
        expect(line).not.toContain(STORED);
        expect(line).not.toContain('sleep.digest');
        expect(line).not.toContain('{{');
      }
      expect(chinese(code)).toMatch(/[\u4e00-\u9fff]{4}/);
    }
  });

  it('shows a reason without a code (a row from before codes) as stored', () => {
    expect(proposalReasonWords({ reason: 'not used since 2026-11-02', reasonCode: null }, tIn('zh-CN'), { locale: 'zh-CN', currentDay: TODAY })).toBe(
      'not used since 2026-11-02',
    );
    expect(proposalReasonWords({ reason: 'used in 5 replies' }, tIn('en'), { locale: 'en-GB', currentDay: TODAY })).toBe('used in 5 replies');
  });
});
