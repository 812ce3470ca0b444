// The embedding queue on a real on-disk PGlite with pgvector, and the real tiny generated BERT
// (electron/models/testing/models/anima-test/tiny-bert) in its worker thread. The wrappers below only
// delay, fail, count or reshape the real model's calls, to put the queue in the situations it must
// survive.
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import { MemoryStore } from '../memory/store.js';
import { tempDataDir } from '../testing/host.js';
import type { VectorSlot } from './active.js';
import { openEmbedder } from './embedder.js';
import { pgvectorSupport, supportFor } from '../db/pgvector.js';
import { createEmbeddingService, type EmbeddingProgress, type EmbeddingService } from './queue.js';
import { EmbedError, type Embedder } from './types.js';
import { indexName } from './vectors.js';
import { MODEL, OTHER, openVectorBed, VECTOR_BED_MS, wrap, type VectorBed } from './testing/vector-bed.js';
import { PATIENCE_MS } from '../testing/patience.js';

/** False where the pgvector build does not match PGlite (pgvector.ts): the database opens without it. */
const VECTORS = pgvectorSupport().usable;

const RESET = `DELETE FROM embeddings; UPDATE embedding_state SET model = NULL, dimensions = NULL, backfill_done = 0, backfill_total = 0, complete_at = NULL;
  DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories; DELETE FROM messages; DELETE FROM conversations;
  TRUNCATE diary_blocks;`;

let bed: VectorBed;
let db: Database;
let slot: VectorSlot;
let modelsDir: string;
let tiny: Embedder;
let other: Embedder;

beforeAll(async () => {
  bed = await openVectorBed('anima-embed-queue-');
  ({ db, vectors: slot, modelsDir, tiny, other } = bed);
}, VECTOR_BED_MS);

afterAll(async () => {
  await bed?.close();
});

// ---- wrappers around the real model ----

/** Records the size of every call. */
function counting(e: Embedder): Embedder & { calls: number[] } {
  const calls: number[] = [];
  return Object.assign(
    wrap(e, (texts, o) => {
      calls.push(texts.length);
      return e.embed(texts, o);
    }),
    { calls },
  );
}

/** The first `n` calls fail as a crashed worker would. */
function flaky(e: Embedder, n: number): Embedder & { failed(): number } {
  let failed = 0;
  return Object.assign(
    wrap(e, (texts, o) => {
      if (failed < n) {
        failed++;
        return Promise.reject(new EmbedError('worker_crashed', 'the worker stopped'));
      }
      return e.embed(texts, o);
    }),
    { failed: () => failed },
  );
}

/** Calls wait until released. */
function gated(e: Embedder): Embedder & { release(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return Object.assign(
    wrap(e, async (texts, o) => {
      await gate;
      return e.embed(texts, o);
    }),
    { release: () => open() },
  );
}

/** The same model id giving shorter vectors: different weights downloaded under the same name. */
function reshaped(e: Embedder, dimensions: number): Embedder {
  return wrap(
    e,
    async (texts, o) =>
      (await e.embed(texts, o)).map((v) => {
        const cut = v.slice(0, dimensions);
        const norm = Math.hypot(...cut) || 1;
        return cut.map((x) => x / norm);
      }),
    { dimensions },
  );
}

// ---- helpers ----

const WORDS = `apple river stone cloud piano tiger lantern meadow copper violin harbor pepper glacier orchid
  saddle thunder walnut kettle falcon velvet canyon ribbon marble cactus beacon willow compass ember
  quartz nectar puzzle summit anchor blossom cobalt dune feather garnet hammock iris jasmine kayak lemon
  mango nutmeg oyster pebble quill raven sequoia tulip umbrella vinyl wombat yarn zephyr acorn bison
  cedar dahlia easel fjord gecko heron igloo jackal koala lilac magnet nickel olive parrot quiche
  radish salmon teapot urchin vanilla walrus yodel zinnia almond bramble cinder dragon elm fennel`.split(/\s+/);

/** Sentences that share no content word (and so are never near-duplicates of one another). */
function distinct(i: number): string {
  const n = WORDS.length;
  return `Note ${i}: ${WORDS[i % n]} ${WORDS[(i * 7 + 3) % n]} ${WORDS[(i * 13 + 5) % n]}.`;
}

let service: EmbeddingService;
let logs: string[];
let progress: EmbeddingProgress[];
let conversations: Conversations;
let memories: MemoryStore;
let conversationId: string;

function start(o: { batchSize?: number; maxPending?: number; retryBaseMs?: number } = {}): EmbeddingService {
  service = createEmbeddingService({
    db,
    vectors: slot,
    log: (level, message) => logs.push(`${level}: ${message}`),
    onProgress: (p) => progress.push(p),
    retryBaseMs: 20,
    ...o,
  });
  return service;
}

async function vectors(model?: string): Promise<{ source: string; id: number; model: string; dimensions: number }[]> {
  return (
    await db.query<{ source: string; id: number; model: string; dimensions: number }>(
      `SELECT source, source_id::float8 AS id, model, dimensions FROM embeddings ${model ? 'WHERE model = $1' : ''} ORDER BY source, source_id, model`,
      model ? [model] : [],
    )
  ).rows;
}

async function waitFor<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = PATIENCE_MS): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(async () => {
  await db.exec(RESET);
  logs = [];
  progress = [];
  conversations = new Conversations(db, (m) => service?.messageStored(m));
  memories = new MemoryStore(db, (c) => service?.memoryChanged(c));
  conversationId = (await conversations.create('t')).id;
});

afterEach(async () => {
  await service?.close();
});

describe('migration and extension', () => {
  it('creates the tables, which need no extension, and they survive a reopen', async () => {
    const versions = (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    expect(versions).toContain(9);
    expect((await db.query('SELECT * FROM embedding_state')).rows).toHaveLength(1);
    // A second folder, migrated from scratch rather than from the template.
    const fresh = tempDataDir('anima-embed-fresh-');
    try {
      let other = await openDatabase(fresh);
      await other.query(`INSERT INTO embeddings (source, source_id, model, dimensions, embedding, content_hash) VALUES ('memory', 1, 'm', 3, '{1,0,0}', 'h')`);
      await expect(
        other.query(`INSERT INTO embeddings (source, source_id, model, dimensions, embedding, content_hash) VALUES ('memory', 2, 'm', 4, '{1,0,0}', 'h')`),
      ).rejects.toThrow();
      await other.close();
      other = await openDatabase(fresh);
      expect((await other.query<{ e: string }>('SELECT embedding::text AS e FROM embeddings')).rows).toEqual([{ e: '{1,0,0}' }]);
      await other.close();
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it.skipIf(!VECTORS)('loads pgvector where its build matches PGlite', async () => {
    expect((await db.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).rows).toHaveLength(1);
    expect((await db.query<{ d: number }>(`SELECT '{1,0}'::real[]::vector <=> '[0,1]'::vector AS d`)).rows).toEqual([{ d: 1 }]);
  });

  it('allows pgvector only into the PGlite release its package names as its peer', () => {
    const pgvector = { name: '@electric-sql/pglite-pgvector', version: '0.0.15', peerDependencies: { '@electric-sql/pglite': '0.5.14' } };
    expect(supportFor({ version: '0.5.14' }, pgvector)).toEqual({ usable: true, reason: '' });
    // The releases where loading it broke pg_trgm's %.
    for (const version of ['0.5.15', '0.5.17', '0.6.0']) {
      expect(supportFor({ version }, pgvector)).toEqual({
        usable: false,
        reason: `@electric-sql/pglite-pgvector 0.0.15 is built for PGlite 0.5.14, and this is PGlite ${version}`,
      });
    }
    expect(supportFor({ version: '0.5.14' }, { version: '0.0.15' }).usable).toBe(false); // no peer named: not trusted
    expect(supportFor({ version: '0.5.14' }, null)).toEqual({ usable: false, reason: 'the pgvector extension for PGlite is not installed' });
    // And this checkout: the two installed packages agree (package.json pins them together).
    expect(pgvectorSupport()).toEqual({ usable: true, reason: '' });
  });

  it.skipIf(VECTORS)('opens without pgvector where its build does not match PGlite, and the service stays off, saying why', async () => {
    expect((await db.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).rows).toEqual([]);
    start();
    await service.setEmbedder(tiny);
    expect(service.status().model).toBeNull();
    expect(slot.get()).toBeNull();
    expect(logs.some((l) => l.startsWith('warn: embeddings: search by meaning stays off: @electric-sql/pglite-pgvector'))).toBe(true);
  });
});

describe.skipIf(!VECTORS)('EmbeddingQueue', () => {
  it('embeds a stored message and a saved memory after the write, which never waits for it', async () => {
    const gate = gated(tiny);
    start();
    await service.setEmbedder(gate);
    const message = await conversations.append({ conversationId, role: 'user', content: 'We walked to the lighthouse.', status: 'complete' });
    const saved = await memories.create({ type: 'world', content: 'Sam grew up near a lighthouse.', source: 'user', actor: 'person' });
    // Both writes returned while the model could not answer at all.
    expect(await vectors()).toEqual([]);
    gate.release();
    await service.idle();
    const seq = Number((await db.query<{ seq: number }>('SELECT seq::float8 AS seq FROM messages WHERE id = $1', [message.id])).rows[0]!.seq);
    expect(await vectors()).toEqual([
      { source: 'memory', id: saved.memory.id, model: MODEL, dimensions: 32 },
      { source: 'message', id: seq, model: MODEL, dimensions: 32 },
    ]);
    expect(service.status()).toMatchObject({ model: MODEL, dimensions: 32, pending: 0, failures: 0 });
  });

  it('skips a streaming reply until it finishes, and a memory that is no longer active loses its vector', async () => {
    start();
    await service.setEmbedder(tiny);
    await service.backfill();
    const reply = await conversations.append({ conversationId, role: 'assistant', content: '', status: 'streaming' });
    service.enqueue('message', reply.id);
    await service.idle();
    expect(await vectors('anima-test/tiny-bert')).toEqual([]);
    await conversations.finish(reply.id, { content: 'The lighthouse is white.', status: 'complete', error: null, model: null });
    await service.idle();
    expect((await vectors()).map((v) => v.source)).toEqual(['message']);

    const m = await memories.create({ type: 'world', content: 'The lighthouse is white.', source: 'user', actor: 'person' });
    await service.idle();
    expect((await vectors()).map((v) => v.source)).toEqual(['memory', 'message']);
    await memories.forget(m.memory.id, 'person');
    await service.idle();
    expect((await vectors()).map((v) => v.source)).toEqual(['message']);
  });

  it('batches a burst of writes (at most 32 texts a call)', async () => {
    const counted = counting(tiny);
    start();
    await service.setEmbedder(counted);
    await service.backfill();
    counted.calls.length = 0;
    // Messages: a memory's save also embeds it once for the near-duplicate check (embed/duplicates.ts).
    for (let i = 0; i < 70; i++) await conversations.append({ conversationId, role: 'user', content: distinct(i), status: 'complete' });
    await service.idle();
    expect((await vectors()).length).toBe(70);
    expect(counted.calls.every((n) => n <= 32)).toBe(true);
    // Far fewer calls than writes: the writes arrived faster than the model took them.
    expect(counted.calls.length).toBeLessThan(70);
    expect(counted.calls.reduce((a, b) => a + b, 0)).toBe(70);
  });

  it('leaves items beyond its bound to the backfill it runs once drained', async () => {
    const gate = gated(tiny);
    start({ maxPending: 5 });
    await service.setEmbedder(gate);
    for (let i = 0; i < 12; i++) await conversations.append({ conversationId, role: 'user', content: distinct(i), status: 'complete' });
    expect(service.status().pending).toBeLessThanOrEqual(5);
    expect(service.status().stats.turnedAway).toBeGreaterThan(0);
    gate.release();
    await waitFor(
      () => vectors(),
      (v) => v.length === 12,
    );
    expect(logs).toEqual(['info: embeddings: using anima-test/tiny-bert (32 dimensions)']);
  });

  it('never throws a failing model at the writer: it logs, backs off and retries', async () => {
    const failing = flaky(tiny, 2);
    start();
    await service.setEmbedder(failing);
    await service.backfill();
    const stored = await conversations.append({ conversationId, role: 'user', content: 'The boat is called Heron.', status: 'complete' });
    expect(stored.content).toBe('The boat is called Heron.');
    await waitFor(
      () => vectors(),
      (v) => v.length === 1,
    );
    expect(failing.failed()).toBe(2);
    expect(logs.filter((l) => l.includes('failed (the worker stopped)'))).toHaveLength(2);
    expect(service.status()).toMatchObject({ failures: 0, lastError: null });
  });

  it('keeps retrying with a closed model, and catches up when a working one is set', async () => {
    const closed = await openEmbedder({ modelsDir, modelId: MODEL });
    await closed.close();
    start({ retryBaseMs: 10 });
    await service.setEmbedder(closed);
    await conversations.append({ conversationId, role: 'user', content: 'Nothing is thrown at me.', status: 'complete' });
    await memories.create({ type: 'world', content: 'Nothing is thrown at the writer.', source: 'user', actor: 'person' });
    // A retry due within a few ms may already be running when status is read on a busy machine;
    // the backoff doubles, so soon a waiting retry is seen with its time.
    const status = await waitFor(
      () => service.status(),
      (s) => s.failures >= 2 && s.retryAt !== null,
    );
    expect(status.lastError).toBeTruthy();
    expect(status.retryAt).not.toBeNull();
    expect(await vectors()).toEqual([]);
    await service.setEmbedder(tiny);
    const done = await service.backfill();
    expect(done).toMatchObject({ model: MODEL, finished: true });
    expect((await vectors()).map((v) => v.source)).toEqual(['memory', 'message']);
  });

  it('backfills what was written without a model, in order, reporting progress', async () => {
    for (let i = 0; i < 40; i++) await memories.create({ type: 'world', content: distinct(i), source: 'user', actor: 'person' });
    for (let i = 0; i < 25; i++) await conversations.append({ conversationId, role: 'user', content: distinct(100 + i), status: 'complete' });
    await db.query(`INSERT INTO diary_blocks (day, kind, title, body) VALUES ('2024-03-05', 'anchor', NULL, 'A calm evening by the river.'),
      ('2024-03-05', 'dream', NULL, 'A dream of rivers.'), ('2024-03-06', 'narrative', 'Boats', 'We talked about boats.')`);
    start();
    await service.setEmbedder(tiny);
    const done = await service.backfill();
    expect(done).toEqual({ model: MODEL, done: 67, total: 67, finished: true });
    expect(progress[0]).toEqual({ model: MODEL, done: 0, total: 67, finished: false });
    expect(progress.at(-1)).toEqual(done);
    expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
    const rows = await vectors();
    expect(rows.filter((r) => r.source === 'memory')).toHaveLength(40);
    expect(rows.filter((r) => r.source === 'message')).toHaveLength(25);
    // The dream is not embedded: recall never returns dreams.
    expect(rows.filter((r) => r.source === 'diary')).toHaveLength(2);
    const state = (
      await db.query<{ model: string; done: number; total: number; complete: boolean }>(
        'SELECT model, backfill_done AS done, backfill_total AS total, complete_at IS NOT NULL AS complete FROM embedding_state',
      )
    ).rows[0];
    expect(state).toEqual({ model: MODEL, done: 67, total: 67, complete: true });
    expect(service.status()).toMatchObject({ complete: true, backfill: null });
    // A second pass finds nothing to do.
    expect(await service.backfill()).toEqual({ model: MODEL, done: 0, total: 0, finished: true });
  });

  it('re-embeds a memory whose words changed', async () => {
    start();
    await service.setEmbedder(tiny);
    const m = await memories.create({ type: 'world', content: 'The heron nests by the pond.', source: 'user', actor: 'person' });
    await service.idle();
    const before = (await db.query<{ h: string }>('SELECT content_hash AS h FROM embeddings')).rows[0]!.h;
    await memories.update(m.memory.id, { content: 'The heron nests by the lake now.' }, 'person');
    await service.idle();
    const after = (await db.query<{ h: string }>('SELECT content_hash AS h FROM embeddings')).rows;
    expect(after).toHaveLength(1);
    expect(after[0]!.h).not.toBe(before);
  });

  it('switches models: re-embeds in the background, keeps the old vectors until the new model covers everything, then drops them', async () => {
    for (let i = 0; i < 10; i++) await memories.create({ type: 'world', content: distinct(i), source: 'user', actor: 'person' });
    start();
    await service.setEmbedder(tiny);
    await service.backfill();
    expect(await vectors(MODEL)).toHaveLength(10);
    expect(slot.get()?.modelId).toBe(MODEL);

    const gate = gated(other);
    await service.setEmbedder(gate);
    // The switch itself does not wait for the re-embedding; readers see the new model at once.
    expect(slot.get()?.modelId).toBe(OTHER);
    expect(await vectors(OTHER)).toEqual([]);
    expect(await vectors(MODEL)).toHaveLength(10);
    const indexes = async () =>
      (await db.query<{ n: string }>(`SELECT indexname AS n FROM pg_indexes WHERE tablename = 'embeddings' AND indexname LIKE 'embeddings_hnsw_%'`)).rows
        .map((r) => r.n)
        .sort();
    expect(await indexes()).toEqual(
      [
        ...['message', 'memory', 'diary'].map((s) => indexName(MODEL, s as 'memory', 32)),
        ...['message', 'memory', 'diary'].map((s) => indexName(OTHER, s as 'memory', 32)),
      ].sort(),
    );
    gate.release();
    const done = await service.backfill();
    expect(done).toMatchObject({ model: OTHER, done: 10, total: 10, finished: true });
    expect(await vectors(OTHER)).toHaveLength(10);
    expect(await vectors(MODEL)).toEqual([]);
    expect(await indexes()).toEqual(['message', 'memory', 'diary'].map((s) => indexName(OTHER, s as 'memory', 32)).sort());
    expect(logs.some((l) => l.includes('dropped 10 vectors of earlier models'))).toBe(true);
  });

  it('switching back before the new model finished reuses the old vectors', async () => {
    for (let i = 0; i < 5; i++) await memories.create({ type: 'world', content: distinct(i), source: 'user', actor: 'person' });
    const counted = counting(tiny);
    start();
    await service.setEmbedder(counted);
    await service.backfill();
    const gate = gated(other);
    await service.setEmbedder(gate);
    const callsBefore = counted.calls.length;
    await service.setEmbedder(counted);
    const done = await service.backfill();
    expect(done).toMatchObject({ model: MODEL, total: 0, finished: true });
    expect(counted.calls.length).toBe(callsBefore);
    gate.release();
  });

  it('rebuilds when the same model id gives vectors of another length, and says so', async () => {
    for (let i = 0; i < 6; i++) await memories.create({ type: 'world', content: distinct(i), source: 'user', actor: 'person' });
    start();
    await service.setEmbedder(tiny);
    await service.backfill();
    expect((await vectors()).map((v) => v.dimensions)).toEqual([32, 32, 32, 32, 32, 32]);
    await service.setEmbedder(reshaped(tiny, 16));
    expect(logs.some((l) => l.includes('now gives vectors of 16 numbers (had 32); discarded its 6 old vectors'))).toBe(true);
    expect(await vectors()).toEqual([]);
    await service.backfill();
    expect((await vectors()).map((v) => v.dimensions)).toEqual([16, 16, 16, 16, 16, 16]);
    const idx = (
      await db.query<{ n: string }>(`SELECT indexname AS n FROM pg_indexes WHERE tablename = 'embeddings' AND indexname LIKE 'embeddings_hnsw_%'`)
    ).rows.map((r) => r.n);
    expect(idx.sort()).toEqual(['message', 'memory', 'diary'].map((s) => indexName(MODEL, s as 'memory', 16)).sort());
  });

  it('with no model set, takes nothing and registers nothing for readers', async () => {
    start();
    await memories.create({ type: 'world', content: 'No model here.', source: 'user', actor: 'person' });
    await service.idle();
    expect(await vectors()).toEqual([]);
    expect(slot.get()).toBeNull();
    await service.setEmbedder(tiny);
    expect(slot.get()).not.toBeNull();
    await service.setEmbedder(null);
    expect(slot.get()).toBeNull();
    expect(service.status()).toMatchObject({ model: null, complete: false });
  });

  it('close waits for the batch in flight and stops taking work', async () => {
    let finished = false;
    const slow = wrap(tiny, async (texts, o) => {
      await new Promise((r) => setTimeout(r, 150));
      const out = await tiny.embed(texts, o);
      finished = true;
      return out;
    });
    start();
    await service.setEmbedder(slow);
    await service.backfill();
    await memories.create({ type: 'world', content: 'Closing time for the queue.', source: 'user', actor: 'person' });
    await new Promise((r) => setTimeout(r, 30));
    await service.close();
    expect(finished).toBe(true);
    expect(await vectors()).toHaveLength(1);
    expect(slot.get()).toBeNull();
    await memories.create({ type: 'world', content: 'Nobody embeds this one.', source: 'user', actor: 'person' });
    await new Promise((r) => setTimeout(r, 50));
    expect(await vectors()).toHaveLength(1);
  });
});

describe.skipIf(!VECTORS)('the query embedding for readers', () => {
  it('answers within the budget, and null when the model is slower', async () => {
    start();
    await service.setEmbedder(tiny);
    const v = await slot.get()!.embedQuery('where is the lighthouse', 2000);
    expect(v).toBeInstanceOf(Float32Array);
    expect(v!.length).toBe(32);
    // A model that answers this query only when the call is given up on (or after a minute): a
    // reader that waited would get a vector, so null is the proof the budget held.
    const slow = wrap(tiny, async (texts, o) => {
      if (texts.some((t) => t.endsWith('something else entirely'))) {
        await new Promise((r) => {
          setTimeout(r, 60_000).unref();
          o?.signal?.addEventListener('abort', r, { once: true });
        });
      }
      return tiny.embed(texts, o);
    });
    await service.setEmbedder(slow);
    expect(await slot.get()!.embedQuery('something else entirely', 50)).toBeNull();
  });
});
