import { describe, expect, it } from 'vitest';
import { NAP_AFTER_USER_MESSAGES, saysSomethingLasting, worthANap } from './nap-worth.js';

describe('what is worth a nap', () => {
  it('a lasting statement, in English or Chinese, is worth one', () => {
    for (const text of [
      "By the way, I only drink my coffee with oat milk — never cow's milk. Please keep that in mind.",
      'I’m allergic to peanuts.',
      'My birthday is on the 3rd of May.',
      'Call me Sam, everyone does.',
      'I just moved to Lisbon last week.',
      'I work as a nurse at the city hospital.',
      'From now on, answer me in French.',
      '请记住，我对花生过敏。',
      '我搬到上海了。',
      '我不喜欢香菜。',
    ]) {
      expect(saysSomethingLasting(text), text).toBe(true);
    }
  });

  it('talk that mentions the same words in passing is not', () => {
    for (const text of [
      'I never knew that ocean currents mattered so much.',
      'Yeah, I remember that! It was cool.',
      'I always feel like I could write a whole movie out there.',
      'How are you today?',
      '今天天气怎么样？',
      'Write a haiku about the sea.',
    ]) {
      expect(saysSomethingLasting(text), text).toBe(false);
    }
  });

  it('a long stretch is worth one without a lasting statement; a short ordinary one waits for the night', () => {
    const chat = (n: number) => Array.from({ length: n }, (_, i) => `We talked about the garden again, part ${i}.`);
    expect(worthANap(chat(NAP_AFTER_USER_MESSAGES))).toBe(true);
    expect(worthANap(chat(NAP_AFTER_USER_MESSAGES - 1))).toBe(false);
    expect(worthANap([...chat(3), 'I prefer tea to coffee, honestly.'])).toBe(true);
  });
});
