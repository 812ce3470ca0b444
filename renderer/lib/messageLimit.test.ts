import { describe, expect, it } from 'vitest';
import { estimateTokens, messageLimit, picturesTokens, sizeOverLimit } from './messageLimit.js';

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

describe('a message with pictures', () => {
  const llava = { kind: 'ollama', baseUrl: 'http://127.0.0.1:11434', model: 'llava:7b' } as const;
  const claude = { kind: 'anthropic', baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4' } as const;
  const textOnly = { kind: 'ollama', baseUrl: 'http://127.0.0.1:11434', model: 'llama3.2:3b' } as const;
  const photo = { width: 1000, height: 1000 };

  it('counts each picture by the model family’s rule, as the host’s fit does, and none for a model that cannot see', () => {
    // Elsewhere: a token per 28×28 patch within 576–1,600; Anthropic: width × height / 750, at most 1,600.
    expect(picturesTokens(llava, [photo, { width: 100, height: 100 }])).toBe(1296 + 576);
    expect(picturesTokens(claude, [photo])).toBe(1334);
    expect(picturesTokens(textOnly, [photo])).toBe(0);
    expect(picturesTokens({ ...textOnly, abilities: { chat: 'yes', tools: 'unknown', structured: 'unknown', embeddings: 'no', images: 'yes' } }, [photo])).toBe(
      1296,
    );
    expect(picturesTokens(llava, [])).toBe(0);
  });

  it('is over the limit by its words and pictures together; pictures alone can be too much, a short caption with one is not', () => {
    const limit = messageLimit({ contextTokens: 4096, server: null }); // about 1,572 for one message
    const two = picturesTokens(llava, [photo, photo]);
    expect(sizeOverLimit('', two, limit)).toBe(2592);
    expect(sizeOverLimit('look at the roses', picturesTokens(llava, [photo]), limit)).toBeNull();
    expect(sizeOverLimit('', 0, limit)).toBeNull();
    // Words that fit alone do not with a picture.
    const words = 'word '.repeat(800); // 1,000 tokens
    expect(sizeOverLimit(words, 0, limit)).toBeNull();
    expect(sizeOverLimit(words, picturesTokens(llava, [photo]), limit)).toBe(1000 + 1296);
  });
});
