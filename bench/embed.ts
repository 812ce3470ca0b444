// On-device embedding speed: how long a model takes to load and how many texts a second it embeds,
// through the app's own embedder (electron/embed/embedder.ts: transformers.js in a worker thread).
//   npm run bench:embed -- [--model DIR] [--texts 256] [--data DIR] [--json FILE]
//
// - --model: a model folder (config.json, tokenizer.json, onnx/*.onnx), as the model manager
//   installs them under <data>/models/<org>/<name>. Default: the tiny generated test model, which
//   says nothing about a real model's speed but proves the path; point it at real weights to measure.
// - Texts: the first --texts LoCoMo dev turns, as the app stores them (real lengths and words).
// - load_ms: openEmbedder until the model answered its first text (worker start, weights, warm-up).
// - per_second_batch1: texts one call each; per_second_batch32: the same texts in calls of 32 —
//   what the embedding queue sends. Each is the median of 3 passes.
// - peak_rss_mb: the process's peak resident memory (the worker thread included), from
//   process.resourceUsage().maxRSS.
// Exits 0 when it measured, 1 when the model could not be loaded, 2 on bad arguments.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openEmbedder } from '../electron/embed/embedder.js';
import { EmbedError } from '../electron/embed/types.js';
import { turnContent } from '../electron/conversations/import-locomo.js';
import { locomoFiles, median, round } from './util.js';

const USAGE = 'usage: npm run bench:embed -- [--model DIR] [--texts 256] [--data DIR] [--json FILE]';
const TINY_MODEL = path.join('electron', 'models', 'testing', 'models', 'anima-test', 'tiny-bert');

function badArgs(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        model: { type: 'string', default: TINY_MODEL },
        texts: { type: 'string', default: '256' },
        data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
        json: { type: 'string' },
      },
    });
  } catch (err) {
    return badArgs((err as Error).message);
  }
})();

const modelDir = path.resolve(String(values.model));
if (!fs.existsSync(path.join(modelDir, 'config.json'))) badArgs(`--model: ${modelDir} has no config.json; give a model folder`);
const textCount = /^\d+$/.test(String(values.texts)) ? Number(values.texts) : NaN;
if (!(textCount >= 32)) badArgs(`--texts: expected a whole number of at least 32, not "${values.texts}"`);

function locomoTurns(dir: string, limit: number): string[] {
  const texts: string[] = [];
  for (const file of locomoFiles(dir)) {
    const raw = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>;
    const data = (raw.conversation && typeof raw.conversation === 'object' ? raw.conversation : raw) as Record<string, unknown>;
    for (const [key, value] of Object.entries(data)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      for (const turn of value) {
        const content = turn && typeof turn === 'object' ? turnContent(turn as Record<string, unknown>) : '';
        if (content.trim()) texts.push(content);
        if (texts.length >= limit) return texts;
      }
    }
  }
  return texts;
}

const texts = locomoTurns(path.resolve(String(values.data)), textCount);
if (texts.length < 32) badArgs(`--data: found only ${texts.length} LoCoMo turns`);

// The embedder takes a models folder and an id inside it: the folder's parent and its name.
const modelsDir = path.dirname(modelDir);
const modelId = path.basename(modelDir);

const loadStart = performance.now();
let embedder;
try {
  embedder = await openEmbedder({ modelsDir, modelId, batchSize: 32 });
  await embedder.embed([texts[0]!]);
} catch (err) {
  console.error(`could not load ${modelDir}: ${err instanceof EmbedError ? `${err.code}: ${err.message}` : String(err)}`);
  process.exit(1);
}
const loadMs = performance.now() - loadStart;

async function textsPerSecond(batch: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < texts.length; i += batch) await embedder!.embed(texts.slice(i, i + batch));
  return texts.length / ((performance.now() - start) / 1000);
}

const batch1: number[] = [];
const batch32: number[] = [];
for (let pass = 0; pass < 3; pass++) {
  batch1.push(await textsPerSecond(1));
  batch32.push(await textsPerSecond(32));
}
await embedder.close();

const result = {
  model: path.basename(modelDir),
  dimensions: embedder.dimensions,
  texts: texts.length,
  load_ms: Math.round(loadMs),
  per_second_batch1: round(median(batch1), 1),
  per_second_batch32: round(median(batch32), 1),
  peak_rss_mb: round(process.resourceUsage().maxRSS / 1024, 1),
  node: process.version,
};
console.log(
  `embed ${result.model} (${result.dimensions} dimensions, ${result.texts} LoCoMo turns): load ${result.load_ms} ms; ` +
    `${result.per_second_batch1} texts/s one at a time, ${result.per_second_batch32} texts/s in batches of 32; peak RSS ${result.peak_rss_mb} MB`,
);
console.log(JSON.stringify(result));
if (values.json) {
  const file = path.resolve(String(values.json));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${file}`);
}
