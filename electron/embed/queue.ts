// Keeps the embeddings table (migration 009) up to date with the write path without slowing it,
// the way the graph indexer does (electron/graph/indexer.ts): a stored message, a changed memory or a
// new diary block is queued by id and embedded on a later turn of the event loop, in batches, by the
// current on-device model. The write never waits and never sees a failure: a failed batch is logged
// and retried with backoff. What the queue never saw — written while no model was set, beyond the
// queue's bound, or still queued when the app closed — is found by the backfill, which walks the rows
// lacking a vector of the current model.
//
// Switching models re-embeds everything in the background; recall uses only the current model's
// vectors, so during the switch it sees the part already done. The old model's vectors stay until the
// new one covers every row (switching back meanwhile reuses them), then they are dropped: they are
// derived data, never the person's. A model id whose vectors changed length (different weights
// downloaded under the same id) loses its old vectors at once and is rebuilt.
//
// The parts: embedded-rows.ts (which rows get a vector, of what text), embed-batch.ts (one batch),
// pending.ts (the bounded map of queued rows), backfill.ts (the walk), retry.ts (after a failure),
// reader-calls.ts (what recall and the near-duplicate check ask of the model), embedding-state.ts
// (the state row and progress), embedding-service.ts (the types the host sees).
import type { MemoryChange } from '../../shared/api.js';
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import { vectorSupport } from '../db/pgvector.js';
import { usableVectorWeight, type VectorSlot } from './active.js';
import { countMissing, dropSuperseded, newJob, scanMissing, type Job } from './backfill.js';
import { embedBatch, tick } from './embed-batch.js';
import type { Item } from './embedded-rows.js';
import type { EmbeddingProgress, EmbeddingService, EmbeddingServiceOptions, EmbeddingStatus, QueueStats } from './embedding-service.js';
import { ProgressReports, recordModel } from './embedding-state.js';
import { PendingItems } from './pending.js';
import { ReaderCalls } from './reader-calls.js';
import { Backoff, failedAgain, RETRY_BASE_MS, RETRY_MAX_MS } from './retry.js';
import type { Embedder } from './types.js';
import { prefixesFor, prepareModel, type EmbedSource } from './vectors.js';

export type { EmbeddingProgress, EmbeddingService, EmbeddingServiceOptions, EmbeddingStatus, QueueStats } from './embedding-service.js';

/** Texts per model call. Small enough that a search waiting behind a batch is not held long. */
export const BATCH_SIZE = 32;
/** …and characters per call (a batch of long messages takes the model as long as many short ones). */
export const MAX_BATCH_CHARS = 16_000;
/**
 * Items the queue holds in memory. Past it new items are not kept: the backfill the queue runs once
 * it has drained finds them in the tables, so a burst (an import) costs memory only up to here.
 */
export const MAX_PENDING = 2000;
/** close() waits this long for the batch in flight before cancelling its model call. */
const CLOSE_GRACE_MS = 5000;

export function createEmbeddingService(options: EmbeddingServiceOptions): EmbeddingService {
  return new EmbeddingQueue(options);
}

export class EmbeddingQueue implements EmbeddingService {
  private readonly db: Database;
  private readonly vectors: VectorSlot;
  private readonly log: Log;
  private readonly batchSize: number;
  private readonly maxBatchChars: number;
  private weight: number;

  private embedder: Embedder | null = null;
  private prefixes = { query: '', passage: '' };
  private readonly pending: PendingItems;
  /** Items were turned away (or given up): a backfill must run once the queue drains. */
  private missed = false;
  private job: Job | null = null;
  private complete = false;
  private closed = false;
  private draining: Promise<void> | null = null;
  /** Exclusive sections: one batch at a time, and a model switch never in the middle of one. */
  private lock: Promise<unknown> = Promise.resolve();
  /** Cancels the model call of the batch in flight. */
  private inflight: AbortController | null = null;
  private readonly backoff: Backoff;
  private readonly readers: ReaderCalls;
  private readonly reports: ProgressReports;
  /** Counts for tests, logs and the status. */
  readonly stats: QueueStats = { embedded: 0, skipped: 0, deleted: 0, batches: 0, failedBatches: 0, turnedAway: 0, gaveUp: 0 };

  constructor(o: EmbeddingServiceOptions) {
    this.db = o.db;
    this.vectors = o.vectors;
    this.log = o.log ?? (() => {});
    this.batchSize = Math.max(1, o.batchSize ?? BATCH_SIZE);
    this.maxBatchChars = Math.max(1, o.maxBatchChars ?? MAX_BATCH_CHARS);
    this.pending = new PendingItems(Math.max(1, o.maxPending ?? MAX_PENDING));
    this.backoff = new Backoff(o.retryBaseMs ?? RETRY_BASE_MS, o.retryMaxMs ?? RETRY_MAX_MS);
    this.weight = usableVectorWeight(o.vectorWeight);
    this.readers = new ReaderCalls({ current: () => this.embedder, closed: () => this.closed, prefixes: () => this.prefixes });
    this.reports = new ProgressReports(this.db, o.onProgress ?? (() => {}), this.log);
  }

  enqueue(source: EmbedSource, id: string | number): void {
    if (this.closed || !this.embedder) return; // the backfill at the next setEmbedder finds it
    if (!this.pending.add(source, id)) {
      this.stats.turnedAway++;
      this.missed = true;
      return;
    }
    this.kick();
  }

  messageStored(message: { id: string }): void {
    this.enqueue('message', message.id);
  }

  memoryChanged(change: MemoryChange): void {
    const touched = { ...(change.before ?? {}), ...(change.after ?? {}) };
    if (change.action === 'create' || 'content' in touched || 'status' in touched) this.enqueue('memory', change.memoryId);
  }

  setVectorWeight(weight: number | undefined): void {
    this.weight = usableVectorWeight(weight);
    this.publish();
  }

  async setEmbedder(embedder: Embedder | null): Promise<void> {
    if (this.closed) return;
    if (embedder && !(await this.vectorsAvailable())) embedder = null;
    this.stopJob();
    this.pending.clear();
    this.readers.clearCache();
    this.inflight?.abort();
    const switched = await this.exclusive(async () => {
      if (embedder) {
        const { discarded, previousDimensions } = await prepareModel(this.db, embedder.modelId, embedder.dimensions);
        if (discarded) {
          this.log(
            'warn',
            `embeddings: ${embedder.modelId} now gives vectors of ${embedder.dimensions} numbers (had ${previousDimensions.join(', ')}); ` +
              `discarded its ${discarded} old vectors, rebuilding them`,
          );
        }
      }
      this.complete = (await recordModel(this.db, embedder)).complete;
      this.embedder = embedder;
      this.prefixes = embedder ? prefixesFor(embedder.modelId) : { query: '', passage: '' };
      this.backoff.reset();
      return true;
    }).catch((err: Error) => {
      // Derived data: a database that cannot take the model's indexes leaves search by meaning off,
      // never the host's start-up failed.
      this.embedder = null;
      this.backoff.lastError = err.message;
      this.log('error', `embeddings: could not switch to ${embedder?.modelId ?? 'no model'}: ${err.message}`);
      return false;
    });
    this.publish();
    if (embedder && switched) {
      this.log('info', `embeddings: using ${embedder.modelId} (${embedder.dimensions} dimensions)`);
      // What was written before, or under another model; progress goes to onProgress.
      void this.backfill();
    }
  }

  /** pgvector is loaded in this database (open.ts loads it only where its build matches PGlite). */
  private async vectorsAvailable(): Promise<boolean> {
    const support = vectorSupport(this.db);
    const created = support.usable && (await this.db.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).rows.length > 0;
    if (!created) this.log('warn', `embeddings: search by meaning stays off: ${support.reason || 'the vector extension is not in this database'}`);
    return created;
  }

  backfill(): Promise<EmbeddingProgress> {
    const e = this.embedder;
    if (!e || this.closed) return Promise.resolve({ model: e?.modelId ?? '', done: 0, total: 0, finished: false });
    if (this.job && !this.job.stopped && this.job.model === e.modelId) return this.job.promise;
    this.job = newJob(e);
    this.missed = false;
    this.kick();
    return this.job.promise;
  }

  retryNow(): void {
    if (this.closed || !this.embedder) return;
    this.backoff.retryAt = 0;
    this.backoff.cancel();
    this.kick();
  }

  status(): EmbeddingStatus {
    const e = this.embedder;
    const job = this.job && !this.job.stopped ? this.job : null;
    const { failures, lastError, retryAt } = this.backoff;
    return {
      model: e?.modelId ?? null,
      dimensions: e?.dimensions ?? null,
      pending: this.pending.size,
      backfill: job ? { done: job.done, total: job.total } : null,
      complete: !!e && this.complete && !job,
      failures,
      lastError,
      retryAt: retryAt > Date.now() ? new Date(retryAt).toISOString() : null,
      stats: { ...this.stats },
    };
  }

  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopJob();
    this.backoff.cancel();
    this.publish();
    // A model that never answers must not keep the app from closing.
    const grace = setTimeout(() => this.inflight?.abort(), CLOSE_GRACE_MS);
    await this.draining;
    clearTimeout(grace);
    await this.lock.catch(() => {});
    await this.reports.written();
    this.embedder = null;
  }

  /** Puts the current model where readers find it (the host's vector slot), or none. */
  private publish(): void {
    const e = this.embedder;
    this.vectors.set(e && !this.closed ? this.readers.vectorsFor(e, this.weight) : null);
  }

  // ---- the loop ----

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => {});
    return run;
  }

  private stopJob(): void {
    const job = this.job;
    if (!job || job.stopped) return;
    job.stopped = true;
    this.job = null;
    job.resolve({ model: job.model, done: job.done, total: job.total, finished: false });
  }

  private kick(): void {
    if (this.draining || this.closed || !this.embedder) return;
    this.draining = this.drain()
      .catch((err: Error) => this.log('error', `embeddings: the queue stopped: ${err.message}`))
      .finally(() => {
        this.draining = null;
        // Work that arrived between the last batch and here (not while waiting to retry).
        if (!this.closed && this.embedder && !this.backoff.waiting() && (this.pending.size || this.job)) this.kick();
      });
  }

  private async drain(): Promise<void> {
    // The write that queued the item gets its result first: the queue runs after it, not inside it.
    await tick();
    while (!this.closed && this.embedder) {
      if (this.backoff.waiting()) {
        this.backoff.schedule(() => this.kick());
        return;
      }
      const batch = this.backoff.single ? 1 : this.batchSize;
      let fromJob = false;
      let items = this.pending.take(batch);
      if (!items.length && this.job) {
        const job = this.job;
        if (!job.counted) {
          await countMissing(this.db, job);
          this.progress(job, false, true);
        }
        if (!job.buffer.length) await scanMissing(this.db, job, () => job === this.job);
        if (job !== this.job) continue;
        if (!job.buffer.length) {
          await this.finish(job);
          continue;
        }
        items = job.buffer.splice(0, batch);
        fromJob = true;
      }
      if (!items.length) {
        if (this.missed) {
          this.missed = false;
          void this.backfill();
          continue;
        }
        return;
      }
      if (this.readers.searching) await this.readers.searchesFirst();
      if (this.closed) return;
      const job = fromJob ? this.job : null;
      try {
        // The model current when the batch gets its turn: a switch may have come in between.
        await this.exclusive(async () => {
          const e = this.embedder;
          if (e && !this.closed) {
            await embedBatch(this.db, e, items, {
              passagePrefix: this.prefixes.passage,
              maxBatchChars: this.maxBatchChars,
              embed: (texts) => this.cancellable(e, texts),
              stats: this.stats,
            });
          }
        });
        this.backoff.succeeded();
        if (job && job === this.job) {
          job.done += items.length;
          this.progress(job, false);
        }
      } catch (err) {
        // Cancelled by a switch or by close: not the model's failure; the backfill finds these rows.
        if (!(err instanceof Cancelled)) this.failed(items, fromJob ? this.job : null, err as Error);
      }
      await tick();
    }
  }

  private failed(items: Item[], job: Job | null, err: Error): void {
    this.stats.failedBatches++;
    this.backoff.failed(err.message);
    const now = Date.now();
    const back: Item[] = [];
    for (const item of items) {
      if (failedAgain(item, this.stats.embedded)) {
        // Not flagged for a backfill: the next one the host starts (at start, after a night) tries it again.
        this.stats.gaveUp++;
        if (job) job.gaveUp++;
        this.log('warn', `embeddings: gave up on ${item.source} ${item.id} for now after ${item.attempts} failures (${err.message})`);
        continue;
      }
      back.push(item);
    }
    if (items.length > 1) this.backoff.single = true;
    if (job && job === this.job) job.buffer.unshift(...back);
    // Back in front of what came since, as long as the bound allows; the rest waits for the backfill.
    else if (!this.pending.putBackInFront(back)) this.missed = true;
    this.log('warn', `embeddings: a batch of ${items.length} failed (${err.message}); trying again in ${Math.round((this.backoff.retryAt - now) / 1000)} s`);
  }

  /** One model call that close() or a switch can cancel, even if the model ignores the signal. */
  private async cancellable(e: Embedder, texts: string[]): Promise<Float32Array[]> {
    const ac = new AbortController();
    this.inflight = ac;
    try {
      const call = e.embed(texts, { signal: ac.signal });
      call.catch(() => {});
      const cancelled = new Promise<never>((_, reject) => ac.signal.addEventListener('abort', () => reject(new Cancelled()), { once: true }));
      cancelled.catch(() => {});
      return await Promise.race([call, cancelled]);
    } finally {
      if (this.inflight === ac) this.inflight = null;
    }
  }

  // ---- the backfill's end ----

  /**
   * The walk is over. If nothing was given up, every row has a vector of this model: the other
   * models' vectors go, and so do vectors of rows that no longer qualify (retired memories, hidden
   * blocks, replaced messages) which no queue item reported.
   */
  private async finish(job: Job): Promise<void> {
    const complete = job.gaveUp === 0;
    if (complete) {
      await this.exclusive(async () => {
        if (job !== this.job) return;
        this.stats.deleted += await dropSuperseded(this.db, job.model, this.log);
      });
    }
    if (job !== this.job) return;
    this.complete = complete;
    job.done = Math.max(job.done, job.total);
    this.job = null;
    const p = this.progress(job, complete, true);
    job.resolve(p);
  }

  private progress(job: Job, finished: boolean, force = false): EmbeddingProgress {
    return this.reports.report(job, finished, force, finished || job !== this.job);
  }
}

class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}
