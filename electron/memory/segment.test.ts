import { describe, expect, it } from 'vitest';
import { segmentForIndex } from './segment.js';

describe('segmentForIndex', () => {
  it('splits Chinese into words and keeps Latin words', () => {
    expect(segmentForIndex('我的妹妹在上海的复旦大学读书 with Mara')).toBe('我 的 妹妹 在 上海 的 复旦大学 读书 with Mara');
  });

  it('leaves text without CJK alone', () => {
    expect(segmentForIndex('My sister studies in Shanghai.')).toBeNull();
  });
});
