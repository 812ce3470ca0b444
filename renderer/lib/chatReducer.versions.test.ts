// Versions in the chat state: which versions a message has comes with the conversation, and a reply
// being continued takes the words that arrive.
import { describe, expect, it } from 'vitest';
import { applyDelta, applyFinished, applyLoaded, applyReopened, emptyChatData } from './chatReducer.js';
import { testMessage as msg } from './test-messages.js';

describe('chat reducer: versions', () => {
  it('keeps a message’s versions when an event about it carries none', () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a2', role: 'assistant', status: 'streaming', versionIds: ['a1', 'a2'] });
    let s = applyLoaded(emptyChatData(), 'c1', [user, reply]);
    s = applyFinished(s, { conversationId: 'c1', message: { ...reply, versionIds: undefined, content: 'Hello', status: 'complete' } });
    expect(s.messages.c1![1]).toMatchObject({ content: 'Hello', status: 'complete', versionIds: ['a1', 'a2'] });
  });

  it('a reply being continued takes the words that arrive, after what it said', () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'partial', content: 'The rules are:', error: { code: 'cancelled', message: '' } });
    let s = applyLoaded(emptyChatData(), 'c1', [user, reply]);
    // A delta for a finished reply changes nothing…
    expect(applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: ' x' })).toBe(s);
    // …until it is reopened.
    s = applyReopened(s, 'c1', 'a1');
    expect(s.streaming.c1).toBe('a1');
    s = applyDelta(s, { conversationId: 'c1', messageId: 'a1', text: ' be kind.' });
    expect(s.messages.c1![1]).toMatchObject({ content: 'The rules are: be kind.', status: 'streaming', error: null });
  });
});
