// A model that runs inside the app with transformers.js: no server, no network. Model files live
// under `modelsDir/<model id>/` (config.json, tokenizer files, onnx/*.onnx), put there by the
// model manager. Tool calling is not offered: small local models do it too unreliably to trust
// with memory, so tools in a request are ignored and the model simply answers in text.
//
// The model runs in a worker thread (local-worker.ts): generation would otherwise stall the host's
// event loop, and a failed load poisons the model id for the thread that tried. One thread for the
// whole process — providers are created per request, the model is loaded once — holding one model:
// asking for another replaces it, so memory holds a single model. Replies run one at a time.
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { catalogModels } from '../models/catalog.js';
import { WorkerScriptMissing, weightsDtype, workerScript } from '../models/worker-script.js';
import { cancelledError } from './errors.js';
import type { FromWorker, LocalWorkerInit, TemplateMessage, ToWorker } from './local-worker.js';
import { ProviderError, type ChatProvider, type ChatTurn, type ProviderOptions, type StreamEvent, type StreamRequest } from './types.js';

export interface LocalProviderHooks {
  /** A module the worker imports instead of @huggingface/transformers (tests' stand-in engine). */
  engine?: string;
  /** Called with each worker thread as it starts; lets tests end one mid-reply. */
  onWorkerStart?: (worker: Worker) => void;
}

const DEFAULT_MAX_NEW_TOKENS = 1024;
/**
 * With no maxTokens the reply gets what the prompt leaves of the context, up to the default; below
 * this much room a reply is hardly worth starting, and the request is refused as too long instead.
 */
const MIN_NEW_TOKENS = 64;
const DEFAULT_TEMPERATURE = 0.7;

export const LOADING_MODEL_TEXT = 'Loading the local model…';

export function createLocalProvider(options: ProviderOptions, hooks: LocalProviderHooks = {}): ChatProvider {
  const modelsDir = options.modelsDir;
  return {
    kind: 'local',
    async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
      const { signal } = request;
      if (signal?.aborted) throw cancelledError();
      const init = await workerInit(modelsDir, request.model, hooks.engine);
      const release = await runtime.turn(signal);
      let handedOver = false;
      try {
        const thread = runtime.threadFor(init, hooks.onWorkerStart);
        if (!thread.isReady) yield { type: 'status', status: 'loading_model', text: LOADING_MODEL_TEXT };
        await untilAborted(thread.ready, signal);
        const generation = thread.generate({
          messages: toTemplateMessages(request.messages),
          maxNewTokens: request.maxTokens,
          temperature: request.temperature ?? DEFAULT_TEMPERATURE,
        });
        // The next reply waits for the thread to be free, which may be after this consumer has left.
        handedOver = true;
        void generation.finished.then(release);
        yield* generation.events(signal);
      } finally {
        if (!handedOver) release();
      }
    },
    async listModels(): Promise<string[]> {
      return modelsDir ? installedModels(modelsDir) : [];
    },
  };
}

/** Ends the local model's thread, freeing its memory (before its files are deleted, or at shutdown). */
export async function unloadLocalModel(): Promise<void> {
  await runtime.unload();
}

async function workerInit(modelsDir: string | undefined, model: string, engine: string | undefined): Promise<LocalWorkerInit> {
  if (!modelsDir || !(await isInstalled(modelsDir, model))) throw notDownloaded(model);
  const weights = weightsDtype(await readdir(path.join(modelsDir, model, 'onnx')).catch(() => []));
  const listed = catalogModels({ includeTestModels: true }).find((entry) => entry.id === model);
  return {
    modelsDir: path.resolve(modelsDir),
    modelId: model,
    dtype: weights?.dtype,
    contextLength: listed?.task === 'chat' ? listed.contextLength : undefined,
    engine,
  };
}

/** Chat templates know system, user and assistant; a tool result is told to the model as user text. */
function toTemplateMessages(turns: ChatTurn[]): TemplateMessage[] {
  return turns.map((turn) =>
    turn.role === 'tool' ? { role: 'user', content: `Result of ${turn.name}: ${turn.content}` } : { role: turn.role, content: turn.content },
  );
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(cancelledError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The process's one model thread, and the turn replies take on it. */
class LocalRuntime {
  private thread: ModelThread | undefined;
  private tail: Promise<void> = Promise.resolve();

  /** Waits until no other reply is running; the returned function gives the turn to the next. */
  async turn(signal: AbortSignal | undefined): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => mine);
    try {
      await untilAborted(previous, signal);
    } catch (error) {
      release(); // our place passes straight on once the one ahead finishes
      throw error;
    }
    return release;
  }

  /** The thread for this model: the running one, or a new one replacing whatever ran before. */
  threadFor(init: LocalWorkerInit, onWorkerStart?: (worker: Worker) => void): ModelThread {
    const key = JSON.stringify(init);
    if (this.thread && this.thread.key === key && this.thread.usable) return this.thread;
    // The caller holds the turn, so the old thread writes nothing; it may still be loading.
    void this.thread?.close(cancelledError());
    this.thread = new ModelThread(key, init, onWorkerStart);
    return this.thread;
  }

  async unload(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    await thread?.close(new ProviderError('cancelled', 'The local model was unloaded.'));
  }
}

const runtime = new LocalRuntime();

interface GenerationOptions {
  messages: TemplateMessage[];
  maxNewTokens?: number;
  temperature: number;
}

/**
 * One worker thread: its loading, and the reply it is writing. It is only ever ended while idle:
 * Worker.terminate() during an onnxruntime-node call (loading or a generation step) can abort the
 * whole process ("terminate called after throwing an instance of 'Napi::Error'"), so closing
 * interrupts the reply and waits for the worker to finish the step it is in.
 */
class ModelThread {
  readonly ready: Promise<number | null>;
  isReady = false;
  /** Loading failed, or the thread is closing or ended: the next request needs a new one. */
  private unusable = false;
  private dead = false;
  private readonly worker: Worker;
  private nextId = 1;
  private generation: Generation | undefined;
  private lastError = '';
  /** Why a reply fails if the thread ends now: a crash unless we ended it. */
  private endReason: ProviderError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly key: string,
    private readonly init: LocalWorkerInit,
    onWorkerStart?: (worker: Worker) => void,
  ) {
    let script;
    try {
      script = workerScript(import.meta.url, 'local-worker', 'local model');
    } catch (error) {
      if (error instanceof WorkerScriptMissing) throw new ProviderError('provider_not_installed', error.message);
      throw error;
    }
    this.worker = new Worker(script.script, { eval: script.eval, workerData: init });
    onWorkerStart?.(this.worker);
    let settle!: { resolve: (contextLength: number | null) => void; reject: (error: ProviderError) => void };
    this.ready = new Promise<number | null>((resolve, reject) => (settle = { resolve, reject }));
    this.ready.catch(() => {}); // a consumer that left during the load does not await it
    this.worker.on('message', (message: FromWorker) => {
      switch (message.type) {
        case 'ready':
          this.isReady = true;
          this.worker.unref();
          settle.resolve(message.contextLength);
          break;
        case 'failed':
          // The failed load is cached in this thread; only a new one can try again.
          settle.reject(this.loadError(message.code, message.message));
          void this.close(cancelledError());
          break;
        default:
          if (this.generation?.id === message.id) this.generation.receive(message);
      }
    });
    this.worker.on('error', (error) => {
      this.lastError = error.message.split('\n')[0] ?? '';
    });
    this.worker.on('exit', (code) => {
      this.dead = true;
      this.unusable = true;
      const why = this.lastError || `exit code ${code}`;
      settle.reject(
        this.endReason ?? new ProviderError('provider_server_error', `The local model "${init.modelId}" stopped while loading (${why}). Try again.`),
      );
      this.generation?.fail(
        this.endReason ??
          new ProviderError(
            'provider_server_error',
            `The local model "${init.modelId}" stopped unexpectedly while writing its reply (${why}). Send the message again to restart it.`,
          ),
      );
    });
  }

  get usable(): boolean {
    return !this.unusable;
  }

  private loadError(code: 'runtime_missing' | 'model_broken', reason: string): ProviderError {
    if (code === 'runtime_missing') {
      return new ProviderError(
        'provider_not_installed',
        'Running models on this computer needs a component that is not installed in this version of Anima. ' +
          'Use a model server (such as Ollama) or a cloud provider instead.',
      );
    }
    return new ProviderError(
      'provider_not_installed',
      `The local model "${this.init.modelId}" could not be loaded (${reason.replace(/\.$/, '')}). ` +
        'Its files may be damaged: download it again in Settings → Models.',
    );
  }

  /** Posts at once; the caller holds the runtime's turn, so nothing else is running. */
  generate(options: GenerationOptions): Generation {
    const id = this.nextId++;
    const generation = new Generation(id, this.init.modelId, {
      stop: () => this.stop(id),
      ended: () => {
        if (this.generation === generation) this.generation = undefined;
        if (!this.dead) this.worker.unref();
      },
    });
    if (this.unusable) {
      generation.fail(this.endReason ?? new ProviderError('provider_server_error', 'The local model has stopped. Try again.'));
      return generation;
    }
    this.generation = generation;
    this.worker.ref(); // a reply being written keeps the process alive; an idle model does not
    const message: ToWorker = {
      type: 'generate',
      id,
      messages: options.messages,
      maxNewTokens: options.maxNewTokens,
      defaultMaxNewTokens: DEFAULT_MAX_NEW_TOKENS,
      minNewTokens: MIN_NEW_TOKENS,
      temperature: options.temperature,
    };
    this.worker.postMessage(message);
    return generation;
  }

  /**
   * Honoured between two tokens. Reading a long prompt is one step that cannot be interrupted, and
   * ending the thread in the middle of it is not safe: the next reply waits for it instead.
   */
  private stop(id: number): void {
    if (this.dead) return;
    const message: ToWorker = { type: 'stop', id };
    this.worker.postMessage(message);
  }

  /** Ends the thread once it is idle: after its load settles and its reply (interrupted now) ends. */
  close(reason: ProviderError): Promise<void> {
    this.unusable = true;
    this.endReason ??= reason;
    this.closing ??= (async () => {
      await this.ready.catch(() => {});
      const generation = this.generation;
      if (generation) {
        generation.interrupt(reason);
        await generation.finished;
      }
      if (!this.dead) await this.worker.terminate();
    })();
    return this.closing;
  }
}

/** A reply in progress: events from the worker, handed to the stream that reads them. */
class Generation {
  /** Resolves once the worker is done with this reply, however it ended. */
  readonly finished: Promise<void>;
  private readonly queue = new Channel<StreamEvent>();
  private over = false;
  private endFinished!: () => void;
  /** Why the reply was interrupted when its reader did not ask for it (the model is being unloaded). */
  private interruptedBy: ProviderError | undefined;

  constructor(
    readonly id: number,
    private readonly modelId: string,
    private readonly thread: { stop(): void; ended(): void },
  ) {
    this.finished = new Promise<void>((resolve) => (this.endFinished = resolve));
  }

  receive(message: FromWorker): void {
    switch (message.type) {
      case 'text':
        this.queue.push({ type: 'text', text: message.text });
        break;
      case 'done':
        if (message.interrupted) {
          // A reader that stopped has its answer already; one still reading must not take a cut reply for a whole one.
          this.end(this.interruptedBy ?? cancelledError());
          break;
        }
        this.queue.push({
          type: 'done',
          finishReason: message.finishReason,
          usage: { inputTokens: message.inputTokens, outputTokens: message.outputTokens },
        });
        this.end();
        break;
      case 'too_long':
        this.end(
          new ProviderError(
            'provider_context_overflow',
            `The conversation is too long for the local model "${this.modelId}": the prompt is ${message.promptTokens} tokens ` +
              `and the reply needs up to ${message.maxNewTokens} more, but the model reads at most ${message.contextLength} tokens in all. ` +
              'Start a new conversation or send a shorter message.',
          ),
        );
        break;
      case 'error':
        this.end(new ProviderError('provider_server_error', `The local model "${this.modelId}" failed while writing its reply: ${message.message}`));
        break;
    }
  }

  interrupt(reason: ProviderError): void {
    if (this.over) return;
    this.interruptedBy = reason;
    this.thread.stop();
  }

  fail(error: ProviderError): void {
    this.end(error);
  }

  private end(error?: ProviderError): void {
    if (this.over) return;
    this.over = true;
    this.queue.close(error);
    this.thread.ended();
    this.endFinished();
  }

  async *events(signal: AbortSignal | undefined): AsyncGenerator<StreamEvent> {
    // Stop answers at once; the worker notices between two tokens and frees the thread then.
    const onAbort = () => {
      if (!this.over) this.thread.stop();
      this.queue.close(cancelledError(), true);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let streamed = false;
    try {
      for await (const event of this.queue) {
        if (event.type === 'text') streamed = true;
        yield event;
      }
    } catch (error) {
      const failure = signal?.aborted ? cancelledError() : (error as ProviderError);
      failure.midStream = streamed;
      throw failure;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // A consumer that stops reading must not leave the model writing.
      if (!this.over) this.thread.stop();
    }
  }
}

/** Hands items from worker messages to the async iterator that yields them. */
class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private closed = false;
  private error: unknown;
  private wake?: () => void;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake?.();
  }

  /** Ends the stream after the items already in it, or at once when `discard` drops them (Stop). */
  close(error?: unknown, discard = false): void {
    if (this.closed) return;
    this.closed = true;
    this.error = error;
    if (discard) this.items.length = 0;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
      } else if (this.closed) {
        if (this.error !== undefined) throw this.error;
        return;
      } else {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    }
  }
}

function notDownloaded(model: string): ProviderError {
  return new ProviderError('provider_not_installed', `The local model "${model}" is not downloaded yet — download it in Settings → Models.`);
}

/** Hugging Face ids are `name` or `org/name`; anything else (`..`, absolute paths) is not a model. */
const MODEL_ID = /^[\w.-]+(\/[\w.-]+)?$/;

async function isInstalled(modelsDir: string, model: string): Promise<boolean> {
  if (!MODEL_ID.test(model) || model.split('/').some((part) => part === '.' || part === '..')) return false;
  const dir = path.join(modelsDir, model);
  if (!(await exists(path.join(dir, 'config.json')))) return false;
  // transformers.js loads weights from the onnx/ folder.
  const weights = await readdir(path.join(dir, 'onnx')).catch(() => []);
  return weights.some((file) => file.endsWith('.onnx'));
}

/** Installed models, as `name` or `org/name` folders. */
async function installedModels(modelsDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(modelsDir, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory()) continue;
    if (await isInstalled(modelsDir, entry.name)) {
      found.push(entry.name);
      continue;
    }
    for (const inner of await readdir(path.join(modelsDir, entry.name), { withFileTypes: true })) {
      const id = `${entry.name}/${inner.name}`;
      if (inner.isDirectory() && (await isInstalled(modelsDir, id))) found.push(id);
    }
  }
  return found.sort();
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
