// The loopback fake model server itself: what other tests and the e2e suite rely on.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { createProvider } from './index.js';
import { closedPort, collect, textOf } from './test-support.js';

const started: FakeLlm[] = [];
async function start(options?: Parameters<typeof startFakeLlm>[0]): Promise<FakeLlm> {
  const fake = await startFakeLlm(options);
  started.push(fake);
  return fake;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

const chat = (fake: FakeLlm, body: object, headers: Record<string, string> = {}) =>
  fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'fake-model', stream: true, messages: [], ...body }) });

describe('fake LLM server', () => {
  it('listens on loopback, on a free port or the one asked for', async () => {
    const fake = await start();
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fake.baseUrl).toBe(`${fake.url}/v1`);
    const port = await closedPort();
    expect((await start({ port })).url).toBe(`http://127.0.0.1:${port}`);
  });

  it('echoes the last user message in several delayed chunks when nothing is scripted', async () => {
    const fake = await start();
    for (const kind of ['openai-compatible', 'anthropic'] as const) {
      const provider = createProvider({ kind, baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl });
      const begun = Date.now();
      const { events } = await collect(
        provider.stream({
          model: 'fake-model',
          messages: [
            { role: 'user', content: 'hello there' },
            { role: 'assistant', content: 'earlier' },
          ],
        }),
      );
      expect(events.filter((e) => e.type === 'text')).toEqual(['I', ' hear', ' you:', ' hello', ' there'].map((text) => ({ type: 'text', text })));
      // Eight pauses of 15 ms between the nine events of the OpenAI stream (ten for Anthropic).
      expect(Date.now() - begun).toBeGreaterThanOrEqual(8 * 15 - 5);
    }
  });

  it('records every request with its method, path, headers and parsed body', async () => {
    const fake = await start({ defaultChunkDelayMs: 0 });
    await (await chat(fake, { messages: [{ role: 'user', content: 'hey' }] }, { authorization: 'Bearer k' })).text();
    await (await fetch(`${fake.url}/api/tags`)).text();
    expect(fake.requests).toEqual([
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: expect.objectContaining({ authorization: 'Bearer k' }),
        body: { model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'hey' }] },
      },
      { method: 'GET', path: '/api/tags', headers: expect.any(Object), body: undefined },
    ]);
  });

  it('reset() forgets unused scripted replies and recorded requests, and keeps what its owner set', async () => {
    const fake = await start({ defaultChunkDelayMs: 0 });
    fake.models = ['kept-model'];
    fake.script({ kind: 'text', text: 'left over from a failed test' }, { kind: 'hang' });
    await (await fetch(`${fake.url}/api/tags`)).text();
    fake.reset();
    expect(fake.requests).toEqual([]);
    const provider = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl });
    const { events } = await collect(provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: 'fresh' }] }));
    expect(textOf(events)).toBe('I hear you: fresh');
    expect(await provider.listModels()).toEqual(['kept-model']);
  });

  it('serves the model list as OpenAI /v1/models and Ollama /api/tags', async () => {
    const fake = await start();
    fake.models = ['llama3.2:latest', 'qwen3:8b'];
    expect(await (await fetch(`${fake.baseUrl}/models`)).json()).toMatchObject({
      object: 'list',
      data: [{ id: 'llama3.2:latest' }, { id: 'qwen3:8b' }],
    });
    expect(await (await fetch(`${fake.url}/api/tags`)).json()).toEqual({
      models: [
        { name: 'llama3.2:latest', model: 'llama3.2:latest' },
        { name: 'qwen3:8b', model: 'qwen3:8b' },
      ],
    });
  });

  it('replays every .sse fixture byte for byte, in several writes', async () => {
    const fake = await start();
    for (const file of fs.readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.sse'))) {
      fake.script({ kind: 'fixture', file, delayMs: 2 });
      const response = await chat(fake, {});
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reads: Uint8Array[] = [];
      for await (const chunk of response.body!) reads.push(chunk);
      expect(Buffer.concat(reads).equals(fs.readFileSync(path.join(FIXTURES_DIR, file)))).toBe(true);
      expect(reads.length).toBeGreaterThan(1);
    }
  });

  it('answers a missing or wrong key with each API’s real 401 shape', async () => {
    const fake = await start();
    fake.apiKey = 'right';
    const openai = await chat(fake, {}, { authorization: 'Bearer wrong' });
    expect(openai.status).toBe(401);
    expect(await openai.json()).toEqual({
      error: {
        message: 'Incorrect API key provided: fake****. You can find your API key at https://platform.openai.com/account/api-keys.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    const anthropic = await fetch(`${fake.url}/v1/messages`, { method: 'POST', body: '{"stream":true}' });
    expect([anthropic.status, await anthropic.json()]).toEqual([401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }]);
    expect((await fetch(`${fake.url}/api/tags`, { headers: { 'x-api-key': 'right' } })).status).toBe(200);
  });

  it('serves an error body from a fixture file verbatim, with extra headers', async () => {
    const fake = await start();
    fake.script({ kind: 'error', status: 429, file: 'openai-error-429-insufficient-quota-2023.json', headers: { 'retry-after': '7' } });
    const response = await chat(fake, {});
    expect([response.status, response.headers.get('retry-after'), response.headers.get('content-type')]).toEqual([429, '7', 'application/json']);
    expect(await response.text()).toBe(fs.readFileSync(path.join(FIXTURES_DIR, 'openai-error-429-insufficient-quota-2023.json'), 'utf8'));
  });

  it('refuses unknown routes and non-streaming requests like the real API', async () => {
    const fake = await start();
    const unknown = await fetch(`${fake.url}/v1/completions`, { method: 'POST', body: '{}' });
    expect([unknown.status, ((await unknown.json()) as { error: { message: string } }).error.message]).toEqual([404, 'Invalid URL (POST /v1/completions)']);
    expect((await chat(fake, { stream: false })).status).toBe(400);
  });

  it('drops hung requests on close', async () => {
    const fake = await start();
    fake.script({ kind: 'hang' });
    const pending = chat(fake, {});
    while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // A hang never ends by itself, and a server closes only once every connection is gone: close()
    // returning at all means it dropped the hung one.
    await fake.close();
    await expect(pending).rejects.toThrow('fetch failed');
  });
});
