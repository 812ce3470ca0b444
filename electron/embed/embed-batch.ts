// One batch of queued rows into vectors: read the rows, skip those whose vector of this model is
// already of these words, embed the rest in model calls bounded by characters, and write the vectors;
// rows that must not have one (a retired memory, a hidden block) lose theirs.
import type { Database } from '../db/open.js';
import { readRows, type Item, type RowText } from './embedded-rows.js';
import type { QueueStats } from './embedding-service.js';
import type { Embedder } from './types.js';
import { MAX_EMBED_CHARS, clip, contentHash, deleteVectors, upsertVectors, type VectorRow } from './vectors.js';

/** Vectors written per statement (see writeVectors). */
const UPSERT_ROWS = 8;

export interface BatchOptions {
  /** What the model wants in front of a stored text. */
  passagePrefix: string;
  maxBatchChars: number;
  /** The model call (the queue's, which close() or a switch can cancel). */
  embed: (texts: string[]) => Promise<Float32Array[]>;
  stats: QueueStats;
}

type HashedText = RowText & { hash: string };

/** One turn of the event loop, so what waits behind the queue (a chat write) gets its go. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function embedBatch(db: Database, e: Embedder, items: Item[], options: BatchOptions): Promise<void> {
  const { stats } = options;
  stats.batches++;
  const { texts, drop } = await readRows(db, items);
  const todo = await notYetEmbedded(db, e, texts, stats);

  // Long texts take the model as long as many short ones: split by characters too.
  const rows: VectorRow[] = [];
  for (let i = 0; i < todo.length;) {
    const chunk: HashedText[] = [];
    let chars = 0;
    while (i < todo.length && (chunk.length === 0 || chars + Math.min(todo[i]!.text.length, MAX_EMBED_CHARS) <= options.maxBatchChars)) {
      chars += Math.min(todo[i]!.text.length, MAX_EMBED_CHARS);
      chunk.push(todo[i++]!);
    }
    const vectors = await options.embed(chunk.map((t) => options.passagePrefix + clip(t.text)));
    if (vectors.length !== chunk.length) throw new Error(`the model returned ${vectors.length} vectors for ${chunk.length} texts`);
    chunk.forEach((t, j) => rows.push({ source: t.source, sourceId: t.sourceId, hash: t.hash, vector: vectors[j]! }));
  }

  await writeVectors(db, e, rows, stats);
  for (const source of ['message', 'memory', 'diary'] as const) stats.deleted += await deleteVectors(db, source, drop[source]);
}

/** The texts without a vector of this model of these very words (each once). */
async function notYetEmbedded(db: Database, e: Embedder, texts: RowText[], stats: QueueStats): Promise<HashedText[]> {
  const hashed = texts.map((t) => ({ ...t, hash: contentHash(t.text) }));
  const current = new Set(
    hashed.length
      ? (
          await db.query<{ k: string }>(
            `SELECT e.source || ':' || e.source_id || ':' || e.content_hash AS k
             FROM embeddings e JOIN unnest($1::text[], $2::bigint[]) AS u(s, i) ON e.source = u.s AND e.source_id = u.i
             WHERE e.model = $3 AND e.dimensions = $4`,
            [hashed.map((t) => t.source), hashed.map((t) => t.sourceId), e.modelId, e.dimensions],
          )
        ).rows.map((r) => r.k)
      : [],
  );
  const todo: HashedText[] = [];
  const seenKeys = new Set<string>();
  for (const t of hashed) {
    const k = `${t.source}:${t.sourceId}:${t.hash}`;
    if (current.has(k) || seenKeys.has(k)) {
      stats.skipped++;
      continue;
    }
    seenKeys.add(k);
    todo.push(t);
  }
  return todo;
}

async function writeVectors(db: Database, e: Embedder, rows: VectorRow[], stats: QueueStats): Promise<void> {
  // A few rows per statement, with a turn of the event loop between: each row costs its HNSW
  // insert (7–10 ms at 384 dimensions in WASM), and a chat write waits behind the statement.
  for (let i = 0; i < rows.length; i += UPSERT_ROWS) {
    await upsertVectors(db, e.modelId, e.dimensions, rows.slice(i, i + UPSERT_ROWS));
    stats.embedded += Math.min(UPSERT_ROWS, rows.length - i);
    if (i + UPSERT_ROWS < rows.length) await tick();
  }
}
