// Runs the embedding model in its own thread (started by embedder.ts). Its own thread because
// inference is CPU-heavy and would stall the host's event loop, and because a model that failed to
// load stays failed for the whole thread in transformers.js (the failed load is cached per model
// id): ending the thread and starting a fresh one is the only clean retry.
//
// Protocol: it loads the model named in workerData, embeds a probe text to learn the vector size,
// posts `ready` (or `failed`) and then answers `embed` messages one at a time. One batch is one
// onnxruntime call, which nothing interrupts: embedder.ts stops a call between its batches, and
// ends this thread only while it is idle (see WorkerThread there).
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

export interface WorkerInit {
  modelsDir: string;
  modelId: string;
  /** Which onnx/ file transformers.js loads: fp32 is onnx/model.onnx, q8 onnx/model_quantized.onnx, … */
  dtype: string;
  /** The module imported instead of @huggingface/transformers (tests' stand-in engine). */
  engine?: string;
}

export type ToWorker = { type: 'embed'; id: number; texts: string[] };

export type FromWorker =
  | { type: 'ready'; dimensions: number }
  | { type: 'failed'; code: 'runtime_missing' | 'model_broken'; message: string }
  /** `vectors` holds `texts.length` vectors of `dimensions` floats back to back (one transferable buffer). */
  | { type: 'result'; id: number; vectors: Float32Array; dimensions: number }
  | { type: 'error'; id: number; message: string };

type Extract = (texts: string[]) => Promise<{ vectors: Float32Array; dimensions: number }>;

const port = parentPort;
if (!port) throw new Error('embed-worker.ts runs only as a worker thread started by embedder.ts');
const init = workerData as WorkerInit;

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}

async function load(): Promise<Extract | undefined> {
  let transformers: typeof import('@huggingface/transformers');
  try {
    // A variable specifier: the stand-in engine in tests; esbuild leaves it as a runtime import.
    const specifier = init.engine ?? '@huggingface/transformers';
    transformers = (await import(specifier)) as typeof import('@huggingface/transformers');
  } catch (error) {
    post({ type: 'failed', code: 'runtime_missing', message: describe(error) });
    return undefined;
  }
  const { env, pipeline, AutoTokenizer } = transformers;
  // Only files the model manager put on disk are used, and nothing is written into node_modules
  // (or the app archive) as a cache.
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = init.modelsDir.endsWith(path.sep) ? init.modelsDir : init.modelsDir + path.sep;
  env.useBrowserCache = false;
  env.useFSCache = false;
  env.useWasmCache = false;
  try {
    // The tokenizer on its own first: pipeline() loads it alongside the ONNX session, and a broken
    // tokenizer would fail the load while onnxruntime is still creating the session — ending the
    // thread then can abort the process. Read first, a bad tokenizer fails before any session starts.
    await AutoTokenizer?.from_pretrained(init.modelId, { local_files_only: true });
    const extractor = await pipeline('feature-extraction', init.modelId, {
      dtype: init.dtype as 'fp32',
      local_files_only: true,
    });
    const extract: Extract = async (texts) => {
      const output = await extractor(texts, { pooling: 'mean', normalize: true });
      const dimensions = output.dims.at(-1) ?? 0;
      // A copy the thread owns, so its buffer can be transferred rather than cloned.
      return { vectors: Float32Array.from(output.data as Float32Array), dimensions };
    };
    // A broken model often loads and fails only when run; finding out now keeps it out of the queue.
    const probe = await extract(['hello']);
    if (!(probe.dimensions > 0) || probe.vectors.some((x) => !Number.isFinite(x))) {
      throw new Error(`the model returned no usable vector (size ${probe.dimensions})`);
    }
    post({ type: 'ready', dimensions: probe.dimensions });
    return extract;
  } catch (error) {
    post({ type: 'failed', code: 'model_broken', message: describe(error) });
    return undefined;
  }
}

const extract = await load();
if (extract) {
  // embedder.ts sends one message at a time; the chain keeps that true even if it did not.
  let queue = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    if (message.type !== 'embed') return;
    queue = queue.then(async () => {
      try {
        const { vectors, dimensions } = await extract(message.texts);
        post({ type: 'result', id: message.id, vectors, dimensions }, [vectors.buffer as ArrayBuffer]);
      } catch (error) {
        post({ type: 'error', id: message.id, message: describe(error) });
      }
    });
  });
}
