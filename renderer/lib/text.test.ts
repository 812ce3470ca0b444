import { describe, expect, it } from 'vitest';
import { plainText } from './text.js';

describe('plainText', () => {
  it('drops markdown markers from previews and snippets', () => {
    expect(plainText('…ings I noticed: - You mentioned the **garden** again')).toBe('…ings I noticed: - You mentioned the garden again');
    expect(plainText('# Title\n\n- one\n- two *soft* and `code`')).toBe('Title one two soft and code');
    expect(plainText('see [the docs](https://x.y) and ![a cat](c.png)')).toBe('see the docs and a cat');
    expect(plainText('I remember [[anima:m-12]] that.')).toBe('I remember that.');
  });

  it('leaves ordinary text and Chinese alone', () => {
    expect(plainText('2 * 3 = 6, snake_case_name')).toBe('2 * 3 = 6, snake_case_name');
    expect(plainText('你又提到了**花园**。')).toBe('你又提到了花园。');
  });
});
