// The browser-mode server's test harness: a fake host that records calls and emits events, a static
// folder beside a secret a traversal would reach, a fresh server per test, and small HTTP/SSE clients.
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

import { ApiError, parseInput, type ApiEventName, type ApiEvents, type AnimaApi } from '../../../shared/api.js';
import type { Host } from '../../host/types.js';
import { PATIENCE_MS } from '../../testing/patience.js';
import type { HostEventArgs, HostEventListener } from '../../events/events.js';
import { startServer, type RunningServer } from '../server.js';

export const TOKEN = 'test-token-0123456789abcdef';
export const SECRET_MARKER = 'outside-static-dir-do-not-serve';
export const INDEX_HTML = '<!doctype html><html><head><title>Anima</title></head><body><div id="root"></div></body></html>';
export const ASSET_JS = 'console.log("anima");';

// ---------------------------------------------------------------------------------------------
// Fake host
// ---------------------------------------------------------------------------------------------

export type Handler = (input: unknown) => Promise<unknown>;

export class FakeHost implements Host {
  readonly api = {} as AnimaApi;
  readonly dataDir = '/nonexistent';
  /** None unless a test gives one (server-exports.test.ts). */
  exportsDir?: string;
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
export let staticDir: string;
export let host: FakeHost;
export let server: RunningServer;
export let logs: Array<{ level: string; message: string }>;

/** Starts a fresh server over a fresh fake host for each test of the calling file, over one static folder. */
export function useServer(): void {
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
}

export function call(method: string, body: unknown, init: { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${server.origin}/api/call/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** fetch normalises URLs ('..', '%2e%2e') and owns the Host header; node:http sends both as written. */
export function raw(rawPath: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
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

export async function waitFor(condition: () => boolean, timeoutMs = PATIENCE_MS): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface SseEvent {
  event: string;
  data: string;
  retry?: string;
}

/** A minimal EventSource over fetch (Node 20 has none): yields parsed events and counts comments. */
export async function openEvents(url: string, init: RequestInit = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let comments = 0;
  let ended = false;

  async function next(timeoutMs = PATIENCE_MS): Promise<SseEvent | null> {
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
