import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api.js';
import { createHttpClient, errorFromResponse, type EventSourceLike } from './http.js';
import { takeToken } from './token.js';

const TOKEN = 'secret-token';
let server: Server;
let baseUrl = '';
const seen: { method: string; auth: string | undefined; type: string | undefined; body: unknown }[] = [];

function reply(res: ServerResponse, status: number, body: string, type = 'application/json') {
  res.writeHead(status, { 'Content-Type': type });
  res.end(body);
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const method = (req.url ?? '').replace('/api/call/', '');
      seen.push({ method, auth: req.headers.authorization, type: req.headers['content-type'], body: raw ? JSON.parse(raw) : undefined });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        return reply(res, 401, JSON.stringify({ error: { code: 'unauthorized', message: 'bad token' } }));
      }
      switch (method) {
        case 'settings.get':
          return reply(res, 200, JSON.stringify({ theme: 'dark', language: 'zh-CN' }));
        case 'conversations.rename':
          return reply(res, 400, JSON.stringify({ error: { code: 'invalid_input', message: 'title: too short', field: 'title' } }));
        case 'chat.send':
          return reply(res, 502, JSON.stringify({ error: { code: 'provider_unreachable', message: 'connect ECONNREFUSED' } }));
        case 'conversations.get':
          return reply(res, 404, JSON.stringify({ error: { code: 'not_found', message: 'no such conversation' } }));
        case 'app.info':
          return reply(res, 500, '<html>proxy error</html>', 'text/html');
        case 'providers.list':
          return reply(res, 418, JSON.stringify({ error: { code: 'from_the_future', message: 'new code' } }));
        case 'self.list':
          return reply(res, 200, 'not json');
        default:
          return reply(res, 404, JSON.stringify({ error: { code: 'unknown_method', message: `no ${method}` } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the call to fail');
}

describe('HTTP transport', () => {
  const client = () => createHttpClient({ token: TOKEN, baseUrl });

  it('posts the input as JSON with the bearer token and returns the JSON output', async () => {
    const out = await client().call('settings.get', {});
    expect(out).toEqual({ theme: 'dark', language: 'zh-CN' });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'settings.get', auth: `Bearer ${TOKEN}`, type: 'application/json', body: {} });
  });

  it('rejects with the ApiError from the error envelope, field included', async () => {
    const err = await rejection(client().call('conversations.rename', { id: 'c1', title: 'x' }));
    expect(err.toJSON()).toEqual({ code: 'invalid_input', message: 'title: too short', field: 'title' });
    expect((await rejection(client().call('chat.send', { conversationId: 'c1', content: 'hi' }))).code).toBe('provider_unreachable');
    expect((await rejection(client().call('conversations.get', { id: 'nope' }))).code).toBe('not_found');
  });

  it('maps a refused token to unauthorized', async () => {
    const err = await rejection(createHttpClient({ token: 'wrong', baseUrl }).call('settings.get', {}));
    expect(err.code).toBe('unauthorized');
  });

  it('copes with replies that are not the error envelope', async () => {
    const html = await rejection(client().call('app.info', {}));
    expect(html.code).toBe('internal');
    expect(html.message).toContain('500');
    expect((await rejection(client().call('providers.list', {}))).code).toBe('internal');
    expect((await rejection(client().call('self.list', {}))).code).toBe('internal');
  });

  it('rejects with an ApiError when the server cannot be reached', async () => {
    const dead = createHttpClient({ token: TOKEN, baseUrl: 'http://127.0.0.1:1' });
    expect((await rejection(dead.call('settings.get', {}))).code).toBe('internal');
  });

  it('maps bare statuses when there is no body', () => {
    expect(errorFromResponse(401, '').code).toBe('unauthorized');
    expect(errorFromResponse(413, '').code).toBe('payload_too_large');
    expect(errorFromResponse(503, '').code).toBe('internal');
  });
});

class FakeEventSource implements EventSourceLike {
  readyState = 0;
  onerror: ((event: Event) => void) | null = null;
  listeners = new Map<string, ((event: { data: string }) => void)[]>();
  constructor(public url: string) {}
  addEventListener(type: string, listener: (event: { data: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  fire(type: string, data: unknown) {
    for (const l of this.listeners.get(type) ?? []) l({ data: typeof data === 'string' ? data : JSON.stringify(data) });
  }
  close() {}
}

describe('HTTP transport events', () => {
  it('subscribes with the token, dispatches typed events and reports reconnects', () => {
    let source!: FakeEventSource;
    const client = createHttpClient({
      token: 'a b',
      baseUrl: '',
      createEventSource: (url) => (source = new FakeEventSource(url)),
    });
    expect(source.url).toBe('/api/events?token=a%20b');

    const deltas: string[] = [];
    const off = client.on('chat.delta', (p) => deltas.push(p.text));
    const connects: boolean[] = [];
    client.onConnect((re) => connects.push(re));

    source.fire('hello', {});
    source.fire('chat.delta', { conversationId: 'c', messageId: 'm', text: 'Hi' });
    source.fire('chat.delta', '{broken');
    source.onerror?.(new Event('error'));
    expect(client.connectionState).toBe('reconnecting');
    source.fire('hello', {});
    expect(client.connectionState).toBe('open');
    off();
    source.fire('chat.delta', { conversationId: 'c', messageId: 'm', text: 'ignored' });

    expect(deltas).toEqual(['Hi']);
    expect(connects).toEqual([false, true]);
  });

  /** Resolves once `check` holds (a bound for hangs). */
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  it('after the stream gives up (a server shutting down), asks until the server is back, then opens a new stream by itself', async () => {
    const sources: FakeEventSource[] = [];
    const answers: (number | 'down')[] = ['down', 503, 200];
    const asked: string[] = [];
    const client = createHttpClient({
      token: 'tok',
      baseUrl: 'http://127.0.0.1:9',
      reconnectDelays: [5],
      createEventSource: (url) => {
        const source = new FakeEventSource(url);
        sources.push(source);
        return source;
      },
      fetch: async (input, init) => {
        asked.push(`${String(input)} ${(init?.headers as Record<string, string>).Authorization}`);
        const answer = answers.shift() ?? 200;
        if (answer === 'down') throw new TypeError('Failed to fetch');
        return new Response('{}', { status: answer });
      },
    });
    const connects: boolean[] = [];
    client.onConnect((re) => connects.push(re));
    sources[0]!.fire('hello', {});
    // The server ended the stream and answered the browser's retry with 503 (shutting down): EventSource gives up.
    sources[0]!.readyState = 2;
    sources[0]!.onerror?.(new Event('error'));
    expect(client.connectionState).toBe('reconnecting');
    await until(() => sources.length === 2);
    expect(asked).toEqual(Array(3).fill('http://127.0.0.1:9/api/call/app.info Bearer tok'));
    expect(sources[1]!.url).toBe('http://127.0.0.1:9/api/events?token=tok');
    sources[1]!.fire('hello', {});
    expect(client.connectionState).toBe('open');
    expect(connects).toEqual([false, true]);
  });

  it('closes for good when the token is refused (the link was reset)', async () => {
    let source!: FakeEventSource;
    const client = createHttpClient({
      token: 'old',
      reconnectDelays: [5],
      createEventSource: (url) => (source = new FakeEventSource(url)),
      fetch: async () => new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'no' } }), { status: 401 }),
    });
    source.fire('hello', {});
    source.readyState = 2;
    source.onerror?.(new Event('error'));
    await until(() => client.connectionState === 'closed');
  });
});

describe('HTTP transport downloads', () => {
  it('builds an export download link with the token in the query, every part escaped', () => {
    const client = createHttpClient({ token: 'a+b/c=', baseUrl: 'http://127.0.0.1:5' });
    expect(client.exportDownloadUrl?.('anima-export-2026-11-03-142501.zip')).toBe(
      'http://127.0.0.1:5/api/exports/anima-export-2026-11-03-142501.zip?token=a%2Bb%2Fc%3D',
    );
    expect(createHttpClient({ token: 't' }).exportDownloadUrl?.('../x y.zip')).toBe('/api/exports/..%2Fx%20y.zip?token=t');
  });
});

describe('token handling', () => {
  function env(href: string, stored: string | null = null) {
    const store = new Map<string, string>(stored ? [['anima.token', stored]] : []);
    const replaced: string[] = [];
    return {
      replaced,
      store,
      env: {
        href,
        storage: {
          getItem: (k: string) => store.get(k) ?? null,
          setItem: (k: string, v: string) => void store.set(k, v),
          removeItem: (k: string) => void store.delete(k),
        },
        replaceUrl: (u: string) => void replaced.push(u),
      },
    };
  }

  it('takes the token from the address, stores it and removes it from the address bar', () => {
    const e = env('http://127.0.0.1:4000/?token=abc&x=1#here');
    expect(takeToken(e.env)).toBe('abc');
    expect(e.store.get('anima.token')).toBe('abc');
    expect(e.replaced).toEqual(['/?x=1#here']);
  });

  it('falls back to the stored token after a reload, and to nothing', () => {
    const e = env('http://127.0.0.1:4000/', 'kept');
    expect(takeToken(e.env)).toBe('kept');
    expect(e.replaced).toEqual([]);
    expect(takeToken(env('http://127.0.0.1:4000/').env)).toBeNull();
  });
});
