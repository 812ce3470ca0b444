// The local (transformers.js) provider: the not-installed paths, the worker-thread glue with a
// stand-in engine (deterministic replies, written to a temporary module the worker imports), and the
// real @huggingface/transformers in the real worker on the generated tiny chat model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProvider, createLocalProvider, type StreamEvent, type StreamRequest } from './index.js';
import { LOADING_MODEL_TEXT, unloadLocalModel, type LocalProviderHooks } from './local.js';
import { collect, textOf } from './test-support.js';

let modelsDir: string;
beforeEach(() => {
  modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-models-'));
});
afterEach(async () => {
  await unloadLocalModel();
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

function install(id: string, { weights = true } = {}): void {
  const dir = path.join(modelsDir, id);
  fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), '{}');
  if (weights) fs.writeFileSync(path.join(dir, 'onnx', 'model_q4.onnx'), 'not really weights');
}

const ask = (model: string): StreamRequest => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const notDownloaded = (id: string) => `The local model "${id}" is not downloaded yet — download it in Settings → Models.`;
const loading: StreamEvent = { type: 'status', status: 'loading_model', text: LOADING_MODEL_TEXT };
/** A module that cannot be imported: the worker must not get as far as loading anything. */
const noEngine: LocalProviderHooks = { engine: '@anima-test/no-such-engine' };

function exited(worker: Worker): Promise<void> {
  // An ended thread's id is -1; its exit event may have fired before anyone listened.
  if (worker.threadId === -1) return Promise.resolve();
  return new Promise((resolve) => worker.once('exit', () => resolve()));
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('not installed', () => {
  it('says a model is not downloaded when its folder is missing', async () => {
    const { error } = await collect(createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, noEngine).stream(ask('qwen2.5-0.5b')));
    expect(error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded('qwen2.5-0.5b') });
  });

  it('says so when config.json or the onnx weights are missing, without starting a worker', async () => {
    install('no-weights', { weights: false });
    fs.mkdirSync(path.join(modelsDir, 'no-config', 'onnx'), { recursive: true });
    fs.writeFileSync(path.join(modelsDir, 'no-config', 'onnx', 'model.onnx'), 'x');
    const started: Worker[] = [];
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, { ...noEngine, onWorkerStart: (w) => started.push(w) });
    for (const id of ['no-weights', 'no-config']) {
      expect((await collect(provider.stream(ask(id)))).error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded(id) });
    }
    expect(started).toEqual([]);
  });

  it('does not look outside the models folder', async () => {
    install('inside');
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir: path.join(modelsDir, 'inside', 'onnx') }, noEngine);
    expect((await collect(provider.stream(ask('../../inside')))).error?.code).toBe('provider_not_installed');
  });

  it('says so when no models folder is configured', async () => {
    const { error } = await collect(createProvider({ kind: 'local', baseUrl: '' }).stream(ask('any')));
    expect(error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded('any') });
  });

  it('explains a missing engine package when the model files are there', async () => {
    install('onnx-community/tiny');
    const { events, error } = await collect(createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, noEngine).stream(ask('onnx-community/tiny')));
    expect(events).toEqual([loading]);
    expect(error).toMatchObject({
      code: 'provider_not_installed',
      message:
        'Running models on this computer needs a component that is not installed in this version of Anima. Use a model server (such as Ollama) or a cloud provider instead.',
    });
  });

  it('lists only complete model folders, including org/name ones', async () => {
    install('onnx-community/Qwen2.5-0.5B-Instruct');
    install('smollm');
    install('half', { weights: false });
    fs.writeFileSync(path.join(modelsDir, 'stray.txt'), '');
    expect(await createProvider({ kind: 'local', baseUrl: '', modelsDir }).listModels()).toEqual(['onnx-community/Qwen2.5-0.5B-Instruct', 'smollm']);
    expect(await createProvider({ kind: 'local', baseUrl: '', modelsDir: path.join(modelsDir, 'nope') }).listModels()).toEqual([]);
  });
});

/**
 * Stands in for transformers.js inside the worker: a chat template that tags roles, one token per
 * prompt character, and a reply scripted by `<model>/script.json`. What the worker asked of it is
 * appended to `<model>/seen.jsonl`.
 */
const STAND_IN_ENGINE = `
import fs from 'node:fs';
import path from 'node:path';
export const env = {};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export class TextStreamer {
  constructor(tokenizer, options) { this.options = options; }
}
export class InterruptableStoppingCriteria {
  interrupted = false;
  interrupt() { this.interrupted = true; }
}
export async function pipeline(task, model, options) {
  const dir = path.join(env.localModelPath, model);
  const script = JSON.parse(fs.readFileSync(path.join(dir, 'script.json'), 'utf8'));
  const seen = (entry) => fs.appendFileSync(path.join(dir, 'seen.jsonl'), JSON.stringify(entry) + '\\n');
  seen({ task, options, env });
  if (script.failLoad) throw new Error(script.failLoad);
  const tokenizer = (text) => ({ input_ids: { dims: [1, text.length] }, attention_mask: { dims: [1, text.length] } });
  tokenizer.apply_chat_template = (messages) => messages.map((m) => '<' + m.role + '>' + m.content).join('') + '<assistant>';
  const EOS = 7n;
  return {
    tokenizer,
    model: {
      generation_config: { eos_token_id: 7 },
      async generate({ input_ids, max_new_tokens, do_sample, temperature, streamer, stopping_criteria }) {
        if (!streamer) return; // the load probe
        seen({ promptTokens: input_ids.dims[1], max_new_tokens, do_sample, temperature });
        let written = 0;
        for (const token of script.tokens) {
          if (written === max_new_tokens) return;
          await sleep(script.delayMs ?? 0);
          if (stopping_criteria.interrupted) return;
          written++;
          streamer.options.token_callback_function([BigInt(100 + written)]);
          streamer.options.callback_function(token);
        }
        if (script.failGenerate) throw new Error(script.failGenerate);
        if (script.eos && written < max_new_tokens) streamer.options.token_callback_function([EOS]);
      },
    },
  };
}
`;

describe('in the worker, with a stand-in engine', () => {
  let engineDir: string;
  let hooks: LocalProviderHooks;
  beforeAll(() => {
    engineDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-stand-in-'));
    const file = path.join(engineDir, 'stand-in-engine.mjs');
    fs.writeFileSync(file, STAND_IN_ENGINE);
    hooks = { engine: pathToFileURL(file).href };
  });
  afterAll(() => fs.rmSync(engineDir, { recursive: true, force: true }));

  interface Script {
    tokens: string[];
    delayMs?: number;
    eos?: boolean;
    failLoad?: string;
    failGenerate?: string;
  }

  function installScripted(id: string, script: Script, config: object = {}) {
    install(id);
    fs.writeFileSync(path.join(modelsDir, id, 'script.json'), JSON.stringify(script));
    fs.writeFileSync(path.join(modelsDir, id, 'config.json'), JSON.stringify(config));
    const workers: Worker[] = [];
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, { ...hooks, onWorkerStart: (w) => workers.push(w) });
    const seen = () =>
      fs
        .readFileSync(path.join(modelsDir, id, 'seen.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { provider, workers, seen };
  }

  it('shows the model loading, streams its tokens from the chat-templated prompt, offline only', async () => {
    const { provider, seen } = installScripted('smollm', { tokens: ['Hel', 'lo', '', '!'], eos: true });
    const { events, error } = await collect(
      provider.stream({
        model: 'smollm',
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'tool', toolCallId: 't1', name: 'memory_recall', content: 'nothing' },
          { role: 'user', content: 'hi' },
        ],
        tools: [{ name: 'memory_recall', description: 'Recall', parameters: { type: 'object' } }],
        temperature: 0.2,
      }),
    );
    expect(error).toBeUndefined();
    const prompt = '<system>Be kind.<user>Result of memory_recall: nothing<user>hi<assistant>';
    expect(events).toEqual([
      loading,
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: '!' },
      { type: 'done', finishReason: 'stop', usage: { inputTokens: prompt.length, outputTokens: 5 } },
    ]);
    const [load, generation] = seen();
    expect(load).toEqual({
      task: 'text-generation',
      // The dtype that makes transformers.js read onnx/model_q4.onnx, the file that is there.
      options: { dtype: 'q4', local_files_only: true },
      env: {
        allowRemoteModels: false,
        allowLocalModels: true,
        localModelPath: modelsDir + path.sep,
        useBrowserCache: false,
        useFSCache: false,
        useWasmCache: false,
      },
    });
    expect(generation).toEqual({ promptTokens: prompt.length, max_new_tokens: 1024, do_sample: true, temperature: 0.2 });
  });

  it('says length when max tokens cut the reply, and honours temperature 0 as greedy', async () => {
    const { provider, seen } = installScripted('smollm', { tokens: ['a', 'b', 'c', 'd', 'e'], eos: true });
    const { events } = await collect(provider.stream({ ...ask('smollm'), maxTokens: 3, temperature: 0 }));
    expect(textOf(events)).toBe('abc');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'length', usage: { inputTokens: 19, outputTokens: 3 } });
    expect(seen()[1]).toEqual({ promptTokens: 19, max_new_tokens: 3, do_sample: false });
  });

  it('loads once, and runs replies one at a time on the same worker', async () => {
    const { provider, workers } = installScripted('smollm', { tokens: ['a', 'b', 'c'], delayMs: 20, eos: true });
    const [first, second] = await Promise.all([collect(provider.stream(ask('smollm'))), collect(provider.stream(ask('smollm')))]);
    expect(textOf(first.events)).toBe('abc');
    expect(textOf(second.events)).toBe('abc');
    const third = await collect(createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, hooks).stream(ask('smollm')));
    expect(third.events[0]).toEqual({ type: 'text', text: 'a' }); // no loading: the model is in memory
    expect(workers).toHaveLength(1);
  });

  it('stops the model when the consumer stops reading, freeing the worker for the next reply', async () => {
    // Left running, the abandoned reply would hold the worker for a minute (600 tokens, 100 ms each).
    const tokens = Array.from({ length: 600 }, (_, i) => 'abcdefghij'[i % 10]!);
    const { provider, seen } = installScripted('smollm', { tokens, delayMs: 100 });
    for await (const event of provider.stream(ask('smollm'))) {
      if (event.type === 'text') break;
    }
    const started = Date.now();
    const { events } = await collect(provider.stream({ ...ask('smollm'), maxTokens: 1 }));
    expect(textOf(events)).toBe('a');
    // Not after the abandoned reply: a third of its minute is far beyond any load's noise.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(seen()).toHaveLength(3);
  });

  it('stops generating on abort, at once', async () => {
    const { provider } = installScripted('smollm', { tokens: ['a', 'b', 'c', 'd', 'e'], delayMs: 30 });
    const controller = new AbortController();
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of provider.stream({ ...ask('smollm'), signal: controller.signal })) {
        if (event.type === 'text') {
          seen.push(event.text);
          controller.abort();
        }
      }
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cancelled', midStream: true });
    expect(seen).toEqual(['a']);
  });

  it('gives up waiting for its turn when aborted', async () => {
    const { provider } = installScripted('smollm', { tokens: ['a', 'b', 'c', 'd'], delayMs: 50 });
    const busy = collect(provider.stream(ask('smollm')));
    const controller = new AbortController();
    const waiting = collect(provider.stream({ ...ask('smollm'), signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect((await waiting).error?.code).toBe('cancelled');
    expect(textOf((await busy).events)).toBe('abcd');
  });

  it('reports a failed load as could-not-be-loaded and a failed reply as such', async () => {
    const broken = installScripted('broken', { tokens: [], failLoad: 'Protobuf parsing failed.' });
    const { error } = await collect(broken.provider.stream(ask('broken')));
    expect(error).toMatchObject({
      code: 'provider_not_installed',
      message: 'The local model "broken" could not be loaded (Protobuf parsing failed). Its files may be damaged: download it again in Settings → Models.',
    });

    const failing = installScripted('failing', { tokens: ['a'], failGenerate: 'out of memory' });
    const result = await collect(failing.provider.stream(ask('failing')));
    expect(textOf(result.events)).toBe('a');
    expect(result.error).toMatchObject({
      code: 'provider_server_error',
      midStream: true,
      message: 'The local model "failing" failed while writing its reply: out of memory',
    });
  });

  it('refuses a prompt that does not fit the context, saying the numbers', async () => {
    // '<user>hi<assistant>' is 19 tokens to the stand-in.
    const { provider } = installScripted('small', { tokens: ['a', 'b'], eos: true }, { max_position_embeddings: 100 });
    const tooLong = await collect(provider.stream({ ...ask('small'), maxTokens: 90 }));
    expect(tooLong.error).toMatchObject({
      code: 'provider_context_overflow',
      message:
        'The conversation is too long for the local model "small": the prompt is 19 tokens and the reply needs up to 90 more, ' +
        'but the model reads at most 100 tokens in all. Start a new conversation or send a shorter message.',
    });
    // With no limit asked for, the reply gets the room there is…
    expect((await collect(provider.stream(ask('small')))).events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    // …unless that is too little to be worth starting.
    const crowded = await collect(provider.stream({ model: 'small', messages: [{ role: 'user', content: 'x'.repeat(60) }] }));
    expect(crowded.error?.code).toBe('provider_context_overflow');
    expect(crowded.error?.message).toContain('the prompt is 77 tokens and the reply needs up to 64 more, but the model reads at most 100 tokens');
  });

  // Ended from outside here, which is safe with the stand-in: a real model's thread must not be
  // terminated inside an onnxruntime call (see ModelThread in local.ts).
  it('fails a reply whose worker died with a clear error; the next reply starts a new worker', async () => {
    const { provider, workers } = installScripted('smollm', { tokens: 'abcdefghij'.split(''), delayMs: 50, eos: true });
    const events: StreamEvent[] = [];
    const failure = await (async () => {
      for await (const event of provider.stream(ask('smollm'))) {
        events.push(event);
        if (event.type === 'text') void workers[0]!.terminate();
      }
    })().catch((error: unknown) => error);
    expect(events).toEqual([loading, { type: 'text', text: 'a' }]);
    expect(failure).toMatchObject({
      code: 'provider_server_error',
      midStream: true,
      message: 'The local model "smollm" stopped unexpectedly while writing its reply (exit code 1). Send the message again to restart it.',
    });

    const { events: after, error } = await collect(provider.stream(ask('smollm')));
    expect(error).toBeUndefined();
    expect(after[0]).toEqual(loading);
    expect(textOf(after)).toBe('abcdefghij');
    expect(workers).toHaveLength(2);
  });

  it('replaces the loaded model when another is asked for', async () => {
    const first = installScripted('first', { tokens: ['1'], eos: true });
    const second = installScripted('second', { tokens: ['2'], eos: true });
    expect(textOf((await collect(first.provider.stream(ask('first')))).events)).toBe('1');
    expect(textOf((await collect(second.provider.stream(ask('second')))).events)).toBe('2');
    await within(exited(first.workers[0]!), 5_000, 'ending the first model');
    expect(second.workers).toHaveLength(1);
  });
});

describe('with the real transformers.js', () => {
  // A one-layer Llama-shaped decoder with random weights (scripts/make-tiny-models.py): real config,
  // tokenizer, chat template and KV cache, so the whole load-template-generate-stream path runs.
  const TINY_CHAT = fileURLToPath(new URL('../models/testing/models/anima-test/tiny-chat', import.meta.url));
  const model = 'anima-test/tiny-chat';

  function installTinyChat(config: Record<string, unknown> = {}) {
    const dir = path.join(modelsDir, model);
    fs.cpSync(TINY_CHAT, dir, { recursive: true });
    if (Object.keys(config).length) {
      const original = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...original, ...config }));
    }
    const workers: Worker[] = [];
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, { onWorkerStart: (w) => workers.push(w) });
    return { provider, workers, dir };
  }

  const hello: StreamRequest = {
    model,
    messages: [
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'hello, how was your day?' },
    ],
    maxTokens: 12,
  };

  it('streams text from a generated tiny model and ends with done; a second reply reuses the loaded worker', async () => {
    const { provider, workers } = installTinyChat();
    expect(await provider.listModels()).toEqual([model]);
    const { events, error } = await collect(provider.stream({ ...hello, temperature: 0 }));
    expect(error).toBeUndefined();
    expect(events[0]).toEqual(loading);
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(textOf(events).trim()).not.toBe('');
    // Random weights never pick the end token: max tokens ends the reply.
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'length', usage: { outputTokens: 12 } });

    const again = await collect(provider.stream({ ...hello, temperature: 0 }));
    expect(again.events).toEqual(events.slice(1)); // greedy: the same reply, and no loading this time
    expect(workers).toHaveLength(1);
  });

  it('stops generating on abort, promptly, and the next reply runs at once', async () => {
    const { provider, workers } = installTinyChat();
    const controller = new AbortController();
    const seen: string[] = [];
    // What the worker reports when each generation ends: how many tokens it wrote.
    const ended: { interrupted: boolean; outputTokens: number }[] = [];
    const failure = await (async () => {
      for await (const event of provider.stream({ ...hello, maxTokens: 2_000, signal: controller.signal })) {
        if (event.type === 'text') {
          seen.push(event.text);
          workers[0]!.on('message', (m: { type: string; interrupted: boolean; outputTokens: number }) => {
            if (m.type === 'done') ended.push({ interrupted: m.interrupted, outputTokens: m.outputTokens });
          });
          controller.abort();
        }
      }
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cancelled', midStream: true });
    expect(seen).toHaveLength(1);

    const { events, error } = await collect(provider.stream(hello));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'done' });
    // Unstopped, the model would write 2,000 tokens (it never picks its end token) before the next
    // reply could start; it was interrupted after a handful, and the next reply ran its 12.
    expect(ended).toEqual([
      { interrupted: true, outputTokens: expect.any(Number) },
      { interrupted: false, outputTokens: 12 },
    ]);
    expect(ended[0]!.outputTokens).toBeLessThan(200);
    expect(workers).toHaveLength(1);
  });

  it('says a truncated model could not be loaded, and loads it once repaired, in the same process', async () => {
    const { provider, workers, dir } = installTinyChat();
    const weights = path.join(dir, 'onnx', 'model.onnx');
    const good = fs.readFileSync(weights);
    fs.writeFileSync(weights, good.subarray(0, Math.floor(good.length / 3)));
    const { events, error } = await collect(provider.stream(hello));
    expect(events).toEqual([loading]);
    expect(error?.code).toBe('provider_not_installed');
    expect(error?.message).toMatch(
      /^The local model "anima-test\/tiny-chat" could not be loaded \(.+\)\. Its files may be damaged: download it again in Settings → Models\.$/,
    );
    // The failed worker is ended, not left holding the poisoned model.
    await within(exited(workers[0]!), 5_000, 'ending the failed worker');

    fs.writeFileSync(weights, good);
    const repaired = await collect(provider.stream(hello));
    expect(repaired.error).toBeUndefined();
    expect(textOf(repaired.events).trim()).not.toBe('');
    expect(workers).toHaveLength(2);
  });

  it('unloads mid-reply without harm: the reply ends with an error, the thread ends, the next reply loads again', async () => {
    const { provider, workers } = installTinyChat();
    const events: StreamEvent[] = [];
    const unloaded: Promise<void>[] = [];
    const failure = await (async () => {
      for await (const event of provider.stream({ ...hello, maxTokens: 2_000 })) {
        events.push(event);
        if (event.type === 'text' && unloaded.length === 0) unloaded.push(unloadLocalModel());
      }
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cancelled', message: 'The local model was unloaded.', midStream: true });
    expect(events.filter((e) => e.type === 'text').length).toBeLessThan(20);
    await within(Promise.all([...unloaded, exited(workers[0]!)]), 5_000, 'unloading');

    const { events: after, error } = await collect(provider.stream(hello));
    expect(error).toBeUndefined();
    expect(after[0]).toEqual(loading);
    expect(after.at(-1)).toMatchObject({ type: 'done' });
    expect(workers).toHaveLength(2);
  });

  it('refuses a prompt longer than the model context, saying the numbers', async () => {
    const { provider } = installTinyChat({ max_position_embeddings: 48 });
    const { error } = await collect(provider.stream({ ...hello, maxTokens: 40 }));
    expect(error?.code).toBe('provider_context_overflow');
    const [, prompt, reply, context] = /the prompt is (\d+) tokens and the reply needs up to (\d+) more, but the model reads at most (\d+) tokens/.exec(
      error!.message,
    )!;
    expect(Number(prompt)).toBeGreaterThan(8);
    expect(Number(prompt) + 40).toBeGreaterThan(48);
    expect([reply, context]).toEqual(['40', '48']);
    // A reply that fits is written on the same loaded model.
    const fits = await collect(provider.stream({ ...hello, maxTokens: 48 - Number(prompt) }));
    expect(fits.error).toBeUndefined();
    expect(fits.events.at(-1)).toMatchObject({ type: 'done', finishReason: 'length', usage: { inputTokens: Number(prompt) } });
  });
});
