// Finding and starting the worker threads that run on-device models (embed-worker.ts for
// embeddings, ../llm/local-worker.ts for chat), from source and from the build alike.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface WorkerScript {
  /** What `new Worker()` gets: a file URL, or bootstrap source when `eval` is true. */
  script: string | URL;
  eval: boolean;
}

/** The worker cannot be started; `message` says why in words for the person. */
export class WorkerScriptMissing extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerScriptMissing';
  }
}

/**
 * The worker `name` (no extension) for the module at `from` (its import.meta.url). From source
 * (Vitest, tsx) the caller is a .ts file and so is the worker beside it, which Node cannot run alone:
 * an eval'd bootstrap has tsx import it (`--import tsx` in the worker's execArgv does not register
 * tsx's hooks before the entry loads on Node 20). Built, the caller is bundled into
 * dist/electron/host-process.mjs or dist/cli.mjs and each worker is its own artifact,
 * dist/electron/<name>.mjs (scripts/build.mjs).
 */
export function workerScript(from: string, name: string, label: string): WorkerScript {
  if (from.endsWith('.ts')) {
    const worker = new URL(`./${name}.ts`, from).href;
    const tsx = pathToFileURL(tsxEsmApi(from, label)).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => tsx.tsImport(${JSON.stringify(worker)}, ${JSON.stringify(from)}))`;
    return { script: bootstrap, eval: true };
  }
  const dir = path.dirname(fileURLToPath(from));
  for (const candidate of [path.join(dir, `${name}.mjs`), path.join(dir, 'electron', `${name}.mjs`)]) {
    if (existsSync(candidate)) return { script: pathToFileURL(candidate), eval: false };
  }
  throw new WorkerScriptMissing(`This build of Anima is missing its ${label} worker (${name}.mjs).`);
}

/**
 * tsx's ESM API file. require.resolve would pick its CommonJS build, whose tsImport cannot be
 * imported from a worker; the `import` condition's file is read from tsx's own exports map.
 */
function tsxEsmApi(from: string, label: string): string {
  const manifest = createRequire(from).resolve('tsx/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import?: { default?: string } }> };
  const file = exports['./esm/api']?.import?.default;
  if (!file) throw new WorkerScriptMissing(`Running the ${label} worker from source needs tsx 4 (tsx/esm/api).`);
  return path.join(path.dirname(manifest), file);
}

/**
 * Weight files transformers.js knows, by the dtype that selects them, best first: full precision when
 * the model manager downloaded it, else whichever smaller variant is there.
 */
const WEIGHTS: [file: string, dtype: string][] = [
  ['model.onnx', 'fp32'],
  ['model_fp16.onnx', 'fp16'],
  ['model_quantized.onnx', 'q8'],
  ['model_int8.onnx', 'int8'],
  ['model_uint8.onnx', 'uint8'],
  ['model_q4.onnx', 'q4'],
  ['model_q4f16.onnx', 'q4f16'],
  ['model_bnb4.onnx', 'bnb4'],
];

/**
 * The dtype transformers.js must be given to load one of `files` (the names in a model's onnx/
 * folder), or undefined when none is a weight file it knows. Without it the runtime looks for
 * onnx/model.onnx, which a quantized download does not have.
 */
export function weightsDtype(files: Iterable<string>): { file: string; dtype: string } | undefined {
  const present = new Set(files);
  const found = WEIGHTS.find(([file]) => present.has(file));
  return found && { file: found[0], dtype: found[1] };
}
