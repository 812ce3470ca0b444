// The pictures' estimate per family, against the examples the providers' documentation gives.
import { describe, expect, it } from 'vitest';
import { imageFamily, imageTokens, openAiTiles, UNKNOWN_IMAGE_TOKENS } from './image-tokens.js';

describe('imageTokens', () => {
  it('counts OpenAI tiles as its guide does, and takes the larger of tiles and patches', () => {
    // The guide's examples: 1024×1024 → 768×768, four tiles, 765; 2048×4096 → 768×1536, six tiles, 1,105.
    expect(openAiTiles(1024, 1024)).toBe(765);
    expect(openAiTiles(2048, 4096)).toBe(1105);
    expect(imageTokens('openai', 1024, 1024)).toBe(1024); // 32 × 32 patches
    expect(imageTokens('openai', 1568, 1568)).toBe(1536); // patches capped
    expect(imageTokens('openai', 100, 100)).toBe(765); // never less than the tile rule
  });

  it('counts Anthropic pictures as width × height / 750, capped near 1,600', () => {
    expect(imageTokens('anthropic', 200, 200)).toBe(54); // the guide's table: ~54
    expect(imageTokens('anthropic', 1000, 1000)).toBe(1334); // ~1,334
    expect(imageTokens('anthropic', 1568, 1568)).toBe(1600);
  });

  it('counts 28-px patches within 576–1,600 on every other server, and the most for a picture of unknown size', () => {
    expect(imageTokens('other', 64, 48)).toBe(576);
    expect(imageTokens('other', 896, 896)).toBe(1024);
    expect(imageTokens('other', 1568, 1568)).toBe(UNKNOWN_IMAGE_TOKENS);
    expect(imageTokens('anthropic', 0, 0)).toBe(UNKNOWN_IMAGE_TOKENS);
  });

  it('knows the family by the kind and, for OpenAI-compatible servers, the address', () => {
    expect(imageFamily('anthropic', 'https://api.anthropic.com')).toBe('anthropic');
    expect(imageFamily('openai-compatible', 'https://api.openai.com/v1')).toBe('openai');
    expect(imageFamily('openai-compatible', 'https://me.openai.azure.com/openai')).toBe('openai');
    expect(imageFamily('openai-compatible', 'http://127.0.0.1:1234/v1')).toBe('other');
    expect(imageFamily('ollama', 'http://127.0.0.1:11434')).toBe('other');
    expect(imageFamily('openai-compatible', 'not a url')).toBe('other');
  });
});
