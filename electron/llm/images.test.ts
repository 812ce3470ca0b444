// A person's images in each wire protocol, read at the loopback fake server as it received them:
// OpenAI content parts (a text part, then `image_url` data URLs), Anthropic image blocks (base64
// source, before the words), Ollama's `images` list (bare base64 on the message).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { serveOllama } from '../../e2e/fake-llm/ollama.js';
import { solidPng } from '../../e2e/fake-llm/images.js';
import { createProvider, type StreamRequest } from './index.js';
import { collect } from './test-support.js';
import { PATIENCE_MS } from '../testing/patience.js';

let fake: FakeLlm;
beforeEach(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
});
afterEach(async () => {
  await fake.close();
});

const png = solidPng(3, 2).toString('base64');
const request: StreamRequest = {
  model: 'fake-model',
  messages: [
    { role: 'system', content: 'You are Anima.' },
    { role: 'user', content: 'Look at my cat.', images: [{ type: 'image/png', data: png }] },
    { role: 'assistant', content: 'What a cat!' },
    { role: 'user', content: '', images: [{ type: 'image/png', data: png }] },
  ],
};
const bodyAt = (path: string) => fake.requests.find((r) => r.path === path)!.body as { messages: unknown[] };

describe('images on the wire', () => {
  it('OpenAI-compatible: content parts with data URLs; no text part when there are no words', async () => {
    const { error } = await collect(createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl, timeoutMs: PATIENCE_MS }).stream(request));
    expect(error).toBeUndefined();
    expect(bodyAt('/v1/chat/completions').messages).toEqual([
      { role: 'system', content: 'You are Anima.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look at my cat.' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
      { role: 'assistant', content: 'What a cat!' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
    ]);
  });

  it('Anthropic: base64 image blocks before the words', async () => {
    const { error } = await collect(createProvider({ kind: 'anthropic', baseUrl: fake.url, apiKey: 'k', timeoutMs: PATIENCE_MS }).stream(request));
    expect(error).toBeUndefined();
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } };
    expect(bodyAt('/v1/messages').messages).toEqual([
      { role: 'user', content: [image, { type: 'text', text: 'Look at my cat.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'What a cat!' }] },
      { role: 'user', content: [image] },
    ]);
  });

  it('Ollama: bare base64 in the message’s images', async () => {
    serveOllama(fake, { loaded: { 'fake-model': 4096 } });
    const { error } = await collect(createProvider({ kind: 'ollama', baseUrl: fake.url, timeoutMs: PATIENCE_MS, contextTokens: 4096 }).stream(request));
    expect(error).toBeUndefined();
    expect(bodyAt('/api/chat').messages).toEqual([
      { role: 'system', content: 'You are Anima.' },
      { role: 'user', content: 'Look at my cat.', images: [png] },
      { role: 'assistant', content: 'What a cat!' },
      { role: 'user', content: '', images: [png] },
    ]);
  });

  it('a turn without images keeps its plain string content everywhere', async () => {
    const plain: StreamRequest = { model: 'fake-model', messages: [{ role: 'user', content: 'hello' }] };
    await collect(createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl, timeoutMs: PATIENCE_MS }).stream(plain));
    expect(bodyAt('/v1/chat/completions').messages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});
