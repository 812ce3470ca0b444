// Text and dates that the database cannot hold, sent through the API as any caller could: each is
// made storable (NUL and lone surrogates become U+FFFD) or refused as invalid input — never a 500,
// never a lost message.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { ApiError } from '../../shared/api.js';
import { nextEvent, startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from './types.js';

let fake: FakeLlm;
let host: Host;

beforeAll(async () => {
  fake = await startFakeLlm();
  host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
  await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
});
afterAll(async () => {
  await host.close();
  await fake.close();
});
afterEach(() => fake.reset()); // a test that failed halfway leaves no replies queued for the next

const refusedAsInvalid = async (call: () => Promise<unknown>, field?: string) => {
  // Validation may throw before a promise exists, as a transport sees it either way.
  const error = await Promise.resolve()
    .then(call)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe('invalid_input');
  if (field) expect((error as ApiError).field).toBe(field);
};

describe('text the database cannot hold', () => {
  it('a chat message with a NUL is stored with U+FFFD, and the reply completes', async () => {
    const conversation = await host.api['conversations.create']({});
    fake.script({ kind: 'text', text: 'Got it.' });
    const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversation.id);
    await host.api['chat.send']({ conversationId: conversation.id, content: 'hello\u0000world' });
    await finished;
    const { messages } = await host.api['conversations.get']({ id: conversation.id });
    expect(messages.map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', 'hello\uFFFDworld', 'complete'],
      ['assistant', 'Got it.', 'complete'],
    ]);
  });

  it('a model delta with a NUL ends complete, with U+FFFD in its place', async () => {
    const conversation = await host.api['conversations.create']({});
    fake.script({ kind: 'text', text: 'one\u0000two', chunks: 1 });
    const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversation.id);
    await host.api['chat.send']({ conversationId: conversation.id, content: 'say something' });
    await finished;
    const { messages } = await host.api['conversations.get']({ id: conversation.id });
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'one\uFFFDtwo', status: 'complete' });
  });

  it('memories, their edits, titles and self blocks with NULs or lone surrogates are saved, made storable', async () => {
    const created = await host.api['memories.create']({ type: 'world', content: 'The person keeps a\uD800b in a jar.' });
    expect(created.memory.content).toBe('The person keeps a\uFFFDb in a jar.');
    const updated = await host.api['memories.update']({ id: created.memory.id, content: 'The person keeps a\u0000c in a jar.' });
    expect(updated.memory.content).toBe('The person keeps a\uFFFDc in a jar.');
    const conversation = await host.api['conversations.create']({});
    expect((await host.api['conversations.rename']({ id: conversation.id, title: 'Trip\u0000 \uDC00plans' })).title).toBe('Trip\uFFFD \uFFFDplans');
    await host.api['self.update']({ key: 'voice', content: 'Warm\u0000 and brief.' });
    expect((await host.api['self.list']({})).find((b) => b.key === 'voice')?.content).toBe('Warm\uFFFD and brief.');
  });
});

describe('dates the database cannot hold', () => {
  it('refuses impossible and out-of-range dates as invalid input, naming the field', async () => {
    for (const validFrom of ['10000-01-01', '+275760-09-13T00:00:00.000Z', '1', '0', '2024-02-30']) {
      await refusedAsInvalid(() => host.api['memories.create']({ type: 'world', content: `A fact from ${validFrom}.`, validFrom }), 'validFrom');
    }
    await refusedAsInvalid(() => host.api['graph.view']({ at: '+275760-09-13T00:00:00.000Z' }), 'at');
    await refusedAsInvalid(() => host.api['diary.days']({ before: '2024-02-30' }), 'before');
    expect((await host.api['memories.list']({})).items.some((m) => m.content.startsWith('A fact from'))).toBe(false);
  });

  it('takes a real date', async () => {
    const saved = await host.api['memories.create']({ type: 'world', content: 'The person moved in 2024.', validFrom: '2024-02-29' });
    expect(saved.memory.validFrom?.slice(0, 10)).toBe('2024-02-29');
  });
});
