// For tests: chat messages in conversation c1, each a second after the one made before it.
import type { Message } from '../../shared/api.js';

let clock = Date.parse('2025-03-12T10:00:00Z');

export function testMessage(over: Partial<Message> & Pick<Message, 'id' | 'role'>): Message {
  clock += 1000;
  return {
    conversationId: 'c1',
    content: '',
    status: 'complete',
    error: null,
    model: null,
    createdAt: new Date(clock).toISOString(),
    replacedBy: null,
    speaker: null,
    injectedMemoryIds: [],
    ...over,
  };
}
