// Each purpose the host records a background call under is named in English and in Chinese; an id
// without words (a newer host's) shows as stored.
import { beforeAll, describe, expect, it } from 'vitest';
import { translators } from '../i18n/testing.js';
import { BACKGROUND_PURPOSES } from '../../shared/background-purposes.js';
import { purposeLabel } from './auditPurpose.js';

let tIn: Awaited<ReturnType<typeof translators>>;
beforeAll(async () => {
  tIn = await translators();
});

describe('purposeLabel', () => {
  it('names every purpose the host writes, in English and in Chinese', () => {
    const named = (purpose: string) => [purposeLabel(purpose, tIn('en')), purposeLabel(purpose, tIn('zh-CN'))];
    expect(named('nap')).toEqual(['Nap: keeping what was just said', '小睡：记下刚才说的话']);
    expect(named('light-sleep')).toEqual(['Light sleep: the day into memories', '浅睡：把一天化作记忆']);
    expect(named('deep-sleep:contradictions')).toEqual(['Deep sleep: contradictions', '深睡：找出矛盾']);
    expect(named('deep-sleep:split')).toEqual(['Deep sleep: splitting memories', '深睡：拆分记忆']);
    expect(named('deep-sleep:merge')).toEqual(['Deep sleep: merging memories', '深睡：合并记忆']);
    expect(named('deep-sleep:profiles')).toEqual(['Deep sleep: profiles', '深睡：写简介']);
    expect(named('dream')).toEqual(['Dream', '做梦']);
  });

  it('words each purpose of the shared list in both languages, each differently', () => {
    for (const lng of ['en', 'zh-CN']) {
      const labels = BACKGROUND_PURPOSES.map((purpose) => purposeLabel(purpose, tIn(lng)));
      for (const label of labels) expect(label).not.toMatch(/^(sleep\.|nap$|light-sleep$|deep-sleep|dream$)/);
      expect(new Set(labels).size).toBe(BACKGROUND_PURPOSES.length);
    }
  });

  it('shows an id it has no words for as it is, in either language', () => {
    for (const lng of ['en', 'zh-CN']) {
      expect(purposeLabel('deep-sleep:reweigh', tIn(lng))).toBe('deep-sleep:reweigh');
      expect(purposeLabel('deep-sleep', tIn(lng))).toBe('deep-sleep');
      // A name an object has of its own is not a purpose.
      expect(purposeLabel('constructor', tIn(lng))).toBe('constructor');
    }
  });
});
