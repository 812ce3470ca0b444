// The browser-mode server driven over real loopback HTTP, against a fake host.
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ApiError, MAX_BODY_BYTES, parseInput, type ApiEventName, type ApiEvents, type AnimaApi } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import type { HostEventArgs, HostEventListener } from '../events/events.js';
import { startServer, statusForErrorCode, type RunningServer } from './server.js';

const TOKEN = 'test-token-0123456789abcdef';
const SECRET_MARKER = 'outside-static-dir-do-not-serve';
const INDEX_HTML = '<!doctype html><html><head><title>Anima</title></head><body><div id="root"></div></body></html>';
const ASSET_JS = 'console.log("anima");';

// ---------------------------------------------------------------------------------------------
// Fake host
// ---------------------------------------------------------------------------------------------

type Handler = (input: unknown) => Promise<unknown>;

class FakeHost implements Host {
  readonly api = {} as AnimaApi;
  readonly dataDir = '/nonexistent';
  readonly listeners = new Set<HostEventListener>();
  readonly calls: Array<{ method: string; input: unknown }> = [];
  closed = false;
  handlers: Record<string, Handler> = {
    'conversations.create': async (input) => ({ echoed: input }),
    'chat.send': async (input) => {
      const parsed = parseInput('chat.send', input);
      return { accepted: parsed.conversationId };
    },
    'app.info': async () => {
      throw new Error('disk exploded at /secret/path/db');
    },
    'settings.get': async () => {
      throw new ApiError('provider_auth', 'The provider rejected the API key.');
    },
    'conversations.get': async () => {
      throw new ApiError('not_found', 'No such conversation.');
    },
    'chat.stop': async () => {
      throw new ApiError('provider_timeout', 'The provider did not answer in time.');
    },
  };

  async call(method: string, input: unknown): Promise<unknown> {
    this.calls.push({ method, input });
    const handler = this.handlers[method];
    if (!handler) throw new ApiError('unknown_method', `no ${method}`);
    return handler(input);
  }

  on(listener: HostEventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit<E extends ApiEventName>(event: E, payload: ApiEvents[E]): void {
    for (const listener of this.listeners) listener(...([event, payload] as HostEventArgs));
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

let root: string;
let staticDir: string;
let host: FakeHost;
let server: RunningServer;
let logs: Array<{ level: string; message: string }>;

beforeAll(async () => {
  // The static dir sits inside a folder whose package.json a traversal would reach.
  root = await mkdtemp(path.join(tmpdir(), 'anima-serve-'));
  staticDir = path.join(root, 'static');
  await mkdir(path.join(staticDir, 'assets'), { recursive: true });
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: SECRET_MARKER }));
  await writeFile(path.join(staticDir, 'index.html'), INDEX_HTML);
  await writeFile(path.join(staticDir, 'assets', 'app.js'), ASSET_JS);
  await writeFile(path.join(staticDir, 'assets', 'style.css'), 'body{}');
  await writeFile(path.join(staticDir, '.env'), SECRET_MARKER);
  await symlink(path.join(root, 'package.json'), path.join(staticDir, 'escape.json'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  host = new FakeHost();
  logs = [];
  server = await startServer({
    host,
    staticDir,
    token: TOKEN,
    log: (level, message) => logs.push({ level, message }),
  });
});

afterEach(async () => {
  await server.close();
});

function call(method: string, body: unknown, init: { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${server.origin}/api/call/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** fetch normalises URLs ('..', '%2e%2e') and owns the Host header; node:http sends both as written. */
function raw(rawPath: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, path: rawPath, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface SseEvent {
  event: string;
  data: string;
  retry?: string;
}

/** A minimal EventSource over fetch (Node 20 has none): yields parsed events and counts comments. */
async function openEvents(url: string, init: RequestInit = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let comments = 0;
  let ended = false;

  async function next(timeoutMs = 2_000): Promise<SseEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const boundary = buffer.indexOf('\n\n');
      if (boundary !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const ev: SseEvent = { event: 'message', data: '' };
        const data: string[] = [];
        let isComment = true;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          isComment = false;
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') ev.event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'retry') ev.retry = value;
        }
        if (isComment) {
          comments += 1;
          continue;
        }
        ev.data = data.join('\n');
        return ev;
      }
      if (ended) return null;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error('timed out waiting for an event');
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out waiting for an event')), remaining);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  }

  return {
    res,
    next,
    comments: () => comments,
    abort: () => controller.abort(),
  };
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('startServer', () => {
  it('binds to 127.0.0.1 and reports a URL carrying the token', () => {
    expect(server.origin).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${TOKEN}`);
    expect(server.token).toBe(TOKEN);
    expect(server.port).toBeGreaterThan(0);
  });

  it('makes a random base64url token of 32 bytes by default', async () => {
    const other = await startServer({ host, staticDir, log: () => {} });
    try {
      expect(other.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(other.token).not.toBe(TOKEN);
      expect(other.port).not.toBe(server.port);
    } finally {
      await other.close();
    }
  });

  it('refuses a token that cannot travel in a header or URL', async () => {
    await expect(startServer({ host, staticDir, token: 'has space', log: () => {} })).rejects.toThrow(/token/);
    await expect(startServer({ host, staticDir, token: '', log: () => {} })).rejects.toThrow(/token/);
  });
});

describe('static files', () => {
  it.each(['/', `/?token=${TOKEN}`, '/index.html'])('serves the app page at %s', async (p) => {
    const res = await fetch(`${server.origin}${p}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await res.text()).toBe(INDEX_HTML);
  });

  it('serves assets with their content types and no CSP', async () => {
    const js = await fetch(`${server.origin}/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBeNull();
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toBe(ASSET_JS);

    const css = await fetch(`${server.origin}/assets/style.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers HEAD with headers only', async () => {
    const res = await fetch(`${server.origin}/assets/app.js`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(ASSET_JS.length));
    expect(await res.text()).toBe('');
  });

  it('returns 404 for missing files and directories', async () => {
    for (const p of ['/missing.js', '/assets/', '/assets', '/assets/nope.css']) {
      const res = await fetch(`${server.origin}${p}`);
      expect(res.status, p).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'Not found.' } });
    }
  });

  it.each([
    '/../package.json',
    '/%2e%2e/package.json',
    '/..%2fpackage.json',
    '/%2E%2E%2Fpackage.json',
    '/assets/../../package.json',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/..\\package.json',
    '/..%5cpackage.json',
    '/index.html%00.js',
    '/.env',
    '/escape.json',
    '/%',
  ])('never serves a file outside the static dir: %s', async (p) => {
    const res = await raw(p);
    expect([403, 404]).toContain(res.status);
    expect(res.body).not.toContain(SECRET_MARKER);
  });

  it('refuses methods other than GET and HEAD with 405', async () => {
    const res = await raw('/index.html', {}, 'PUT');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    const del = await fetch(`${server.origin}/api/call/chat.send`, { method: 'DELETE', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('POST');
    const postEvents = await fetch(`${server.origin}/api/events?token=${TOKEN}`, { method: 'POST' });
    expect(postEvents.status).toBe(405);
  });
});

describe('host and origin guards', () => {
  it.each(['evil.example', `evil.example:${0}`, '127.0.0.1', '127.0.0.1:1', 'localhost.evil.example'])(
    'refuses a foreign Host header (%s) with 403, for pages and the API',
    async (hostHeader) => {
      const page = await raw('/', { Host: hostHeader });
      expect(page.status).toBe(403);
      expect(page.body).not.toContain('<html');
      const events = await raw(`/api/events?token=${TOKEN}`, { Host: hostHeader });
      expect(events.status).toBe(403);
      expect(JSON.parse(events.body)).toEqual({
        error: { code: 'unauthorized', message: 'This server answers only to 127.0.0.1 and localhost.' },
      });
    },
  );

  it('accepts localhost:PORT as the Host', async () => {
    const res = await raw('/', { Host: `localhost:${server.port}` });
    expect(res.status).toBe(200);
    expect(res.body).toBe(INDEX_HTML);
  });

  it('refuses a call from a foreign Origin with 403, even with the right token', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'Requests from other sites are not allowed.' } });
    expect(host.calls).toEqual([]);
  });

  it('checks the Origin before the token', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'http://evil.example', Authorization: 'Bearer wrong' } });
    expect(res.status).toBe(403);
  });

  it('refuses the event stream to a foreign Origin with 403', async () => {
    const res = await fetch(`${server.origin}/api/events?token=${TOKEN}`, { headers: { Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'Requests from other sites are not allowed.' } });
    expect(host.listeners.size).toBe(0);
  });

  it('refuses Origin: null (sandboxed frames, file pages)', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'null' } });
    expect(res.status).toBe(403);
  });

  it('accepts its own origin under either name', async () => {
    for (const origin of [server.origin, `http://localhost:${server.port}`]) {
      const res = await call('conversations.create', { title: 'x' }, { headers: { Origin: origin } });
      expect(res.status, origin).toBe(200);
    }
  });
});

describe('POST /api/call/<method>', () => {
  it('returns the host value as JSON', async () => {
    const res = await call('conversations.create', { title: 'Hello' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ echoed: { title: 'Hello' } });
    expect(host.calls).toEqual([{ method: 'conversations.create', input: { title: 'Hello' } }]);
  });

  it('passes an empty body to the host as no input', async () => {
    const res = await call('conversations.create', '');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(host.calls).toEqual([{ method: 'conversations.create', input: undefined }]);
  });

  it('returns 401 without a token', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: 'unauthorized', message: 'Missing or wrong token. Open the address the launcher printed.' },
    });
    expect(host.calls).toEqual([]);
  });

  it.each([`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', TOKEN, `Basic ${TOKEN}`])(
    'returns 401 for a wrong token (%s)',
    async (authorization) => {
      const res = await call('conversations.create', {}, { headers: { Authorization: authorization } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      expect(host.calls).toEqual([]);
    },
  );

  it('does not accept the token in the query for calls', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create?token=${TOKEN}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('returns 404 unknown_method for a method not in the contract', async () => {
    const res = await call('db.dropEverything', {});
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'unknown_method', message: 'Unknown API method: db.dropEverything' } });
    expect(host.calls).toEqual([]);
  });

  it('does not treat Object.prototype names as methods', async () => {
    for (const m of ['constructor', '__proto__', 'hasOwnProperty']) {
      const res = await call(m, {});
      expect(res.status, m).toBe(404);
    }
    expect(host.calls).toEqual([]);
  });

  it('returns 404 unknown_method for any other /api path', async () => {
    for (const p of ['/api', '/api/', '/api/calls/app.info', '/api/call', '/api/nothing']) {
      const res = await fetch(`${server.origin}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status, p).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code, p).toBe('unknown_method');
    }
  });

  it('returns 400 naming the field for invalid input', async () => {
    const res = await call('chat.send', { conversationId: 'c1', content: '' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; field: string } };
    expect(body.error.code).toBe('invalid_input');
    expect(body.error.field).toBe('content');
    expect(body.error.message).toMatch(/^Invalid input for chat\.send — content: /);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'field', 'message']);
  });

  it('returns 400 invalid_input for malformed JSON without calling the host', async () => {
    const res = await call('chat.send', '{"conversationId": "c1",');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid_input', message: 'The request body is not valid JSON.' } });
    expect(host.calls).toEqual([]);
  });

  it('returns 400 for a body that is not UTF-8', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]),
    });
    expect(res.status).toBe(400);
    expect(host.calls).toEqual([]);
  });

  it.each([undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'])(
    'returns 415 for Content-Type %s',
    async (type) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` };
      if (type) headers['Content-Type'] = type;
      const res = await fetch(`${server.origin}/api/call/conversations.create`, {
        method: 'POST',
        headers,
        body: type ? '{}' : new Uint8Array([0x7b, 0x7d]),
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({
        error: { code: 'invalid_input', message: 'The request body must be JSON (Content-Type: application/json).' },
      });
      expect(host.calls).toEqual([]);
    },
  );

  it('accepts application/json with a utf-8 charset', async () => {
    const res = await call('conversations.create', { title: 'é' }, { headers: { 'Content-Type': 'Application/JSON; charset=UTF-8' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: { title: 'é' } });
  });

  it('returns 500 for a plain Error without leaking its message, and logs the detail', async () => {
    const res = await call('app.info', {});
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal', message: 'Something went wrong inside Anima. The details are in the log.' },
    });
    expect(text).not.toContain('exploded');
    expect(text).not.toContain('/secret/path');
    expect(text).not.toContain('server.test');
    const logged = logs
      .filter((l) => l.level === 'error')
      .map((l) => l.message)
      .join('\n');
    expect(logged).toContain('disk exploded at /secret/path/db');
  });

  it('keeps provider error codes intact with gateway statuses', async () => {
    const auth = await call('settings.get', {});
    expect(auth.status).toBe(502);
    expect(await auth.json()).toEqual({ error: { code: 'provider_auth', message: 'The provider rejected the API key.' } });

    const timeout = await call('chat.stop', { conversationId: 'c1' });
    expect(timeout.status).toBe(504);
    expect(await timeout.json()).toEqual({ error: { code: 'provider_timeout', message: 'The provider did not answer in time.' } });
  });

  it('maps not_found to 404 with its message', async () => {
    const res = await call('conversations.get', { id: 'x' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'No such conversation.' } });
  });

  it('maps every error code to its documented status', () => {
    expect(
      Object.fromEntries(
        (
          [
            'invalid_input',
            'unauthorized',
            'not_found',
            'unknown_method',
            'conflict',
            'data_dir_locked',
            'no_provider',
            'cancelled',
            'interrupted',
            'payload_too_large',
            'provider_unreachable',
            'provider_auth',
            'provider_model_not_found',
            'provider_rate_limited',
            'provider_quota',
            'provider_server_error',
            'provider_timeout',
            'provider_bad_response',
            'provider_context_overflow',
            'provider_not_installed',
            'internal',
          ] as const
        ).map((code) => [code, statusForErrorCode(code)]),
      ),
    ).toEqual({
      invalid_input: 400,
      unauthorized: 401,
      not_found: 404,
      unknown_method: 404,
      conflict: 409,
      data_dir_locked: 409,
      no_provider: 409,
      cancelled: 409,
      interrupted: 409,
      payload_too_large: 413,
      provider_unreachable: 502,
      provider_auth: 502,
      provider_model_not_found: 502,
      provider_rate_limited: 502,
      provider_quota: 502,
      provider_server_error: 502,
      provider_timeout: 504,
      provider_bad_response: 502,
      provider_context_overflow: 502,
      provider_not_installed: 502,
      internal: 500,
    });
  });

  it('hides the message of an ApiError with code internal', async () => {
    host.handlers['conversations.create'] = async () => {
      throw new ApiError('internal', 'SQL: relation "secret_table" does not exist');
    };
    const res = await call('conversations.create', {});
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret_table');
  });

  it('answers 200 with a body exactly at the limit', async () => {
    // {"title":"xxx…"} padded to exactly MAX_BODY_BYTES; the echo handler accepts any input.
    const overhead = '{"title":""}'.length;
    const body = `{"title":"${'x'.repeat(MAX_BODY_BYTES - overhead)}"}`;
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    const res = await call('conversations.create', body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { echoed: { title: string } }).echoed.title.length).toBe(MAX_BODY_BYTES - overhead);
  });

  it('returns 413 for a body over 1 MB with Content-Length', async () => {
    const body = `{"title":"${'x'.repeat(MAX_BODY_BYTES)}"}`;
    const res = await call('conversations.create', body);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: { code: 'payload_too_large', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` },
    });
    expect(host.calls).toEqual([]);
  });

  it('returns 413 for a chunked body over 1 MB, without reading the rest', async () => {
    // A server that read to the end before answering would exhaust this stream; one that stops at
    // the limit answers while most of it is still unsent (socket buffers take a few MB at most).
    const total = 64 * 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const sentWhenAnswered = sent;
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: { code: 'payload_too_large', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` },
    });
    expect(sentWhenAnswered).toBeGreaterThan(MAX_BODY_BYTES);
    expect(sentWhenAnswered).toBeLessThan(total / 2);
    expect(host.calls).toEqual([]);
  });
});

describe('GET /api/events', () => {
  it('requires the token', async () => {
    const missing = await fetch(`${server.origin}/api/events`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    const wrong = await fetch(`${server.origin}/api/events?token=nope`);
    expect(wrong.status).toBe(401);
    expect(host.listeners.size).toBe(0);
  });

  it('sends retry and hello, then host events with their JSON payloads, then unsubscribes on disconnect', async () => {
    const stream = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.res.headers.get('cache-control')).toBe('no-store');

    expect(await stream.next()).toEqual({ event: 'hello', data: '{}', retry: '1000' });
    expect(host.listeners.size).toBe(1);

    host.emit('chat.delta', { conversationId: 'c1', messageId: 'm1', text: 'line one\nline two "quoted"' });
    const delta = await stream.next();
    expect(delta?.event).toBe('chat.delta');
    expect(JSON.parse(delta!.data)).toEqual({ conversationId: 'c1', messageId: 'm1', text: 'line one\nline two "quoted"' });

    host.emit('conversations.changed', { conversationId: 'c2' });
    expect(await stream.next()).toEqual({ event: 'conversations.changed', data: '{"conversationId":"c2"}' });

    stream.abort();
    await waitFor(() => host.listeners.size === 0);
  });

  it('fans events out to every connected client', async () => {
    const a = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    const b = await openEvents(`${server.origin}/api/events?token=${TOKEN}`, {
      headers: { Origin: `http://localhost:${server.port}` },
    });
    expect((await a.next())?.event).toBe('hello');
    expect((await b.next())?.event).toBe('hello');
    expect(host.listeners.size).toBe(2);

    host.emit('conversations.changed', { conversationId: 'c9' });
    expect((await a.next())?.data).toBe('{"conversationId":"c9"}');
    expect((await b.next())?.data).toBe('{"conversationId":"c9"}');

    a.abort();
    await waitFor(() => host.listeners.size === 1);
    host.emit('conversations.changed', { conversationId: 'c10' });
    expect((await b.next())?.data).toBe('{"conversationId":"c10"}');
    b.abort();
    await waitFor(() => host.listeners.size === 0);
  });

  it('sends a keepalive comment on the configured interval', async () => {
    const fast = await startServer({ host, staticDir, token: TOKEN, keepAliveMs: 50, log: () => {} });
    try {
      const stream = await openEvents(`${fast.origin}/api/events?token=${TOKEN}`);
      expect((await stream.next())?.event).toBe('hello');
      await new Promise((r) => setTimeout(r, 200));
      host.emit('conversations.changed', { conversationId: 'k' });
      // Comments are counted as the reader passes them on the way to the event.
      expect((await stream.next())?.data).toBe('{"conversationId":"k"}');
      expect(stream.comments()).toBeGreaterThan(0);
      stream.abort();
    } finally {
      await fast.close();
    }
  });

  it('close() ends open streams promptly and leaves the host open', async () => {
    const stream = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    expect((await stream.next())?.event).toBe('hello');

    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(500);
    expect(await stream.next()).toBeNull();
    expect(host.listeners.size).toBe(0);
    expect(host.closed).toBe(false);

    await expect(fetch(`${server.origin}/`)).rejects.toThrow();
    // Closing twice is harmless (afterEach closes again).
    await server.close();
  });
});
