// The embedding_state row (which model the vectors are of, how far its backfill got, whether it
// covers everything) and the backfill's progress reports.
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import type { Job } from './backfill.js';
import type { EmbeddingProgress } from './embedding-service.js';
import type { Embedder } from './types.js';

/** Progress is reported at most this often (plus the first and the last report). */
const PROGRESS_MS = 500;
/** …and written to embedding_state at most this often. */
const STATE_MS = 5000;

/**
 * Records the model in use; the backfill's figures start over unless it is the model already
 * recorded. Returns whether that model's vectors already covered every row.
 */
export async function recordModel(db: Database, embedder: Embedder | null): Promise<{ complete: boolean }> {
  const state = (
    await db.query<{ model: string | null; dimensions: number | null; complete: boolean }>(
      'SELECT model, dimensions, complete_at IS NOT NULL AS complete FROM embedding_state',
    )
  ).rows[0];
  const same = !!embedder && state?.model === embedder.modelId && state.dimensions === embedder.dimensions;
  await db.query(
    `UPDATE embedding_state SET model = $1, dimensions = $2, updated_at = now()${same ? '' : ', backfill_done = 0, backfill_total = 0, complete_at = NULL'}`,
    [embedder?.modelId ?? null, embedder?.dimensions ?? null],
  );
  return { complete: same && !!state?.complete };
}

export class ProgressReports {
  private lastProgress = 0;
  private lastState = 0;
  private stateWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly onProgress: (p: EmbeddingProgress) => void,
    private readonly log: Log,
  ) {}

  /** Tells the listener (throttled unless `force`) and the state row (throttled unless `last`). */
  report(job: Job, finished: boolean, force: boolean, last: boolean): EmbeddingProgress {
    // Rows written during the walk are found by it too: the total grows rather than done passing it.
    const p = { model: job.model, done: job.done, total: Math.max(job.total, job.done), finished };
    const now = Date.now();
    if (force || finished || now - this.lastProgress >= PROGRESS_MS) {
      this.lastProgress = now;
      try {
        this.onProgress(p);
      } catch (err) {
        this.log('error', `embeddings: a progress listener failed: ${(err as Error).message}`);
      }
    }
    if (last || now - this.lastState >= STATE_MS) {
      this.lastState = now;
      this.stateWrite = this.db
        .query(
          `UPDATE embedding_state SET backfill_done = $2, backfill_total = $3, updated_at = now()${finished ? ', complete_at = now()' : ''} WHERE model = $1`,
          [job.model, p.done, p.total],
        )
        .then(
          () => {},
          (err: Error) => this.log('warn', `embeddings: could not record the backfill's progress: ${err.message}`),
        );
    }
    return p;
  }

  /** Resolves when the last state write is done. */
  written(): Promise<void> {
    return this.stateWrite;
  }
}
