// Vector storage on a real on-disk PGlite with pgvector: the text form, the per-model indexes, and
// that the searches are shaped so the planner uses them.
import fs from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { differInFact } from './duplicates.js';
import { pgvectorSupport } from '../db/pgvector.js';
import {
  arrayLiteral,
  clip,
  contentHash,
  dropOtherModels,
  indexName,
  knnSql,
  nearest,
  parseVector,
  prefixesFor,
  prepareModel,
  upsertVectors,
  vectorLiteral,
  type EmbedSource,
} from './vectors.js';

/** False where the pgvector build does not match PGlite (pgvector.ts): the database opens without it. */
const VECTORS = pgvectorSupport().usable;

let db: Database;
let dir: string;

beforeAll(async () => {
  dir = tempDataDir('anima-vectors-');
  db = await openDatabase(dir, { template: dbTemplate() });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec('DELETE FROM embeddings');
  if (VECTORS) await dropOtherModels(db, '');
});

/** A deterministic pseudo-random unit vector. */
function unit(seed: number, n: number): Float32Array {
  const v = new Float32Array(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    v[i] = x / 2147483648 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((y) => y / norm);
}

const indexes = async () =>
  (await db.query<{ n: string }>(`SELECT indexname AS n FROM pg_indexes WHERE tablename = 'embeddings' AND indexname LIKE 'embeddings_hnsw_%'`)).rows
    .map((r) => r.n)
    .sort();

describe('vector helpers', () => {
  it('write vectors that come back unchanged (float4)', async () => {
    const v = unit(7, 32);
    expect(parseVector(vectorLiteral(v))).toEqual(v);
    expect(parseVector(arrayLiteral(v))).toEqual(v);
    const row = (await db.query<{ v: string }>('SELECT $1::real[]::text AS v', [arrayLiteral(v)])).rows[0]!;
    expect(parseVector(row.v)).toEqual(v);
    if (VECTORS) expect(parseVector((await db.query<{ v: string }>('SELECT $1::vector::text AS v', [vectorLiteral(v)])).rows[0]!.v)).toEqual(v);
    expect(() => vectorLiteral([1, Number.NaN])).toThrow();
  });

  it('leave pg_trgm working (a mismatched pgvector build broke its % operator)', async () => {
    const rows = (await db.query(`SELECT 'The person likes green tea' % 'The person likes green tea a lot' AS op, similarity('abc', 'abd') AS s`)).rows;
    expect(rows).toEqual([{ op: true, s: expect.closeTo(0.333, 2) }]);
  });

  it("hash as Postgres' md5 does, for any text", async () => {
    for (const text of ['plain', 'Grüße 你好 🙂', '']) {
      const row = (await db.query<{ h: string }>('SELECT md5($1) AS h', [text])).rows[0]!;
      expect(contentHash(text)).toBe(row.h);
    }
  });

  it('clip without splitting a surrogate pair', () => {
    expect(clip('abc', 2)).toBe('ab');
    expect(clip('a🙂', 2)).toBe('a');
    expect(clip('short', 100)).toBe('short');
  });

  it('know the catalogue’s prefixes, and none for an unknown model', () => {
    expect(prefixesFor('Xenova/multilingual-e5-small')).toEqual({ query: 'query: ', passage: 'passage: ' });
    expect(prefixesFor('nobody/knows')).toEqual({ query: '', passage: '' });
  });

  it('tell facts apart by numbers and negation', () => {
    expect(differInFact('Mara was born on 3 May', 'Mara was born on 5 May')).toBe(true);
    expect(differInFact('Mara likes tea', 'Mara does not like tea')).toBe(true);
    expect(differInFact('Mara likes tea', "Mara doesn't like tea")).toBe(true);
    expect(differInFact('Mara 喜欢茶', 'Mara 不喜欢茶')).toBe(true);
    expect(differInFact('Mara has 2 cats', 'Mara owns 2 cats')).toBe(false);
    expect(differInFact('Mara likes green tea', 'Mara really likes green tea')).toBe(false);
  });
});

describe.skipIf(!VECTORS)('per-model indexes', () => {
  it('are made per model and source on first use, and the searches use them', async () => {
    await prepareModel(db, "odd 'model'/v1", 32);
    expect(await indexes()).toEqual((['message', 'memory', 'diary'] as EmbedSource[]).map((s) => indexName("odd 'model'/v1", s, 32)).sort());
    // 1,600 memory vectors: from about 1,500 the planner prefers the index to a scan and sort.
    const rows = Array.from({ length: 1720 }, (_, i) => ({
      source: (['memory', 'message', 'diary'] as const)[i < 1600 ? 0 : i % 3]!,
      sourceId: i,
      hash: 'h',
      vector: unit(i + 1, 32),
    }));
    await upsertVectors(db, "odd 'model'/v1", 32, rows);
    // Another model's rows of another length share the table without troubling the index.
    await prepareModel(db, 'other', 8);
    await upsertVectors(db, 'other', 8, [{ source: 'memory', sourceId: 1, hash: 'h', vector: unit(3, 8) }]);
    await db.exec('ANALYZE embeddings');
    const plan = async (sql: string) =>
      (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [vectorLiteral(unit(1, 32))])).rows.map((r) => r['QUERY PLAN']).join('\n');
    // At a few thousand vectors the planner picks the index by itself, also inside a materialised
    // CTE, as recall and the near-duplicate check run it.
    const memory = knnSql("odd 'model'/v1", 32, 'memory', '$1', 10);
    expect(await plan(memory)).toContain(`Index Scan using ${indexName("odd 'model'/v1", 'memory', 32)}`);
    expect(await plan(`WITH near AS MATERIALIZED (${memory}) SELECT * FROM near`)).toContain(`Index Scan using ${indexName("odd 'model'/v1", 'memory', 32)}`);
    // Every source's search matches its index's expression and predicate (below a few hundred rows
    // a scan and sort is cheaper, and the planner rightly takes it).
    await db.transaction(async (tx) => {
      await tx.exec('SET LOCAL enable_seqscan = off');
      for (const source of ['message', 'memory', 'diary'] as const) {
        const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${knnSql("odd 'model'/v1", 32, source, '$1', 10)}`, [vectorLiteral(unit(1, 32))]);
        expect(rows.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain(`Index Scan using ${indexName("odd 'model'/v1", source, 32)}`);
      }
    });
    const near = await nearest(db, { modelId: "odd 'model'/v1", dimensions: 32, source: 'memory', vector: unit(2, 32), k: 3 });
    expect(near[0]).toEqual({ id: 1, similarity: expect.closeTo(1, 5) });
    expect(near.map((n) => n.similarity)).toEqual([...near.map((n) => n.similarity)].sort((a, b) => b - a));
    expect(near).toHaveLength(3);
  });

  it('change length with the model: old vectors and indexes go', async () => {
    await prepareModel(db, 'm', 32);
    await upsertVectors(db, 'm', 32, [{ source: 'memory', sourceId: 1, hash: 'h', vector: unit(1, 32) }]);
    expect(await prepareModel(db, 'm', 16)).toEqual({ discarded: 1, previousDimensions: [32] });
    expect(await indexes()).toEqual((['message', 'memory', 'diary'] as EmbedSource[]).map((s) => indexName('m', s, 16)).sort());
    await upsertVectors(db, 'm', 16, [{ source: 'memory', sourceId: 1, hash: 'h', vector: unit(1, 16) }]);
    await expect(upsertVectors(db, 'm', 16, [{ source: 'memory', sourceId: 2, hash: 'h', vector: unit(1, 8) }])).rejects.toThrow(/8 numbers/);
  });

  it('drop the other models’ vectors and indexes', async () => {
    await prepareModel(db, 'a', 8);
    await prepareModel(db, 'b', 8);
    await upsertVectors(db, 'a', 8, [{ source: 'memory', sourceId: 1, hash: 'h', vector: unit(1, 8) }]);
    await upsertVectors(db, 'b', 8, [{ source: 'memory', sourceId: 1, hash: 'h', vector: unit(1, 8) }]);
    expect(await dropOtherModels(db, 'b')).toBe(1);
    expect(await indexes()).toEqual((['message', 'memory', 'diary'] as EmbedSource[]).map((s) => indexName('b', s, 8)).sort());
    expect((await db.query('SELECT model FROM embeddings')).rows).toEqual([{ model: 'b' }]);
  });
});
