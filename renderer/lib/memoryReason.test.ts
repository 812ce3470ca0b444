// A journal entry's reason worded per code in both languages; a reason in words shows as stored.
import i18next from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MemoryChange } from '../../shared/api.js';
import en from '../i18n/en.js';
import zhCN from '../i18n/zh-CN.js';
import { reasonLine } from './memoryReason.js';

const i18n = i18next.createInstance();
beforeAll(async () => {
  await i18n.init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: 'en',
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
  });
});
const tIn = (lng: string) => i18n.getFixedT(lng) as (key: string, values?: Record<string, string | number>) => string;
const change = (c: Pick<MemoryChange, 'reason' | 'reasonCode'>) => c;

describe('reasonLine', () => {
  it('words each code in English and in Chinese, with its values', () => {
    const slot = change({ reason: 'replaces memory 7: the same slot, a new value', reasonCode: { code: 'same_slot', memoryId: 7 } });
    expect(reasonLine(slot, tIn('en'))).toBe('Why: a new value for the same thing — it replaces memory #7');
    expect(reasonLine(slot, tIn('zh-CN'))).toBe('原因：同一件事有了新的值——它取代了记忆 #7');
    const codes: NonNullable<MemoryChange['reasonCode']>[] = [
      { code: 'same_slot', memoryId: 3 },
      { code: 'near_duplicate' },
      { code: 'edited_new_value', memoryId: 3 },
      { code: 'undo', changeId: 12, action: 'update' },
    ];
    for (const reasonCode of codes) {
      const english = reasonLine({ reason: 'stored words', reasonCode }, tIn('en'))!;
      const chinese = reasonLine({ reason: 'stored words', reasonCode }, tIn('zh-CN'))!;
      expect(english).toMatch(/^Why: /);
      expect(chinese).toMatch(/^原因：/);
      for (const line of [english, chinese]) {
        expect(line).not.toContain('stored words');
        expect(line).not.toContain('memories.detail');
        expect(line).not.toContain('{{');
      }
      expect(chinese).toMatch(/[\u4e00-\u9fff]{4}/);
    }
    expect(reasonLine({ reason: null, reasonCode: { code: 'undo', changeId: 12, action: 'update' } }, tIn('zh-CN'))).toBe('原因：撤回了更改 #12');
  });

  it('shows a reason in words (a model’s, a row from before codes) as stored, and nothing without a reason', () => {
    expect(reasonLine({ reason: 'merge of #1, #2: both say the same' }, tIn('zh-CN'))).toBe('原因：merge of #1, #2: both say the same');
    expect(reasonLine({ reason: 'undo of change 3 (update)', reasonCode: null }, tIn('en'))).toBe('Why: undo of change 3 (update)');
    expect(reasonLine({ reason: null }, tIn('en'))).toBeNull();
  });
});
