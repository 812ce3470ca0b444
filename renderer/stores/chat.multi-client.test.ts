// Several windows on one host: what another window does in the conversation open here shows here
// without a reload. The host announces it (conversations.changed), this window reads the conversation
// again; its own sends and a reply's finish cost no read. Calls go to a scripted client answering as
// the host does; events go through the app's own wiring (stores/events.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation, Message } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { resetChatStore, useChat } from './chat.js';
import { connectEvents } from './events.js';
import { testMessage as msg } from '../lib/test-messages.js';

const conversation = { id: 'c1', title: 'Hello' } as Conversation;

let handlers: ScriptedClient['handlers'];
let emit: ScriptedClient['emit'];
let connected: ScriptedClient['connected'];
let disconnect: () => void;
/** What the host holds for c1, and how often this window read it. */
let onHost: Message[];
let reads: number;

beforeEach(() => {
  const scripted = scriptedClient();
  ({ handlers, emit, connected } = scripted);
  resetChatStore();
  setClient(scripted.client);
  disconnect = connectEvents(scripted.client);
  onHost = [];
  reads = 0;
  handlers['conversations.get'] = () => {
    reads += 1;
    return { conversation, messages: onHost.map((m) => ({ ...m })) };
  };
  // The list refresh the same event asks for (after a pause); it is not what these tests watch.
  handlers['conversations.list'] = () => [];
});
afterEach(() => {
  disconnect();
  resetChatStore();
  setClient(null);
});

const shown = () => useChat.getState().messages.c1 ?? [];

describe('a message sent from another window', () => {
  it('appears here, with the reply, without a reload', async () => {
    const first = msg({ id: 'u0', role: 'user', content: 'earlier' });
    onHost = [first];
    await useChat.getState().open('c1');
    expect(shown().map((m) => m.id)).toEqual(['u0']);

    // The phone sends: the host stores the message and the reply's placeholder, then says so.
    const user = msg({ id: 'u1', role: 'user', content: 'sent from the phone' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    onHost = [first, user, reply];
    emit('conversations.changed', { conversationId: 'c1' });
    await expect.poll(() => shown().map((m) => m.id)).toEqual(['u0', 'u1', 'a1']);
    expect(shown()[1]!.content).toBe('sent from the phone');
    expect(useChat.getState().streaming.c1).toBe('a1');

    useChat.getState().applyDeltas([{ conversationId: 'c1', messageId: 'a1', text: 'Hi there' }]);
    expect(shown()[2]!.content).toBe('Hi there');
    const done = { ...reply, content: 'Hi there!', status: 'complete' as const };
    onHost = [first, user, done];
    emit('chat.finished', { conversationId: 'c1', message: done });
    emit('conversations.changed', { conversationId: 'c1' });
    expect(shown()[2]!).toMatchObject({ content: 'Hi there!', status: 'complete' });
    expect(useChat.getState().streaming.c1).toBeUndefined();
    // One read on open, one for the send; the finish brought the reply itself.
    await Promise.resolve();
    expect(reads).toBe(2);
  });

  it('does not write twice the words that arrived before the conversation was read', async () => {
    await useChat.getState().open('c1');
    const user = msg({ id: 'u1', role: 'user', content: 'hello' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    handlers['conversations.get'] = async () => {
      reads += 1;
      await held;
      // The host had saved part of the reply when it read the conversation.
      return { conversation, messages: [user, { ...reply, content: 'Hel' }] };
    };
    emit('conversations.changed', { conversationId: 'c1' });
    // Words from the first one on, before the read came back: this window does not know the reply yet.
    useChat.getState().applyDeltas([
      { conversationId: 'c1', messageId: 'a1', text: 'Hel' },
      { conversationId: 'c1', messageId: 'a1', text: 'lo' },
    ]);
    answer();
    await expect.poll(() => shown().map((m) => m.content)).toEqual(['hello', 'Hello']);
  });

  it('shows a reply finished while the conversation was first being read here (a morning message)', async () => {
    const user = msg({ id: 'u1', role: 'user', content: 'hello' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    const done = { ...reply, content: 'Good morning!', status: 'complete' as const };
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    handlers['conversations.get'] = async () => {
      reads += 1;
      // The first read began while the reply was still being written; later ones find it done.
      if (reads > 1) return { conversation, messages: [user, done] };
      await held;
      return { conversation, messages: [user, reply] };
    };
    const opening = useChat.getState().open('c1');
    // The reply finishes before that first read comes back: its list is not here yet.
    emit('chat.finished', { conversationId: 'c1', message: done });
    emit('conversations.changed', { conversationId: 'c1' });
    answer();
    await opening;
    await expect.poll(() => shown().at(-1)).toMatchObject({ content: 'Good morning!', status: 'complete' });
    expect(useChat.getState().streaming.c1).toBeUndefined();
  });

  it('reads at most once more however many changes come while a read is under way', async () => {
    await useChat.getState().open('c1');
    let answer!: () => void;
    let held = new Promise<void>((resolve) => (answer = resolve));
    handlers['conversations.get'] = async () => {
      reads += 1;
      await held;
      return { conversation, messages: onHost };
    };
    const before = reads;
    for (let i = 0; i < 5; i++) emit('conversations.changed', { conversationId: 'c1' });
    const release = answer;
    held = Promise.resolve();
    release();
    await useChat.getState().noteChanged('c1');
    await expect.poll(() => reads - before).toBe(2);
  });

  it('ignores changes to a conversation that is not open here', async () => {
    await useChat.getState().open('c1');
    const before = reads;
    emit('conversations.changed', { conversationId: 'c2' });
    await Promise.resolve();
    expect(reads).toBe(before);
  });
});

describe("this window's own send", () => {
  it('costs no extra read: the send answers with the messages, the finish brings the reply', async () => {
    await useChat.getState().open('c1');
    const user = msg({ id: 'u1', role: 'user', content: 'hi' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    handlers['chat.send'] = () => {
      // The host announces the change before the send's answer comes back.
      emit('conversations.changed', { conversationId: 'c1' });
      return { userMessage: user, assistantMessage: reply };
    };
    await useChat.getState().send('hi');
    emit('chat.finished', { conversationId: 'c1', message: { ...reply, content: 'hello', status: 'complete' } });
    emit('conversations.changed', { conversationId: 'c1' });
    await Promise.resolve();
    expect(reads).toBe(1);
    expect(shown().map((m) => m.content)).toEqual(['hi', 'hello']);
  });
});

describe('a change made in another window', () => {
  it('drops a message another window deleted, and takes a version it chose', async () => {
    const question = msg({ id: 'u1', role: 'user', content: 'hi' });
    const first = msg({ id: 'a1', role: 'assistant', content: 'hello' });
    onHost = [question, first];
    await useChat.getState().open('c1');
    expect(shown().map((m) => m.id)).toEqual(['u1', 'a1']);

    // The phone deletes the reply.
    onHost = [question];
    emit('conversations.changed', { conversationId: 'c1' });
    await expect.poll(() => shown().map((m) => m.id)).toEqual(['u1']);

    // The phone writes it again: the new version is the one on the line.
    const second = msg({ id: 'a2', role: 'assistant', content: 'hello again' });
    onHost = [question, second];
    emit('conversations.changed', { conversationId: 'c1' });
    await expect.poll(() => shown().map((m) => m.content)).toEqual(['hi', 'hello again']);
  });
});

describe('a read under way when this window sends', () => {
  it('keeps the message this window sent meanwhile', async () => {
    const earlier = msg({ id: 'u0', role: 'user', content: 'earlier' });
    onHost = [earlier];
    await useChat.getState().open('c1');
    // Another window changed something: the read starts, and is slow.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    handlers['conversations.get'] = async () => {
      reads += 1;
      const copy = onHost.slice();
      await held;
      return { conversation, messages: copy };
    };
    emit('conversations.changed', { conversationId: 'c1' });
    // Meanwhile this window sends; the host stores it after the read took its copy.
    const user = msg({ id: 'u1', role: 'user', content: 'mine' });
    const reply = msg({ id: 'a1', role: 'assistant', status: 'streaming' });
    handlers['chat.send'] = () => {
      onHost = [earlier, user, reply];
      return { userMessage: user, assistantMessage: reply };
    };
    await useChat.getState().send('mine');
    answer();
    // The read's answer is applied in microtasks: one macrotask later it has been.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reads).toBe(2);
    expect(shown().map((m) => m.id)).toEqual(['u0', 'u1', 'a1']);
  });
});

describe('the event stream opening after the window read the conversation', () => {
  it('reads it again, so a reply the host finished in between is shown whole', async () => {
    // The window starts: the conversation is read while the host is still writing a reply…
    const user = msg({ id: 'u1', role: 'user', content: 'hello' });
    const reply = msg({ id: 'a1', role: 'assistant', content: 'Good morning! I slept', status: 'streaming' });
    onHost = [user, reply];
    await useChat.getState().open('c1');
    expect(shown()[1]).toMatchObject({ content: 'Good morning! I slept', status: 'streaming' });
    // …which it finishes before the stream is open, so its finish was never heard here.
    onHost = [user, { ...reply, content: 'Good morning! I slept on it.', status: 'complete' }];
    connected(false);
    await expect.poll(() => shown()[1]).toMatchObject({ content: 'Good morning! I slept on it.', status: 'complete' });
    expect(useChat.getState().streaming.c1).toBeUndefined();
  });
});
