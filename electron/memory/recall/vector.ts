// The vector branch of recall: the nearest neighbours of the query's embedding by cosine, from the
// current on-device model's vectors (electron/embed/), one list per source, fused with the lexical
// branches by weighted RRF (fusion.ts). It finds what is said in other words, which BM25 cannot.
//
// Off unless an embedding model is set and its weight (settings.memory.vectorWeight) is above 0; then
// recall is exactly what it was without it. The query is embedded while the words are prepared and
// must be back within VECTOR_BUDGET_MS of the search's start (passive recall has 250 ms for
// everything): a model busy or slow leaves the branch out of that one search, never the search late.
import type { MemoryType, RecallSource } from '../../../shared/api.js';
import { READABLE_MESSAGE } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import { castExpr, knnSql, predicate, vectorLiteral } from '../../embed/vectors.js';
import type { BranchList } from './fusion.js';
import { AUTOBIOGRAPHICAL_KINDS, LIMBIC_KINDS } from './sidecar.js';

/**
 * Cosine similarity a neighbour needs. The nearest vectors of a short text are often merely nearby
 * (the same sentence frame, a shared name), so a branch without a floor proposes something for every
 * query. PLACEHOLDER: chosen on the generated test model (electron/models/testing/, random weights),
 * where texts sharing no word score below it and texts sharing most of their words above; a real
 * model's similarities sit in another range (e5's unrelated pairs score ~0.7) — tune it on LoCoMo
 * with that model before turning the branch on by default.
 */
export const VECTOR_FLOOR = 0.55;
/** How long the query's embedding may take, counted from the start of the search. */
export const VECTOR_BUDGET_MS = 150;
/**
 * Neighbours one index scan returns: HNSW's ef_search (40 by default) bounds a scan anyway, and the
 * branch only adds to what the lexical ones rank.
 */
export const VECTOR_CANDIDATES = 40;

export interface VectorSearch {
  vector: Float32Array;
  modelId: string;
  dimensions: number;
  sources: RecallSource[];
  /** Items per branch. */
  depth: number;
  floor?: number;
  conversationIds?: string[];
  memoryTypes?: MemoryType[];
  excludeMemoryIds?: number[];
  /** The entity restriction: only these keys (message seq, memory id, diary id). */
  only?: { session: number[]; semantic: number[]; diary: number[] } | null;
}

/** One list per source asked for; each item's score is its similarity above the floor, in (0, 1]. */
export async function vectorBranches(db: Database, s: VectorSearch): Promise<BranchList[]> {
  const floor = s.floor ?? VECTOR_FLOOR;
  const maxDistance = 1 - floor;
  const k = VECTOR_CANDIDATES;
  const vec = vectorLiteral(s.vector);
  const out: BranchList[] = [];
  const toList = (source: RecallSource, rows: { id: number; d: number }[], only: number[] | undefined) => {
    const allowed = only ? new Set(only) : null;
    const items = rows
      .filter((r) => !allowed || allowed.has(Number(r.id)))
      .slice(0, s.depth)
      // Scaled from the floor, with `full` 1: a neighbour just above the floor stays a weak vote
      // however alone it is in its list.
      .map((r) => ({ key: Number(r.id), score: Math.max(1e-6, (1 - Number(r.d) - floor) / (1 - floor)) }));
    if (items.length) out.push({ source, branch: 'vector', items, full: 1 });
  };

  const tasks: Promise<void>[] = [];
  if (s.sources.includes('semantic')) {
    const types = s.memoryTypes?.length ? s.memoryTypes : null;
    const exclude = s.excludeMemoryIds?.length ? s.excludeMemoryIds : null;
    const params: unknown[] = [vec, maxDistance];
    const typeFilter = types ? `AND m.type = ANY($${params.push(types)}::text[])` : '';
    const exclFilter = exclude ? `AND NOT (m.id = ANY($${params.push(exclude)}::bigint[]))` : '';
    tasks.push(
      db
        .query<{ id: number; d: number }>(
          // A vector made from words the memory no longer has does not count (the queue is renewing it).
          `WITH near AS MATERIALIZED (${knnSql(s.modelId, s.dimensions, 'memory', '$1', k)})
           SELECT m.id::float8 AS id, near.d FROM near JOIN memories m ON m.id = near.sid
           WHERE near.d <= $2 AND m.status = 'active' AND near.h = md5(m.content) ${typeFilter} ${exclFilter}
           ORDER BY near.d, m.id`,
          params,
        )
        .then((r) => toList('semantic', r.rows, s.only?.semantic)),
    );
  }
  if (s.sources.includes('session')) {
    const restricted = s.conversationIds !== undefined;
    tasks.push(
      (restricted
        ? // A few conversations (a benchmark, a "this chat only" search): every turn of them, exactly —
          // the index's nearest over all messages would seldom be theirs.
          db.query<{ id: number; d: number }>(
            `SELECT m.seq::float8 AS id, ${castExpr(s.dimensions, 'e.embedding')} <=> $1::vector(${s.dimensions}) AS d
             FROM messages m JOIN embeddings e ON ${predicate(s.modelId, 'message', s.dimensions, 'e')} AND e.source_id = m.seq
             WHERE m.conversation_id = ANY($3::text[]) AND m.replaced_by IS NULL AND m.status <> 'streaming' AND ${READABLE_MESSAGE('m')}
               AND ${castExpr(s.dimensions, 'e.embedding')} <=> $1::vector(${s.dimensions}) <= $2
             ORDER BY d, m.seq LIMIT ${k}`,
            [vec, maxDistance, s.conversationIds],
          )
        : db.query<{ id: number; d: number }>(
            `WITH near AS MATERIALIZED (${knnSql(s.modelId, s.dimensions, 'message', '$1', k)})
             SELECT m.seq::float8 AS id, near.d FROM near JOIN messages m ON m.seq = near.sid
             WHERE near.d <= $2 AND m.replaced_by IS NULL AND m.status <> 'streaming' AND ${READABLE_MESSAGE('m')}
             ORDER BY near.d, m.seq`,
            [vec, maxDistance],
          )
      ).then((r) => toList('session', r.rows, s.only?.session)),
    );
  }
  for (const source of ['limbic', 'autobiographical'] as const) {
    if (!s.sources.includes(source)) continue;
    const kinds = source === 'limbic' ? LIMBIC_KINDS : AUTOBIOGRAPHICAL_KINDS;
    tasks.push(
      db
        .query<{ id: number; d: number }>(
          `WITH near AS MATERIALIZED (${knnSql(s.modelId, s.dimensions, 'diary', '$1', k)})
           SELECT b.id::float8 AS id, near.d FROM near JOIN diary_blocks b ON b.id = near.sid
           WHERE near.d <= $2 AND b.hidden_at IS NULL AND b.kind = ANY($3::text[])
           ORDER BY near.d, b.id`,
          [vec, maxDistance, kinds],
        )
        .then((r) => toList(source, r.rows, s.only?.diary)),
    );
  }
  await Promise.all(tasks);
  return out;
}
