import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { applyDelta, applyFinished, applyLoaded, applySendResult, emptyChatData, visibleMessages, type ChatData } from './chatReducer.js';
import { testMessage as msg } from './test-messages.js';

function loaded(messages: Message[]): ChatData {
  return applyLoaded(emptyChatData(), 'c1', messages);
}

describe('chat reducer', () => {
  it('appends deltas to the streaming reply and finishes it', () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    let s = applySendResult(loaded([]), { userMessage: user, assistantMessage: reply }, 'send');
    expect(s.streaming.c1).toBe('a1');

    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'Hel' });
    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'lo' });
    expect(s.messages.c1!.map((m) => m.content)).toEqual(['hi', 'Hello']);

    s = applyFinished(s, { conversationId: 'c1', message: { ...reply, content: 'Hello!', status: 'complete', model: 'm' } });
    expect(s.streaming.c1).toBeUndefined();
    expect(s.messages.c1![1]).toMatchObject({ content: 'Hello!', status: 'complete', model: 'm' });
  });

  it('keeps deltas that arrive before the send reply announced the message', () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    let s = loaded([]);
    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'Early ' });
    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'bird' });
    s = applySendResult(s, { userMessage: user, assistantMessage: reply }, 'send');
    expect(s.messages.c1![1]!.content).toBe('Early bird');
    expect(s.pendingText).toEqual({});
  });

  it('does not let a late send reply undo a reply that already finished (fast errors)', () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    const failed: Message = { ...reply, status: 'error', error: { code: 'no_provider', message: 'no provider' } };
    let s = applyFinished(loaded([]), { conversationId: 'c1', message: failed });
    s = applySendResult(s, { userMessage: user, assistantMessage: reply }, 'send');
    expect(s.messages.c1!.map((m) => [m.id, m.status])).toEqual([
      ['u1', 'complete'],
      ['a1', 'error'],
    ]);
    expect(s.streaming.c1).toBeUndefined();
  });

  it('ignores deltas after the final message', () => {
    const reply = msg({ id: 'a1', role: 'assistant', content: 'done', status: 'complete' });
    const s = loaded([reply]);
    expect(applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'more' })).toBe(s);
  });

  it('only tracks that an unopened conversation is writing', () => {
    const s = applyDelta(emptyChatData(), { conversationId: 'c9', messageId: 'a9', text: 'x' });
    expect(s.streaming).toEqual({ c9: 'a9' });
    expect(s.messages.c9).toBeUndefined();
    expect(s.pendingText).toEqual({});
    expect(applyFinished(s, { conversationId: 'c9', message: msg({ id: 'a9', role: 'assistant', conversationId: 'c9' }) }).streaming).toEqual({});
  });

  it('hides the old reply on regenerate and the old pair on edit', () => {
    const u1 = msg({ id: 'u1', role: 'user', content: 'q' });
    const a1 = msg({ id: 'a1', role: 'assistant', content: 'first', status: 'error' });
    let s = loaded([u1, a1]);
    const a2 = msg({ id: 'a2', role: 'assistant', status: 'streaming' });
    s = applySendResult(s, { userMessage: u1, assistantMessage: a2 }, 'regenerate');
    expect(visibleMessages(s.messages.c1!).map((m) => m.id)).toEqual(['u1', 'a2']);
    expect(s.messages.c1!.find((m) => m.id === 'a1')!.replacedBy).toBe('a2');

    s = applyFinished(s, { conversationId: 'c1', message: { ...a2, content: 'second', status: 'complete' } });
    const u2 = msg({ id: 'u2', role: 'user', content: 'q, better' });
    const a3 = msg({ id: 'a3', role: 'assistant', status: 'streaming' });
    s = applySendResult(s, { userMessage: u2, assistantMessage: a3 }, 'edit');
    expect(visibleMessages(s.messages.c1!).map((m) => m.id)).toEqual(['u2', 'a3']);
    expect(s.messages.c1!.length).toBe(5);
  });

  it('regenerate leaves replies to earlier questions alone', () => {
    const u1 = msg({ id: 'u1', role: 'user' });
    const a1 = msg({ id: 'a1', role: 'assistant' });
    const u2 = msg({ id: 'u2', role: 'user' });
    let s = loaded([u1, a1, u2]);
    const a2 = msg({ id: 'a2', role: 'assistant', status: 'streaming' });
    s = applySendResult(s, { userMessage: u2, assistantMessage: a2 }, 'regenerate');
    expect(visibleMessages(s.messages.c1!).map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });

  it('after a reconnect keeps text it streamed that the host copy lacks, and keeps newer local messages', () => {
    const u1 = msg({ id: 'u1', role: 'user', content: 'hi' });
    const a1 = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    let s = applySendResult(loaded([]), { userMessage: u1, assistantMessage: a1 }, 'send');
    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: 'Hello there' });
    s = applyLoaded(s, 'c1', [u1, { ...a1, content: 'Hello' }]);
    expect(s.messages.c1![1]!.content).toBe('Hello there');
    expect(s.streaming.c1).toBe('a1');

    // The host finished while we were away: its copy wins.
    s = applyLoaded(s, 'c1', [u1, { ...a1, content: 'Hello there, friend.', status: 'complete' }]);
    expect(s.messages.c1![1]).toMatchObject({ content: 'Hello there, friend.', status: 'complete' });
    expect(s.streaming.c1).toBeUndefined();
  });

  it('keeps unchanged messages identical so rows do not re-render', () => {
    const u1 = msg({ id: 'u1', role: 'user', content: 'hi' });
    const s = loaded([u1]);
    const again = applyLoaded(s, 'c1', [{ ...u1, injectedMemoryIds: [] }]);
    expect(again.messages.c1![0]).toBe(s.messages.c1![0]);
  });

  it('takes the host copy when only the remembered memories changed', () => {
    const a1 = msg({ id: 'a1', role: 'assistant', content: 'Hello' });
    const s = loaded([a1]);
    const again = applyLoaded(s, 'c1', [{ ...a1, injectedMemoryIds: [3, 7] }]);
    expect(again.messages.c1![0]!.injectedMemoryIds).toEqual([3, 7]);
  });

  it('orders a question before its reply when they share a timestamp', () => {
    const at = '2025-03-12T11:00:00.000Z';
    const a = msg({ id: 'a', role: 'assistant', createdAt: at });
    const u = msg({ id: 'u', role: 'user', createdAt: at });
    const s = applyFinished(loaded([]), { conversationId: 'c1', message: a });
    const t = applySendResult(s, { userMessage: u, assistantMessage: { ...a, status: 'streaming' } }, 'send');
    expect(t.messages.c1!.map((m) => m.id)).toEqual(['u', 'a']);
  });
});
