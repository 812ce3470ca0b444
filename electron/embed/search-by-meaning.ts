// Search by meaning in the host: follows the `models.embedding`, `models.serverEmbedding` and
// `memory.vectorWeight` settings, loads the chosen on-device model (electron/embed/embedder.ts) or
// opens the chosen server's embedding model (electron/embed/server-embedder.ts), hands it to the
// embedding queue (electron/embed/queue.ts), and tells the windows where it stands
// (`embeddings.status`).
//
// Nothing here can fail a chat turn or the host's start: a model that will not load, or a build whose
// database cannot hold vectors, leaves memory search on words, with the reason in the status line. A
// model server that stops answering pauses search by meaning (words meanwhile, the queue keeps what
// waits); it is asked again now and then, and once it answers the queue goes on at once.
import { ApiError, type EmbeddingsStatus, type MemoryChange, type Message, type Settings } from '../../shared/api.js';
import type { ModelSettings, ServerEmbeddingChoice } from '../../shared/api/settings.js';
import type { Database } from '../db/open.js';
import { openEmbedder } from './embedder.js';
import { usableVectorWeight, type VectorSlot } from './active.js';
import { vectorSupport } from '../db/pgvector.js';
import { createEmbeddingService, type EmbeddingProgress, type EmbeddingService } from './queue.js';
import { canEmbed, openServerEmbedder, ServerEmbedder, type ServerConnection } from './server-embedder.js';
import { EmbedError, type Embedder } from './types.js';
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
  /** A saved model connection with its key (rejects when there is no such connection): for a server's embedding model. */
  connection?: (id: string) => Promise<ServerConnection>;
  /** Saves the server choice (the settings store's update). */
  updateSettings?: (patch: { models: { serverEmbedding: ServerEmbeddingChoice } }) => Promise<Settings>;
  /** The fetch requests to model servers use (tests point it elsewhere). */
  fetch?: typeof fetch;
  /** First wait before asking a server that stopped answering again (default 2 s, doubling to `probeMaxMs`, 30 s). */
  probeMs?: number;
  probeMaxMs?: number;
}

/** What memory search embeds with: an installed on-device model, or a connection's embedding model. */
export type EmbedChoice = { source: 'device'; id: string } | ({ source: 'server' } & ServerEmbeddingChoice);

/** The choice the settings make (the server's model when set, else the on-device one, else none). */
export function choiceOf(models: ModelSettings): EmbedChoice | null {
  if (models.serverEmbedding) return { source: 'server', ...models.serverEmbedding };
  return models.embedding ? { source: 'device', id: models.embedding } : null;
}

function sameChoice(a: EmbedChoice | null, b: EmbedChoice | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const PROBE_MS = 2000;
const PROBE_MAX_MS = 30_000;

export class SearchByMeaning {
  private readonly service: EmbeddingService;
  private embedder: Embedder | null = null;
  /** The model the settings name (null: none), whether or not it loaded. */
  private wanted: EmbedChoice | null = null;
  /** The model server is not answering (why), or null. Search is by words meanwhile. */
  private paused: string | null = null;
  /** The chosen server's connection name, for the status line. */
  private connectionName: string | undefined;
  /** The server's embedder of the current choice (from its opening on, before the queue has it). */
  private server: ServerEmbedder | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeDelay = 0;
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
   * Follows the settings: loads the chosen model (an on-device id, a server's model, or null: none)
   * unless it is the one in use. A model that failed to load is tried again only with `retry` (its
   * files were downloaded again, the server answers again), not on every unrelated settings change.
   * Resolves once switched.
   */
  use(choice: EmbedChoice | string | null, options: { retry?: boolean; reopen?: boolean } = {}): Promise<void> {
    const wanted: EmbedChoice | null = typeof choice === 'string' ? { source: 'device', id: choice } : choice;
    this.chain = this.chain
      .then(() => this.switchTo(wanted, options.retry ?? false, options.reopen ?? false))
      .catch((err: Error) => this.deps.log('error', `embeddings: ${err.message}`));
    return this.chain;
  }

  /** The on-device model the settings name, loaded or not (null for none or a server's model). */
  get chosen(): string | null {
    return this.wanted?.source === 'device' ? this.wanted.id : null;
  }

  /**
   * Memory search through a connection's embedding model (models.useServerForEmbeddings): the
   * connection must be one that can embed and the server must answer with a vector for the model,
   * or nothing changes and the error says why.
   */
  async chooseServer(choice: ServerEmbeddingChoice): Promise<Settings> {
    const { connection: resolve, updateSettings } = this.deps;
    if (!resolve || !updateSettings) throw new ApiError('internal', 'This host cannot use a model server for memory search.');
    const connection = await resolve(choice.providerId).catch(() => {
      throw new ApiError('invalid_input', 'That model connection does not exist.', 'providerId');
    });
    if (!canEmbed(connection.kind)) {
      throw new ApiError('invalid_input', `“${connection.name}” cannot make embeddings: choose an OpenAI-compatible or Ollama connection.`, 'providerId');
    }
    try {
      const trial = await openServerEmbedder({
        connection: () => resolve(choice.providerId),
        model: choice.model,
        fetch: this.deps.fetch,
        firstTimeoutMs: 60_000,
      });
      await trial.close();
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof EmbedError && err.code === 'server_unreachable') throw new ApiError('provider_unreachable', message);
      throw new ApiError('invalid_input', message, 'model');
    }
    return updateSettings({ models: { serverEmbedding: { providerId: choice.providerId, model: choice.model.trim() } } });
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
        void this.use(choiceOf(payload.models));
      }
      if (event === 'sleep.finished') this.catchUp();
      if (event === 'models.changed' && payload.models.some((m) => m.id === this.chosen && m.state === 'installed') && this.status().state === 'unavailable') {
        void this.use(this.chosen, { retry: true });
      }
    });
    this.setVectorWeight(started.memory.vectorWeight);
    void this.use(choiceOf(started.models));
  }

  private async switchTo(choice: EmbedChoice | null, retry: boolean, reopen = false): Promise<void> {
    if (this.closed) return;
    const same = sameChoice(choice, this.wanted);
    if (same && !reopen && (this.embedder || choice === null || ((this.problem !== null || this.paused !== null) && !retry))) return;
    this.wanted = choice;
    this.problem = null;
    this.paused = null;
    this.progress = null;
    this.server = null;
    // Asking again for the same server keeps its growing wait; another choice starts afresh.
    this.stopProbing(!same);
    const previous = this.embedder;
    let next: Embedder | null = null;
    if (choice) {
      const support = vectorSupport(this.deps.db);
      if (!support.usable) {
        this.problem = support.problem ?? `this build cannot store vectors (${support.reason})`;
      } else {
        this.loading = true;
        this.emit();
        try {
          next = choice.source === 'device' ? await openEmbedder({ modelsDir: this.deps.modelsDir, modelId: choice.id }) : await this.openServer(choice);
        } catch (err) {
          const message = (err as Error).message;
          if (err instanceof EmbedError && err.code === 'server_unreachable') {
            // Not the choice's fault: asked again later, words meanwhile.
            this.paused = message;
            this.probeSoon();
          } else {
            this.problem = message;
          }
          this.deps.log('warn', `embeddings: could not ${choice.source === 'device' ? 'load' : 'reach'} ${describe(choice)}: ${message}`);
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
      this.server = null;
      await next.close().catch(() => {});
    }
    if (previous && previous !== next) await previous.close().catch(() => {});
    this.emit();
  }

  private async openServer(choice: ServerEmbeddingChoice): Promise<Embedder> {
    const resolve = this.deps.connection;
    if (!resolve) throw new EmbedError('server_refused', 'This host has no model connections.');
    const connection = () => resolve(choice.providerId);
    this.connectionName = (await connection().catch(() => null))?.name;
    let opened: ServerEmbedder | null = null;
    opened = this.server = await openServerEmbedder({
      connection,
      model: choice.model,
      fetch: this.deps.fetch,
      onHealth: (up, reason) => {
        // From the queue's first batch on, before switchTo has put it in place.
        if (this.closed || this.server !== opened) return;
        this.paused = up ? null : reason;
        if (up) {
          this.stopProbing(true);
          this.deps.log('info', `embeddings: the model server answers again; going on with ${opened?.modelId}`);
          this.service.retryNow();
        } else {
          this.deps.log('warn', `embeddings: search by meaning paused: ${reason}`);
          this.probeSoon();
        }
        this.emit();
      },
      onReplaced: (reason) => {
        if (this.closed || this.server !== opened) return;
        // Opened again, its new length read: the queue rebuilds its vectors as after any model switch.
        this.deps.log('warn', `embeddings: ${reason} Opening it again.`);
        void this.use(this.wanted, { reopen: true });
      },
      onGone: (reason) => {
        if (this.closed || this.server !== opened) return;
        // A deleted or changed connection: no retry helps; the status says so until another choice.
        this.problem = reason;
        this.paused = null;
        this.stopProbing(true);
        this.deps.log('warn', `embeddings: ${reason}`);
        this.emit();
      },
    });
    return opened;
  }

  /** Asks the server again after a while (2 s, doubling to 30 s) while it does not answer. */
  private probeSoon(): void {
    if (this.probeTimer || this.closed) return;
    const base = this.deps.probeMs ?? PROBE_MS;
    this.probeDelay = this.probeDelay ? Math.min(this.deps.probeMaxMs ?? PROBE_MAX_MS, this.probeDelay * 2) : base;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      void this.probe();
    }, this.probeDelay);
    this.probeTimer.unref?.();
  }

  private async probe(): Promise<void> {
    if (this.closed || !this.paused) return;
    const e = this.server;
    if (e) {
      // Success reaches onHealth, which resumes the queue; failure asks again later.
      if (!(await e.probe()) && this.server === e && this.paused) this.probeSoon();
      return;
    }
    // It never answered since it was chosen: open it again (the vector length comes from that answer).
    await this.use(this.wanted, { retry: true });
  }

  private stopProbing(resetDelay: boolean): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    if (resetDelay) this.probeDelay = 0;
  }

  status(): EmbeddingsStatus {
    const s = this.service.status();
    const w = this.wanted;
    if (!w) return { model: null, done: 0, total: 0, queued: 0, searching: false, error: null, state: 'off' };
    const base = {
      model: w.source === 'device' ? w.id : w.model,
      done: 0,
      total: 0,
      queued: 0,
      searching: false,
      error: null,
      source: w.source,
      ...(w.source === 'server' && this.connectionName ? { connection: this.connectionName } : {}),
    };
    // Loading the model is the first part of making vectors: the line says "getting ready".
    if (this.loading) return { ...base, state: 'embedding' };
    if (this.paused) return { ...base, state: 'paused', queued: s.pending, error: this.paused };
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
    this.stopProbing(true);
    await this.chain;
    await this.service.close();
    await this.embedder?.close().catch(() => {});
    this.embedder = null;
  }
}

function describe(choice: EmbedChoice): string {
  return choice.source === 'device' ? choice.id : `${choice.model} on the model server`;
}
