// Every reply ends, in a size the app can hold, with storable text — through the real clients over
// a loopback server that speaks the OpenAI-compatible event stream, hostile in the ways real ones are.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider, ProviderError, type StreamEvent } from './index.js';

type Behaviour = (res: http.ServerResponse) => void;
let behaviour: Behaviour;
let server: http.Server;
let baseUrl: string;
const open = new Set<http.ServerResponse>();
const timers = new Set<ReturnType<typeof setInterval>>();

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content } }] })}\n\n`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    open.add(res);
    res.on('close', () => open.delete(res));
    behaviour(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  for (const t of timers) clearInterval(t);
  for (const res of open) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Writes `piece()` every `ms` until the client goes away. */
function every(ms: number, piece: () => string): Behaviour {
  return (res) => {
    const timer = setInterval(() => res.write(piece()), ms);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  };
}

async function collect(options: { timeoutMs?: number; replyDeadlineMs?: number; maxReplyChars?: number }) {
  const provider = createProvider({ kind: 'openai-compatible', baseUrl, maxRetries: 0, ...options });
  const events: StreamEvent[] = [];
  try {
    for await (const event of provider.stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error: error as ProviderError };
  }
}

describe('reply bounds', () => {
  it('keep-alives are not progress: a stream of only comments times out', async () => {
    behaviour = every(20, () => ': keep-alive\n\n');
    const { error } = await collect({ timeoutMs: 400 });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error!.code).toBe('provider_timeout');
    expect(error!.message).toMatch(/only keep-alives/);
  });

  it('a reply that keeps coming past the deadline is stopped, with what came kept by the caller', async () => {
    behaviour = every(20, () => chunk('more '));
    const { events, error } = await collect({ timeoutMs: 5_000, replyDeadlineMs: 600 });
    expect(error!.code).toBe('provider_timeout');
    expect(error!.message).toMatch(/minutes, so it was stopped/);
    expect(events.length).toBeGreaterThan(0);
  });

  it('a reply past the size bound is stopped at the bound', async () => {
    behaviour = every(5, () => chunk('x'.repeat(1000)));
    const { events, error } = await collect({ maxReplyChars: 10_000 });
    expect(error!.code).toBe('provider_bad_response');
    const chars = events.reduce((n, e) => n + (e.type === 'text' ? e.text.length : 0), 0);
    expect(chars).toBeLessThanOrEqual(10_000);
    expect(chars).toBeGreaterThan(5_000);
  });

  it('NUL and lone surrogates in a delta arrive as U+FFFD, and the reply completes', async () => {
    behaviour = (res) => {
      res.write(chunk('hello\u0000world '));
      // A lone surrogate as JSON escapes it: valid JSON, not storable text.
      res.write('data: {"choices":[{"index":0,"delta":{"content":"a\\ud800b"}}]}\n\n');
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      res.end();
    };
    const { events, error } = await collect({});
    expect(error).toBeUndefined();
    const text = events.map((e) => (e.type === 'text' ? e.text : '')).join('');
    expect(text).toBe('hello\uFFFDworld a\uFFFDb');
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
  });
});
