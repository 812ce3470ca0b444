// The near-duplicate check by meaning for saving a memory (electron/memory/store.ts), after the
// trigram one: a save said in other words than an active memory of the same type updates it instead of
// adding a copy. Only with an embedding model set; without one the store is as it was.
//
// A wrong merge loses a fact, a missed one costs a line (store.ts says the same of trigrams), and
// sentence embeddings rate "X likes green tea" and "X likes black tea" as close as rewordings. So the
// bar is high and the same-fact rule's guard stands in front of it (memory/same-fact.ts differInFact,
// the one the look-alike path uses too): different numbers, a negation on one side only, an antonym or
// another name are never the same memory.
import type { Database, Transaction } from '../db/database.js';
import type { MemoryType } from '../../shared/api.js';
import type { ActiveVectors } from './active.js';
import { differInFact } from '../memory/same-fact.js';
import { castExpr, knnSql, predicate, vectorLiteral } from './vectors.js';

/**
 * Cosine similarity at which two memories of the same type are the same. PLACEHOLDER until measured
 * on a real model with the pairs store.ts lists for NEAR_DUPLICATE_SIMILARITY.
 */
export const NEAR_DUPLICATE_COSINE = 0.92;
/** A save waits at most this long for its vector; past it only the trigram check runs. */
export const DUPLICATE_EMBED_BUDGET_MS = 1000;
/** Neighbours looked at (filtered by type and status after the index scan). */
const CANDIDATES = 10;

/** A save's vector and the model it came from (the model may change before the save is written). */
export interface ProbeVector {
  modelId: string;
  dimensions: number;
  vector: Float32Array;
}

/** Vectors of contents about to be saved, in order; null for each when there is no model or it did not answer in time. Never rejects. */
export async function duplicateProbes(active: ActiveVectors | null, contents: string[]): Promise<(ProbeVector | null)[]> {
  if (!active || !contents.length) return contents.map(() => null);
  const vectors = await active.embedPassages(contents, DUPLICATE_EMBED_BUDGET_MS).catch(() => null);
  return contents.map((_, i) => {
    const vector = vectors?.[i];
    return vector ? { modelId: active.modelId, dimensions: active.dimensions, vector } : null;
  });
}

/** Numbers, a one-sided negation, an antonym or another name: different facts however close they sound (one guard for look-alikes and meanings). */
export { differInFact };

/**
 * The active memory of `type` whose vector (of the words it has now) is nearest to the save's and at
 * least NEAR_DUPLICATE_COSINE similar, unless a guard keeps them apart; null otherwise.
 */
export async function vectorDuplicate(tx: Transaction, type: MemoryType, content: string, probe: ProbeVector): Promise<number | null> {
  const rows = await tx.query<{ id: number; d: number; content: string }>(
    `WITH near AS MATERIALIZED (${knnSql(probe.modelId, probe.dimensions, 'memory', '$1', CANDIDATES)})
     SELECT m.id::float8 AS id, near.d, m.content FROM near JOIN memories m ON m.id = near.sid
     WHERE m.status = 'active' AND m.type = $2 AND near.h = md5(m.content) AND near.d <= $3
     ORDER BY near.d, m.id`,
    [vectorLiteral(probe.vector), type, 1 - NEAR_DUPLICATE_COSINE],
  );
  const hit = rows.rows.find((r) => !differInFact(r.content, content));
  return hit ? Number(hit.id) : null;
}

/**
 * Cosine similarity at which deep sleep's merge round shows two memories of the same type to the
 * background model as possibly the same fact. Lower than NEAR_DUPLICATE_COSINE: here the model reads
 * both and decides, so a near miss costs a line in its prompt, not a lost fact. PLACEHOLDER until
 * measured on a real model.
 */
export const MERGE_CANDIDATE_COSINE = 0.85;
/** Neighbours looked at per memory. */
const MERGE_NEIGHBOURS = 4;

/**
 * Pairs [a, b] of active memories of the same type, a from `ids`, whose stored vectors (of their
 * current words, by the current model) are at least `cosine` similar. Read from the vectors the queue
 * already stored: no model call. Empty without a model or for memories not embedded yet.
 */
export async function similarMemoryPairs(
  db: Database,
  active: ActiveVectors | null,
  ids: number[],
  cosine = MERGE_CANDIDATE_COSINE,
): Promise<[number, number][]> {
  if (!active || !ids.length) return [];
  const { modelId, dimensions } = active;
  const own = await db.query<{ id: number; v: string }>(
    `SELECT e.source_id::float8 AS id, ${castExpr(dimensions, 'e.embedding')}::text AS v
       FROM embeddings e JOIN memories m ON m.id = e.source_id
      WHERE ${predicate(modelId, 'memory', dimensions, 'e')} AND e.source_id = ANY($1::bigint[])
        AND m.status = 'active' AND e.content_hash = md5(m.content)`,
    [ids],
  );
  const pairs: [number, number][] = [];
  for (const { id, v } of own.rows) {
    const near = await db.query<{ id: number }>(
      `WITH near AS MATERIALIZED (${knnSql(modelId, dimensions, 'memory', '$1', MERGE_NEIGHBOURS + 1)})
       SELECT b.id::float8 AS id FROM near JOIN memories b ON b.id = near.sid JOIN memories a ON a.id = $2
        WHERE b.id <> a.id AND b.status = 'active' AND b.type = a.type AND near.h = md5(b.content) AND near.d <= $3
        ORDER BY near.d, b.id`,
      [v, id, 1 - cosine],
    );
    for (const r of near.rows) pairs.push([Number(id), Number(r.id)]);
  }
  return pairs;
}
