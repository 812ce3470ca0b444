import { describe, expect, it } from 'vitest';
import { estimateTokens, messageLimit } from './messageLimit.js';

describe('message limit', () => {
  it('estimates as the host does: four characters a token, one a CJK character', () => {
    expect(estimateTokens('abcd'.repeat(10))).toBe(10);
    expect(estimateTokens('你好世界')).toBe(4);
    expect(estimateTokens('hi 你好')).toBe(3);
  });

  it('takes the smaller of the setting and the server’s window, less the reply and the system prompt', () => {
    expect(messageLimit({ contextTokens: 8192, server: null })).toEqual({ window: 8192, tokens: 8192 - 1024 - 1500 });
    const server = { contextTokens: 4096 } as NonNullable<Parameters<typeof messageLimit>[0]['server']>;
    expect(messageLimit({ contextTokens: 32768, server })).toEqual({ window: 4096, tokens: 4096 - 1024 - 1500 });
  });
});
