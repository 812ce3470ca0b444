// Recall's vector branch and the near-duplicate check by meaning, on a real on-disk PGlite with the
// real tiny generated BERT (electron/models/testing/models/anima-test/tiny-bert) behind the embedding
// service. Its weights are random, but texts sharing words get closer vectors and a text is nearest
// to itself, which is all these tests lean on.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecallHit } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import type { VectorSlot } from '../../embed/active.js';
import { similarMemoryPairs } from '../../embed/duplicates.js';
import { pgvectorSupport } from '../../db/pgvector.js';
import { createEmbeddingService, type EmbeddingService } from '../../embed/queue.js';
import type { Embedder } from '../../embed/types.js';
import { Conversations } from '../../conversations/conversations.js';
import { MemoryStore } from '../store.js';
import { Recall } from './index.js';
import { VECTOR_FLOOR, vectorBranches } from './vector.js';
import { MODEL, OTHER, openVectorBed, VECTOR_BED_MS, wrap, type VectorBed } from '../../embed/testing/vector-bed.js';

/** False where the pgvector build does not match PGlite (db/pgvector.ts): nothing here can run. */
const VECTORS = pgvectorSupport().usable;

let bed: VectorBed;
let db: Database;
let tiny: Embedder;
let other: Embedder;
let vectors: VectorSlot;
let recall: Recall;
let service: EmbeddingService;
let store: MemoryStore;
let conversations: Conversations;
let logs: string[];

beforeAll(async () => {
  bed = await openVectorBed('anima-recall-vector-');
  ({ db, vectors, tiny, other } = bed);
  recall = new Recall({ db, vectors });
}, VECTOR_BED_MS);

afterAll(async () => {
  await bed?.close();
});

beforeEach(async () => {
  await db.exec(`DELETE FROM embeddings; UPDATE embedding_state SET model = NULL, dimensions = NULL, complete_at = NULL;
    DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories; DELETE FROM messages; DELETE FROM conversations;`);
  logs = [];
  service = createEmbeddingService({ db, vectors, log: (level, m) => logs.push(`${level}: ${m}`), vectorWeight: 1 });
  store = new MemoryStore(db, (c) => service.memoryChanged(c), undefined, vectors);
  conversations = new Conversations(db, (m) => service.messageStored(m));
});

afterEach(async () => {
  await service.close();
});

const remember = async (content: string) => (await store.create({ type: 'world', content, source: 'user', actor: 'person' })).memory.id;
const ids = (hits: RecallHit[]) => hits.map((h) => (h.link.kind === 'memory' ? h.link.memoryId : -1));

/** Memories written and embedded; the model's first call (worker start-up) is behind us. */
async function setUp(texts: string[]): Promise<number[]> {
  await service.setEmbedder(tiny);
  const out: number[] = [];
  for (const t of texts) out.push(await remember(t));
  await service.backfill();
  await service.idle();
  return out;
}

describe.skipIf(!VECTORS)('the vector branch', () => {
  it('changes the ranking when its weight is above 0, and nothing at 0 or without a model', async () => {
    // Both match "tea" and "hot" once in two words: a tie for full text, broken by the newer first.
    const [same, reworded] = await setUp(['The tea was hot.', 'Hot tea!', 'The cat is called Pepper.']);
    const query = 'the tea was hot';
    const without = await recall.search({ query, sources: ['semantic'], vectorWeight: 0 });
    expect(ids(without)).toEqual([reworded, same]);
    // The query's own words are nearest to the memory saying exactly them.
    const withVectors = await recall.detailed({ query, sources: ['semantic'], vectorWeight: 1, vectorBudgetMs: 5000 });
    expect(ids(withVectors.map((d) => d.hit))).toEqual([same, reworded]);
    // No model: exactly what recall gives without the branch.
    await service.setEmbedder(null);
    expect(await recall.search({ query, sources: ['semantic'], vectorWeight: 1 })).toEqual(without);
  });

  it('is off by default (weight 0) even with a model set', async () => {
    service.setVectorWeight(0);
    const [same, reworded] = await setUp(['The tea was hot.', 'Hot tea!']);
    expect(vectors.get()?.weight).toBe(0);
    const hits = await recall.search({ query: 'the tea was hot', sources: ['semantic'] });
    expect(ids(hits)).toEqual([reworded, same]);
    service.setVectorWeight(1);
    expect(ids(await recall.detailed({ query: 'the tea was hot', sources: ['semantic'], vectorBudgetMs: 5000 }).then((d) => d.map((x) => x.hit)))).toEqual([
      same,
      reworded,
    ]);
  });

  it('drops neighbours below the relevance floor', async () => {
    await setUp(['Mara likes green tea.', 'Green tea grows on hills in Japan.', 'The cat is called Pepper.']);
    const vector = (await vectors.get()!.embedQuery('quarterly tax filing deadline', 5000))!;
    const search = { vector, modelId: MODEL, dimensions: 32, sources: ['semantic' as const], depth: 10 };
    expect(await vectorBranches(db, search)).toEqual([]);
    // Without the floor the same query is "near" everything.
    const unfloored = await vectorBranches(db, { ...search, floor: -1 });
    expect(unfloored[0]!.items).toHaveLength(3);
    // A related query clears it, scored above the floor on a 0–1 scale.
    const related = (await vectors.get()!.embedQuery('Mara likes green tea.', 5000))!;
    const lists = await vectorBranches(db, { ...search, vector: related });
    expect(lists[0]!.items[0]!.score).toBeCloseTo(1, 4);
    expect(lists[0]!.items.every((i) => i.score > 0 && i.score <= 1)).toBe(true);
    expect(VECTOR_FLOOR).toBeGreaterThan(0);
  });

  it('is left out of a search whose query the model does not embed in time', async () => {
    const [same, reworded] = await setUp(['The tea was hot.', 'Hot tea!']);
    // Only the query is slow (a minute, unless the call is given up on); the backfill is not.
    const slow = wrap(tiny, async (texts, o) => {
      if (texts.some((t) => t.endsWith('the tea was hot'))) {
        await new Promise((r) => {
          setTimeout(r, 60_000).unref();
          o?.signal?.addEventListener('abort', r, { once: true });
        });
      }
      return tiny.embed(texts, o);
    });
    await service.setEmbedder(slow);
    await service.backfill();
    const started = performance.now();
    const hits = await recall.search({ query: 'the tea was hot', sources: ['semantic'], vectorWeight: 1 });
    // Not after the query's minute: a third of it is beyond any load's noise.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(ids(hits)).toEqual([reworded, same]);
    // Passive recall (250 ms budget) gets the lexical result in time too.
    const passive = await recall.passive({ query: 'the tea was hot', limit: 5, minScore: 0, minRelativeScore: 0, maxChars: 2000 });
    expect(passive.memories.map((m) => m.id)).toEqual([reworded, same]);
  });

  it('uses only the current model’s vectors while a new model re-embeds', async () => {
    const [same, reworded] = await setUp(['The tea was hot.', 'Hot tea!']);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const gated = wrap(other, async (texts, o) => {
      // Queries go through; the backfill waits.
      if (texts.length > 1 || !texts[0]!.startsWith('the tea')) await gate;
      return other.embed(texts, o);
    });
    await service.setEmbedder(gated);
    expect((await db.query('SELECT 1 FROM embeddings WHERE model = $1', [MODEL])).rows).toHaveLength(2);
    // The old model's vectors are still there, but recall asks the new one, which has none yet.
    const during = await recall.search({ query: 'the tea was hot', sources: ['semantic'], vectorWeight: 1, vectorBudgetMs: 5000 } as never);
    expect(ids(during)).toEqual([reworded, same]);
    open();
    await service.backfill();
    const after = await recall.detailed({ query: 'the tea was hot', sources: ['semantic'], vectorWeight: 1, vectorBudgetMs: 5000 });
    expect(ids(after.map((d) => d.hit))).toEqual([same, reworded]);
    expect((await db.query<{ model: string }>('SELECT DISTINCT model FROM embeddings')).rows).toEqual([{ model: OTHER }]);
  });

  it('searches past conversations too, within the conversations asked for', async () => {
    await service.setEmbedder(tiny);
    const a = (await conversations.create('a')).id;
    const b = (await conversations.create('b')).id;
    await conversations.append({ conversationId: a, role: 'user', content: 'Hot tea!', status: 'complete' });
    const exact = await conversations.append({ conversationId: a, role: 'user', content: 'The tea was hot.', status: 'complete' });
    const elsewhere = await conversations.append({ conversationId: b, role: 'user', content: 'The tea was hot.', status: 'complete' });
    await service.backfill();
    await service.idle();
    const seqOf = async (id: string) => Number((await db.query<{ s: number }>('SELECT seq::float8 AS s FROM messages WHERE id = $1', [id])).rows[0]!.s);
    const vector = (await vectors.get()!.embedQuery('The tea was hot.', 5000))!;
    const search = { vector, modelId: MODEL, dimensions: 32, sources: ['session' as const], depth: 10 };
    // Within conversation a: its exact turn first, never b's.
    const inA = (await vectorBranches(db, { ...search, conversationIds: [a] }))[0]!.items.map((i) => i.key);
    expect(inA[0]).toBe(await seqOf(exact.id));
    expect(inA).not.toContain(await seqOf(elsewhere.id));
    // Everywhere: both exact turns ahead of the rest.
    const all = (await vectorBranches(db, search))[0]!.items.map((i) => i.key);
    expect(all.slice(0, 2).sort()).toEqual([await seqOf(exact.id), await seqOf(elsewhere.id)].sort());
    // And through recall, restricted to a.
    const link = (h: RecallHit) => (h.link.kind === 'message' ? h.link.messageId : '');
    const hits = await recall.detailed({ query: 'the tea was hot', sources: ['session'], conversationIds: [a], vectorWeight: 1, vectorBudgetMs: 5000 });
    expect(hits.map((d) => link(d.hit))).toContain(exact.id);
    expect(hits.map((d) => link(d.hit))).not.toContain(elsewhere.id);
  });

  it('leaves out a message hidden from recall (a forget with what it came from) until the forget is undone', async () => {
    await service.setEmbedder(tiny);
    const a = (await conversations.create('a')).id;
    const said = await conversations.append({ conversationId: a, role: 'user', content: 'The kettle whistles at dawn.', status: 'complete' });
    await service.backfill();
    await service.idle();
    const seq = Number((await db.query<{ s: number }>('SELECT seq::float8 AS s FROM messages WHERE id = $1', [said.id])).rows[0]!.s);
    const vector = (await vectors.get()!.embedQuery('The kettle whistles at dawn.', 5000))!;
    // No neighbour left: no branch at all.
    const keys = async () =>
      (await vectorBranches(db, { vector, modelId: MODEL, dimensions: 32, sources: ['session' as const], depth: 10 }))[0]?.items.map((i) => i.key) ?? [];
    expect(await keys()).toContain(seq);
    await db.transaction((tx) => conversations.hideFromRecall(tx, [said.id], 41, new Date()));
    expect(await keys()).not.toContain(seq);
    await db.transaction((tx) => conversations.unhideFromRecall(tx, [41]));
    expect(await keys()).toContain(seq);
  });
});

describe.skipIf(!VECTORS)('near-duplicates by meaning', () => {
  /**
   * The tiny model's random weights never rate two different wordings as close as a real model
   * does, so this one reads the rewording as the original sentence: the vectors are still the real
   * model's, only the text it is shown differs.
   */
  const REWORDING = 'Mara would rather have tea than coffee';
  const ORIGINAL = 'Mara prefers tea to coffee';
  const understanding = (e: Embedder) =>
    wrap(e, (texts, o) =>
      e.embed(
        texts.map((t) => (t === REWORDING ? ORIGINAL : t)),
        o,
      ),
    );

  it('updates an active memory saved again in other words, with a model set', async () => {
    await service.setEmbedder(understanding(tiny));
    const first = await store.create({ type: 'preference', content: ORIGINAL, source: 'user', actor: 'person' });
    await service.idle();
    const again = await store.create({ type: 'preference', content: REWORDING, source: 'user', actor: 'person' });
    expect(again.outcome).toBe('updated');
    expect(again.memory.id).toBe(first.memory.id);
    expect(again.memory.content).toBe(REWORDING);
    // Another type is another memory.
    expect((await store.create({ type: 'world', content: REWORDING, source: 'user', actor: 'person' })).outcome).toBe('created');
  });

  it('keeps them apart without a model, and when a number or a negation differs', async () => {
    const first = await store.create({ type: 'preference', content: ORIGINAL, source: 'user', actor: 'person' });
    expect((await store.create({ type: 'preference', content: REWORDING, source: 'user', actor: 'person' })).outcome).toBe('created');
    await store.forget(first.memory.id, 'person');
    const guardFooled = wrap(tiny, (texts, o) =>
      tiny.embed(
        texts.map(() => 'Mara has 2 cats'),
        o,
      ),
    );
    await service.setEmbedder(guardFooled);
    await store.create({ type: 'world', content: 'Mara has 2 cats', source: 'user', actor: 'person' });
    await service.idle();
    // Every text gets the same vector here; only the guard keeps these apart.
    expect((await store.create({ type: 'world', content: 'Mara has 3 dogs now', source: 'user', actor: 'person' })).outcome).toBe('created');
    expect((await store.create({ type: 'world', content: 'Mara never had any dogs', source: 'user', actor: 'person' })).outcome).toBe('created');
  });

  it('light sleep’s prepared saves use it too, in one model call', async () => {
    const calls: number[] = [];
    const counted = wrap(understanding(tiny), (texts, o) => {
      calls.push(texts.length);
      return understanding(tiny).embed(texts, o);
    });
    await service.setEmbedder(counted);
    const first = await store.create({ type: 'preference', content: ORIGINAL, source: 'user', actor: 'person' });
    await service.idle();
    calls.length = 0;
    const prepared = await store.prepareCreates([
      { type: 'preference', content: REWORDING, source: 'light-sleep', actor: 'light-sleep' },
      { type: 'world', content: 'The garden has tomatoes.', source: 'light-sleep', actor: 'light-sleep' },
    ]);
    expect(calls).toEqual([2]);
    expect(prepared.items.map((p) => ('duplicateId' in p ? p.duplicateId : 'error'))).toEqual([first.memory.id, null]);
  });

  it('proposes deep sleep’s merge candidates from stored vectors: same type, active, current words, above the bar', async () => {
    // Written before any model, so the save-time check could not join them.
    const first = await store.create({ type: 'preference', content: ORIGINAL, source: 'user', actor: 'person' });
    const second = await store.create({ type: 'preference', content: REWORDING, source: 'user', actor: 'person' });
    const world = await store.create({ type: 'world', content: REWORDING + '!', source: 'user', actor: 'person' });
    expect(await similarMemoryPairs(db, vectors.get(), [first.memory.id])).toEqual([]); // no model: nothing
    await service.setEmbedder(understanding(tiny));
    await service.backfill();
    await service.idle();
    const calls: number[] = [];
    const counting = wrap(understanding(tiny), (texts, o) => {
      calls.push(texts.length);
      return understanding(tiny).embed(texts, o);
    });
    await service.setEmbedder(counting);
    await service.idle();
    calls.length = 0;
    // The rewording (same vector here) of the same type; the world memory is another type.
    expect(await similarMemoryPairs(db, vectors.get(), [first.memory.id])).toEqual([[first.memory.id, second.memory.id]]);
    expect(calls).toEqual([]); // read from the table, no model call
    // Words changed since the vector was made: not proposed until re-embedded.
    await db.query('UPDATE embeddings SET content_hash = $1 WHERE source = $2 AND source_id = $3', ['stale', 'memory', second.memory.id]);
    expect(await similarMemoryPairs(db, vectors.get(), [first.memory.id])).toEqual([]);
    await db.query('UPDATE embeddings SET content_hash = md5($1) WHERE source = $2 AND source_id = $3', [REWORDING, 'memory', second.memory.id]);
    // Forgotten: never proposed.
    await store.forget(second.memory.id, 'person');
    expect(await similarMemoryPairs(db, vectors.get(), [first.memory.id, world.memory.id])).toEqual([]);
  });

  it('leaves merge candidates below the bar alone', async () => {
    const [a, b] = await setUp(['The tea was hot.', 'Hot tea!']);
    const near = (await nearestTo(a!, b!))[0]!;
    expect(await similarMemoryPairs(db, vectors.get(), [a!], near - 0.001)).toEqual([[a, b]]);
    expect(await similarMemoryPairs(db, vectors.get(), [a!], Math.min(1, near + 0.001))).toEqual([]);
  });
});

/** Cosine similarity of two memories' stored vectors. */
async function nearestTo(a: number, b: number): Promise<number[]> {
  const rows = await db.query<{ s: number }>(
    `SELECT 1 - ((x.embedding::vector) <=> (y.embedding::vector)) AS s FROM embeddings x, embeddings y
      WHERE x.source = 'memory' AND y.source = 'memory' AND x.source_id = $1 AND y.source_id = $2 AND x.model = y.model`,
    [a, b],
  );
  return rows.rows.map((r) => Number(r.s));
}
