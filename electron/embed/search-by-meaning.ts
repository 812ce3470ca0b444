// Search by meaning in the host: follows the `models.embedding` and `memory.vectorWeight` settings,
// loads the chosen on-device model (electron/embed/embedder.ts), hands it to the embedding queue
// (electron/embed/queue.ts), and tells the windows where it stands (`embeddings.status`).
//
// Nothing here can fail a chat turn or the host's start: a model that will not load, or a build whose
// database cannot hold vectors, leaves memory search on words, with the reason in the status line.
import type { EmbeddingsStatus, MemoryChange, Message, Settings } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { openEmbedder } from './embedder.js';
import { usableVectorWeight, type VectorSlot } from './active.js';
import { pgvectorSupport } from '../db/pgvector.js';
import { createEmbeddingService, type EmbeddingProgress, type EmbeddingService } from './queue.js';
import type { Embedder } from './types.js';
import type { HostEvents } from '../events/events.js';
import type { Log } from '../../shared/log.js';

export interface SearchByMeaningDeps {
  db: Database;
  /** Set to the model once it is ready; recall and the memory store read it from here. */
  vectors: VectorSlot;
  /** Where installed models live (<dataDir>/models). */
  modelsDir: string;
  events: HostEvents;
  log: Log;
}

export class SearchByMeaning {
  private readonly service: EmbeddingService;
  private embedder: Embedder | null = null;
  /** The model the settings name (null: none), whether or not it loaded. */
  private wanted: string | null = null;
  /** Why the wanted model is not in use (it would not load, or vectors cannot be stored here). */
  private problem: string | null = null;
  private loading = false;
  private progress: EmbeddingProgress | null = null;
  /** Model switches run one after another, in the order the settings changed. */
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private weight = 0;

  constructor(private readonly deps: SearchByMeaningDeps) {
    this.service = createEmbeddingService({
      db: deps.db,
      vectors: deps.vectors,
      log: deps.log,
      onProgress: (p) => {
        this.progress = p;
        this.emit();
      },
    });
  }

  /** Conversations' onStored. */
  messageStored(message: Pick<Message, 'id'>): void {
    this.service.messageStored(message);
  }

  /** MemoryStore's onChange. */
  memoryChanged(change: MemoryChange): void {
    this.service.memoryChanged(change);
  }

  /** After a sleep cycle: its diary blocks (and anything the queue turned away) get their vectors. */
  catchUp(): void {
    if (this.embedder) void this.service.backfill();
  }

  setVectorWeight(weight: number | undefined): void {
    const next = usableVectorWeight(weight);
    this.service.setVectorWeight(weight);
    if (next !== this.weight) {
      this.weight = next;
      this.emit();
    }
  }

  /**
   * Follows the settings: loads `modelId` (null: none) unless it is the one in use. A model that
   * failed to load is tried again only with `retry` (its files were downloaded again), not on every
   * unrelated settings change. Resolves once switched.
   */
  use(modelId: string | null, options: { retry?: boolean } = {}): Promise<void> {
    this.chain = this.chain
      .then(() => this.switchTo(modelId, options.retry ?? false))
      .catch((err: Error) => this.deps.log('error', `embeddings: ${err.message}`));
    return this.chain;
  }

  /** The model the settings name, loaded or not. */
  get chosen(): string | null {
    return this.wanted;
  }

  /**
   * Follows the host from now on: the settings as they are (`started`), every later settings change
   * (whoever made it), each night's diary blocks once it is over, and the chosen model downloaded again
   * after it would not load. Loading runs in the background: searches use words until it is ready.
   */
  start(started: Settings): void {
    this.deps.events.on((event, payload) => {
      if (event === 'settings.changed') {
        this.setVectorWeight(payload.memory.vectorWeight);
        void this.use(payload.models.embedding);
      }
      if (event === 'sleep.finished') this.catchUp();
      if (event === 'models.changed' && payload.models.some((m) => m.id === this.chosen && m.state === 'installed') && this.status().state === 'unavailable') {
        void this.use(this.chosen, { retry: true });
      }
    });
    this.setVectorWeight(started.memory.vectorWeight);
    void this.use(started.models.embedding);
  }

  private async switchTo(modelId: string | null, retry: boolean): Promise<void> {
    if (this.closed) return;
    if (modelId === this.wanted && (this.embedder || modelId === null || (this.problem !== null && !retry))) return;
    this.wanted = modelId;
    this.problem = null;
    this.progress = null;
    const previous = this.embedder;
    let next: Embedder | null = null;
    if (modelId) {
      const support = pgvectorSupport();
      if (!support.usable) {
        this.problem = `this build cannot store vectors (${support.reason})`;
      } else {
        this.loading = true;
        this.emit();
        try {
          next = await openEmbedder({ modelsDir: this.deps.modelsDir, modelId });
        } catch (err) {
          this.problem = (err as Error).message;
          this.deps.log('warn', `embeddings: could not load ${modelId}: ${this.problem}`);
        } finally {
          this.loading = false;
        }
      }
    }
    if (this.closed) {
      await next?.close().catch(() => {});
      return;
    }
    // The queue lets go of the old model (cancelling its batch in flight) before it is closed.
    await this.service.setEmbedder(next);
    this.embedder = next;
    if (next && this.service.status().model !== next.modelId) {
      this.problem = this.service.status().lastError ?? 'the database could not take this model’s vectors';
      this.embedder = null;
      await next.close().catch(() => {});
    }
    if (previous && previous !== next) await previous.close().catch(() => {});
    this.emit();
  }

  status(): EmbeddingsStatus {
    const s = this.service.status();
    const base = { model: this.wanted, done: 0, total: 0, queued: 0, searching: false, error: null };
    if (!this.wanted) return { ...base, state: 'off' };
    // Loading the model is the first part of making vectors: the line says "getting ready".
    if (this.loading) return { ...base, state: 'embedding' };
    if (this.problem || !this.embedder) return { ...base, state: 'unavailable', error: this.problem };
    const queued = s.pending;
    const searching = this.weight > 0;
    const error = s.failures ? s.lastError : null;
    const p = s.backfill ?? (this.progress && !this.progress.finished ? this.progress : null);
    // Between backfills the queue keeping up with new writes does not make the model less ready.
    if (s.complete || !p) return { ...base, state: 'ready', queued, searching, error };
    return { ...base, state: 'embedding', done: p.done, total: p.total, queued, searching, error };
  }

  /** Resolves when the current switch is done and nothing is waiting to be embedded (tests, benchmarks). */
  async idle(): Promise<void> {
    await this.chain;
    await this.service.idle();
  }

  private emit(): void {
    if (!this.closed) this.deps.events.emit('embeddings.status', this.status());
  }

  /** Before the database closes: stops the queue (its batch finishes or is cancelled), then frees the model. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain;
    await this.service.close();
    await this.embedder?.close().catch(() => {});
    this.embedder = null;
  }
}
