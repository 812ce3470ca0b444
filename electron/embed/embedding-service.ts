// What the host and the benchmarks see of the embedding queue (queue.ts): the service, its options,
// its status and its backfill progress.
import type { MemoryChange } from '../../shared/api.js';
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import type { VectorSlot } from './active.js';
import type { Embedder } from './types.js';
import type { EmbedSource } from './vectors.js';

export interface EmbeddingProgress {
  model: string;
  /** Rows handled by this backfill (embedded, or found to need nothing). */
  done: number;
  /** Rows lacking a vector of the model when the backfill began. */
  total: number;
  /** Every row has a vector of the model (false while running, or if it stopped or gave up rows). */
  finished: boolean;
}

/** Counts for tests, logs and the status. */
export interface QueueStats {
  embedded: number;
  skipped: number;
  deleted: number;
  batches: number;
  failedBatches: number;
  turnedAway: number;
  gaveUp: number;
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
  stats: QueueStats;
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
  /** The model answers again (a model server came back): what waits for its retry goes now, not at the retry time. */
  retryNow(): void;
  /** Resolves when nothing is queued and no backfill is running (or the queue waits to retry). */
  idle(): Promise<void>;
  /** Stops taking work and waits for the batch in flight (cancelling it after 5 s). Does not close the embedder (its owner does). */
  close(): Promise<void>;
}
