// The local (transformers.js) provider: the not-installed paths, and the streaming glue with a
// stand-in engine (the real package is not a dependency yet).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProvider, createLocalProvider, type StreamRequest } from './index.js';
import type { TransformersEngine } from './local.js';
import { collect, textOf } from './test-support.js';

let modelsDir: string;
beforeEach(() => {
  modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-models-'));
});
afterEach(() => {
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
const unusedEngine = () => Promise.reject(new Error('the engine must not be loaded for a missing model'));

describe('not installed', () => {
  it('says a model is not downloaded when its folder is missing', async () => {
    const { error } = await collect(createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, unusedEngine).stream(ask('qwen2.5-0.5b')));
    expect(error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded('qwen2.5-0.5b') });
  });

  it('says so when config.json or the onnx weights are missing', async () => {
    install('no-weights', { weights: false });
    fs.mkdirSync(path.join(modelsDir, 'no-config', 'onnx'), { recursive: true });
    fs.writeFileSync(path.join(modelsDir, 'no-config', 'onnx', 'model.onnx'), 'x');
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, unusedEngine);
    for (const id of ['no-weights', 'no-config']) {
      expect((await collect(provider.stream(ask(id)))).error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded(id) });
    }
  });

  it('does not look outside the models folder', async () => {
    install('inside');
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir: path.join(modelsDir, 'inside', 'onnx') }, unusedEngine);
    expect((await collect(provider.stream(ask('../../inside')))).error?.code).toBe('provider_not_installed');
  });

  it('says so when no models folder is configured', async () => {
    const { error } = await collect(createProvider({ kind: 'local', baseUrl: '' }).stream(ask('any')));
    expect(error).toMatchObject({ code: 'provider_not_installed', message: notDownloaded('any') });
  });

  it('explains a missing engine package when the model files are there', async () => {
    install('onnx-community/tiny');
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, () =>
      Promise.reject(new Error("Cannot find package '@huggingface/transformers'")),
    );
    const { error } = await collect(provider.stream(ask('onnx-community/tiny')));
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
    expect(await createProvider({ kind: 'local', baseUrl: '', modelsDir }).listModels()).toEqual([
      'onnx-community/Qwen2.5-0.5B-Instruct',
      'smollm',
    ]);
    expect(await createProvider({ kind: 'local', baseUrl: '', modelsDir: path.join(modelsDir, 'nope') }).listModels()).toEqual([]);
  });
});

describe('with an engine', () => {
  /** Stands in for transformers.js: a chat template that tags roles, and tokens fed to the streamer. */
  function standInEngine(tokens: string[], delayMs = 0) {
    const prompts: string[] = [];
    const emitted: string[] = [];
    const engine: TransformersEngine = {
      env: { allowRemoteModels: true, localModelPath: '' },
      async pipeline() {
        const tokenizer = {
          apply_chat_template: (messages: { role: string; content: string }[]) =>
            `${messages.map((m) => `<${m.role}>${m.content}`).join('')}<assistant>`,
        };
        const generate = async (prompt: string, options: Record<string, unknown>) => {
          prompts.push(prompt);
          const streamer = options.streamer as { options: { callback_function: (text: string) => void } };
          const stopping = options.stopping_criteria as { interrupted: boolean };
          for (const token of tokens) {
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            if (stopping.interrupted) return;
            emitted.push(token);
            streamer.options.callback_function(token);
          }
        };
        return Object.assign(generate, { tokenizer });
      },
      TextStreamer: class {
        constructor(
          readonly tokenizer: unknown,
          readonly options: unknown,
        ) {}
      },
      InterruptableStoppingCriteria: class {
        interrupted = false;
        interrupt() {
          this.interrupted = true;
        }
      },
    };
    return { engine, prompts, emitted };
  }

  it('streams tokens from the chat-templated prompt, offline only', async () => {
    install('smollm');
    const { engine, prompts } = standInEngine(['Hel', 'lo', '', '!']);
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, () => Promise.resolve(engine));
    const { events, error } = await collect(
      provider.stream({
        model: 'smollm',
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'tool', toolCallId: 't1', name: 'memory_recall', content: 'nothing' },
          { role: 'user', content: 'hi' },
        ],
      }),
    );
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: '!' },
      { type: 'done', finishReason: 'stop' },
    ]);
    expect(prompts).toEqual(['<system>Be kind.<user>Result of memory_recall: nothing<user>hi<assistant>']);
    expect(engine.env).toEqual({ allowRemoteModels: false, localModelPath: modelsDir + path.sep });
  });

  it('stops the model when the consumer stops reading', async () => {
    install('smollm');
    const { engine, emitted } = standInEngine(['a', 'b', 'c', 'd', 'e'], 20);
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, () => Promise.resolve(engine));
    for await (const event of provider.stream(ask('smollm'))) {
      expect(event).toEqual({ type: 'text', text: 'a' });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(emitted).toEqual(['a']);
  });

  it('stops generating on abort', async () => {
    install('smollm');
    const { engine } = standInEngine(['a', 'b', 'c', 'd', 'e'], 30);
    const provider = createLocalProvider({ kind: 'local', baseUrl: '', modelsDir }, () => Promise.resolve(engine));
    const controller = new AbortController();
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of provider.stream({ ...ask('smollm'), signal: controller.signal })) {
        if (event.type === 'text') seen.push(event.text);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cancelled', midStream: true });
    expect(seen).toEqual(['a']);
  });
});

describe('with the real transformers.js', () => {
  // A one-layer Llama-shaped decoder with random weights (scripts/make-tiny-models.py): real config,
  // tokenizer, chat template and KV cache, so the whole load-template-generate-stream path runs.
  const TINY_CHAT = fileURLToPath(new URL('../embed/testing/models/anima-test/tiny-chat', import.meta.url));
  const model = 'anima-test/tiny-chat';

  function installTinyChat() {
    fs.cpSync(TINY_CHAT, path.join(modelsDir, model), { recursive: true });
    return createLocalProvider({ kind: 'local', baseUrl: '', modelsDir });
  }

  it('streams text from a generated tiny model and ends with done', async () => {
    const provider = installTinyChat();
    expect(await provider.listModels()).toEqual([model]);
    const { events, error } = await collect(
      provider.stream({
        model,
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'hello, how was your day?' },
        ],
        maxTokens: 12,
      }),
    );
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(textOf(events).trim()).not.toBe('');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('stops generating on abort', async () => {
    const provider = installTinyChat();
    const controller = new AbortController();
    const seen: string[] = [];
    const started = Date.now();
    const failure = await (async () => {
      for await (const event of provider.stream({ ...ask(model), maxTokens: 2_000, signal: controller.signal })) {
        if (event.type === 'text') seen.push(event.text);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cancelled', midStream: true });
    // Unstopped, the model would write 2,000 tokens (it never picks its end token).
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(10);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
