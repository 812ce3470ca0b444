// Chat turns through the real host, the real provider clients and a loopback fake model server that
// speaks the real wire protocols. The on-device provider runs for real on the generated tiny model.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEventName, ApiEvents, Message, ProviderKind } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { TEST_CHAT_MODEL_ID } from '../models/catalog.js';
import { LOADING_MODEL_TEXT, unloadLocalModel } from '../llm/local.js';
import { nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

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

async function connectedHost(opts: { kind?: ProviderKind; contextTokens?: number; dataDir?: string; timeoutMs?: number } = {}) {
  const host = await startTestHost({ dataDir: opts.dataDir ?? tempDataDir(), providerTimeoutMs: opts.timeoutMs ?? PATIENCE_MS });
  hosts.push(host);
  const kind = opts.kind ?? 'openai-compatible';
  await host.api['providers.save']({
    kind,
    name: 'Fake',
    baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl,
    model: 'fake-model',
    contextTokens: opts.contextTokens,
    apiKey: 'test-key',
  });
  const conversation = await host.api['conversations.create']({});
  return { host, conversationId: conversation.id };
}

async function sendAndWait(host: Host, conversationId: string, content: string) {
  const deltas: string[] = [];
  const off = host.on((event, payload) => {
    if (event === 'chat.delta' && payload.conversationId === conversationId) deltas.push(payload.text);
  });
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  const sent = await host.api['chat.send']({ conversationId, content });
  const { message } = (await finished) as { message: Message };
  off();
  return { sent, message, deltas };
}

describe('chat', () => {
  for (const kind of ['openai-compatible', 'anthropic'] as const) {
    it(`streams a reply over the ${kind} protocol and stores it`, async () => {
      const { host, conversationId } = await connectedHost({ kind });
      fake.script({ kind: 'text', text: 'Hello there, I remember you.', chunks: 5 });
      const { message, deltas } = await sendAndWait(host, conversationId, 'Hi!');
      expect(deltas.length).toBeGreaterThanOrEqual(3);
      expect(deltas.join('')).toBe('Hello there, I remember you.');
      expect(message).toMatchObject({ status: 'complete', content: 'Hello there, I remember you.', model: 'fake-model', error: null });
      const request = fake.requests.at(-1)!;
      const body = request.body as { messages: { role: string; content: unknown }[]; system?: string };
      // The self layer rides along as the system prompt.
      const system = kind === 'anthropic' ? body.system : (body.messages[0]!.content as string);
      expect(system).toContain('I am Anima');
      const { messages } = await host.api['conversations.get']({ id: conversationId });
      expect(messages.map((m) => [m.role, m.content, m.status])).toEqual([
        ['user', 'Hi!', 'complete'],
        ['assistant', 'Hello there, I remember you.', 'complete'],
      ]);
    });
  }

  for (const kind of ['openai-compatible', 'anthropic'] as const) {
    it(`answers in text when the tool rounds run out (${kind}): one last request may not call tools`, async () => {
      const { host, conversationId } = await connectedHost({ kind });
      const search = { kind: 'tool_call' as const, name: 'memory_semantic_search', arguments: { query: 'cat' } };
      fake.script(search, search, search, search, { kind: 'text', text: 'I looked everywhere; I do not know.' });
      const { message } = await sendAndWait(host, conversationId, 'What is my cat called?');
      expect(message).toMatchObject({ status: 'complete', content: 'I looked everywhere; I do not know.' });
      const chats = fake.requests.filter((r) => r.path.endsWith('/chat/completions') || r.path.endsWith('/messages'));
      expect(chats).toHaveLength(5);
      const bodies = chats.map((r) => r.body as { tools?: unknown[]; tool_choice?: unknown });
      // Four rounds may call tools; the fifth still declares them (the history holds calls) but may not call one.
      expect(bodies.slice(0, 4).every((b) => b.tools?.length && b.tool_choice === undefined)).toBe(true);
      expect(bodies[4]!.tools?.length).toBeGreaterThan(0);
      expect(bodies[4]!.tool_choice).toEqual(kind === 'anthropic' ? { type: 'none' } : 'none');
    });

    it(`stores no empty "complete" reply when the model only calls tools (${kind})`, async () => {
      const { host, conversationId } = await connectedHost({ kind });
      const search = { kind: 'tool_call' as const, name: 'memory_semantic_search', arguments: { query: 'cat' } };
      // A server that ignores tool_choice and calls a tool in the last round too.
      fake.script(search, search, search, search, search);
      const { message } = await sendAndWait(host, conversationId, 'What is my cat called?');
      expect(message.status).toBe('error');
      expect(message.content).toBe('');
      expect(message.error?.code).toBe('provider_bad_response');
      // The fifth call was not run: four tool results in the last request, no sixth request.
      const chats = fake.requests.filter((r) => r.path.endsWith('/chat/completions') || r.path.endsWith('/messages'));
      expect(chats).toHaveLength(5);
    });
  }

  it('keeps what was streamed when the person presses Stop', async () => {
    const { host, conversationId } = await connectedHost();
    fake.script({ kind: 'text', text: 'one two three four five six seven eight nine ten', chunks: 10, chunkDelayMs: 150 });
    const firstDelta = nextEvent(host, 'chat.delta');
    const finished = nextEvent(host, 'chat.finished');
    await host.api['chat.send']({ conversationId, content: 'Count slowly' });
    await firstDelta;
    expect(await host.api['chat.stop']({ conversationId })).toEqual({ stopped: true });
    const { message } = (await finished) as { message: Message };
    expect(message.status).toBe('partial');
    expect(message.error?.code).toBe('cancelled');
    expect(message.content.length).toBeGreaterThan(0);
    expect('one two three four five six seven eight nine ten'.startsWith(message.content)).toBe(true);
    const stored = (await host.api['conversations.get']({ id: conversationId })).messages[1]!;
    expect(stored.content).toBe(message.content);
  });

  it('keeps the partial reply when the stream is cut mid-way, and explains', async () => {
    const { host, conversationId } = await connectedHost();
    fake.script({ kind: 'cut', text: 'I was saying something important when' });
    const { message } = await sendAndWait(host, conversationId, 'Tell me');
    expect(message.status).toBe('partial');
    expect(message.content).toBe('I was saying something important when');
    expect(message.error?.code).toBe('provider_bad_response');
  });

  it('turns provider failures into words, and Retry answers again', async () => {
    const { host, conversationId } = await connectedHost();
    fake.script({ kind: 'error', status: 401, file: 'openai-error-401-invalid-api-key.json' });
    const failed = await sendAndWait(host, conversationId, 'Hello?');
    expect(failed.message.status).toBe('error');
    expect(failed.message.error?.code).toBe('provider_auth');
    expect(failed.message.error?.message).not.toContain('test-key');

    fake.script({ kind: 'text', text: 'Sorry, I am here now.' });
    const finished = nextEvent(host, 'chat.finished');
    const retried = await host.api['chat.regenerate']({ conversationId });
    expect(retried.userMessage.content).toBe('Hello?');
    const { message } = (await finished) as { message: Message };
    expect(message.content).toBe('Sorry, I am here now.');
    const visible = (await host.api['conversations.get']({ id: conversationId })).messages;
    expect(visible.map((m) => m.content)).toEqual(['Hello?', 'Sorry, I am here now.']);
    // The failed attempt is kept, marked as replaced — never deleted.
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(2);
  });

  it('gives up on a hung provider after the timeout with a clear error', async () => {
    // Long enough that the request reaches the fake server on a busy machine (the count below needs
    // it there), short enough to keep the test quick: the hang never ends by itself.
    const { host, conversationId } = await connectedHost({ timeoutMs: 5_000 });
    fake.script({ kind: 'hang' });
    const { message } = await sendAndWait(host, conversationId, 'Anyone?');
    expect(message.status).toBe('error');
    expect(message.error?.code).toBe('provider_timeout');
    // The hang never ends by itself: the turn finished because the timeout gave up on it, and
    // gave up for good (no second attempt, which the fake would have answered with an echo).
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
  });

  it('edits the last message: the new version is answered, the old one kept but hidden', async () => {
    const { host, conversationId } = await connectedHost();
    fake.script({ kind: 'text', text: 'Paris is lovely.' });
    await sendAndWait(host, conversationId, 'I am going to Pairs');
    fake.script({ kind: 'text', text: 'Paris is lovely in spring.' });
    const finished = nextEvent(host, 'chat.finished');
    await host.api['chat.editLast']({ conversationId, content: 'I am going to Paris' });
    await finished;
    const visible = (await host.api['conversations.get']({ id: conversationId })).messages;
    expect(visible.map((m) => m.content)).toEqual(['I am going to Paris', 'Paris is lovely in spring.']);
    const sent = fake.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual(['I am going to Paris']);
  });

  it('refuses a second send while a reply is streaming', async () => {
    const { host, conversationId } = await connectedHost();
    fake.script({ kind: 'text', text: 'a b c d e f', chunks: 6, chunkDelayMs: 100 });
    const finished = nextEvent(host, 'chat.finished');
    await host.api['chat.send']({ conversationId, content: 'first' });
    await expect(host.api['chat.send']({ conversationId, content: 'second' })).rejects.toMatchObject({ code: 'conflict' });
    await finished;
  });

  it('sends only what fits the context window of a 2,000-message conversation', async () => {
    const dataDir = tempDataDir();
    const first = await connectedHost({ contextTokens: 4096, dataDir });
    await first.host.close();
    hosts.length = 0;
    // Seed 2,000 turns straight into the table (writing them through the model would take minutes).
    const db = await openTestDatabase(dataDir);
    await db.query(
      `INSERT INTO messages (id, conversation_id, role, content, status)
       SELECT gen_random_uuid()::text, $1, CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
              'turn ' || i || ': ' || repeat('words about the day ', 10), 'complete'
       FROM generate_series(1, 2000) AS i`,
      [first.conversationId],
    );
    await db.close();
    const host = await startTestHost({ dataDir });
    hosts.push(host);

    fake.script({ kind: 'text', text: 'Still with you.' });
    const { message } = await sendAndWait(host, first.conversationId, 'the newest message');
    expect(message.status).toBe('complete');
    // The chat's request (the oldest turns leaving the window also start a nap, a request of its own).
    const sent = fake.requests
      .filter((r) => r.path.endsWith('/chat/completions')) // saving the connection also asked the server about its model
      .map((r) => (r.body as { messages: { role: string; content: string }[] }).messages)
      .findLast((m) => m.at(-1)?.content === 'the newest message')!;
    expect(sent[0]!.role).toBe('system');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'the newest message' });
    expect(sent[1]!.role).toBe('user');
    // ~55 tokens a turn into a 4,096-token window less the reply reserve and the system prompt.
    expect(sent.length).toBeGreaterThan(20);
    expect(sent.length).toBeLessThan(80);
    const totalChars = sent.reduce((n, m) => n + m.content.length, 0);
    expect(totalChars / 4).toBeLessThan(4096);
    // The newest turns, in order, directly before the new message.
    expect(sent.at(-2)!.content.startsWith('turn 2000:')).toBe(true);
    expect(sent.at(-3)!.content.startsWith('turn 1999:')).toBe(true);
  });

  it('rebuilds the system prompt when the sleep day rolls over, not before', async () => {
    let clock = new Date('2026-12-02T20:00:00Z');
    const host = await startTestHost({ now: () => clock, providerTimeoutMs: PATIENCE_MS });
    hosts.push(host);
    await host.api['settings.update']({ timeZone: 'UTC', sleepTime: '02:00' });
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    const { id } = await host.api['conversations.create']({});
    const systemOf = () => (fake.requests.at(-1)!.body as { messages: { content: string }[] }).messages[0]!.content;

    await sendAndWait(host, id, 'evening');
    expect(systemOf()).toContain('sleep day 2026-12-02');
    clock = new Date('2026-12-03T01:30:00Z'); // after midnight, before the sleep time: same sleep day
    await sendAndWait(host, id, 'small hours');
    expect(systemOf()).toContain('sleep day 2026-12-02');
    clock = new Date('2026-12-03T02:00:00Z');
    await sendAndWait(host, id, 'morning');
    expect(systemOf()).toContain('sleep day 2026-12-03');
    expect((await host.api['conversations.get']({ id })).conversation.systemPromptDay).toBe('2026-12-03');

    // Editing the self layer applies to the next turn of an existing conversation.
    await host.api['self.update']({ key: 'voice', content: 'I speak in short, warm sentences.' });
    await sendAndWait(host, id, 'again');
    expect(systemOf()).toContain('I speak in short, warm sentences.');
  });
});

describe('providers', () => {
  it('finds a model server running on this machine and lists its models', async () => {
    const host = await startTestHost({
      detectLocalServers: true,
      localServers: [
        { name: 'Ollama', kind: 'openai-compatible', baseUrl: fake.baseUrl },
        { name: 'Nothing here', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
      ],
    });
    hosts.push(host);
    fake.models = ['llama3.2', 'qwen2.5'];
    try {
      const found = await host.api['providers.detect']({});
      expect(found).toEqual([{ name: 'Ollama', kind: 'openai-compatible', baseUrl: fake.baseUrl, models: ['llama3.2', 'qwen2.5'] }]);
    } finally {
      fake.models = ['fake-model'];
    }
  });

  it('tests a connection: a model the server lacks, a refused port, and a good one', async () => {
    const host = await startTestHost();
    hosts.push(host);
    const missing = await host.api['providers.test']({ kind: 'openai-compatible', baseUrl: fake.baseUrl, model: 'gpt-nonexistent' });
    expect(missing).toMatchObject({ ok: false, code: 'provider_model_not_found', models: ['fake-model'] });
    expect(missing.message).toContain('gpt-nonexistent');
    const refused = await host.api['providers.test']({ kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'x' });
    expect(refused).toMatchObject({ ok: false, code: 'provider_unreachable' });
    const good = await host.api['providers.test']({ kind: 'openai-compatible', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(good).toMatchObject({ ok: true, models: ['fake-model'] });
  });
});

describe('on-device model', () => {
  // A one-layer decoder with random weights (scripts/make-tiny-models.py), run by the real local
  // provider in its real worker: the only provider that has a model to load.
  const TINY_CHAT = fileURLToPath(new URL('../models/testing/models/anima-test/tiny-chat', import.meta.url));

  afterEach(async () => {
    // The model thread is shared by the process; the next test must find nothing loaded.
    await unloadLocalModel();
  });

  it('says the model is loading before the first word, and stores nothing of it', async () => {
    const host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
    hosts.push(host);
    fs.cpSync(TINY_CHAT, path.join(host.dataDir, 'models', ...TEST_CHAT_MODEL_ID.split('/')), { recursive: true });
    await host.api['providers.save']({ kind: 'local', name: 'Tiny', baseUrl: '', model: TEST_CHAT_MODEL_ID, contextTokens: 2048 });
    const { id: conversationId } = await host.api['conversations.create']({});

    type Seen = { [E in ApiEventName]: { event: E; payload: ApiEvents[E] } }[ApiEventName];
    const seen: Seen[] = [];
    const off = host.on((event, payload) => {
      if (event === 'chat.status' || event === 'chat.delta') seen.push({ event, payload } as Seen);
    });
    const firstDelta = nextEvent(host, 'chat.delta', () => true);
    const finished = nextEvent(host, 'chat.finished', () => true);
    const sent = await host.api['chat.send']({ conversationId, content: 'hello, how was your day?' });
    await firstDelta;
    // Random weights never pick the end token; one word is all this test needs.
    await host.api['chat.stop']({ conversationId });
    const { message } = (await finished) as { message: Message };
    off();

    const messageId = sent.assistantMessage.id;
    expect(seen[0]).toEqual({
      event: 'chat.status',
      payload: { conversationId, messageId, status: 'loading_model', text: LOADING_MODEL_TEXT },
    });
    expect(seen[1]).toMatchObject({ event: 'chat.delta', payload: { conversationId, messageId } });
    expect(seen.filter((e) => e.event === 'chat.status')).toHaveLength(1);
    // The status is for the screen only: the stored reply is the model's words.
    expect(message.content).not.toContain(LOADING_MODEL_TEXT);
    const stored = (await host.api['conversations.get']({ id: conversationId })).messages;
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[1]!.content).toBe(message.content);
    expect(stored.some((m) => m.content.includes(LOADING_MODEL_TEXT))).toBe(false);
  });
});
