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
import type { MemoryChange } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { RECALLED_DIARY_KINDS } from '../memory/recall/sidecar.js';
import { usableVectorWeight, type ActiveVectors, type VectorSlot } from './active.js';
import { pgvectorSupport } from '../db/pgvector.js';
import type { Embedder } from './types.js';
import {
  MAX_EMBED_CHARS,
  clip,
  contentHash,
  deleteVectors,
  dropOtherModels,
  prefixesFor,
  prepareModel,
  sqlLiteral,
  upsertVectors,
  type EmbedSource,
  type VectorRow,
} from './vectors.js';

type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/** Texts per model call. Small enough that a search waiting behind a batch is not held long. */
export const BATCH_SIZE = 32;
/** …and characters per call (a batch of long messages takes the model as long as many short ones). */
export const MAX_BATCH_CHARS = 16_000;
/**
 * Items the queue holds in memory. Past it new items are not kept: the backfill the queue runs once
 * it has drained finds them in the tables, so a burst (an import) costs memory only up to here.
 */
export const MAX_PENDING = 2000;
/** Vectors written per statement (see embedBatch). */
const UPSERT_ROWS = 8;
/** Rows the backfill reads per step. */
const SCAN_BATCH = 200;
/** Retry after a failed batch: 2 s, doubling, at most 5 minutes. */
const RETRY_BASE_MS = 2000;
const RETRY_MAX_MS = 5 * 60_000;
/**
 * A text that failed this often while other texts were embedded in between is given up for this run
 * (logged); the next backfill tries it again. Without this one text the model refuses would hold the
 * queue in retries forever.
 */
const MAX_ATTEMPTS = 5;
/** How long a batch waits for searches in flight to get their query embedded first. */
const QUERY_PRIORITY_MS = 1000;
/** close() waits this long for the batch in flight before cancelling its model call. */
const CLOSE_GRACE_MS = 5000;
/** Progress is reported at most this often (plus the first and the last report). */
const PROGRESS_MS = 500;
/** …and written to embedding_state at most this often. */
const STATE_MS = 5000;
/** Only what recall can return gets a vector: dreams never come back from recall and digests are not indexed. */
const EMBEDDED_DIARY_KINDS: readonly string[] = RECALLED_DIARY_KINDS;
const EMBEDDED_DIARY_KINDS_SQL = EMBEDDED_DIARY_KINDS.map(sqlLiteral).join(', ');
const QUERY_CACHE = 64;

export interface EmbeddingProgress {
  model: string;
  /** Rows handled by this backfill (embedded, or found to need nothing). */
  done: number;
  /** Rows lacking a vector of the model when the backfill began. */
  total: number;
  /** Every row has a vector of the model (false while running, or if it stopped or gave up rows). */
  finished: boolean;
}

export interface EmbeddingStatus {
  model: string | null;
  dimensions: number | null;
  /** Items waiting in memory. */
  pending: number;
  backfill: { done: number; total: number } | null;
  /** Every row had a vector of the current model when last checked (old models' vectors dropped). */
  complete: boolean;
  /** Failed batches in a row (0 = the last one worked). */
  failures: number;
  lastError: string | null;
  /** When the queue tries again after a failure (ISO), or null. */
  retryAt: string | null;
  stats: EmbeddingQueue['stats'];
}

export interface EmbeddingServiceOptions {
  db: Database;
  /** Where readers (recall, the memory store, deep sleep) find the model this service makes ready. */
  vectors: VectorSlot;
  log?: Log;
  /** Backfill progress (a host event later). */
  onProgress?: (progress: EmbeddingProgress) => void;
  /** Weight of recall's vector branch (settings.memory.vectorWeight); default 0 = off. */
  vectorWeight?: number;
  batchSize?: number;
  maxBatchChars?: number;
  maxPending?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/** What the host uses. */
export interface EmbeddingService {
  /** A row was written or changed. Cheap: the caller never waits for the embedding. */
  enqueue(source: EmbedSource, id: string | number): void;
  /** Conversations' onStored: a message whose words are final (a streaming reply is queued again when it finishes). */
  messageStored(message: { id: string }): void;
  /** MemoryStore's onChange: only changes to words or status need a new (or no) vector. */
  memoryChanged(change: MemoryChange): void;
  /**
   * Switches the model (null: none; the vector branch and the vector near-duplicate check go off).
   * Cancels the batch in flight (the backfill finds its rows again), so the old embedder may be closed
   * once this resolves; the re-embedding runs in the background.
   */
  setEmbedder(embedder: Embedder | null): Promise<void>;
  /** Embeds every row lacking a vector of the current model; resolves when done, stopped or superseded. */
  backfill(): Promise<EmbeddingProgress>;
  /** Recall's vector branch weight: settings.memory.vectorWeight (absent = 0 = off). */
  setVectorWeight(weight: number | undefined): void;
  status(): EmbeddingStatus;
  /** Resolves when nothing is queued and no backfill is running (or the queue waits to retry). */
  idle(): Promise<void>;
  /** Stops taking work and waits for the batch in flight (cancelling it after 5 s). Does not close the embedder (its owner does). */
  close(): Promise<void>;
}

type Item = { source: EmbedSource; id: string | number; attempts?: number; failedAt?: number };

interface Job {
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

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createEmbeddingService(options: EmbeddingServiceOptions): EmbeddingService {
  return new EmbeddingQueue(options);
}

export class EmbeddingQueue implements EmbeddingService {
  private readonly db: Database;
  private readonly vectors: VectorSlot;
  private readonly log: Log;
  private readonly onProgress: (p: EmbeddingProgress) => void;
  private readonly batchSize: number;
  private readonly maxBatchChars: number;
  private readonly maxPending: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private weight: number;

  private embedder: Embedder | null = null;
  private prefixes = { query: '', passage: '' };
  private readonly pending = new Map<string, Item>();
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
  private failures = 0;
  /** After a failure, batches of one until one works, so a text the model refuses is found. */
  private single = false;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private lastError: string | null = null;
  private queries = 0;
  private queryWaiters: (() => void)[] = [];
  private readonly queryCache = new Map<string, Float32Array>();
  private lastProgress = 0;
  private lastState = 0;
  private stateWrite: Promise<void> = Promise.resolve();
  /** Counts for tests, logs and the status. */
  readonly stats = { embedded: 0, skipped: 0, deleted: 0, batches: 0, failedBatches: 0, turnedAway: 0, gaveUp: 0 };

  constructor(o: EmbeddingServiceOptions) {
    this.db = o.db;
    this.vectors = o.vectors;
    this.log = o.log ?? (() => {});
    this.onProgress = o.onProgress ?? (() => {});
    this.batchSize = Math.max(1, o.batchSize ?? BATCH_SIZE);
    this.maxBatchChars = Math.max(1, o.maxBatchChars ?? MAX_BATCH_CHARS);
    this.maxPending = Math.max(1, o.maxPending ?? MAX_PENDING);
    this.retryBaseMs = o.retryBaseMs ?? RETRY_BASE_MS;
    this.retryMaxMs = o.retryMaxMs ?? RETRY_MAX_MS;
    this.weight = usableVectorWeight(o.vectorWeight);
  }

  enqueue(source: EmbedSource, id: string | number): void {
    if (this.closed || !this.embedder) return; // the backfill at the next setEmbedder finds it
    const key = itemKey(source, id);
    if (this.pending.has(key)) {
      // Once per row: a memory saved three times in a burst is read once, as it ends up.
      this.pending.delete(key);
    } else if (this.pending.size >= this.maxPending) {
      this.stats.turnedAway++;
      this.missed = true;
      return;
    }
    this.pending.set(key, { source, id });
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
    this.queryCache.clear();
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
      const state = (
        await this.db.query<{ model: string | null; dimensions: number | null; complete: boolean }>(
          'SELECT model, dimensions, complete_at IS NOT NULL AS complete FROM embedding_state',
        )
      ).rows[0];
      const same = !!embedder && state?.model === embedder.modelId && state.dimensions === embedder.dimensions;
      this.complete = same && !!state?.complete;
      await this.db.query(
        `UPDATE embedding_state SET model = $1, dimensions = $2, updated_at = now()${same ? '' : ', backfill_done = 0, backfill_total = 0, complete_at = NULL'}`,
        [embedder?.modelId ?? null, embedder?.dimensions ?? null],
      );
      this.embedder = embedder;
      this.prefixes = embedder ? prefixesFor(embedder.modelId) : { query: '', passage: '' };
      this.failures = 0;
      this.single = false;
      this.retryAt = 0;
      this.lastError = null;
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = null;
      return true;
    }).catch((err: Error) => {
      // Derived data: a database that cannot take the model's indexes leaves search by meaning off,
      // never the host's start-up failed.
      this.embedder = null;
      this.lastError = err.message;
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
    const support = pgvectorSupport();
    const created = support.usable && (await this.db.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).rows.length > 0;
    if (!created) this.log('warn', `embeddings: search by meaning stays off: ${support.reason || 'the vector extension is not in this database'}`);
    return created;
  }

  backfill(): Promise<EmbeddingProgress> {
    const e = this.embedder;
    if (!e || this.closed) return Promise.resolve({ model: e?.modelId ?? '', done: 0, total: 0, finished: false });
    if (this.job && !this.job.stopped && this.job.model === e.modelId) return this.job.promise;
    let resolve!: (p: EmbeddingProgress) => void;
    const promise = new Promise<EmbeddingProgress>((r) => (resolve = r));
    this.job = {
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
    this.missed = false;
    this.kick();
    return promise;
  }

  status(): EmbeddingStatus {
    const e = this.embedder;
    const job = this.job && !this.job.stopped ? this.job : null;
    return {
      model: e?.modelId ?? null,
      dimensions: e?.dimensions ?? null,
      pending: this.pending.size,
      backfill: job ? { done: job.done, total: job.total } : null,
      complete: !!e && this.complete && !job,
      failures: this.failures,
      lastError: this.lastError,
      retryAt: this.retryAt > Date.now() ? new Date(this.retryAt).toISOString() : null,
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
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.publish();
    // A model that never answers must not keep the app from closing.
    const grace = setTimeout(() => this.inflight?.abort(), CLOSE_GRACE_MS);
    await this.draining;
    clearTimeout(grace);
    await this.lock.catch(() => {});
    await this.stateWrite;
    this.embedder = null;
  }

  // ---- what readers use (the host's vector slot: recall, the near-duplicate check) ----

  private publish(): void {
    const e = this.embedder;
    if (!e || this.closed) {
      this.vectors.set(null);
      return;
    }
    const active: ActiveVectors = {
      modelId: e.modelId,
      dimensions: e.dimensions,
      weight: this.weight,
      embedQuery: (text, budgetMs, signal) => this.embedQuery(e, text, budgetMs, signal),
      embedPassages: (texts, budgetMs) => this.embedPassages(e, texts, budgetMs),
    };
    this.vectors.set(active);
  }

  private async embedQuery(e: Embedder, text: string, budgetMs: number, signal?: AbortSignal): Promise<Float32Array | null> {
    const input = this.prefixes.query + clip(text);
    const key = `${e.modelId}\n${input}`;
    const cached = this.queryCache.get(key);
    if (cached) return cached;
    const out = await this.bounded(e, [input], budgetMs, signal);
    const v = out?.[0] ?? null;
    if (v && this.embedder === e) {
      if (this.queryCache.size >= QUERY_CACHE) this.queryCache.delete(this.queryCache.keys().next().value!);
      this.queryCache.set(key, v);
    }
    return v;
  }

  private async embedPassages(e: Embedder, texts: string[], budgetMs: number): Promise<(Float32Array | null)[] | null> {
    if (!texts.length) return [];
    return this.bounded(
      e,
      texts.map((t) => this.prefixes.passage + clip(t)),
      budgetMs,
    );
  }

  /** One model call that gives up (null) at the deadline; batches wait for it to start first. */
  private async bounded(e: Embedder, inputs: string[], budgetMs: number, signal?: AbortSignal): Promise<Float32Array[] | null> {
    if (this.closed || this.embedder !== e || signal?.aborted || !(budgetMs > 0)) return null;
    this.queries++;
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => ac.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        ac.abort();
        resolve(null);
      }, budgetMs);
      ac.signal.addEventListener('abort', () => resolve(null), { once: true });
    });
    try {
      const call = e.embed(inputs, { signal: ac.signal });
      // Past the deadline the call may still fail: that is no one's error any more.
      call.catch(() => {});
      const out = await Promise.race([call, deadline]);
      if (!out || out.length !== inputs.length || out.some((v) => v.length !== e.dimensions)) return null;
      return out;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (--this.queries === 0) for (const w of this.queryWaiters.splice(0)) w();
    }
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
        if (!this.closed && this.embedder && Date.now() >= this.retryAt && (this.pending.size || this.job)) this.kick();
      });
  }

  private async drain(): Promise<void> {
    // The write that queued the item gets its result first: the queue runs after it, not inside it.
    await tick();
    while (!this.closed && this.embedder) {
      if (Date.now() < this.retryAt) {
        this.scheduleRetry();
        return;
      }
      let fromJob = false;
      let items = this.take(this.pending, null);
      if (!items.length && this.job) {
        const job = this.job;
        if (!job.counted) await this.count(job);
        if (!job.buffer.length) await this.scan(job);
        if (job !== this.job) continue;
        if (!job.buffer.length) {
          await this.finish(job);
          continue;
        }
        items = this.take(null, job.buffer);
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
      if (this.queries > 0) await this.searchesFirst();
      if (this.closed) return;
      const job = fromJob ? this.job : null;
      try {
        // The model current when the batch gets its turn: a switch may have come in between.
        await this.exclusive(async () => {
          const e = this.embedder;
          if (e && !this.closed) await this.embedBatch(e, items);
        });
        this.failures = 0;
        this.single = false;
        this.lastError = null;
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

  /** The next batch from the pending map or a backfill buffer (characters are bounded per model call, in embedBatch). */
  private take(map: Map<string, Item> | null, buffer: Item[] | null): Item[] {
    const max = this.single ? 1 : this.batchSize;
    const out: Item[] = [];
    if (map) {
      for (const [key, item] of map) {
        if (out.length >= max) break;
        map.delete(key);
        out.push(item);
      }
    } else if (buffer) {
      out.push(...buffer.splice(0, max));
    }
    return out;
  }

  private async searchesFirst(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, QUERY_PRIORITY_MS);
      this.queryWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private failed(items: Item[], job: Job | null, err: Error): void {
    this.stats.failedBatches++;
    this.failures++;
    this.lastError = err.message;
    const delay = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (this.failures - 1));
    this.retryAt = Date.now() + delay;
    const now = Date.now();
    const back: Item[] = [];
    for (const item of items) {
      item.attempts = (item.attempts ?? 0) + 1;
      item.failedAt ??= this.stats.embedded;
      // Given up only when the model worked for other texts since this one first failed.
      if (item.attempts >= MAX_ATTEMPTS && this.stats.embedded > item.failedAt) {
        // Not flagged for a backfill: the next one the host starts (at start, after a night) tries it again.
        this.stats.gaveUp++;
        if (job) job.gaveUp++;
        this.log('warn', `embeddings: gave up on ${item.source} ${item.id} for now after ${item.attempts} failures (${err.message})`);
        continue;
      }
      back.push(item);
    }
    if (items.length > 1) this.single = true;
    if (job && job === this.job) job.buffer.unshift(...back);
    else {
      // Back in front of what came since, as long as the bound allows; the rest waits for the backfill.
      const rest = [...this.pending.entries()];
      this.pending.clear();
      for (const item of back) {
        if (this.pending.size >= this.maxPending) {
          this.missed = true;
          break;
        }
        this.pending.set(itemKey(item.source, item.id), item);
      }
      for (const [k, v] of rest) {
        if (this.pending.size >= this.maxPending) {
          this.missed = true;
          break;
        }
        if (!this.pending.has(k)) this.pending.set(k, v);
      }
    }
    this.log(
      'warn',
      `embeddings: a batch of ${items.length} failed (${err.message}); trying again in ${Math.round((this.retryAt - now) / 1000)} s`,
    );
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, Math.max(0, this.retryAt - Date.now()));
    // Never the reason the process stays up.
    this.retryTimer.unref?.();
  }

  /**
   * Reads the rows, skips those whose vector of this model is already of these words, embeds the
   * rest in one call, and writes the vectors; rows that must not have one (a retired memory, a hidden
   * block) lose theirs.
   */
  private async embedBatch(e: Embedder, items: Item[]): Promise<void> {
    this.stats.batches++;
    const texts: { source: EmbedSource; sourceId: number; text: string }[] = [];
    const drop: Record<EmbedSource, number[]> = { message: [], memory: [], diary: [] };

    const messageIds = items.filter((i) => i.source === 'message' && typeof i.id === 'string').map((i) => i.id as string);
    const messageSeqs = items.filter((i) => i.source === 'message' && typeof i.id === 'number').map((i) => i.id as number);
    if (messageIds.length || messageSeqs.length) {
      const rows = await this.db.query<{ seq: number; content: string; speaker: string | null; status: string; replaced: boolean }>(
        `SELECT seq::float8 AS seq, content, speaker, status, replaced_by IS NOT NULL AS replaced FROM messages
         WHERE id = ANY($1::text[]) OR seq = ANY($2::bigint[])`,
        [messageIds, messageSeqs],
      );
      for (const r of rows.rows) {
        // A reply still streaming is queued again when it finishes; an error has no words.
        if (r.status === 'streaming') continue;
        if (r.replaced || r.status === 'error' || !r.content.trim()) drop.message.push(Number(r.seq));
        else texts.push({ source: 'message', sourceId: Number(r.seq), text: messageText(r.content, r.speaker) });
      }
    }
    const memoryIds = items.filter((i) => i.source === 'memory').map((i) => Number(i.id));
    if (memoryIds.length) {
      const rows = await this.db.query<{ id: number; content: string; status: string }>(
        'SELECT id::float8 AS id, content, status FROM memories WHERE id = ANY($1::bigint[])',
        [memoryIds],
      );
      const seen = new Set<number>();
      for (const r of rows.rows) {
        seen.add(Number(r.id));
        // Only active memories are recalled or compared; undo or restore queues it again.
        if (r.status === 'active') texts.push({ source: 'memory', sourceId: Number(r.id), text: r.content });
        else drop.memory.push(Number(r.id));
      }
      for (const id of memoryIds) if (!seen.has(id)) drop.memory.push(id);
    }
    const diaryIds = items.filter((i) => i.source === 'diary').map((i) => Number(i.id));
    if (diaryIds.length) {
      const rows = await this.db.query<{ id: number; kind: string; title: string | null; body: string; hidden: boolean }>(
        'SELECT id::float8 AS id, kind, title, body, hidden_at IS NOT NULL AS hidden FROM diary_blocks WHERE id = ANY($1::bigint[])',
        [diaryIds],
      );
      for (const r of rows.rows) {
        if (r.hidden || !EMBEDDED_DIARY_KINDS.includes(r.kind)) drop.diary.push(Number(r.id));
        else texts.push({ source: 'diary', sourceId: Number(r.id), text: r.title ? `${r.title}\n${r.body}` : r.body });
      }
    }

    const hashed = texts.map((t) => ({ ...t, hash: contentHash(t.text) }));
    const current = new Set(
      hashed.length
        ? (
            await this.db.query<{ k: string }>(
              `SELECT e.source || ':' || e.source_id || ':' || e.content_hash AS k
               FROM embeddings e JOIN unnest($1::text[], $2::bigint[]) AS u(s, i) ON e.source = u.s AND e.source_id = u.i
               WHERE e.model = $3 AND e.dimensions = $4`,
              [hashed.map((t) => t.source), hashed.map((t) => t.sourceId), e.modelId, e.dimensions],
            )
          ).rows.map((r) => r.k)
        : [],
    );
    const todo: typeof hashed = [];
    const seenKeys = new Set<string>();
    for (const t of hashed) {
      const k = `${t.source}:${t.sourceId}:${t.hash}`;
      if (current.has(k) || seenKeys.has(k)) {
        this.stats.skipped++;
        continue;
      }
      seenKeys.add(k);
      todo.push(t);
    }

    // Long texts take the model as long as many short ones: split by characters too.
    const rows: VectorRow[] = [];
    for (let i = 0; i < todo.length; ) {
      const chunk: typeof todo = [];
      let chars = 0;
      while (i < todo.length && (chunk.length === 0 || chars + Math.min(todo[i]!.text.length, MAX_EMBED_CHARS) <= this.maxBatchChars)) {
        chars += Math.min(todo[i]!.text.length, MAX_EMBED_CHARS);
        chunk.push(todo[i++]!);
      }
      const vectors = await this.cancellable(e, chunk.map((t) => this.prefixes.passage + clip(t.text)));
      if (vectors.length !== chunk.length) throw new Error(`the model returned ${vectors.length} vectors for ${chunk.length} texts`);
      chunk.forEach((t, j) => rows.push({ source: t.source, sourceId: t.sourceId, hash: t.hash, vector: vectors[j]! }));
    }

    // A few rows per statement, with a turn of the event loop between: each row costs its HNSW
    // insert (7–10 ms at 384 dimensions in WASM), and a chat write waits behind the statement.
    for (let i = 0; i < rows.length; i += UPSERT_ROWS) {
      await upsertVectors(this.db, e.modelId, e.dimensions, rows.slice(i, i + UPSERT_ROWS));
      this.stats.embedded += Math.min(UPSERT_ROWS, rows.length - i);
      if (i + UPSERT_ROWS < rows.length) await tick();
    }
    for (const source of ['message', 'memory', 'diary'] as const) this.stats.deleted += await deleteVectors(this.db, source, drop[source]);
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

  // ---- the backfill ----

  private static readonly MISSING: Record<EmbedSource, string> = {
    message: `FROM messages m WHERE m.status IN ('complete', 'partial') AND m.replaced_by IS NULL AND btrim(m.content) <> ''
      AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'message' AND e.source_id = m.seq AND e.model = $1 AND e.dimensions = $2)`,
    // A memory whose words changed since its vector was made counts as missing.
    memory: `FROM memories m WHERE m.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'memory' AND e.source_id = m.id AND e.model = $1 AND e.dimensions = $2 AND e.content_hash = md5(m.content))`,
    diary: `FROM diary_blocks m WHERE m.kind IN (${EMBEDDED_DIARY_KINDS_SQL}) AND m.hidden_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'diary' AND e.source_id = m.id AND e.model = $1 AND e.dimensions = $2)`,
  };

  private async count(job: Job): Promise<void> {
    const q = EmbeddingQueue.MISSING;
    const row = (
      await this.db.query<{ n: number }>(
        `SELECT (SELECT count(*) ${q.message}) + (SELECT count(*) ${q.memory}) + (SELECT count(*) ${q.diary}) AS n`,
        [job.model, job.dimensions],
      )
    ).rows[0];
    job.total = Number(row?.n ?? 0);
    job.counted = true;
    this.progress(job, false, true);
  }

  /** The next rows lacking a vector, in id order (messages by seq), into the job's buffer. */
  private async scan(job: Job): Promise<void> {
    while (job.sources.length && !job.buffer.length && job === this.job) {
      const source = job.sources[0]!;
      const key = source === 'message' ? 'seq' : 'id';
      const rows = await this.db.query<{ k: number }>(
        `SELECT m.${key}::float8 AS k ${EmbeddingQueue.MISSING[source]} AND m.${key} > $3 ORDER BY m.${key} LIMIT ${SCAN_BATCH}`,
        [job.model, job.dimensions, job.cursor],
      );
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
   * The walk is over. If nothing was given up, every row has a vector of this model: the other
   * models' vectors go, and so do vectors of rows that no longer qualify (retired memories, hidden
   * blocks, replaced messages) which no queue item reported.
   */
  private async finish(job: Job): Promise<void> {
    const complete = job.gaveUp === 0;
    if (complete) {
      await this.exclusive(async () => {
        if (job !== this.job) return;
        const dropped = await dropOtherModels(this.db, job.model);
        if (dropped) this.log('info', `embeddings: ${job.model} covers everything; dropped ${dropped} vectors of earlier models`);
        const swept = await this.db.query(
          `DELETE FROM embeddings e WHERE
             (e.source = 'memory' AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.source_id AND m.status = 'active'))
          OR (e.source = 'diary' AND NOT EXISTS (SELECT 1 FROM diary_blocks d WHERE d.id = e.source_id AND d.hidden_at IS NULL AND d.kind IN (${EMBEDDED_DIARY_KINDS_SQL})))
          OR (e.source = 'message' AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.seq = e.source_id AND m.replaced_by IS NULL))`,
        );
        this.stats.deleted += swept.affectedRows ?? 0;
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
    const last = finished || job !== this.job;
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
}

class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** A session turn as recall shows it: the speaker's name is part of what it is about. */
function messageText(content: string, speaker: string | null): string {
  return speaker ? `${speaker}: ${content}` : content;
}

/** A row's place in the pending map: messages come by id (text) or seq (number), which must not collide. */
function itemKey(source: EmbedSource, id: string | number): string {
  return `${source}:${typeof id === 'number' ? `#${id}` : id}`;
}
