// The chat store's "what the reply waits for" line: kept from chat.status until the first word, the
// finished reply or Stop. Calls go to a scripted client answering like the host; events are pushed
// through the app's own event wiring (stores/events.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiEvents, Conversation } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { resetChatStore, useChat } from './chat.js';
import { connectEvents } from './events.js';
import { testMessage as msg } from '../lib/test-messages.js';

const conversation = { id: 'c1', title: 'Hello' } as Conversation;

let handlers: ScriptedClient['handlers'];
let emit: ScriptedClient['emit'];

const user = msg({ id: 'u1', role: 'user', content: 'hi' });
const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
const loading: ApiEvents['chat.status'] = { conversationId: 'c1', messageId: 'a1', status: 'loading_model', text: 'Loading the local model…' };

/** An open conversation whose reply to "hi" is being written. */
async function sending(): Promise<void> {
  handlers['conversations.get'] = () => ({ conversation, messages: [] });
  handlers['chat.send'] = () => ({ userMessage: user, assistantMessage: reply });
  await useChat.getState().open('c1');
  await useChat.getState().send('hi');
  expect(useChat.getState().streaming.c1).toBe('a1');
}

let disconnect: () => void;
beforeEach(() => {
  const scripted = scriptedClient();
  ({ handlers, emit } = scripted);
  resetChatStore();
  setClient(scripted.client);
  disconnect = connectEvents(scripted.client);
});
afterEach(() => {
  disconnect();
  resetChatStore();
  setClient(null);
});

describe('reply status', () => {
  it('keeps chat.status for the reply until its first words arrive', async () => {
    await sending();
    emit('chat.status', loading);
    expect(useChat.getState().replyStatus).toEqual({ a1: { status: 'loading_model', text: 'Loading the local model…' } });

    // events.ts hands deltas over in batches.
    useChat.getState().applyDeltas([{ conversationId: 'c1', messageId: 'a1', text: 'Hel' }]);
    expect(useChat.getState().replyStatus).toEqual({});
    expect(useChat.getState().messages.c1!.at(-1)!.content).toBe('Hel');

    // A status that comes late (after words) does not bring the line back.
    emit('chat.status', loading);
    expect(useChat.getState().replyStatus).toEqual({});
  });

  it('clears it when the reply finishes without a word', async () => {
    await sending();
    emit('chat.status', loading);
    useChat.getState().applyFinished({
      conversationId: 'c1',
      message: { ...reply, status: 'error', error: { code: 'provider_not_installed', message: 'not there' } },
    });
    expect(useChat.getState().replyStatus).toEqual({});
    expect(useChat.getState().streaming.c1).toBeUndefined();
  });

  it('clears it when the person presses Stop', async () => {
    await sending();
    handlers['chat.stop'] = () => ({ stopped: true });
    emit('chat.status', loading);
    await useChat.getState().stop();
    expect(useChat.getState().replyStatus).toEqual({});
    expect(useChat.getState().stoppedByUser).toEqual({ a1: true });
  });

  it('listens before the reply starts, so a status beating the send answer is kept', async () => {
    handlers['conversations.get'] = () => ({ conversation, messages: [] });
    // The host may emit chat.status before the answer to chat.send arrives (separate channels).
    handlers['chat.send'] = () => {
      emit('chat.status', loading);
      return { userMessage: user, assistantMessage: reply };
    };
    await useChat.getState().open('c1');
    await useChat.getState().send('hi');
    expect(useChat.getState().replyStatus.a1?.status).toBe('loading_model');
  });
});

describe('leaving a conversation', () => {
  it('tells the host when another conversation opens or the open one closes, not when it opens again', async () => {
    const left: string[] = [];
    handlers['conversations.leave'] = ({ id }) => {
      left.push(id);
      return { ok: true };
    };
    handlers['conversations.get'] = ({ id }) => ({ conversation: { ...conversation, id }, messages: [] });
    await useChat.getState().open('c1');
    await useChat.getState().open('c1');
    expect(left).toEqual([]);
    await useChat.getState().open('c2');
    useChat.getState().openNew({ ...conversation, id: 'c3' });
    useChat.getState().close();
    expect(left).toEqual(['c1', 'c2', 'c3']);
  });
});
