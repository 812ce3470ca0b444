// The model server's embedding model through the real HTTP client against the loopback fake server's
// /v1/embeddings and /api/embed (e2e/fake-llm/embeddings.ts): the vector length from the first answer,
// the key only in the connection's own requests, Ollama found behind an OpenAI-compatible address,
// batches halved when the server says they are too big, and a server that goes away failing fast
// until a probe finds it back.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { bagOfWords, cosine, serveEmbeddings, type FakeEmbeddings } from '../../e2e/fake-llm/embeddings.js';
import { endpoint, openServerEmbedder, type ServerConnection } from './server-embedder.js';
import { EmbedError } from './types.js';
import { prefixesFor } from './vectors.js';

let fake: FakeLlm;
let served: FakeEmbeddings;
beforeAll(async () => {
  fake = await startFakeLlm();
  served = serveEmbeddings(fake);
});
afterAll(() => fake.close());
afterEach(() => {
  fake.reset();
  fake.apiKey = undefined;
  Object.assign(served, { mode: 'ok', maxBatch: undefined, openaiMissing: false, batches: [] });
});

const openai = (over: Partial<ServerConnection> = {}): ServerConnection => ({
  id: 'c1',
  name: 'Fake',
  kind: 'openai-compatible',
  baseUrl: fake.baseUrl,
  ...over,
});
const embedPaths = () => fake.requests.filter((r) => r.path.endsWith('/embeddings') || r.path === '/api/embed').map((r) => r.path);

async function rejection(p: Promise<unknown>): Promise<EmbedError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmbedError);
  return err as EmbedError;
}

describe('server embedder', () => {
  it('reads the vector length from the first answer and returns unit vectors in order, the key in the header', async () => {
    fake.apiKey = 'sk-test-123';
    const e = await openServerEmbedder({ connection: async () => openai({ apiKey: 'sk-test-123' }), model: 'nomic-embed-text' });
    expect(e.modelId).toBe('server:nomic-embed-text');
    expect(e.dimensions).toBe(64);
    expect(e.shape).toBe('openai');
    const texts = ['The sister lives in Porto.', 'Cello on Sundays.'];
    const vectors = await e.embed(texts);
    expect(vectors).toHaveLength(2);
    vectors.forEach((v, i) => {
      expect(cosine(v, bagOfWords(texts[i]!))).toBeCloseTo(1, 5);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.headers.authorization).toBe('Bearer sk-test-123');
    expect(sent.body).toEqual({ model: 'nomic-embed-text', input: texts });
  });

  it('speaks /api/embed to an Ollama connection, and finds it behind an OpenAI-compatible address without /v1/embeddings', async () => {
    const native = await openServerEmbedder({
      connection: async () => ({ id: 'o', name: 'Ollama', kind: 'ollama', baseUrl: fake.url }),
      model: 'nomic-embed-text',
    });
    expect(native.shape).toBe('ollama');
    await native.embed(['one text']);
    expect(embedPaths()).toEqual(['/api/embed', '/api/embed']);
    expect(fake.requests.every((r) => r.headers.authorization === undefined)).toBe(true);

    fake.reset();
    served.openaiMissing = true;
    const found = await openServerEmbedder({ connection: async () => openai(), model: 'nomic-embed-text' });
    expect(found.shape).toBe('ollama');
    await found.embed(['two']);
    // Asked /v1/embeddings once; from then on only the native endpoint.
    expect(embedPaths()).toEqual(['/v1/embeddings', '/api/embed', '/api/embed']);
    expect(endpoint('http://127.0.0.1:11434/v1/', 'ollama')).toBe('http://127.0.0.1:11434/api/embed');
    // Task prefixes for the server models whose cards ask for them; none for others.
    expect(prefixesFor('server:nomic-embed-text:latest')).toEqual({ query: 'search_query: ', passage: 'search_document: ' });
    expect(prefixesFor('server:multilingual-e5-large')).toEqual({ query: 'query: ', passage: 'passage: ' });
    expect(prefixesFor('server:mxbai-embed-large')).toEqual({ query: '', passage: '' });
  });

  it('halves its batches when the server says a request is too big, and keeps the smaller size', async () => {
    const e = await openServerEmbedder({ connection: async () => openai(), model: 'nomic-embed-text' });
    served.maxBatch = 5;
    served.batches = [];
    const texts = Array.from({ length: 12 }, (_, i) => `text number ${i} about kettles`);
    const vectors = await e.embed(texts);
    expect(vectors.map((v, i) => cosine(v, bagOfWords(texts[i]!)))).toEqual(texts.map(() => expect.closeTo(1, 5)));
    expect(e.currentBatchSize).toBe(4);
    expect(served.batches).toEqual([4, 4, 4]);
  });

  it('refuses in words: no such model, a connection that cannot embed, a wrong key', async () => {
    const unknown = await rejection(openServerEmbedder({ connection: async () => openai(), model: 'no-such-model' }));
    expect(unknown.code).toBe('server_refused');
    expect(unknown.message).toContain('no-such-model');
    const anthropic = await rejection(openServerEmbedder({ connection: async () => openai({ kind: 'anthropic', name: 'Claude' }), model: 'x' }));
    expect(anthropic).toMatchObject({ code: 'server_refused' });
    expect(anthropic.message).toContain('Claude');
    fake.apiKey = 'right-key';
    const wrong = await rejection(openServerEmbedder({ connection: async () => openai({ apiKey: 'wrong-key' }), model: 'nomic-embed-text' }));
    expect(wrong.code).toBe('server_refused');
    expect(wrong.message).toMatch(/API key/);
    expect(wrong.message).not.toContain('wrong-key');
  });

  it('a server that goes away fails fast until a probe finds it back', async () => {
    const health: boolean[] = [];
    const e = await openServerEmbedder({ connection: async () => openai(), model: 'nomic-embed-text', onHealth: (up) => health.push(up) });
    served.mode = 'close';
    const dropped = await rejection(e.embed(['hello']));
    expect(dropped.code).toBe('server_unreachable');
    expect(e.down).toMatch(/isn't answering/);
    expect(health).toEqual([false]);
    // While down nothing is sent: a search never waits on a dead server.
    const before = fake.requests.length;
    expect((await rejection(e.embed(['again']))).code).toBe('server_unreachable');
    expect(fake.requests.length).toBe(before);

    served.mode = 'error';
    expect(await e.probe()).toBe(false);
    expect(e.down).toMatch(/answered 500/);
    served.mode = 'ok';
    expect(await e.probe()).toBe(true);
    expect(e.down).toBeNull();
    expect(health).toEqual([false, true]);
    expect(await e.embed(['back'])).toHaveLength(1);
  });

  it('a refused connection and a server that never answers are "not answering", within the bound', async () => {
    const gone = await rejection(openServerEmbedder({ connection: async () => openai({ baseUrl: 'http://127.0.0.1:9/v1' }), model: 'm' }));
    expect(gone.code).toBe('server_unreachable');
    fake.route('POST /v1/hang/embeddings', () => {}); // accepts and never answers
    const started = Date.now();
    const slow = await rejection(openServerEmbedder({ connection: async () => openai({ baseUrl: `${fake.url}/v1/hang` }), model: 'm', firstTimeoutMs: 300 }));
    expect(slow.code).toBe('server_unreachable');
    expect(slow.message).toMatch(/didn't answer/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
