// Runs a local chat model in its own thread (started by local.ts). Its own thread because
// generation is CPU-heavy and would stall the host's event loop (which also serves the UI and the
// database), and because a model that failed to load stays failed for the whole thread in
// transformers.js (the failed load is cached per model id): ending the thread and starting a fresh
// one is the only clean retry.
//
// Protocol: it loads the model named in workerData, writes one token to prove the weights run,
// posts `ready` with the model's context length (or `failed`), then answers `generate` messages one
// at a time, streaming `text` and ending each with exactly one of `done`, `too_long` or `error`.
// `stop` interrupts the generation with that id (also one still waiting its turn).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

export interface LocalWorkerInit {
  modelsDir: string;
  modelId: string;
  /** Which onnx/ file transformers.js loads (fp32 is onnx/model.onnx, q4 onnx/model_q4.onnx, …); unset lets it choose. */
  dtype?: string;
  /** The catalogue's context length for the model, when it has one; config.json is read as well and the smaller wins. */
  contextLength?: number;
  /** The module imported instead of @huggingface/transformers (tests' stand-in engine). */
  engine?: string;
}

export interface TemplateMessage {
  role: string;
  content: string;
}

export type ToWorker =
  | {
      type: 'generate';
      id: number;
      messages: TemplateMessage[];
      /** The caller's limit: prompt + this must fit the context, or the reply is refused. */
      maxNewTokens?: number;
      /** Used when the caller set no limit, shrunk to the room the prompt leaves (but not below `minNewTokens`). */
      defaultMaxNewTokens: number;
      minNewTokens: number;
      temperature: number;
    }
  | { type: 'stop'; id: number };

export type FromWorker =
  | { type: 'ready'; contextLength: number | null }
  | { type: 'failed'; code: 'runtime_missing' | 'model_broken'; message: string }
  | { type: 'text'; id: number; text: string }
  | {
      type: 'done';
      id: number;
      /** 'length' when max new tokens cut the reply short. */
      finishReason: 'stop' | 'length';
      /** Ended by `stop`. */
      interrupted: boolean;
      inputTokens: number;
      outputTokens: number;
    }
  | { type: 'too_long'; id: number; promptTokens: number; maxNewTokens: number; contextLength: number }
  | { type: 'error'; id: number; message: string };

/** The slice of @huggingface/transformers used here, so a stand-in engine can be small. */
export interface Engine {
  env: Record<string, unknown>;
  /** Absent in the tests' stand-in engine. */
  AutoTokenizer?: { from_pretrained(model: string, options: { local_files_only: boolean }): Promise<unknown> };
  pipeline(task: 'text-generation', model: string, options: { dtype?: string; local_files_only: boolean }): Promise<Generator>;
  TextStreamer: new (
    tokenizer: Tokenizer,
    options: {
      skip_prompt: boolean;
      skip_special_tokens: boolean;
      callback_function: (text: string) => void;
      token_callback_function: (tokens: bigint[]) => void;
    },
  ) => unknown;
  InterruptableStoppingCriteria: new () => { interrupt(): void };
}

interface Tokenizer {
  apply_chat_template(messages: TemplateMessage[], options: { tokenize: false; add_generation_prompt: true }): unknown;
  (text: string, options: { add_special_tokens: boolean }): { input_ids: { dims: number[] } };
}

interface Generator {
  tokenizer: Tokenizer;
  model: {
    generate(options: Record<string, unknown>): Promise<unknown>;
    config?: { eos_token_id?: unknown };
    generation_config?: { eos_token_id?: unknown } | null;
  };
}

const port = parentPort;
if (!port) throw new Error('local-worker.ts runs only as a worker thread started by local.ts');
const init = workerData as LocalWorkerInit;

function post(message: FromWorker): void {
  port!.postMessage(message);
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}

/** Config keys different architectures use for the positions the model can attend over. */
const CONTEXT_KEYS = ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'seq_length', 'n_ctx'];

async function contextLength(): Promise<number | null> {
  const known: number[] = [];
  if (init.contextLength && init.contextLength > 0) known.push(init.contextLength);
  const config = JSON.parse(await readFile(path.join(init.modelsDir, init.modelId, 'config.json'), 'utf8')) as Record<string, unknown>;
  const value = CONTEXT_KEYS.map((key) => config[key]).find((v): v is number => Number.isInteger(v) && (v as number) > 0);
  if (value) known.push(value);
  return known.length ? Math.min(...known) : null;
}

function eosIds(generator: Generator): Set<bigint> {
  const raw = generator.model.generation_config?.eos_token_id ?? generator.model.config?.eos_token_id;
  const ids = Array.isArray(raw) ? raw : [raw];
  return new Set(ids.filter((id): id is number => Number.isInteger(id)).map((id) => BigInt(id)));
}

async function load(): Promise<{ engine: Engine; generator: Generator; contextLength: number | null } | undefined> {
  let engine: Engine;
  try {
    // A variable specifier: the stand-in engine in tests; esbuild leaves it as a runtime import.
    const specifier = init.engine ?? '@huggingface/transformers';
    engine = (await import(specifier)) as Engine;
  } catch (error) {
    post({ type: 'failed', code: 'runtime_missing', message: describe(error) });
    return undefined;
  }
  // Only files the model manager put on disk are used, and nothing is written into node_modules
  // (or the app archive) as a cache.
  Object.assign(engine.env, {
    allowRemoteModels: false,
    allowLocalModels: true,
    localModelPath: init.modelsDir.endsWith(path.sep) ? init.modelsDir : init.modelsDir + path.sep,
    useBrowserCache: false,
    useFSCache: false,
    useWasmCache: false,
  });
  try {
    // The tokenizer on its own first (see embed-worker.ts): a broken one then fails before any
    // onnxruntime session is being created, so the thread can be ended at once.
    await engine.AutoTokenizer?.from_pretrained(init.modelId, { local_files_only: true });
    const generator = await engine.pipeline('text-generation', init.modelId, { dtype: init.dtype, local_files_only: true });
    // A broken model often loads and fails only when run; one greedy token finds out now.
    const prompt = generator.tokenizer.apply_chat_template([{ role: 'user', content: 'hi' }], {
      tokenize: false,
      add_generation_prompt: true,
    });
    await generator.model.generate({
      ...generator.tokenizer(String(prompt), { add_special_tokens: false }),
      max_new_tokens: 1,
      do_sample: false,
    });
    return { engine, generator, contextLength: await contextLength() };
  } catch (error) {
    post({ type: 'failed', code: 'model_broken', message: describe(error) });
    return undefined;
  }
}

type Generate = Extract<ToWorker, { type: 'generate' }>;

/** Generations received and not yet ended, and those of them `stop` was sent for. */
const pending = new Set<number>();
const stopped = new Set<number>();
let current: { id: number; stopping: { interrupt(): void } } | undefined;

async function generate({ engine, generator, contextLength }: NonNullable<Awaited<ReturnType<typeof load>>>, message: Generate): Promise<void> {
  const { id } = message;
  if (stopped.has(id)) {
    post({ type: 'done', id, finishReason: 'stop', interrupted: true, inputTokens: 0, outputTokens: 0 });
    return;
  }
  const { tokenizer, model } = generator;
  const prompt = String(tokenizer.apply_chat_template(message.messages, { tokenize: false, add_generation_prompt: true }));
  // The chat template already wrote the special tokens. Tokenized here rather than by the pipeline,
  // which would silently cut a prompt longer than the model's context.
  const inputs = tokenizer(prompt, { add_special_tokens: false });
  const promptTokens = inputs.input_ids.dims.at(-1) ?? 0;
  let maxNewTokens = message.maxNewTokens ?? message.defaultMaxNewTokens;
  if (contextLength !== null) {
    const room = contextLength - promptTokens;
    if (message.maxNewTokens === undefined) maxNewTokens = Math.min(maxNewTokens, Math.max(room, message.minNewTokens));
    if (promptTokens + maxNewTokens > contextLength) {
      post({ type: 'too_long', id, promptTokens, maxNewTokens, contextLength });
      return;
    }
  }
  const stopping = new engine.InterruptableStoppingCriteria();
  current = { id, stopping };
  let outputTokens = 0;
  let last: bigint | undefined;
  const streamer = new engine.TextStreamer(tokenizer, {
    skip_prompt: true,
    skip_special_tokens: true,
    callback_function: (text) => {
      if (text) post({ type: 'text', id, text });
    },
    token_callback_function: (tokens) => {
      outputTokens += tokens.length;
      last = tokens.at(-1);
    },
  });
  const sample = message.temperature > 0;
  await model.generate({
    ...inputs,
    max_new_tokens: maxNewTokens,
    do_sample: sample,
    ...(sample ? { temperature: message.temperature } : {}),
    streamer,
    stopping_criteria: stopping,
  });
  const interrupted = stopped.has(id);
  const cut = outputTokens >= maxNewTokens && !(last !== undefined && eosIds(generator).has(last));
  post({ type: 'done', id, finishReason: cut ? 'length' : 'stop', interrupted, inputTokens: promptTokens, outputTokens });
}

const loaded = await load();
if (loaded) {
  post({ type: 'ready', contextLength: loaded.contextLength });
  // local.ts sends one generation at a time; the chain keeps that true even if it did not.
  let queue = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    if (message.type === 'stop') {
      if (!pending.has(message.id)) return; // it ended before the stop arrived
      stopped.add(message.id);
      if (current?.id === message.id) current.stopping.interrupt();
      return;
    }
    if (message.type !== 'generate') return;
    pending.add(message.id);
    queue = queue.then(async () => {
      try {
        await generate(loaded, message);
      } catch (error) {
        post({ type: 'error', id: message.id, message: describe(error) });
      } finally {
        current = undefined;
        pending.delete(message.id);
        stopped.delete(message.id);
      }
    });
  });
}
