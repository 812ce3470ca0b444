// A journal entry's reason worded per code in both languages, its days spelled for the locale; a reason
// in words shows as stored.
import { beforeAll, describe, expect, it } from 'vitest';
import type { MemoryChange } from '../../shared/api.js';
import { translators } from '../i18n/testing.js';
import { reasonLine, reasonWords } from './memoryReason.js';

let tIn: Awaited<ReturnType<typeof translators>>;
beforeAll(async () => {
  tIn = await translators();
});
const change = (c: Pick<MemoryChange, 'reason' | 'reasonCode'>) => c;
const TODAY = '2026-12-06';
const EN = { locale: 'en-GB', currentDay: TODAY };
const ZH = { locale: 'zh-CN', currentDay: TODAY };
type Code = NonNullable<MemoryChange['reasonCode']>;
const english = (reasonCode: Code) => reasonWords({ reason: 'stored words', reasonCode }, tIn('en'), EN);
const chinese = (reasonCode: Code) => reasonWords({ reason: 'stored words', reasonCode }, tIn('zh-CN'), ZH);

describe('reasonLine', () => {
  it('words each code in English and in Chinese, with its values', () => {
    const slot = change({ reason: 'replaces memory 7: the same slot, a new value', reasonCode: { code: 'same_slot', memoryId: 7 } });
    expect(reasonLine(slot, tIn('en'), EN)).toBe('Why: a new value for the same thing — it replaces memory #7');
    expect(reasonLine(slot, tIn('zh-CN'), ZH)).toBe('原因：同一件事有了新的值——它取代了记忆 #7');
    const codes: Code[] = [
      { code: 'same_slot', memoryId: 3 },
      { code: 'near_duplicate' },
      { code: 'edited_new_value', memoryId: 3 },
      { code: 'undo', changeId: 12, action: 'update' },
      { code: 'nap', day: '2026-12-05' },
      { code: 'light_sleep', days: ['2026-12-04', '2026-12-05'] },
      { code: 'imported_history', days: ['2019-03-01'] },
      { code: 'split', memoryId: 12 },
      { code: 'split_into', memoryIds: [13, 14], why: 'two things' },
      { code: 'merge', memoryIds: [1, 2], why: 'the same' },
      { code: 'merged_into', memoryId: 15 },
      { code: 'profile', name: 'Ines', entityId: 4, memoryIds: [3, 2, 1] },
    ];
    for (const reasonCode of codes) {
      const english = reasonLine({ reason: 'stored words', reasonCode }, tIn('en'), EN)!;
      const chinese = reasonLine({ reason: 'stored words', reasonCode }, tIn('zh-CN'), ZH)!;
      expect(english).toMatch(/^Why: /);
      expect(chinese).toMatch(/^原因：/);
      for (const line of [english, chinese]) {
        expect(line).not.toContain('stored words');
        expect(line).not.toContain('memories.detail');
        expect(line).not.toContain('{{');
      }
      expect(chinese).toMatch(/[\u4e00-\u9fff]{4}/);
    }
    expect(reasonLine({ reason: null, reasonCode: { code: 'undo', changeId: 12, action: 'update' } }, tIn('zh-CN'), ZH)).toBe('原因：撤回了更改 #12');
  });

  it('words the sleep’s reasons, days spelled for the locale, lists in its way, the model’s words as they are', () => {
    expect(english({ code: 'nap', day: '2026-12-05' })).toBe('from my nap on Saturday 5 December');
    expect(chinese({ code: 'nap', day: '2026-12-05' })).toBe('12月5日星期六小睡时记下的');
    expect(english({ code: 'light_sleep', days: ['2026-12-04', '2026-12-05'] })).toBe('from my light sleep over Friday 4 December and Saturday 5 December');
    expect(chinese({ code: 'light_sleep', days: ['2026-12-04', '2026-12-05'] })).toBe('浅睡时回顾12月4日星期五和12月5日星期六的对话记下的');
    expect(english({ code: 'imported_history', days: ['2019-03-01'] })).toBe('from reading the imported history of Friday, 1 March 2019');
    expect(chinese({ code: 'imported_history', days: ['2019-03-01'] })).toBe('读导入的2019年3月1日星期五的聊天记录时记下的');
    expect(english({ code: 'split', memoryId: 12 })).toBe('split off from memory #12');
    expect(chinese({ code: 'split', memoryId: 12 })).toBe('从记忆 #12 拆分出来的');
    expect(english({ code: 'split_into', memoryIds: [13, 14], why: 'two things at once' })).toBe('split into memories #13 and #14: two things at once');
    expect(chinese({ code: 'split_into', memoryIds: [13, 14], why: 'two things at once' })).toBe('拆分成了记忆 #13和#14：two things at once');
    expect(english({ code: 'merge', memoryIds: [1, 2, 3], why: 'both say the same' })).toBe('merged from memories #1, #2 and #3: both say the same');
    expect(chinese({ code: 'merge', memoryIds: [1, 2, 3], why: 'both say the same' })).toBe('由记忆 #1、#2和#3 合并而成：both say the same');
    expect(english({ code: 'merged_into', memoryId: 15 })).toBe('merged into memory #15');
    expect(chinese({ code: 'merged_into', memoryId: 15 })).toBe('合并进了记忆 #15');
    expect(english({ code: 'profile', name: 'Ines', entityId: 4, memoryIds: [3, 2, 1] })).toBe('what I know of Ines, from memories #3, #2 and #1');
    expect(chinese({ code: 'profile', name: 'Ines', entityId: 4, memoryIds: [3, 2, 1] })).toBe('关于Ines我所知道的，依据记忆 #3、#2和#1');
    // The locale orders the day: American English puts the month first.
    expect(reasonWords({ reason: null, reasonCode: { code: 'nap', day: '2026-12-05' } }, tIn('en'), { locale: 'en-US', currentDay: TODAY })).toBe(
      'from my nap on Saturday, December 5',
    );
  });

  it('shows a reason in words (a model’s, a row from before codes) as stored, and nothing without a reason', () => {
    expect(reasonLine({ reason: 'merge of #1, #2: both say the same' }, tIn('zh-CN'), ZH)).toBe('原因：merge of #1, #2: both say the same');
    expect(reasonLine({ reason: 'undo of change 3 (update)', reasonCode: null }, tIn('en'), EN)).toBe('Why: undo of change 3 (update)');
    expect(reasonLine({ reason: null }, tIn('en'), EN)).toBeNull();
  });
});
