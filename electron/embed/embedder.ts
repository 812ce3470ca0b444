// The on-device embedding model: transformers.js running in a worker thread (embed-worker.ts).
// Calls are queued and run one at a time, each cut into batches of at most `batchSize` texts; a
// worker that dies fails only the call it was working on, and the next call starts a fresh one.
// The worker is only ever ended while idle, never in the middle of a load or a batch (see WorkerThread).
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerInit } from './embed-worker.js';
import { EmbedError, type Embedder } from './types.js';
import { WorkerScriptMissing, weightsDtype, workerScript, type WorkerScript } from '../models/worker-script.js';

export interface OpenEmbedderOptions {
  /** The folder holding `<model id>/config.json`, `tokenizer.json`, `onnx/*.onnx`. */
  modelsDir: string;
  /** `name` or `org/name`, e.g. `Xenova/multilingual-e5-small`. */
  modelId: string;
  /** Most texts sent to the worker in one message (default 32): bounds memory and how long a cancelled call keeps the worker busy. */
  batchSize?: number;
  /** Called with each worker thread as it starts; lets tests watch its messages and its end. */
  onWorkerStart?: (worker: Worker) => void;
  /** A module the worker imports instead of @huggingface/transformers (tests' stand-in engine). */
  engine?: string;
}

const DEFAULT_BATCH_SIZE = 32;

/** Hugging Face ids are `name` or `org/name`; anything else (`..`, absolute paths) is not a model. */
const MODEL_ID = /^[\w.-]+(\/[\w.-]+)?$/;

/** Checks the model's files, starts its worker and embeds a probe text; rejects with an EmbedError. */
export async function openEmbedder(options: OpenEmbedderOptions): Promise<Embedder> {
  const { modelsDir, modelId } = options;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  const dtype = await installedWeights(modelsDir, modelId);
  const init: WorkerInit = { modelsDir: path.resolve(modelsDir), modelId, dtype, engine: options.engine };
  const embedder = new WorkerEmbedder(init, batchSize, options.onWorkerStart);
  await embedder.start();
  return embedder;
}

/** The dtype of the weights to load, or model_not_installed naming what is missing. */
async function installedWeights(modelsDir: string, modelId: string): Promise<string> {
  if (!MODEL_ID.test(modelId) || modelId.split('/').some((part) => part === '.' || part === '..')) {
    throw new EmbedError('model_not_installed', `"${modelId}" is not a model name (expected "name" or "org/name").`);
  }
  const dir = path.join(modelsDir, modelId);
  const missing = (file: string) => new EmbedError('model_not_installed', `The embedding model "${modelId}" is not installed: ${file} is missing from ${dir}.`);
  for (const file of ['config.json', 'tokenizer.json']) {
    if (!(await exists(path.join(dir, file)))) throw missing(file);
  }
  const found = weightsDtype(await readdir(path.join(dir, 'onnx')).catch(() => [] as string[]));
  if (!found) throw missing('onnx/model.onnx');
  return found.dtype;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The embedding worker (see worker-script.ts for how it is found from source and when built). */
function embedWorkerScript(): WorkerScript {
  try {
    return workerScript(import.meta.url, 'embed-worker', 'embedding');
  } catch (error) {
    if (error instanceof WorkerScriptMissing) throw new EmbedError('runtime_missing', error.message);
    throw error;
  }
}

function cancelled(message = 'The embedding was cancelled.'): EmbedError {
  return new EmbedError('cancelled', message);
}

const CLOSED = 'The embedding model was closed.';

/**
 * One worker thread: its start-up, and the calls it is answering. It is only ever ended while idle:
 * Worker.terminate() during an onnxruntime-node call (loading the model or embedding a batch) can
 * abort the whole process ("terminate called after throwing an instance of 'Napi::Error'"), so
 * closing waits for the load to settle and the batch in the worker to be answered, then ends it.
 */
class WorkerThread {
  readonly ready: Promise<number>;
  /** Set once `ready` resolved; lets a call go straight to postMessage with no await in between. */
  isReady = false;
  dead = false;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (vectors: Float32Array[]) => void; reject: (error: EmbedError) => void }>();
  /** Waiting for `pending` to empty (or the thread to end). */
  private idleWaiters: (() => void)[] = [];
  private nextId = 1;
  private lastError = '';
  /** Why calls fail if the thread ends now: a crash unless we ended it. */
  private endReason: EmbedError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly init: WorkerInit,
    onWorkerStart?: (worker: Worker) => void,
  ) {
    const { script, eval: isEval } = embedWorkerScript();
    this.worker = new Worker(script, { eval: isEval, workerData: init });
    onWorkerStart?.(this.worker);
    let settle!: { resolve: (dimensions: number) => void; reject: (error: EmbedError) => void };
    this.ready = new Promise<number>((resolve, reject) => (settle = { resolve, reject }));
    this.ready.catch(() => {}); // always awaited by the starter; never an unhandled rejection
    this.worker.on('message', (message: FromWorker) => {
      switch (message.type) {
        case 'ready':
          this.isReady = true;
          this.worker.unref();
          settle.resolve(message.dimensions);
          break;
        case 'failed': {
          // The failed load is cached in this thread; only a new one can try again. The load is
          // over, so the thread is idle and ends at once.
          const error = this.loadError(message.code, message.message);
          settle.reject(error);
          void this.close(error);
          break;
        }
        case 'result': {
          const call = this.settle(message.id);
          const { vectors, dimensions } = message;
          const count = dimensions > 0 ? vectors.length / dimensions : 0;
          call?.resolve(Array.from({ length: count }, (_, i) => vectors.slice(i * dimensions, (i + 1) * dimensions)));
          break;
        }
        case 'error': {
          const call = this.settle(message.id);
          call?.reject(new EmbedError('model_broken', `The embedding model "${init.modelId}" failed while embedding: ${message.message}`));
          break;
        }
      }
    });
    this.worker.on('error', (error) => {
      this.lastError = error.message.split('\n')[0] ?? '';
    });
    this.worker.on('exit', (code) => {
      this.dead = true;
      const reason =
        this.endReason ??
        new EmbedError(
          'worker_crashed',
          `The embedding worker for "${init.modelId}" stopped (${this.lastError || `exit code ${code}`}); the next call starts a new one.`,
        );
      settle.reject(reason);
      for (const call of this.pending.values()) call.reject(reason);
      this.pending.clear();
      this.wakeIdle();
    });
  }

  /** Neither closing nor ended: it takes calls. */
  get usable(): boolean {
    return !this.dead && !this.closing;
  }

  private loadError(code: 'runtime_missing' | 'model_broken', reason: string): EmbedError {
    const detail = reason.replace(/\.$/, '');
    return code === 'runtime_missing'
      ? new EmbedError('runtime_missing', `The on-device model runtime could not be loaded in this build of Anima: ${detail}`)
      : new EmbedError(
          'model_broken',
          `The embedding model "${this.init.modelId}" is installed but could not be loaded (${detail}). Its files may be damaged: download it again.`,
        );
  }

  /** Posts synchronously: a caller that just got the thread knows its texts are on their way. */
  run(texts: string[]): Promise<Float32Array[]> {
    if (!this.usable) return Promise.reject(this.endReason ?? new EmbedError('worker_crashed', 'The embedding worker has stopped.'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      const message: ToWorker = { type: 'embed', id, texts };
      this.worker.postMessage(message);
    });
  }

  /** An idle worker does not keep the process alive (an embedder someone forgot to close must not hang a CLI). */
  private settle(id: number) {
    const call = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) {
      if (!this.dead) this.worker.unref();
      this.wakeIdle();
    }
    return call;
  }

  private wakeIdle(): void {
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves once no batch is in the worker (at once when none is, or the thread has ended). */
  private idle(): Promise<void> {
    if (this.pending.size === 0 || this.dead) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Takes no more calls, and ends the thread once it is idle: after its load settles and the batch
   * it is embedding is answered (that answer still reaches its caller, who may have stopped caring).
   */
  close(reason: EmbedError): Promise<void> {
    this.endReason ??= reason;
    this.closing ??= (async () => {
      await this.ready.catch(() => {});
      await this.idle();
      if (!this.dead) await this.worker.terminate();
    })();
    return this.closing;
  }
}

interface Job {
  texts: string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
  settled: boolean;
}

class WorkerEmbedder implements Embedder {
  readonly modelId: string;
  private vectorSize = 0;
  private thread: WorkerThread | undefined;
  private readonly queue: Job[] = [];
  /** The call being worked on, and its run (which ends at a batch boundary once the call is settled). */
  private current: { job: Job; run: Promise<void> } | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private init: WorkerInit,
    private readonly batchSize: number,
    private readonly onWorkerStart?: (worker: Worker) => void,
  ) {
    this.modelId = init.modelId;
  }

  get dimensions(): number {
    return this.vectorSize;
  }

  /** Starts the first worker and learns the vector size from its probe. */
  async start(): Promise<void> {
    this.vectorSize = await this.startThread().ready;
  }

  private startThread(): WorkerThread {
    const thread = new WorkerThread(this.init, this.onWorkerStart);
    this.thread = thread;
    return thread;
  }

  /** The running thread, or a new one once it is ready (a replacement must give the same vector size). */
  private async freshThread(): Promise<WorkerThread> {
    let thread = this.thread;
    if (!thread || !thread.usable) {
      // The files may have gone since the last worker started: say "not installed", not "broken".
      const dtype = await installedWeights(this.init.modelsDir, this.modelId);
      if (this.closed) throw cancelled(CLOSED); // no new worker once close() has begun
      this.init = { ...this.init, dtype };
      thread = this.startThread();
    }
    const dimensions = await thread.ready;
    if (dimensions !== this.vectorSize) {
      await thread.close(cancelled());
      throw new EmbedError(
        'model_broken',
        `The embedding model "${this.modelId}" changed on disk: its vectors now have ${dimensions} numbers instead of ${this.dimensions}. Reopen it.`,
      );
    }
    return thread;
  }

  embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const { signal } = options;
    if (this.closed) return Promise.reject(cancelled(CLOSED));
    if (signal?.aborted) return Promise.reject(cancelled());
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = () => {
        const queued = this.queue.indexOf(job);
        if (queued >= 0) this.queue.splice(queued, 1);
        // A batch already in the worker finishes there and is thrown away; the call's next batch is not sent.
        settle(() => reject(cancelled()));
      };
      const settle = (finish: () => void) => {
        if (job.settled) return;
        job.settled = true;
        signal?.removeEventListener('abort', onAbort);
        finish();
      };
      const job: Job = {
        texts: [...texts],
        resolve: (vectors) => settle(() => resolve(vectors)),
        reject: (error) => settle(() => reject(error)),
        settled: false,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  private pump(): void {
    if (this.current) return;
    const job = this.queue.shift();
    if (!job) return;
    const current = { job, run: Promise.resolve() };
    this.current = current;
    current.run = this.runJob(job)
      .catch((error: unknown) => job.reject(error))
      .finally(() => {
        this.current = undefined;
        this.pump();
      });
  }

  private async runJob(job: Job): Promise<void> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < job.texts.length; start += this.batchSize) {
      // The boundary where a cancelled or closed call stops: its batch in the worker is done.
      if (job.settled) return;
      if (this.closed) throw cancelled(CLOSED);
      // No await when the thread is up, so the first batch is posted in the embed() call itself.
      const thread = this.thread?.isReady && this.thread.usable ? this.thread : await this.freshThread();
      if (job.settled) return;
      vectors.push(...(await thread.run(job.texts.slice(start, start + this.batchSize))));
    }
    job.resolve(vectors);
  }

  /**
   * Takes no more calls and rejects the queued ones; the running call is rejected at once and stops
   * at its next batch boundary. Resolves once the worker finished what it was doing and has ended.
   */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      for (const job of this.queue.splice(0)) job.reject(cancelled('The embedding model was closed before this call started.'));
      const current = this.current;
      if (current) {
        current.job.reject(cancelled('The embedding model was closed while this call was running.'));
        await current.run;
      }
      await this.thread?.close(cancelled(CLOSED));
    })();
    return this.closing;
  }
}
