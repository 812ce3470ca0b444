// The context a server really gives: through the real host, the real clients and the loopback fake
// server speaking each server's dialect. A fake Ollama (or llama.cpp) that gives 4,096 tokens gets a
// long conversation fitted into 4,096, and Ollama is asked to run with that much (num_ctx).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { serveOllama } from '../../e2e/fake-llm/ollama.js';
import { serveLlamaCpp, serveLmStudio, serveVllm } from '../../e2e/fake-llm/servers.js';
import { estimateTokens } from '../llm/context.js';
import { openDatabase } from '../db/open.js';
import { nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

let fake: FakeLlm;
const hosts: Host[] = [];

beforeEach(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await fake.close();
});

async function host(): Promise<Host> {
  const h = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
  hosts.push(h);
  return h;
}

async function sendAndWait(h: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(h, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await h.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

/** A turn of about 400 estimated tokens, numbered so a test can tell which turns were sent. */
const longTurn = (i: number) => `Turn ${i} begins. ${'The garden path winds past the old stone wall and the pear tree. '.repeat(25)}Turn ${i} ends.`;

interface SentMessage {
  role: string;
  content: string;
}

/** The app's own conservative estimate of a request's prompt: its messages and their framing. */
const promptTokens = (messages: SentMessage[]) => messages.reduce((sum, m) => sum + 4 + estimateTokens(m.content), 0);

/** Twelve long turns (about 4,800 tokens of history with the replies' echoes), each finished before the next. */
async function longConversation(h: Host): Promise<void> {
  const { id } = await h.api['conversations.create']({});
  for (let i = 1; i <= 12; i++) {
    const reply = await sendAndWait(h, id, longTurn(i));
    expect(reply.status).toBe('complete');
  }
}

describe('Ollama through its own API', () => {
  it('reads the window from /api/show on connect, and every /api/chat carries num_ctx 4,096 ≥ a prompt fitted into it', async () => {
    fake.models = ['llama3.2:latest'];
    serveOllama(fake, { defaults: { contextLength: 4096, capabilities: ['completion', 'tools'], family: 'llama' } });
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'ollama', name: 'Ollama', baseUrl: `${fake.url}/v1`, model: 'llama3.2:latest' });
    expect(saved).toMatchObject({ kind: 'ollama', contextTokens: 8192, baseUrl: `${fake.url}/v1` });
    expect(saved.server).toMatchObject({ software: 'ollama', contextTokens: 4096, capabilities: ['completion', 'tools'], family: 'llama' });
    expect(fake.requests.find((r) => r.path === '/api/show')?.body).toEqual({ model: 'llama3.2:latest' });

    await longConversation(h);
    const chats = fake.requests.filter((r) => r.path === '/api/chat').map((r) => r.body as { messages: SentMessage[]; options: { num_ctx: number } });
    expect(chats.length).toBeGreaterThanOrEqual(12);
    for (const body of chats) {
      expect(body.options.num_ctx).toBe(4096);
      expect(promptTokens(body.messages)).toBeLessThanOrEqual(body.options.num_ctx);
    }
    // The last turn's request left the oldest turns out and kept the newest.
    const last = chats.filter((b) => b.messages.some((m) => m.content.includes('Turn 12 begins'))).at(-1)!;
    const sent = last.messages.map((m) => m.content).join('\n');
    expect(sent).not.toContain('Turn 1 begins');
    expect(sent).toContain('Turn 11 begins');
  }, 120_000);

  it('a setting smaller than the server’s window is the budget; a model change asks again', async () => {
    fake.models = ['small', 'big'];
    serveOllama(fake, { show: { small: { contextLength: 4096 }, big: { contextLength: 131072, capabilities: ['completion', 'tools', 'thinking'] } } });
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'ollama', name: 'Ollama', baseUrl: fake.url, model: 'small', contextTokens: 2048 });
    expect(saved.server?.contextTokens).toBe(4096);
    const { id } = await h.api['conversations.create']({});
    await sendAndWait(h, id, 'hello');
    expect((fake.requests.filter((r) => r.path === '/api/chat').at(-1)!.body as { options: { num_ctx: number } }).options.num_ctx).toBe(2048);

    const changed = await h.api['providers.save']({ id: saved.id, kind: 'ollama', name: 'Ollama', baseUrl: fake.url, model: 'big', contextTokens: 16384 });
    expect(changed.server).toMatchObject({ contextTokens: 131072, capabilities: ['completion', 'tools', 'thinking'] });
    await sendAndWait(h, id, 'hello again');
    expect((fake.requests.filter((r) => r.path === '/api/chat').at(-1)!.body as { options: { num_ctx: number } }).options.num_ctx).toBe(16384);
  }, 60_000);

  it('the connection test reports what the server says about the chosen model', async () => {
    serveOllama(fake, { defaults: { contextLength: 4096, capabilities: ['completion', 'vision'], family: 'gemma3' } });
    const h = await host();
    const result = await h.api['providers.test']({ kind: 'ollama', baseUrl: fake.url, model: 'fake-model' });
    expect(result).toMatchObject({ ok: true, models: ['fake-model'], server: { software: 'ollama', contextTokens: 4096, family: 'gemma3' } });
  });
});

describe('OpenAI-compatible servers', () => {
  it('llama.cpp: /props n_ctx 4,096 is the budget, and every request is fitted into it', async () => {
    serveLlamaCpp(fake, { nCtx: 4096 });
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'openai-compatible', name: 'llama.cpp', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(saved.server).toMatchObject({ software: 'llama.cpp', contextTokens: 4096 });

    await longConversation(h);
    const chats = fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as { messages: SentMessage[] });
    expect(chats.length).toBeGreaterThanOrEqual(12);
    for (const body of chats) expect(promptTokens(body.messages)).toBeLessThanOrEqual(4096);
    const last = chats.filter((b) => b.messages.some((m) => m.content.includes('Turn 12 begins'))).at(-1)!;
    expect(last.messages.map((m) => m.content).join('\n')).not.toContain('Turn 1 begins');
  }, 120_000);

  it('LM Studio: the loaded model’s context; a model not loaded yet is unknown', async () => {
    fake.models = ['qwen2.5-7b-instruct', 'llama-3.2-1b-instruct'];
    serveLmStudio(fake, [
      { id: 'qwen2.5-7b-instruct', state: 'loaded', maxContextLength: 32768, loadedContextLength: 4096 },
      { id: 'llama-3.2-1b-instruct', state: 'not-loaded', maxContextLength: 131072 },
    ]);
    const h = await host();
    const loaded = await h.api['providers.save']({ kind: 'openai-compatible', name: 'LM Studio', baseUrl: fake.baseUrl, model: 'qwen2.5-7b-instruct' });
    expect(loaded.server).toMatchObject({ software: 'lm-studio', contextTokens: 4096 });
    const notLoaded = await h.api['providers.save']({ kind: 'openai-compatible', name: 'LM Studio 2', baseUrl: fake.baseUrl, model: 'llama-3.2-1b-instruct' });
    expect(notLoaded.server).toMatchObject({ software: 'lm-studio', contextTokens: null });
  });

  it('vLLM: max_model_len from /v1/models', async () => {
    serveVllm(fake, { maxModelLen: 4096 });
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'openai-compatible', name: 'vLLM', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(saved.server).toMatchObject({ software: 'vllm', contextTokens: 4096 });
  });

  it('a server that says nothing is asked quietly and budgets the setting', async () => {
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'openai-compatible', name: 'Plain', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(saved.server).toMatchObject({ software: null, contextTokens: null });
    const { id } = await h.api['conversations.create']({});
    expect((await sendAndWait(h, id, 'hello')).status).toBe('complete');
  });

  it('an OpenAI-compatible connection to Ollama is recognised, and switching it to the native kind keeps its key, name and model', async () => {
    serveOllama(fake, { loaded: { 'fake-model': 2048 } });
    const h = await host();
    const saved = await h.api['providers.save']({
      kind: 'openai-compatible',
      name: 'My Ollama',
      baseUrl: fake.baseUrl,
      model: 'fake-model',
      apiKey: 'proxy-key',
    });
    // Through /v1 the window is the loaded runner's (/api/ps).
    expect(saved.server).toMatchObject({ software: 'ollama', contextTokens: 2048, capabilities: ['completion', 'tools'] });
    const switched = await h.api['providers.save']({ id: saved.id, kind: 'ollama', name: saved.name, baseUrl: fake.url, model: saved.model });
    expect(switched).toMatchObject({
      kind: 'ollama',
      name: 'My Ollama',
      model: 'fake-model',
      hasApiKey: true,
      server: { software: 'ollama', contextTokens: 4096 },
    });
  });
});

describe('asking again', () => {
  it('an answer an hour old is asked again when the connection is used; a server that cannot be asked then keeps the last answer', async () => {
    const llamaCpp = serveLlamaCpp(fake, { nCtx: 4096 });
    const dataDir = tempDataDir();
    const first = await startTestHost({ dataDir, providerTimeoutMs: PATIENCE_MS });
    const saved = await first.api['providers.save']({ kind: 'openai-compatible', name: 'llama.cpp', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(saved.server?.contextTokens).toBe(4096);
    const { id } = await first.api['conversations.create']({});
    await first.close();
    const ageAnswer = async () => {
      const db = await openDatabase(dataDir);
      await db.query("UPDATE providers SET server_checked_at = now() - interval '2 hours'");
      await db.close();
    };

    // The server was restarted with a smaller window.
    await ageAnswer();
    llamaCpp.nCtx = 2048;
    const second = await startTestHost({ dataDir, providerTimeoutMs: PATIENCE_MS });
    hosts.push(second);
    expect((await sendAndWait(second, id, 'hello')).status).toBe('complete');
    const [asked] = await second.api['providers.list']({});
    expect(asked!.server).toMatchObject({ software: 'llama.cpp', contextTokens: 2048 });
    await second.close();
    hosts.length = 0;

    // The server is gone: the turn fails in words, the last answer stays.
    await ageAnswer();
    await fake.close();
    const third = await startTestHost({ dataDir, providerTimeoutMs: PATIENCE_MS });
    hosts.push(third);
    expect((await sendAndWait(third, id, 'are you there?')).status).toBe('error');
    const [kept] = await third.api['providers.list']({});
    expect(kept!.server).toMatchObject({ software: 'llama.cpp', contextTokens: 2048 });
  }, 120_000);
});

describe('first run', () => {
  it('finds Ollama and offers its own API', async () => {
    const h = await startTestHost({
      detectLocalServers: true,
      // The host option names the OpenAI kind only; the providers room takes any kind.
      localServers: [{ name: 'Ollama', kind: 'ollama' as 'openai-compatible', baseUrl: fake.url }],
    });
    hosts.push(h);
    serveOllama(fake);
    expect(await h.api['providers.detect']({})).toEqual([{ name: 'Ollama', kind: 'ollama', baseUrl: fake.url, models: ['fake-model'] }]);
  });
});
