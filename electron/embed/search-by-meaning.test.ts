// Search by meaning through the real host: the tiny generated BERT downloaded from the loopback model
// host, chosen in settings, loaded in its worker, embedding what existed and each new message and
// memory; recall's vector weight from settings; a model that will not load leaves search on words and
// says why; the choice survives a restart without re-embedding. The model is real (transformers.js
// on onnxruntime), its weights random: these tests check wiring and states, not the quality of vectors.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingsStatus } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { openDatabase } from '../db/open.js';
import { TEST_MODEL_ID } from '../models/catalog.js';
import { pgvectorSupport } from '../db/pgvector.js';
import { FakeModelHost } from '../models/testing/model-host.js';
import { dbTemplate, nextEvent, tempDataDir } from '../testing/host.js';
import { createHost } from '../host/index.js';
import type { Host } from '../host/types.js';
import { PATIENCE_MS } from '../testing/patience.js';

const SERVED = fileURLToPath(new URL('../models/testing/models', import.meta.url));
const VECTORS = pgvectorSupport().usable;

let modelHost: FakeModelHost;
let llm: FakeLlm;
beforeAll(async () => {
  modelHost = new FakeModelHost({ root: SERVED });
  await modelHost.start();
  llm = await startFakeLlm();
});
afterAll(async () => {
  await modelHost.close();
  await llm.close();
});

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  llm.reset(); // a test that failed halfway leaves no replies queued for the next
});

async function start(dataDir = tempDataDir('anima-meaning-')): Promise<Host> {
  const host = await createHost({
    dataDir,
    template: dbTemplate(),
    detectLocalServers: false,
    log: () => {},
    models: { includeTestModels: true, tuning: { retries: 1, retryDelayMs: 10 } },
  });
  hosts.push(host);
  return host;
}

async function stop(host: Host): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

/** Installs the tiny model from the loopback model host, the way a person downloads one. */
async function install(host: Host): Promise<void> {
  await host.api['settings.update']({ models: { host: modelHost.url } });
  const installed = nextEvent(host, 'models.changed', (p: { id: string; models: { id: string; state: string }[] }) =>
    p.models.some((m) => m.id === TEST_MODEL_ID && m.state === 'installed'),
  );
  await host.api['models.download']({ id: TEST_MODEL_ID });
  await installed;
}

/** Polls until the status matches (events are throttled; the poll reads the same source). */
async function until(host: Host, match: (s: EmbeddingsStatus) => boolean, timeoutMs = PATIENCE_MS): Promise<EmbeddingsStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const status = await host.api['models.embeddingStatus']({});
    if (match(status)) return status;
    if (Date.now() > end) throw new Error(`embedding status still ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function chatOnce(host: Host, conversationId: string, content: string): Promise<void> {
  llm.script({ kind: 'text', text: `You said: ${content}`, chunks: 2 });
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  await finished;
}

/** The embeddings table as the next start finds it: (source, model) → rows. */
async function storedVectors(dataDir: string): Promise<{ counts: Record<string, number>; newest: string | null }> {
  const db = await openDatabase(dataDir);
  try {
    const rows = (await db.query<{ key: string; n: number }>(`SELECT source || ' ' || model AS key, count(*)::int AS n FROM embeddings GROUP BY 1`)).rows;
    const newest = (await db.query<{ t: Date | null }>('SELECT max(created_at) AS t FROM embeddings')).rows[0]?.t;
    return { counts: Object.fromEntries(rows.map((r) => [r.key, r.n])), newest: newest ? newest.toISOString() : null };
  } finally {
    await db.close();
  }
}

describe.skipIf(!VECTORS)('search by meaning in the host', () => {
  it('is off without a model, and searching by words works as before', async () => {
    const host = await start();
    expect(await host.api['models.embeddingStatus']({})).toEqual({ model: null, state: 'off', done: 0, total: 0, queued: 0, searching: false, error: null });
    await host.api['memories.create']({ type: 'world', content: 'The blue kettle whistles.' });
    const found = await host.api['memories.list']({ query: 'kettle' });
    expect(found.items.map((m) => m.content)).toEqual(['The blue kettle whistles.']);
  });

  it('embeds what existed once chosen, then each new message and memory, and recall takes its weight from settings', async () => {
    const host = await start();
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: llm.baseUrl, model: 'fake-model', apiKey: 'k' });
    const { id: conversationId } = await host.api['conversations.create']({});
    await chatOnce(host, conversationId, 'My sister lives in Porto.');
    await host.api['memories.create']({ type: 'world', content: 'The person’s sister lives in Porto.' });
    await host.api['memories.create']({ type: 'world', content: 'The person plays the cello on Sundays.' });
    await install(host);

    const statuses: EmbeddingsStatus[] = [];
    host.on((event, payload) => {
      if (event === 'embeddings.status') statuses.push(payload as EmbeddingsStatus);
    });
    await host.api['models.useForEmbeddings']({ id: TEST_MODEL_ID });
    const ready = await until(host, (s) => s.state === 'ready');
    expect(ready).toMatchObject({ model: TEST_MODEL_ID, error: null });
    // It said it was getting ready and how far the backfill came before it said ready.
    expect(statuses[0]).toMatchObject({ model: TEST_MODEL_ID, state: 'embedding' });
    expect(statuses.some((s) => s.state === 'embedding' && s.total === 4)).toBe(true);
    expect(statuses.at(-1)).toMatchObject({ state: 'ready' });

    // After the backfill, the queue: a new exchange and a new memory, embedded without waiting on them.
    await chatOnce(host, conversationId, 'We met at the harbour.');
    await host.api['memories.create']({ type: 'experience', content: 'The person met their sister at the harbour.' });
    await until(host, (s) => s.state === 'ready' && s.queued === 0);

    // The weight is a setting: 0 (absent) leaves the branch off, a weight turns it on for every reader.
    expect((await host.api['models.embeddingStatus']({})).searching).toBe(false);
    const settings = await host.api['settings.get']({});
    await host.api['settings.update']({ memory: { ...settings.memory, vectorWeight: 0.5 } });
    expect((await host.api['models.embeddingStatus']({})).searching).toBe(true);
    const hits = await host.api['recall.search']({ query: 'sister harbour', sources: ['semantic'] });
    expect(hits.length).toBeGreaterThan(0);

    const dataDir = host.dataDir;
    await stop(host);
    const { counts } = await storedVectors(dataDir);
    expect(counts).toEqual({ [`message ${TEST_MODEL_ID}`]: 4, [`memory ${TEST_MODEL_ID}`]: 3 });
  });

  it('loads the chosen model again after a restart without embedding anything twice', async () => {
    const host = await start();
    await host.api['memories.create']({ type: 'world', content: 'The person grows basil on the balcony.' });
    await install(host);
    await host.api['models.useForEmbeddings']({ id: TEST_MODEL_ID });
    await until(host, (s) => s.state === 'ready');
    const dataDir = host.dataDir;
    await stop(host);
    const before = await storedVectors(dataDir);
    expect(before.counts).toEqual({ [`memory ${TEST_MODEL_ID}`]: 1 });

    const again = await start(dataDir);
    expect(await until(again, (s) => s.state === 'ready')).toMatchObject({ model: TEST_MODEL_ID });
    await stop(again);
    expect(await storedVectors(dataDir)).toEqual(before);
  });

  it('a model that will not load leaves search on words and says why; downloading it again brings it back; choosing none turns it off', async () => {
    const host = await start();
    await install(host);
    await host.api['models.useForEmbeddings']({ id: TEST_MODEL_ID });
    await until(host, (s) => s.state === 'ready');
    const dataDir = host.dataDir;
    await stop(host);
    // Weights cut short on disk (a failing disk, a hand-edited folder).
    const weights = path.join(dataDir, 'models', ...TEST_MODEL_ID.split('/'), 'onnx', 'model.onnx');
    fs.truncateSync(weights, Math.floor(fs.statSync(weights).size / 3));

    const again = await start(dataDir);
    const broken = await until(again, (s) => s.state === 'unavailable');
    expect(broken.model).toBe(TEST_MODEL_ID);
    expect(broken.error).toMatch(/model/i);
    // The models list says the same in its words, and nothing on disk was thrown away.
    const listed = (await again.api['models.list']({})).find((m) => m.id === TEST_MODEL_ID)!;
    expect(listed).toMatchObject({ state: 'available', error: { code: 'model_damaged' } });
    expect(listed.error!.message).toContain('onnx/model.onnx');
    expect(fs.existsSync(weights)).toBe(true);
    // Memory by words is untouched.
    await again.api['memories.create']({ type: 'world', content: 'The green bicycle has a flat tyre.' });
    expect((await again.api['memories.list']({ query: 'bicycle' })).items).toHaveLength(1);

    // A settings change elsewhere does not reload a model that failed (no worker started each time)…
    const statusEvents: EmbeddingsStatus[] = [];
    again.on((event, payload) => {
      if (event === 'embeddings.status') statusEvents.push(payload as EmbeddingsStatus);
    });
    await again.api['settings.update']({ theme: 'dark' });
    expect(statusEvents).toEqual([]);
    // …downloading it again does, and search by meaning is back.
    await install(again);
    expect(await until(again, (s) => s.state === 'ready')).toMatchObject({ model: TEST_MODEL_ID, error: null });

    await again.api['models.useForEmbeddings']({ id: null });
    expect(await until(again, (s) => s.state === 'off')).toEqual({ model: null, state: 'off', done: 0, total: 0, queued: 0, searching: false, error: null });
  });
});
