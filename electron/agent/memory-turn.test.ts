// Long-term memory inside real turns: host + on-disk PGlite + real provider client + fake server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { nextEvent, startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';
import { PASSIVE_MESSAGE_NAME } from './memory-turn.js';

let fake: FakeLlm;
const hosts: Host[] = [];
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  fake.reset(); // a test that failed halfway leaves no replies queued for the next
});

async function setup() {
  const host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
  hosts.push(host);
  await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  const { id } = await host.api['conversations.create']({});
  return { host, conversationId: id };
}

async function turn(host: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

type Sent = { role: string; content: string; name?: string }[];
const lastRequestMessages = () => (fake.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as { messages: Sent }).messages;

describe('memory in a turn', () => {
  it('injects passive recall just before the message, for that turn only, and counts it', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon and works as a nurse.' });
    const injected = nextEvent(host, 'chat.injected');
    fake.script({ kind: 'text', text: 'She is in Lisbon.' });
    const reply = await turn(host, conversationId, 'Where does my sister Mara live these days?');

    const sent = lastRequestMessages();
    // The conversation's first message: the block would lead the list, so it ends the system turn.
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent[0]!.content).toContain(`[[anima:${memory.id}]]`);
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: 'Where does my sister Mara live these days?' });
    expect(((await injected) as { memories: { id: number }[] }).memories.map((m) => m.id)).toEqual([memory.id]);
    expect(reply.injectedMemoryIds).toEqual([memory.id]);

    // Never persisted: the stored conversation is the person's message and the reply.
    const { messages } = await host.api['conversations.get']({ id: conversationId });
    expect(messages.map((m) => m.content)).toEqual(['Where does my sister Mara live these days?', 'She is in Lisbon.']);
    expect(messages[1]!.injectedMemoryIds).toEqual([memory.id]);
    // Injected counts, but is not a reference.
    const after = (await host.api['memories.get']({ id: memory.id })).memory;
    expect(after.injectedCount).toBe(1);
    expect(after.referenceCount).toBe(0);

    // The next turn about something else carries no passive block.
    fake.script({ kind: 'text', text: 'Sunny.' });
    await turn(host, conversationId, 'How is the weather?');
    expect(lastRequestMessages().some((m) => m.name === PASSIVE_MESSAGE_NAME)).toBe(false);
    expect(lastRequestMessages()[0]!.content).not.toContain(`[[anima:${memory.id}]]`);

    // Later in the conversation it is its own turn, just before the message.
    fake.script({ kind: 'text', text: 'Still Lisbon.' });
    await turn(host, conversationId, 'And Mara, is she still a nurse in Lisbon?');
    const later = lastRequestMessages();
    expect(later.at(-2)).toMatchObject({ role: 'assistant', name: PASSIVE_MESSAGE_NAME });
    expect(later.at(-2)!.content).toContain(`[[anima:${memory.id}]]`);
  });

  it('respects the passive recall switch', async () => {
    const { host, conversationId } = await setup();
    await host.api['memories.create']({ type: 'world', content: 'Mara lives in Lisbon.' });
    await host.api['settings.update']({ passiveRecall: false });
    fake.script({ kind: 'text', text: 'ok' });
    await turn(host, conversationId, 'Where does Mara live?');
    expect(lastRequestMessages().some((m) => m.name === PASSIVE_MESSAGE_NAME)).toBe(false);
  });

  it('carries pinned memories and the citation rules in the system prompt', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'preference', content: 'Sam prefers to be called Sammy.', pinned: true });
    fake.script({ kind: 'text', text: 'Hi Sammy!' });
    await turn(host, conversationId, 'Hello');
    const system = lastRequestMessages()[0]!.content;
    expect(system).toContain(`Sam prefers to be called Sammy. [[anima:${memory.id}]]`);
    // The rule shows a placeholder, never a number a model could copy and credit to a real memory.
    expect(system).toContain('[[anima:ID]]');
    expect(system.match(/\[\[anima:\d+\]\]/g)).toEqual([`[[anima:${memory.id}]]`]);
    const preview = await host.api['memories.resident']({});
    expect(system).toContain(preview.text);
  });

  it('counts a citation once per citing message, and never from a tool result', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'world', content: 'The cat is called Pepper.' });
    fake.script({ kind: 'text', text: `Pepper, of course. [[anima:${memory.id}]] [[anima:${memory.id}]]` });
    await turn(host, conversationId, 'What is the cat called?');
    expect((await host.api['memories.get']({ id: memory.id })).memory.referenceCount).toBe(1);
    fake.script({ kind: 'text', text: `Still Pepper. [[anima:${memory.id}]] and [[anima:99999]]` });
    await turn(host, conversationId, 'Sure?');
    expect((await host.api['memories.get']({ id: memory.id })).memory.referenceCount).toBe(2);

    // A tool result shows the id; the reply without a marker adds nothing.
    fake.script({ kind: 'tool_call', name: 'memory_semantic_search', arguments: { query: 'cat' }, thenText: 'The cat is Pepper.' });
    await turn(host, conversationId, 'Remind me about the cat');
    const toolResult = lastRequestMessages().find((m) => m.role === 'tool')!;
    expect(toolResult.content).toContain(`[[anima:${memory.id}]]`);
    expect((await host.api['memories.get']({ id: memory.id })).memory.referenceCount).toBe(2);

    // A forgotten memory's citation is ignored.
    await host.api['memories.forget']({ id: memory.id });
    fake.script({ kind: 'text', text: `Pepper [[anima:${memory.id}]]` });
    await turn(host, conversationId, 'Cat?');
    expect((await host.api['memories.get']({ id: memory.id })).memory.referenceCount).toBe(2);
  });

  it('lets the companion remember through its tool, and refuses a secret', async () => {
    const { host, conversationId } = await setup();
    fake.script({
      kind: 'tool_call',
      name: 'remember',
      arguments: { action: 'save', type: 'world', content: 'Sam’s dentist appointment is on Friday at 9.' },
      thenText: 'I will remember that.',
    });
    const reply = await turn(host, conversationId, 'My dentist appointment is on Friday at 9.');
    expect(reply.content).toBe('I will remember that.');
    const { items } = await host.api['memories.list']({});
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ source: 'tool', content: 'Sam’s dentist appointment is on Friday at 9.' });
    const userMessage = (await host.api['conversations.get']({ id: conversationId })).messages[0]!;
    expect(items[0]!.sourceMessageIds).toEqual([userMessage.id]);

    fake.script({
      kind: 'tool_call',
      name: 'remember',
      arguments: { action: 'save', type: 'world', content: 'The OpenAI key is sk-proj-abcdefghijklmnopqrstuvwxyz123456' },
      thenText: 'I will not keep the key itself.',
    });
    await turn(host, conversationId, 'My key is sk-proj-abcdefghijklmnopqrstuvwxyz123456');
    const refusal = lastRequestMessages().find((m) => m.role === 'tool')!;
    expect(refusal.content.toLowerCase()).toContain('where');
    expect((await host.api['memories.list']({})).items).toHaveLength(1);
    // The person's own message is stored as written, secret and all.
    const stored = (await host.api['conversations.get']({ id: conversationId })).messages.map((m) => m.content);
    expect(stored).toContain('My key is sk-proj-abcdefghijklmnopqrstuvwxyz123456');
  });
});

describe('what the person changes reaches the next request of an open conversation', () => {
  const systemOf = () => lastRequestMessages()[0]!.content;
  const passiveOf = () => lastRequestMessages().find((m) => m.name === PASSIVE_MESSAGE_NAME)?.content ?? '';
  const sentAnywhere = (marker: string) => lastRequestMessages().some((m) => m.content.includes(marker));

  it('forget: the memory leaves the system prompt and passive recall at once; undo brings it back', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon.', pinned: true });
    const marker = `[[anima:${memory.id}]]`;
    fake.script({ kind: 'text', text: 'Hello!' });
    await turn(host, conversationId, 'Hello');
    expect(systemOf()).toContain(marker);

    const { changeId } = await host.api['memories.forget']({ id: memory.id });
    fake.script({ kind: 'text', text: 'I am not sure.' });
    await turn(host, conversationId, 'Where does my sister Mara live?');
    expect(sentAnywhere(marker)).toBe(false);
    expect(sentAnywhere('Mara lives in Lisbon')).toBe(false);

    await host.api['memories.undo']({ changeId });
    fake.script({ kind: 'text', text: 'In Lisbon.' });
    await turn(host, conversationId, 'And now?');
    expect(systemOf()).toContain(marker);
  });

  it('pin mid-conversation: carried by the next request, and not repeated by passive recall', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon.' });
    const marker = `[[anima:${memory.id}]]`;
    // A greeting first: passive recall on a conversation's first message would join the system turn.
    fake.script({ kind: 'text', text: 'Hello!' });
    await turn(host, conversationId, 'Hello');
    fake.script({ kind: 'text', text: 'Lisbon.' });
    await turn(host, conversationId, 'Where does my sister Mara live?');
    expect(systemOf()).not.toContain(marker);
    expect(passiveOf()).toContain(marker);

    await host.api['memories.pin']({ id: memory.id, pinned: true });
    fake.script({ kind: 'text', text: 'Still Lisbon.' });
    await turn(host, conversationId, 'Where does my sister Mara live again?');
    expect(systemOf()).toContain(marker);
    expect(passiveOf()).not.toContain(marker);

    await host.api['memories.pin']({ id: memory.id, pinned: false });
    fake.script({ kind: 'text', text: 'Lisbon, yes.' });
    await turn(host, conversationId, 'Where does my sister Mara live, once more?');
    expect(systemOf()).not.toContain(marker);
    expect(passiveOf()).toContain(marker);
  });

  it('edit: the next request carries the new words, never the old', async () => {
    const { host, conversationId } = await setup();
    const { memory } = await host.api['memories.create']({ type: 'preference', content: 'Sam prefers to be called Sammy.', pinned: true });
    fake.script({ kind: 'text', text: 'Hi Sammy!' });
    await turn(host, conversationId, 'Hello');
    expect(systemOf()).toContain('Sam prefers to be called Sammy.');

    await host.api['memories.update']({ id: memory.id, content: 'Sam prefers to be called Sam, not Sammy.' });
    fake.script({ kind: 'text', text: 'Hi Sam!' });
    await turn(host, conversationId, 'Hello again');
    expect(systemOf()).toContain(`Sam prefers to be called Sam, not Sammy. [[anima:${memory.id}]]`);
    expect(systemOf()).not.toContain('Sam prefers to be called Sammy.');
  });

  it('leaves the system prompt byte for byte the same while nothing it carries changed', async () => {
    const { host, conversationId } = await setup();
    await host.api['memories.create']({ type: 'world', content: 'The cat is called Pepper.', pinned: true });
    fake.script({ kind: 'text', text: 'One.' });
    await turn(host, conversationId, 'First');
    const first = systemOf();
    // A memory that is not resident changes nothing in the prompt.
    await host.api['memories.create']({ type: 'world', content: 'The dog is called Rex.' });
    fake.script({ kind: 'text', text: 'Two.' });
    await turn(host, conversationId, 'Second');
    expect(systemOf()).toBe(first);
  });
});

describe('honest accounting', () => {
  it('credits a citation only for a memory the reply was shown', async () => {
    const { host, conversationId } = await setup();
    const { memory: shownOne } = await host.api['memories.create']({ type: 'world', content: 'The cat is called Pepper.', pinned: true });
    const { memory: unseen } = await host.api['memories.create']({ type: 'world', content: 'The dog is called Rex.' });
    fake.script({ kind: 'text', text: `Pepper. [[anima:${shownOne.id}]] Also [[anima:${unseen.id}]]` });
    await turn(host, conversationId, 'Hello');
    expect((await host.api['memories.get']({ id: shownOne.id })).memory.referenceCount).toBe(1);
    expect((await host.api['memories.get']({ id: unseen.id })).memory.referenceCount).toBe(0);
  });

  it('counts every showing: the resident block per request, passive recall and tool results', async () => {
    const { host, conversationId } = await setup();
    const { memory: pinned } = await host.api['memories.create']({ type: 'world', content: 'Sam plays the cello.', pinned: true });
    const { memory: found } = await host.api['memories.create']({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon.' });
    fake.script({ kind: 'text', text: 'Hello Sam.' });
    await turn(host, conversationId, 'Hi');
    expect((await host.api['memories.get']({ id: pinned.id })).memory.injectedCount).toBe(1);
    // One turn, two requests (a tool round): the resident block went twice, the tool result once.
    fake.script({ kind: 'tool_call', name: 'memory_semantic_search', arguments: { query: 'Lisbon' }, thenText: 'She lives in Lisbon.' });
    await turn(host, conversationId, 'Remind me: where does my sister live?');
    expect((await host.api['memories.get']({ id: pinned.id })).memory.injectedCount).toBe(3);
    const foundAfter = (await host.api['memories.get']({ id: found.id })).memory.injectedCount;
    // Passive recall brought it to both requests, or only the tool result showed it once.
    expect(foundAfter).toBeGreaterThanOrEqual(1);
  });
});
