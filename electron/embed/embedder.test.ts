// The embedder with the real transformers.js in a real worker thread, on the tiny generated BERT
// (scripts/make-tiny-models.py): random weights, but real tokenizer files, config and ONNX graph.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbedder, type OpenEmbedderOptions } from './embedder.js';
import { EmbedError, type Embedder } from './types.js';

const MODEL = 'anima-test/tiny-bert';
const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'models', MODEL);

let modelsDir: string;
let modelDir: string;
const opened: Embedder[] = [];

beforeEach(() => {
  modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-embed-'));
  modelDir = path.join(modelsDir, MODEL);
  fs.cpSync(SOURCE, modelDir, { recursive: true });
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((embedder) => embedder.close()));
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

async function open(options: Partial<OpenEmbedderOptions> = {}): Promise<Embedder> {
  const embedder = await openEmbedder({ modelsDir, modelId: MODEL, ...options });
  opened.push(embedder);
  return embedder;
}

/** Opens, remembering every worker thread the embedder starts. */
async function openWatched(options: Partial<OpenEmbedderOptions> = {}) {
  const workers: Worker[] = [];
  const embedder = await open({ ...options, onWorkerStart: (worker) => workers.push(worker) });
  return { embedder, workers };
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));

async function failure(promise: Promise<unknown>): Promise<EmbedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbedError);
  return error as EmbedError;
}

function exited(worker: Worker): Promise<void> {
  return new Promise((resolve) => worker.once('exit', () => resolve()));
}

/** Texts that keep the tiny model busy for a little while (long, and many). */
const heavyTexts = Array.from({ length: 400 }, (_, i) => `text ${i} ` + 'the cat sat on the mat and the dog ran in the garden '.repeat(40));

describe('embedding', () => {
  it('returns unit vectors of the model hidden size; related texts are closer than unrelated ones', async () => {
    const embedder = await open();
    const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as { hidden_size: number };
    expect(embedder.modelId).toBe(MODEL);
    expect(embedder.dimensions).toBe(config.hidden_size);
    const [mat, cat, stock, empty] = await embedder.embed(['cat sat on the mat', 'the cat sat', 'stock market prices', '']);
    for (const vector of [mat!, cat!, stock!, empty!]) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(embedder.dimensions);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(dot(mat!, cat!)).toBeGreaterThan(dot(mat!, stock!) + 0.3);
  });

  it('embeds Chinese text character by character', async () => {
    const embedder = await open();
    const [mat, matShort, stock] = await embedder.embed(['猫坐在垫子上', '猫坐在垫子', '股票市场价格']);
    expect(norm(mat!)).toBeCloseTo(1, 5);
    expect(dot(mat!, matShort!)).toBeGreaterThan(dot(mat!, stock!) + 0.3);
  });

  it('keeps a batch of 40 texts in order, each as if embedded alone, in messages of batchSize', async () => {
    const { embedder, workers } = await openWatched({ batchSize: 16 });
    const sent: number[] = [];
    const post = workers[0]!.postMessage.bind(workers[0]);
    workers[0]!.postMessage = (message: { texts: string[] }) => {
      sent.push(message.texts.length);
      post(message);
    };
    // Different lengths, so every batch is padded: a wrong attention mask would show.
    const texts = Array.from({ length: 40 }, (_, i) => `${'one two three '.repeat(i % 7)} note ${i} about the ${['cat', 'market', 'rain', '猫'][i % 4]}`);
    const together = await embedder.embed(texts);
    expect(sent).toEqual([16, 16, 8]);
    expect(together).toHaveLength(40);
    for (const i of [0, 1, 17, 39]) {
      const [alone] = await embedder.embed([texts[i]!]);
      for (let d = 0; d < embedder.dimensions; d++) expect(together[i]![d]).toBeCloseTo(alone![d]!, 5);
    }
    expect(await embedder.embed([])).toEqual([]);
  });

  it('runs concurrent calls one after another, each getting its own vectors', async () => {
    const embedder = await open();
    const [a, b, c] = await Promise.all([
      embedder.embed(['the cat sat']),
      embedder.embed(['stock market prices', 'the cat sat']),
      embedder.embed(['the cat sat']),
    ]);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(2);
    expect(Array.from(b![1]!)).toEqual(Array.from(a![0]!));
    expect(Array.from(c![0]!)).toEqual(Array.from(a![0]!));
  });
});

describe('a model that is not there', () => {
  it('says which file is missing, without starting a worker', async () => {
    const started: Worker[] = [];
    const attempt = () => openEmbedder({ modelsDir, modelId: MODEL, onWorkerStart: (w) => started.push(w) });
    const t = Date.now();

    fs.rmSync(path.join(modelDir, 'onnx', 'model.onnx'));
    let error = await failure(attempt());
    expect(error.code).toBe('model_not_installed');
    expect(error.message).toContain(`"${MODEL}"`);
    expect(error.message).toContain('onnx/model.onnx');

    fs.rmSync(path.join(modelDir, 'tokenizer.json'));
    error = await failure(attempt());
    expect(error).toMatchObject({ code: 'model_not_installed' });
    expect(error.message).toContain('tokenizer.json');

    error = await failure(openEmbedder({ modelsDir, modelId: 'anima-test/nothing-here' }));
    expect(error).toMatchObject({ code: 'model_not_installed' });
    expect(error.message).toContain('"anima-test/nothing-here"');
    expect(error.message).toContain('config.json');

    expect((await failure(openEmbedder({ modelsDir, modelId: '../anima-test/tiny-bert' }))).code).toBe('model_not_installed');
    expect(started).toEqual([]);
    expect(Date.now() - t).toBeLessThan(1_000);
  });

  it('loads quantized weights when full precision is not there', async () => {
    fs.renameSync(path.join(modelDir, 'onnx', 'model.onnx'), path.join(modelDir, 'onnx', 'model_quantized.onnx'));
    const embedder = await open();
    expect(embedder.dimensions).toBe(32);
  });
});

describe('a broken model', () => {
  it('is model_broken when the weights are truncated, and opens once they are repaired, in the same process', async () => {
    const weights = path.join(modelDir, 'onnx', 'model.onnx');
    const good = fs.readFileSync(weights);
    fs.writeFileSync(weights, good.subarray(0, Math.floor(good.length / 3)));
    const workers: Worker[] = [];
    const error = await failure(openEmbedder({ modelsDir, modelId: MODEL, onWorkerStart: (w) => workers.push(w) }));
    expect(error.code).toBe('model_broken');
    expect(error.message).toContain(`"${MODEL}"`);
    expect(workers).toHaveLength(1);
    // The failed worker is ended, not left holding the poisoned model.
    await Promise.race([exited(workers[0]!), new Promise((_, reject) => setTimeout(() => reject(new Error('the worker is still running')), 5_000))]);

    fs.writeFileSync(weights, good);
    const embedder = await open();
    const [vector] = await embedder.embed(['the cat sat']);
    expect(norm(vector!)).toBeCloseTo(1, 5);
  });

  it('is model_broken when the tokenizer is not JSON', async () => {
    fs.writeFileSync(path.join(modelDir, 'tokenizer.json'), '{"version": "1.0", "model": ');
    expect((await failure(openEmbedder({ modelsDir, modelId: MODEL }))).code).toBe('model_broken');
  });
});

describe('a worker that dies', () => {
  it('fails the call it was working on with worker_crashed; the next call starts a new worker', async () => {
    const { embedder, workers } = await openWatched();
    const [before] = await embedder.embed(['the cat sat']);
    const pending = embedder.embed(heavyTexts);
    // The texts were posted synchronously by embed(); the worker ends while embedding them.
    void workers[0]!.terminate();
    const error = await failure(pending);
    expect(error.code).toBe('worker_crashed');

    const [after] = await embedder.embed(['the cat sat']);
    expect(workers).toHaveLength(2);
    expect(Array.from(after!)).toEqual(Array.from(before!));
  });

  it('runs calls queued behind the crashed one on the new worker', async () => {
    const { embedder, workers } = await openWatched();
    const crashed = embedder.embed(heavyTexts);
    const queued = embedder.embed(['the cat sat']);
    void workers[0]!.terminate();
    expect((await failure(crashed)).code).toBe('worker_crashed');
    expect(await queued).toHaveLength(1);
    expect(workers).toHaveLength(2);
  });

  it('says model_not_installed when the files went away before the restart', async () => {
    const { embedder, workers } = await openWatched();
    fs.rmSync(path.join(modelDir, 'onnx'), { recursive: true });
    await workers[0]!.terminate();
    expect((await failure(embedder.embed(['the cat sat']))).code).toBe('model_not_installed');
    fs.cpSync(path.join(SOURCE, 'onnx'), path.join(modelDir, 'onnx'), { recursive: true });
    expect(await embedder.embed(['the cat sat'])).toHaveLength(1);
  });
});

describe('cancellation and closing', () => {
  it('rejects an already-aborted call without running it', async () => {
    const embedder = await open();
    expect((await failure(embedder.embed(['the cat sat'], { signal: AbortSignal.abort() }))).code).toBe('cancelled');
  });

  it('cancels a call in flight or waiting in the queue; other calls are unaffected', async () => {
    const embedder = await open({ batchSize: 8 });
    const running = new AbortController();
    const waiting = new AbortController();
    const first = embedder.embed(heavyTexts, { signal: running.signal });
    const second = embedder.embed(['the cat sat'], { signal: waiting.signal });
    const third = embedder.embed(['stock market prices']);
    const t = Date.now();
    waiting.abort();
    running.abort();
    expect((await failure(first)).code).toBe('cancelled');
    expect((await failure(second)).code).toBe('cancelled');
    expect(Date.now() - t).toBeLessThan(100);
    expect(await third).toHaveLength(1);
  });

  it('ends the worker on close; later calls reject', async () => {
    const { embedder, workers } = await openWatched();
    const gone = exited(workers[0]!);
    const inFlight = embedder.embed(heavyTexts);
    await embedder.close();
    await gone;
    expect((await failure(inFlight)).code).toBe('cancelled');
    expect((await failure(embedder.embed(['the cat sat']))).code).toBe('cancelled');
    expect(workers).toHaveLength(1);
  });
});
