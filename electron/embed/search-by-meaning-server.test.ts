// Search by meaning through the model server's embedding model, in the real host on a real PGlite,
// against the loopback fake server's /v1/embeddings and /api/embed (e2e/fake-llm/embeddings.ts: a
// hashed bag of words, so shared words are "meaning" and the neighbour a search must find is known).
// The backfill of what existed, search by meaning, the server gone (words only, the status says so,
// nothing lost or marked embedded) and back (the queue goes on), a model switch, the choice checked.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingsStatus } from '../../shared/api.js';
import { serveEmbeddings, type FakeEmbeddings } from '../../e2e/fake-llm/embeddings.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { openDatabase } from '../db/open.js';
import { pgvectorSupport } from '../db/pgvector.js';
import { createHost } from '../host/index.js';
import type { Host } from '../host/types.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';

const VECTORS = pgvectorSupport().usable;
const MODEL = 'nomic-embed-text';

let llm: FakeLlm;
let served: FakeEmbeddings;
beforeAll(async () => {
  llm = await startFakeLlm();
  llm.models = ['fake-model', MODEL, 'all-minilm'];
  served = serveEmbeddings(llm, { models: [MODEL, 'all-minilm'] });
});
afterAll(() => llm.close());

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  llm.reset();
  Object.assign(served, { mode: 'ok', maxBatch: undefined, openaiMissing: false, dimensions: 64, batches: [], served: { openai: 0, ollama: 0 } });
});

async function start(dataDir = tempDataDir('anima-server-meaning-')): Promise<Host> {
  const host = await createHost({ dataDir, template: dbTemplate(), detectLocalServers: false, log: () => {} });
  hosts.push(host);
  return host;
}

async function stop(host: Host): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

async function until(host: Host, match: (s: EmbeddingsStatus) => boolean, timeoutMs = PATIENCE_MS): Promise<EmbeddingsStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const status = await host.api['models.embeddingStatus']({});
    if (match(status)) return status;
    if (Date.now() > end) throw new Error(`embedding status still ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function storedVectors(dataDir: string): Promise<Record<string, number>> {
  const db = await openDatabase(dataDir);
  try {
    const rows = (await db.query<{ key: string; n: number }>(`SELECT source || ' ' || model AS key, count(*)::int AS n FROM embeddings GROUP BY 1`)).rows;
    return Object.fromEntries(rows.map((r) => [r.key, r.n]));
  } finally {
    await db.close();
  }
}

const MEMORIES = [
  'The person plays the cello on Sundays.',
  'The person’s sister lives in Porto near the river.',
  'The kettle in the kitchen whistles loudly every morning.',
];
/** The sister memory in other words (the fake's synonyms): search by words finds nothing, by meaning the sister. */
const SISTER_QUERY = 'Which sibling dwells beside a waterway?';

async function saveFake(host: Host): Promise<string> {
  return (await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake server', baseUrl: llm.baseUrl, model: 'fake-model', apiKey: 'sk-fake' }))
    .id;
}

async function meaningOn(host: Host): Promise<void> {
  const settings = await host.api['settings.get']({});
  await host.api['settings.update']({ memory: { ...settings.memory, vectorWeight: 0.5 } });
}

const texts = (hits: { text: string }[]) => hits.map((h) => h.text);

/**
 * Recall's texts for `query` once they are `expected`: the query's vector has a time budget (150 ms,
 * recall/vector.ts) that a loaded test machine can miss, and a late vector leaves that search on words.
 */
async function searchUntil(host: Host, query: string, expected: string[]): Promise<void> {
  const end = Date.now() + PATIENCE_MS;
  let got: string[] = [];
  while (Date.now() < end) {
    got = texts(await host.api['recall.search']({ query, sources: ['semantic'] }));
    if (JSON.stringify(got) === JSON.stringify(expected)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(got).toEqual(expected);
}

describe.skipIf(!VECTORS)('search by meaning through the model server', () => {
  it('embeds what existed through the server, finds by meaning, and keeps the choice across a restart without embedding twice', async () => {
    const host = await start();
    for (const content of MEMORIES) await host.api['memories.create']({ type: 'world', content });
    const providerId = await saveFake(host);
    await meaningOn(host);
    // Words alone: none of the query's words is in a memory.
    expect(await host.api['recall.search']({ query: SISTER_QUERY, sources: ['semantic'] })).toEqual([]);

    const settings = await host.api['models.useServerForEmbeddings']({ providerId, model: MODEL });
    expect(settings.models).toMatchObject({ embedding: null, serverEmbedding: { providerId, model: MODEL } });
    const ready = await until(host, (s) => s.state === 'ready');
    expect(ready).toMatchObject({ model: MODEL, source: 'server', connection: 'Fake server', searching: true, error: null });
    // The key went with the requests to the connection's own server.
    const embedCalls = llm.requests.filter((r) => r.path === '/v1/embeddings');
    expect(embedCalls.length).toBeGreaterThan(1);
    expect(embedCalls.every((r) => r.headers.authorization === 'Bearer sk-fake')).toBe(true);
    // nomic-embed-text's model card asks for task prefixes: stored texts carry "search_document: ".
    expect(embedCalls.flatMap((r) => (r.body as { input: string[] }).input).filter((t) => t !== 'ping')).toEqual(
      expect.arrayContaining(MEMORIES.map((m) => `search_document: ${m}`)),
    );

    await searchUntil(host, SISTER_QUERY, [MEMORIES[1]!]);

    // A new memory is embedded by the queue without waiting on it.
    await host.api['memories.create']({ type: 'experience', content: 'The person met their sister at the harbour in Porto.' });
    await until(host, (s) => s.state === 'ready' && s.queued === 0);
    const dataDir = host.dataDir;
    await stop(host);
    const before = await storedVectors(dataDir);
    expect(before).toEqual({ [`memory server:${MODEL}`]: 4 });

    const again = await start(dataDir);
    expect(await until(again, (s) => s.state === 'ready')).toMatchObject({ model: MODEL, source: 'server' });
    await stop(again);
    expect(await storedVectors(dataDir)).toEqual(before);
  });

  it('server gone: searching by words, the status says so, nothing lost; server back: the queue goes on', async () => {
    const host = await start();
    await host.api['memories.create']({ type: 'world', content: MEMORIES[0]! });
    const providerId = await saveFake(host);
    await meaningOn(host);
    await host.api['models.useServerForEmbeddings']({ providerId, model: MODEL });
    await until(host, (s) => s.state === 'ready');

    served.mode = 'close';
    await host.api['memories.create']({ type: 'world', content: MEMORIES[1]! });
    const paused = await until(host, (s) => s.state === 'paused');
    expect(paused).toMatchObject({ model: MODEL, source: 'server', searching: false });
    expect(paused.error).toMatch(/isn't answering/);
    // Search goes on by words, without waiting on the server: the new memory by its words, not by meaning.
    const started = Date.now();
    // Nothing but the host's own probes ("ping") goes to a server known to be away.
    const asked = () => llm.requests.filter((r) => r.path.includes('embed') && JSON.stringify((r.body as { input?: unknown })?.input) !== '["ping"]').length;
    const before = asked();
    expect(await host.api['recall.search']({ query: SISTER_QUERY, sources: ['semantic'] })).toEqual([]);
    expect(asked()).toBe(before);
    expect(texts(await host.api['recall.search']({ query: 'Porto', sources: ['semantic'] }))).toEqual([MEMORIES[1]]);
    expect(Date.now() - started).toBeLessThan(10_000);

    served.mode = 'error'; // 500s are "not answering" too
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await host.api['models.embeddingStatus']({})).state).toBe('paused');

    served.mode = 'ok';
    await until(host, (s) => s.state === 'ready' && s.queued === 0 && s.error === null);
    // The memory written while it was away got its vector: found by meaning now.
    await searchUntil(host, SISTER_QUERY, [MEMORIES[1]!]);
    const dataDir = host.dataDir;
    await stop(host);
    expect(await storedVectors(dataDir)).toEqual({ [`memory server:${MODEL}`]: 2 });
  });

  it('a server down when chosen at start waits for it; Ollama behind an OpenAI-compatible address; another model, or the same name with another vector length, re-embeds', async () => {
    const host = await start();
    for (const content of MEMORIES) await host.api['memories.create']({ type: 'world', content });
    const providerId = await saveFake(host);
    served.openaiMissing = true;
    await host.api['models.useServerForEmbeddings']({ providerId, model: MODEL });
    await until(host, (s) => s.state === 'ready');
    expect(served.served.ollama).toBeGreaterThanOrEqual(3);
    expect(served.served.openai).toBe(0);
    const dataDir = host.dataDir;
    await stop(host);

    // Started again with the server away: paused, and going on once it is back.
    served.mode = 'close';
    const again = await start(dataDir);
    const paused = await until(again, (s) => s.state === 'paused');
    expect(paused.error).toMatch(/isn't answering/);
    served.mode = 'ok';
    await until(again, (s) => s.state === 'ready');

    // Another model is a model switch: everything again, the old vectors dropped once it covers all.
    await again.api['models.useServerForEmbeddings']({ providerId, model: 'all-minilm' });
    await until(again, (s) => s.state === 'ready' && s.model === 'all-minilm');

    // The same name now gives vectors of another length (other weights pulled): opened again, rebuilt.
    served.dimensions = 32;
    await again.api['memories.create']({ type: 'world', content: 'The person collects old maps of Lisbon.' });
    await until(again, (s) => s.state === 'ready' && s.queued === 0 && s.error === null);
    await stop(again);
    expect(await storedVectors(dataDir)).toEqual({ 'memory server:all-minilm': 4 });
    const db = await openDatabase(dataDir);
    try {
      expect((await db.query<{ d: number }>('SELECT DISTINCT dimensions AS d FROM embeddings')).rows).toEqual([{ d: 32 }]);
    } finally {
      await db.close();
    }
  });

  it('a choice that cannot work is refused and changes nothing; the on-device choice (or none) clears it; an Ollama connection uses /api/embed', async () => {
    const host = await start();
    const providerId = await saveFake(host);
    const refused = async (input: { providerId: string; model: string }) => {
      try {
        await host.api['models.useServerForEmbeddings'](input);
        return null;
      } catch (e) {
        return e as { code: string; field?: string; message: string };
      }
    };
    expect(await refused({ providerId, model: 'no-such-model' })).toMatchObject({ code: 'invalid_input', field: 'model' });
    expect((await refused({ providerId, model: 'no-such-model' }))!.message).toContain('no-such-model');
    expect(await refused({ providerId: 'nope', model: MODEL })).toMatchObject({ code: 'invalid_input', field: 'providerId' });
    const claude = (await host.api['providers.save']({ kind: 'anthropic', name: 'Claude', baseUrl: llm.url, model: 'claude', apiKey: 'k' })).id;
    expect(await refused({ providerId: claude, model: MODEL })).toMatchObject({ code: 'invalid_input', field: 'providerId' });
    served.mode = 'close';
    expect(await refused({ providerId, model: MODEL })).toMatchObject({ code: 'provider_unreachable' });
    served.mode = 'ok';
    expect(await refused({ providerId, model: '  ' })).toMatchObject({ code: 'invalid_input' });
    expect((await host.api['settings.get']({})).models.serverEmbedding ?? null).toBeNull();
    expect((await host.api['models.embeddingStatus']({})).state).toBe('off');
    // Not through settings.update: only the checked method sets it.
    await expect(async () => host.api['settings.update']({ models: { serverEmbedding: { providerId, model: MODEL } } } as never)).rejects.toMatchObject({
      code: 'invalid_input',
    });

    await host.api['models.useServerForEmbeddings']({ providerId, model: MODEL });
    await until(host, (s) => s.state === 'ready');
    const off = await host.api['models.useForEmbeddings']({ id: null });
    expect(off.models).toMatchObject({ embedding: null, serverEmbedding: null });
    expect(await until(host, (s) => s.state === 'off')).toEqual({ model: null, state: 'off', done: 0, total: 0, queued: 0, searching: false, error: null });

    // An Ollama connection (its own API) embeds through /api/embed at its address.
    const ollama = (await host.api['providers.save']({ kind: 'ollama', name: 'Ollama', baseUrl: llm.url, model: 'fake-model' })).id;
    const before = { ...served.served };
    await host.api['models.useServerForEmbeddings']({ providerId: ollama, model: MODEL });
    expect(await until(host, (s) => s.state === 'ready')).toMatchObject({ source: 'server', connection: 'Ollama' });
    expect(served.served.ollama).toBeGreaterThan(before.ollama);
    expect(served.served.openai).toBe(before.openai);

    // The connection deleted while in use: no retry helps, and the status says why.
    await host.api['providers.delete']({ id: ollama });
    await host.api['memories.create']({ type: 'world', content: MEMORIES[2]! });
    const gone = await until(host, (s) => s.state === 'unavailable');
    expect(gone).toMatchObject({ source: 'server', model: MODEL });
    expect(gone.error).toMatch(/connection for memory search is gone/);
  });
});
