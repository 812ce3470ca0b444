import { describe, expect, it } from 'vitest';
import { isCalendarDay, isStorableDate, MAX_NESTING, storableText, storableValue, TooDeeplyNested } from './text.js';

describe('storableText', () => {
  it('replaces NULs and lone surrogates visibly and keeps everything else', () => {
    expect(storableText('hello\u0000world')).toBe('hello\uFFFDworld');
    expect(storableText('a\uD800b')).toBe('a\uFFFDb');
    expect(storableText('a\uDC00b')).toBe('a\uFFFDb');
    expect(storableText('end\uD83D')).toBe('end\uFFFD');
    expect(storableText('你好 😀 مرحبا \u200F')).toBe('你好 😀 مرحبا \u200F');
    expect(storableText('\uD83D\uDE00\uD83D')).toBe('😀\uFFFD');
  });

  it('walks objects and arrays, keys included, and leaves other values alone', () => {
    const input = { 'k\u0000': ['x\u0000', 1, null, true, { deep: 'y\uDFFF' }], n: 5 };
    expect(storableValue(input)).toEqual({ 'k\uFFFD': ['x\uFFFD', 1, null, true, { deep: 'y\uFFFD' }], n: 5 });
    expect(storableValue(undefined)).toBeUndefined();
  });

  it('refuses to walk past MAX_NESTING levels, however deep the input goes', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(() => storableValue(deep)).toThrow(TooDeeplyNested);
    const ok = JSON.parse(`${'['.repeat(MAX_NESTING)}"a\\u0000"${']'.repeat(MAX_NESTING)}`);
    expect((storableValue(ok) as unknown[]).flat(Infinity)).toEqual(['a\uFFFD']);
  });
});

describe('isCalendarDay', () => {
  it('takes a day that exists, written YYYY-MM-DD, and nothing else', () => {
    for (const ok of ['2024-02-29', '0001-01-01', '9999-12-31']) expect(isCalendarDay(ok), ok).toBe(true);
    for (const bad of ['2024-02-30', '2023-02-29', '2024-13-01', '0000-01-01', '2024-03-05T10:00:00Z', ' 2024-03-05', '2024-3-5', '']) {
      expect(isCalendarDay(bad), bad).toBe(false);
    }
  });
});

describe('isStorableDate', () => {
  it('takes ISO dates and date-times of real days in years 1–9999', () => {
    for (const ok of ['2024-02-29', '2024-03-05T10:00:00Z', '2024-03-05T10:00:00.123+02:00', '0001-01-01', '9999-12-31T23:59:59Z', '2024-03-05 10:00']) {
      expect(isStorableDate(ok), ok).toBe(true);
    }
  });

  it('refuses what no calendar or database holds', () => {
    for (const bad of [
      '1',
      '0',
      '2024-02-30',
      '2023-02-29',
      '10000-01-01',
      '+275760-09-13T00:00:00.000Z',
      '0000-01-01',
      '2024-13-01',
      '2024-01-01T24:00',
      'yesterday',
      '',
    ]) {
      expect(isStorableDate(bad), bad).toBe(false);
    }
  });
});
