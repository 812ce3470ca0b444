import { describe, expect, it } from 'vitest';
import type { ChatTurn } from './types.js';
import {
  charsPerTokenSample,
  ContextOverflowError,
  estimateTokens,
  fitToContext,
  historyBudget,
  nextCharsPerToken,
  turnsBeyond,
  userFirst,
} from './context.js';

function conversation(n: number): ChatTurn[] {
  return Array.from({ length: n }, (_, i): ChatTurn =>
    i % 2 === 0
      ? { role: 'user', content: `message ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(3)}` }
      : { role: 'assistant', content: `reply ${i}: ${'I remember that, tell me more about it please. '.repeat(3)}` },
  );
}

describe('estimateTokens', () => {
  it('counts about four Latin characters per token and one per CJK character', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens('你好世界')).toBe(4);
    expect(estimateTokens('hi 你好')).toBe(3); // "hi " → 1, 你好 → 2
  });
});

describe('fitToContext', () => {
  it('trims a 2,000-message conversation to the window, oldest first, keeping system and latest turns', () => {
    const history = conversation(2000);
    const fit = fitToContext('You are a companion.', history, 8192);
    expect(fit.messages[0]).toEqual({ role: 'system', content: 'You are a companion.' });
    expect(fit.messages.at(-1)).toEqual(history.at(-1));
    expect(fit.messages.at(-2)).toEqual(history.at(-2));
    expect(fit.dropped).toBeGreaterThan(1800);
    expect(fit.estimatedTokens).toBeLessThanOrEqual(8192 - 1024);
    // What is kept is one contiguous newest run, starting with the person.
    const kept = fit.messages.slice(1);
    expect(kept).toEqual(history.slice(history.length - kept.length));
    expect(kept[0]!.role).toBe('user');
  });

  it('keeps everything when it fits', () => {
    const history = conversation(6);
    const fit = fitToContext('sys', history, 8192);
    expect(fit.dropped).toBe(0);
    expect(fit.messages).toHaveLength(7);
  });

  it('refuses, with numbers, a latest message that cannot fit on its own', () => {
    const huge: ChatTurn[] = [{ role: 'user', content: 'x'.repeat(40_000) }];
    expect(() => fitToContext('sys', huge, 4096)).toThrow(ContextOverflowError);
    try {
      fitToContext('sys', huge, 4096);
    } catch (err) {
      expect((err as ContextOverflowError).needed).toBe(10_004);
    }
  });

  it('counts the pictures a request carries: text that fits with pictures that do not drops the oldest turns', () => {
    // Twelve short turns, every person's turn with two pictures of 1,000 tokens each.
    const history = conversation(12);
    const pictures = new Map<ChatTurn, number[]>(history.filter((t) => t.role === 'user').map((t) => [t, [1000, 1000]]));
    const images = { max: 8, tokens: (turn: ChatTurn) => pictures.get(turn) };
    const window = 8192;
    const textOnly = fitToContext('sys', history, window);
    expect(textOnly.dropped).toBe(0);
    expect(textOnly.estimatedTokens).toBeLessThan(1000);

    const fit = fitToContext('sys', history, window, { images });
    // 8,192 less the reply's 1,024: three person turns with their pictures fit, the oldest leave first.
    expect(fit.dropped).toBe(6);
    const kept = fit.messages.slice(1);
    expect(kept).toEqual(history.slice(6));
    expect(kept[0]!.role).toBe('user');
    expect(fit.estimatedTokens).toBeGreaterThan(6000);
    expect(fit.estimatedTokens).toBeLessThanOrEqual(window - 1024);

    // Only the newest `max` pictures are read in; older turns go as words and cost only those.
    const fewer = fitToContext('sys', history, window, { images: { ...images, max: 2 } });
    expect(fewer.dropped).toBe(0);
    expect(fewer.estimatedTokens).toBe(textOnly.estimatedTokens + 2000);

    // A latest message whose pictures alone do not fit is refused, as a long one is.
    const big = new Map([[history.at(-2)!, [9000]]]);
    expect(() => fitToContext('sys', history.slice(0, -1), window, { images: { max: 8, tokens: (t) => big.get(t) } })).toThrow(ContextOverflowError);
  });
});

describe('turns about to leave the window', () => {
  const turn = (n: number): ChatTurn => ({ role: n % 2 ? 'assistant' : 'user', content: `${n} ${'word '.repeat(36)}` });
  const history = Array.from({ length: 20 }, (_, n) => turn(n));

  it('counts the oldest turns beyond a share of the history budget, as fitToContext would drop them', () => {
    const system = 'Be kind.';
    const budget = historyBudget(system, 1024);
    // fitToContext drops the turns beyond the whole budget (and a reply left leading the history)…
    const beyond = turnsBeyond(history, budget);
    expect(beyond).toBeGreaterThan(0);
    expect(fitToContext(system, history, 1024).dropped - beyond).toBeOneOf([0, 1]);
    // …and a smaller share says which turns go next: more of them, the oldest first.
    const soon = turnsBeyond(history, budget * 0.5);
    expect(soon).toBeGreaterThan(turnsBeyond(history, budget));
    expect(soon).toBeLessThan(history.length);
    expect(turnsBeyond(history, 1e9)).toBe(0);
  });
});

describe('userFirst', () => {
  const system: ChatTurn = { role: 'system', content: 'You are a companion.' };
  const note: ChatTurn = { role: 'assistant', name: 'passive_memory_context', content: '(notes) Mara lives in Lisbon.' };
  const user: ChatTurn = { role: 'user', content: 'Where is Mara?' };

  it('folds a leading note into the end of the system turn', () => {
    expect(userFirst([system, note, user])).toEqual([{ role: 'system', content: 'You are a companion.\n\n(notes) Mara lives in Lisbon.' }, user]);
    expect(userFirst([note, user])).toEqual([{ role: 'system', content: note.content }, user]);
  });

  it('drops a reply or tool result whose question was left out', () => {
    const call = { id: 'c1', name: 'search', arguments: {} };
    const turns: ChatTurn[] = [
      system,
      { role: 'assistant', content: 'an old reply' },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: 'c1', name: 'search', content: 'result' },
      user,
      { role: 'assistant', content: 'later reply' },
    ];
    expect(userFirst(turns)).toEqual([system, user, { role: 'assistant', content: 'later reply' }]);
  });

  it('leaves a list in order, or one without any user turn, as it is', () => {
    const ordered: ChatTurn[] = [system, user, note, user];
    expect(userFirst(ordered)).toEqual(ordered);
    expect(userFirst([system, note])).toEqual([system, note]);
  });
});

describe('the calibrated estimate', () => {
  const turns: ChatTurn[] = [
    { role: 'system', content: 'a'.repeat(800) },
    { role: 'user', content: `${'b'.repeat(400)}你好` },
  ];

  it('reads characters per token from the server’s count, CJK and framing aside', () => {
    // 1,200 Latin characters; 2 CJK characters and 2 × 4 framing tokens come off the count first.
    expect(charsPerTokenSample(turns, 600 + 2 + 8)).toBeCloseTo(2);
    expect(charsPerTokenSample(turns, 300 + 2 + 8)).toBeCloseTo(4);
    expect(charsPerTokenSample(turns, 5)).toBeNull();
    expect(charsPerTokenSample([{ role: 'user', content: 'short' }], 3)).toBeNull();
  });

  it('tightens at once, loosens slowly, and stays within 1.5–4', () => {
    expect(nextCharsPerToken(null, 2)).toBe(2);
    expect(nextCharsPerToken(4, 2)).toBe(2);
    expect(nextCharsPerToken(2, 4)).toBeCloseTo(2.6);
    expect(nextCharsPerToken(null, 9)).toBe(4);
    expect(nextCharsPerToken(null, 0.5)).toBe(1.5);
  });

  it('a denser ratio fits fewer turns', () => {
    const history = conversation(40);
    const loose = fitToContext('sys', history, 4096);
    const tight = fitToContext('sys', history, 4096, { charsPerToken: 2 });
    expect(tight.dropped).toBeGreaterThan(loose.dropped);
    expect(estimateTokens('abcdefgh', 2)).toBe(4);
  });
});
