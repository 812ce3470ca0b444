// The backfill's walk: the rows lacking a vector of the current model — written while no model was
// set, beyond the queue's bound, still queued when the app closed, or under another model — counted
// once, then read in id order (messages by seq) a page at a time, source after source, each from its
// keyset cursor. When the walk ends with nothing given up, the earlier models' vectors go.
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import { deleteUnqualified, MISSING, type Item } from './embedded-rows.js';
import type { EmbeddingProgress } from './embedding-service.js';
import type { Embedder } from './types.js';
import { dropOtherModels, type EmbedSource } from './vectors.js';

/** Rows the backfill reads per step. */
const SCAN_BATCH = 200;

export interface Job {
  model: string;
  dimensions: number;
  counted: boolean;
  done: number;
  total: number;
  /** Sources still to scan, in this order, each from its keyset cursor. */
  sources: EmbedSource[];
  cursor: number;
  buffer: Item[];
  gaveUp: number;
  stopped: boolean;
  promise: Promise<EmbeddingProgress>;
  resolve: (p: EmbeddingProgress) => void;
}

export function newJob(e: Embedder): Job {
  let resolve!: (p: EmbeddingProgress) => void;
  const promise = new Promise<EmbeddingProgress>((r) => (resolve = r));
  return {
    model: e.modelId,
    dimensions: e.dimensions,
    counted: false,
    done: 0,
    total: 0,
    sources: ['memory', 'diary', 'message'],
    cursor: 0,
    buffer: [],
    gaveUp: 0,
    stopped: false,
    promise,
    resolve,
  };
}

/** How many rows lack a vector of the job's model, as the job's total. */
export async function countMissing(db: Database, job: Job): Promise<void> {
  const row = (
    await db.query<{ n: number }>(
      `SELECT (SELECT count(*) ${MISSING.message}) + (SELECT count(*) ${MISSING.memory}) + (SELECT count(*) ${MISSING.diary}) AS n`,
      [job.model, job.dimensions],
    )
  ).rows[0];
  job.total = Number(row?.n ?? 0);
  job.counted = true;
}

/** The next rows lacking a vector, in id order (messages by seq), into the job's buffer, while the job is `current`. */
export async function scanMissing(db: Database, job: Job, current: () => boolean): Promise<void> {
  while (job.sources.length && !job.buffer.length && current()) {
    const source = job.sources[0]!;
    const key = source === 'message' ? 'seq' : 'id';
    const rows = await db.query<{ k: number }>(`SELECT m.${key}::float8 AS k ${MISSING[source]} AND m.${key} > $3 ORDER BY m.${key} LIMIT ${SCAN_BATCH}`, [
      job.model,
      job.dimensions,
      job.cursor,
    ]);
    if (!rows.rows.length) {
      job.sources.shift();
      job.cursor = 0;
      continue;
    }
    job.cursor = Number(rows.rows[rows.rows.length - 1]!.k);
    for (const r of rows.rows) job.buffer.push({ source, id: Number(r.k) });
  }
}

/**
 * Every row has a vector of `model`: the other models' vectors go, and so do vectors of rows that
 * no longer qualify (retired memories, hidden blocks, replaced messages) which no queue item
 * reported. Returns the vectors deleted for rows that no longer qualify.
 */
export async function dropSuperseded(db: Database, model: string, log: Log): Promise<number> {
  const dropped = await dropOtherModels(db, model);
  if (dropped) log('info', `embeddings: ${model} covers everything; dropped ${dropped} vectors of earlier models`);
  return deleteUnqualified(db);
}
