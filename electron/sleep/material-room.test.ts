// The room a background request leaves for its material, by the connection's calibrated ratio.
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../llm/context.js';
import { materialRoom } from './background.js';

const identity = 'I am the companion. '.repeat(100);
const instructions = 'Read the day and answer with JSON. '.repeat(10);
const base = { contextTokens: 8192, identity, instructions, maxTokens: 1024 };

describe('materialRoom', () => {
  it('is the context less the preamble, instructions, answer and a margin, by the default rule', () => {
    expect(materialRoom(base)).toBe(8192 - estimateTokens(identity) - estimateTokens(instructions) - 64 - 1024);
  });

  it('shrinks where the server counts more tokens per character, so packed material fits its own count', () => {
    const tight = materialRoom({ ...base, charsPerToken: 2 });
    // Material packed to `tight` by the default rule, counted at 2 characters a token, fits beside the rest.
    const material = 'x'.repeat(tight * 4);
    const used = estimateTokens(identity, 2) + estimateTokens(instructions, 2) + 64 + 1024 + estimateTokens(material, 2);
    expect(used).toBeLessThanOrEqual(8192);
    expect(tight).toBeLessThan(materialRoom(base) / 2 + 1);
  });

  it('never goes below 256', () => {
    expect(materialRoom({ ...base, contextTokens: 1024, charsPerToken: 1.5 })).toBe(256);
  });
});
