// A model that runs inside the app with transformers.js: no server, no network. Model files live
// under `modelsDir/<model id>/` (config.json, tokenizer files, onnx/*.onnx), put there by the
// model manager. Tool calling is not offered: small local models do it too unreliably to trust
// with memory, so tools in a request are ignored and the model simply answers in text.
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { cancelledError } from './errors.js';
import { ProviderError, type ChatProvider, type ChatTurn, type ProviderOptions, type StreamEvent, type StreamRequest } from './types.js';

/** The slice of @huggingface/transformers this provider uses. */
export interface TransformersEngine {
  env: { allowRemoteModels: boolean; localModelPath: string };
  pipeline(task: 'text-generation', model: string): Promise<TextGenerator>;
  TextStreamer: new (
    tokenizer: ChatTokenizer,
    options: { skip_prompt: boolean; skip_special_tokens: boolean; callback_function: (text: string) => void },
  ) => unknown;
  InterruptableStoppingCriteria: new () => { interrupt(): void };
}

interface ChatTokenizer {
  apply_chat_template(
    messages: { role: string; content: string }[],
    options: { tokenize: false; add_generation_prompt: true },
  ): string;
}

interface TextGenerator {
  tokenizer: ChatTokenizer;
  (prompt: string, options: Record<string, unknown>): Promise<unknown>;
}

const ENGINE_PACKAGE = '@huggingface/transformers';
const DEFAULT_MAX_NEW_TOKENS = 1024;

/** The package is optional until the model manager ships; a variable specifier keeps bundlers and tsc from resolving it. */
async function importEngine(): Promise<TransformersEngine> {
  const specifier: string = ENGINE_PACKAGE;
  return (await import(specifier)) as TransformersEngine;
}

export function createLocalProvider(
  options: ProviderOptions,
  /** Replaced in tests, which must not depend on whether the package is installed. */
  loadEngine: () => Promise<TransformersEngine> = importEngine,
): ChatProvider {
  const modelsDir = options.modelsDir;
  // Loading a model takes seconds and much memory: once per model per process.
  const generators = new Map<string, Promise<TextGenerator>>();

  async function generatorFor(model: string): Promise<{ engine: TransformersEngine; generator: TextGenerator }> {
    if (!modelsDir || !(await isInstalled(modelsDir, model))) throw notDownloaded(model);
    let engine: TransformersEngine;
    try {
      engine = await loadEngine();
    } catch {
      throw new ProviderError(
        'provider_not_installed',
        'Running models on this computer needs a component that is not installed in this version of Anima. ' +
          'Use a model server (such as Ollama) or a cloud provider instead.',
      );
    }
    // Never download behind the person's back: only files the model manager put on disk are used.
    engine.env.allowRemoteModels = false;
    engine.env.localModelPath = modelsDir.endsWith(path.sep) ? modelsDir : modelsDir + path.sep;
    let loading = generators.get(model);
    if (!loading) {
      loading = engine.pipeline('text-generation', model);
      generators.set(model, loading);
      loading.catch(() => generators.delete(model));
    }
    try {
      return { engine, generator: await loading };
    } catch {
      throw new ProviderError(
        'provider_not_installed',
        `The local model "${model}" could not be loaded. Try downloading it again in Settings → Models.`,
      );
    }
  }

  return {
    kind: 'local',
    async *stream(request: StreamRequest): AsyncGenerator<StreamEvent> {
      if (request.signal?.aborted) throw cancelledError();
      const { engine, generator } = await generatorFor(request.model);
      yield* generate(engine, generator, request);
    },
    async listModels(): Promise<string[]> {
      return modelsDir ? installedModels(modelsDir) : [];
    },
  };
}

async function* generate(engine: TransformersEngine, generator: TextGenerator, request: StreamRequest): AsyncGenerator<StreamEvent> {
  const prompt = generator.tokenizer.apply_chat_template(toTemplateMessages(request.messages), {
    tokenize: false,
    add_generation_prompt: true,
  });
  const tokens = new TokenQueue();
  const stopping = new engine.InterruptableStoppingCriteria();
  const stop = () => stopping.interrupt();
  request.signal?.addEventListener('abort', stop, { once: true });
  const temperature = request.temperature ?? 0.7;
  generator(prompt, {
    max_new_tokens: request.maxTokens ?? DEFAULT_MAX_NEW_TOKENS,
    temperature,
    do_sample: temperature > 0,
    return_full_text: false,
    add_special_tokens: false, // the chat template already wrote them
    stopping_criteria: stopping,
    streamer: new engine.TextStreamer(generator.tokenizer, {
      skip_prompt: true,
      skip_special_tokens: true,
      callback_function: (text) => tokens.push(text),
    }),
  }).then(
    () => tokens.close(),
    (error: unknown) => tokens.close(error),
  );
  let streamed = false;
  let failure: ProviderError | undefined;
  try {
    for await (const text of tokens) {
      if (!text) continue;
      streamed = true;
      yield { type: 'text', text };
    }
  } catch {
    failure = new ProviderError('provider_bad_response', 'The local model stopped with an error while writing its reply.');
  } finally {
    request.signal?.removeEventListener('abort', stop);
    stopping.interrupt(); // a consumer that stops reading must not leave the model generating
  }
  if (request.signal?.aborted) failure = cancelledError();
  if (failure) {
    failure.midStream = streamed;
    throw failure;
  }
  yield { type: 'done', finishReason: 'stop' };
}

/** Chat templates know system, user and assistant; a tool result is told to the model as user text. */
function toTemplateMessages(turns: ChatTurn[]): { role: string; content: string }[] {
  return turns.map((turn) =>
    turn.role === 'tool'
      ? { role: 'user', content: `Result of ${turn.name}: ${turn.content}` }
      : { role: turn.role, content: turn.content },
  );
}

/** Hands tokens from the generator's callback to the async iterator that yields them. */
class TokenQueue implements AsyncIterable<string> {
  private readonly items: string[] = [];
  private closed = false;
  private error: unknown;
  private wake?: () => void;

  push(text: string): void {
    this.items.push(text);
    this.wake?.();
  }

  close(error?: unknown): void {
    this.closed = true;
    this.error = error;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
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
  return new ProviderError(
    'provider_not_installed',
    `The local model "${model}" is not downloaded yet — download it in Settings → Models.`,
  );
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
