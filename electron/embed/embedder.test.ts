// The embedder with the real transformers.js in a real worker thread, on the tiny generated BERT
// (scripts/make-tiny-models.py): random weights, but real tokenizer files, config and ONNX graph.
// Workers that die mid-call run a stand-in engine instead: a thread must never be ended from outside
// while onnxruntime is loading or running a model (that can abort the whole process), so the tests
// here never terminate() a real worker that is busy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openEmbedder, type OpenEmbedderOptions } from './embedder.js';
import { EmbedError, type Embedder } from './types.js';

const MODEL = 'anima-test/tiny-bert';
const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'models', 'testing', 'models', MODEL);

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
  // An ended thread's id is -1; its exit event may have fired before anyone listened.
  if (worker.threadId === -1) return Promise.resolve();
  return new Promise((resolve) => worker.once('exit', () => resolve()));
}

/** The types of the messages `worker` posts from now on, then `exit` when it ends. */
function messageLog(worker: Worker): string[] {
  const log: string[] = [];
  worker.on('message', (message: { type: string }) => log.push(message.type));
  worker.once('exit', () => log.push('exit'));
  return log;
}

/** The number of texts in each message posted to `worker` from now on. */
function sentBatches(worker: Worker): number[] {
  const sent: number[] = [];
  const post = worker.postMessage.bind(worker);
  worker.postMessage = (message: { texts: string[] }) => {
    sent.push(message.texts.length);
    post(message);
  };
  return sent;
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
    const sent = sentBatches(workers[0]!);
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
    expect(started).toEqual([]); // refused from the files alone: no worker, no model loaded
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

/**
 * Stands in for transformers.js inside the worker: 4-number vectors from the text's length, each
 * batch taking `batchDelayMs`, the load `loadDelayMs` (from `<model>/stand-in.json` when there). A
 * text "CRASH" makes the thread die by itself, as a native crash would, with nothing of
 * onnxruntime running in it.
 */
const STAND_IN_ENGINE = `
import fs from 'node:fs';
import path from 'node:path';
export const env = {};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export async function pipeline(task, model) {
  const file = path.join(env.localModelPath, model, 'stand-in.json');
  const script = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  await sleep(script.loadDelayMs ?? 0);
  return async (texts) => {
    if (texts.includes('CRASH')) {
      setTimeout(() => { throw new Error('the stand-in engine crashed'); });
      return new Promise(() => {});
    }
    await sleep(script.batchDelayMs ?? 0);
    const data = new Float32Array(texts.length * 4);
    texts.forEach((text, i) => data.set([text.length, 1, 2, 3].map((x) => x / Math.hypot(text.length, 1, 2, 3)), i * 4));
    return { dims: [texts.length, 4], data };
  };
}
`;

describe('a worker that dies by itself (stand-in engine)', () => {
  let engineDir: string;
  let engine: string;
  beforeAll(() => {
    engineDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-embed-stand-in-'));
    const file = path.join(engineDir, 'stand-in-engine.mjs');
    fs.writeFileSync(file, STAND_IN_ENGINE);
    engine = pathToFileURL(file).href;
  });
  afterAll(() => fs.rmSync(engineDir, { recursive: true, force: true }));

  const openStandIn = (script: { loadDelayMs?: number; batchDelayMs?: number } = {}) => {
    fs.writeFileSync(path.join(modelDir, 'stand-in.json'), JSON.stringify(script));
    return openWatched({ engine });
  };

  it('fails the call it was working on with worker_crashed; the next call starts a new worker', async () => {
    const { embedder, workers } = await openStandIn();
    expect(embedder.dimensions).toBe(4);
    const [before] = await embedder.embed(['the cat sat']);
    const error = await failure(embedder.embed(['the cat sat', 'CRASH']));
    expect(error.code).toBe('worker_crashed');
    expect(error.message).toContain('the stand-in engine crashed');

    const [after] = await embedder.embed(['the cat sat']);
    expect(workers).toHaveLength(2);
    expect(Array.from(after!)).toEqual(Array.from(before!));
  });

  it('runs calls queued behind the crashed one on the new worker', async () => {
    const { embedder, workers } = await openStandIn({ batchDelayMs: 20 });
    const crashed = embedder.embed(['CRASH']);
    const queued = embedder.embed(['the cat sat']);
    expect((await failure(crashed)).code).toBe('worker_crashed');
    expect(await queued).toHaveLength(1);
    expect(workers).toHaveLength(2);
  });

  it('says model_not_installed when the files went away before the restart', async () => {
    const { embedder } = await openStandIn();
    expect((await failure(embedder.embed(['CRASH']))).code).toBe('worker_crashed');
    fs.rmSync(path.join(modelDir, 'onnx'), { recursive: true });
    expect((await failure(embedder.embed(['the cat sat']))).code).toBe('model_not_installed');
    fs.cpSync(path.join(SOURCE, 'onnx'), path.join(modelDir, 'onnx'), { recursive: true });
    expect(await embedder.embed(['the cat sat'])).toHaveLength(1);
  });

  it('closing while a replacement worker loads waits for the load, then ends it', async () => {
    const { embedder, workers } = await openStandIn();
    expect((await failure(embedder.embed(['CRASH']))).code).toBe('worker_crashed');
    fs.writeFileSync(path.join(modelDir, 'stand-in.json'), JSON.stringify({ loadDelayMs: 300 }));
    const waiting = embedder.embed(['the cat sat']);
    await expect.poll(() => workers.length).toBe(2);
    const log = messageLog(workers[1]!);
    const refused = failure(waiting);
    await embedder.close();
    expect(log).toEqual(['ready', 'exit']);
    expect((await refused).message).toBe('The embedding model was closed while this call was running.');
  });
});

describe('cancellation and closing', () => {
  it('rejects an already-aborted call without running it', async () => {
    const embedder = await open();
    expect((await failure(embedder.embed(['the cat sat'], { signal: AbortSignal.abort() }))).code).toBe('cancelled');
  });

  it('cancels a call in flight or waiting in the queue; other calls are unaffected', async () => {
    const { embedder, workers } = await openWatched({ batchSize: 8 });
    const log = messageLog(workers[0]!);
    const running = new AbortController();
    const waiting = new AbortController();
    const first = embedder.embed(heavyTexts, { signal: running.signal });
    const second = embedder.embed(['the cat sat'], { signal: waiting.signal });
    const third = embedder.embed(['stock market prices']);
    waiting.abort();
    running.abort();
    expect((await failure(first)).code).toBe('cancelled');
    expect((await failure(second)).code).toBe('cancelled');
    expect(log).toEqual([]); // both refused at once, before the worker answered anything
    expect(await third).toHaveLength(1);
  });

  it('cancelling a call in flight lets its batch finish in the same worker, sends no more of it, and the next call works', async () => {
    const { embedder, workers } = await openWatched({ batchSize: 50 });
    const worker = workers[0]!;
    const sent = sentBatches(worker);
    const log = messageLog(worker);
    const controller = new AbortController();
    const inFlight = embedder.embed(heavyTexts, { signal: controller.signal });
    expect(sent).toEqual([50]); // the first batch is in the worker
    controller.abort();
    const error = await failure(inFlight);
    expect(error).toMatchObject({ code: 'cancelled', message: 'The embedding was cancelled.' });
    expect(log).toEqual([]); // refused at once, not after the worker answered the batch

    const [after] = await embedder.embed(['the cat sat']);
    expect(norm(after!)).toBeCloseTo(1, 5);
    // The cancelled call's batch was answered (and dropped); its other seven were never sent.
    expect(sent).toEqual([50, 1]);
    expect(log).toEqual(['result', 'result']);
    expect(workers).toHaveLength(1);
    expect(worker.threadId).not.toBe(-1);
  });

  it('close() during a running batch waits for it, then ends the worker; the model opens again in the same process', async () => {
    const { embedder, workers } = await openWatched({ batchSize: 50 });
    const worker = workers[0]!;
    const sent = sentBatches(worker);
    const log = messageLog(worker);
    const inFlight = embedder.embed(heavyTexts);
    const queued = embedder.embed(['the cat sat']);
    expect(sent).toEqual([50]);

    const closing = embedder.close();
    // Callers hear at once; close() itself resolves only once the worker is idle and has ended.
    expect(await failure(inFlight)).toMatchObject({
      code: 'cancelled',
      message: 'The embedding model was closed while this call was running.',
    });
    expect(await failure(queued)).toMatchObject({
      code: 'cancelled',
      message: 'The embedding model was closed before this call started.',
    });
    expect(await failure(embedder.embed(['the cat sat']))).toMatchObject({ code: 'cancelled', message: 'The embedding model was closed.' });
    await closing;
    // The batch in the worker was answered before the thread ended, and no other was sent.
    expect(log).toEqual(['result', 'exit']);
    expect(sent).toEqual([50]);
    expect(worker.threadId).toBe(-1);
    await embedder.close(); // a second close is harmless

    // The process survived, and the same model opens and embeds again.
    const again = await open();
    const [vector] = await again.embed(['the cat sat']);
    expect(norm(vector!)).toBeCloseTo(1, 5);
  });
});
