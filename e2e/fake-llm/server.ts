// A loopback model server for tests, benchmarks and manual runs. It speaks the real wire
// protocols — OpenAI `/v1/chat/completions` SSE, Anthropic `/v1/messages` SSE, `/v1/models`, and
// Ollama's `/api/tags` — so the app's real provider clients are exercised end to end. Replies are
// scripted per request; with nothing scripted, `respond` (when set) decides, else it echoes the last
// user message, streamed slowly enough that a test sees real streaming.
//
// Only streaming chat requests are served (the app never asks for anything else).
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorBody, splitText, textStream, toolCallStream, type Dialect, type ReplyInfo } from './wire.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Real provider wire captures, beside the repository (see its README.md). */
export const FIXTURES_DIR = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'llm-wire');

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body; undefined when there was none; the raw text when it was not JSON. */
  body: unknown;
}

export type FakeResponse =
  /** Streamed in the wire format of the endpoint hit; one word per chunk unless `chunks` is given. */
  | { kind: 'text'; text: string; chunkDelayMs?: number; chunks?: number }
  /** A fixture file (a name in FIXTURES_DIR, or an absolute path) replayed byte for byte in several writes. */
  | { kind: 'fixture'; file: string; delayMs?: number }
  /** One tool call; `thenText` is queued as the reply to the next chat request (the one carrying the tool result). */
  | { kind: 'tool_call'; name: string; arguments: Record<string, unknown>; thenText?: string }
  /** An HTTP error: the body from `file`, else `body`, else what a real server of that dialect sends. */
  | { kind: 'error'; status: number; file?: string; body?: string; headers?: Record<string, string> }
  /** Streams this text, then drops the connection without any terminator. */
  | { kind: 'cut'; text: string }
  /** Accepts the request and never answers (until close). */
  | { kind: 'hang' }
  /**
   * Exactly these bytes, in these writes (a malformed stream: cut JSON, invalid UTF-8, HTML, a
   * 200 with an error body…), under `status` (200) and `contentType` (an event stream); `end: false`
   * drops the connection after the last write instead of ending the reply.
   */
  | { kind: 'raw'; writes: (string | Uint8Array)[]; status?: number; contentType?: string; delayMs?: number; end?: boolean }
  /** An event stream of `: keep-alive` comments every `everyMs`, nothing else, until the client leaves (or close). */
  | { kind: 'keepalive'; everyMs: number }
  /** Text deltas of `text` every `everyMs` (0: as fast as the client reads), without end, until the client leaves (or close). */
  | { kind: 'endless'; text: string; everyMs?: number };

export interface FakeLlm {
  /** http://127.0.0.1:PORT */
  url: string;
  /** url + '/v1' */
  baseUrl: string;
  /** Every request, in order. Clear it with `requests.length = 0` (or `reset()`). */
  requests: RecordedRequest[];
  /** Queues replies, consumed one per chat request. */
  script(...responses: FakeResponse[]): void;
  /**
   * Forgets what a test left behind: the replies it scripted but never used and the requests it
   * made. Call it after each test of a server shared across tests, so a test that failed halfway
   * never hands its replies to the next one. What the owner configured (`respond`, `models`,
   * `apiKey`, `defaultChunkDelayMs`) stays.
   */
  reset(): void;
  /** Served by /v1/models and /api/tags. */
  models: string[];
  /** When set, requests without `Authorization: Bearer <key>` or `x-api-key: <key>` get a real-shaped 401. */
  apiKey?: string;
  /** Delay between chunks of unscripted echoes and of scripted text without chunkDelayMs. */
  defaultChunkDelayMs: number;
  /**
   * Decides the reply to a chat request when nothing is scripted (it gets the parsed JSON body);
   * returning undefined falls back to the echo. Scripted replies always come first.
   */
  respond?: (body: unknown) => FakeResponse | Promise<FakeResponse | undefined> | undefined;
  /**
   * Serves another endpoint of a server's dialect ('POST /v1/embeddings', 'GET /props'…) from a
   * module of its own; the handler gets the parsed body and answers on `res`. Routes added here
   * are checked before the built-in ones and stay after `reset()`.
   */
  route(route: string, handler: RouteHandler): void;
  /**
   * For a chat endpoint served through `route()`: the next scripted reply, else what `respond`
   * decides; undefined leaves the default to the dialect's module. A scripted `tool_call` with
   * `thenText` queues that text first, as for the built-in endpoints.
   */
  nextReply(body: unknown): Promise<FakeResponse | undefined>;
  /** Stops the server and drops every connection, hung requests included. */
  close(): Promise<void>;
}

export type RouteHandler = (body: unknown, res: http.ServerResponse, req: http.IncomingMessage) => void | Promise<void>;

export interface FakeLlmOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  defaultChunkDelayMs?: number;
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const server = http.createServer();
  const fake = new FakeLlmServer(server, opts.defaultChunkDelayMs ?? 15);
  server.on('request', (req, res) => fake.handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.baseUrl = `${fake.url}/v1`;
  return fake;
}

class FakeLlmServer implements FakeLlm {
  url = '';
  baseUrl = '';
  requests: RecordedRequest[] = [];
  models = ['fake-model'];
  apiKey?: string;
  respond?: FakeLlm['respond'];
  private readonly queue: FakeResponse[] = [];
  private readonly routes = new Map<string, RouteHandler>();
  private serial = 0;

  constructor(
    private readonly server: http.Server,
    public defaultChunkDelayMs: number,
  ) {}

  script(...responses: FakeResponse[]): void {
    this.queue.push(...responses);
  }

  route(route: string, handler: RouteHandler): void {
    this.routes.set(route, handler);
  }

  async nextReply(body: unknown): Promise<FakeResponse | undefined> {
    const reply = this.queue.shift() ?? (await this.respond?.(body));
    if (reply?.kind === 'tool_call' && reply.thenText !== undefined) this.queue.unshift({ kind: 'text', text: reply.thenText });
    return reply;
  }

  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on('error', () => undefined); // a client that went away is not the server's failure
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = parseBody(await readRequest(req));
      this.requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body });
      const dialect: Dialect = url.pathname === '/v1/messages' ? 'anthropic' : 'openai';
      if (this.apiKey !== undefined && !hasKey(req, this.apiKey)) {
        return sendBody(res, 401, errorBody(dialect, 401, modelOf(body)));
      }
      const route = `${req.method} ${url.pathname}`;
      const added = this.routes.get(route);
      if (added) return await added(body, res, req);
      if (route === 'POST /v1/chat/completions' || route === 'POST /v1/messages') return await this.chat(res, dialect, body);
      if (route === 'GET /v1/models') {
        const data = this.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' }));
        return sendBody(res, 200, JSON.stringify({ object: 'list', data }));
      }
      if (route === 'GET /api/tags') {
        return sendBody(res, 200, JSON.stringify({ models: this.models.map((name) => ({ name, model: name })) }));
      }
      const notFound = { error: { message: `Invalid URL (${route})`, type: 'invalid_request_error', param: null, code: null } };
      sendBody(res, 404, JSON.stringify(notFound));
    } catch (error) {
      if (!res.headersSent) sendBody(res, 500, JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      else res.destroy();
    }
  }

  private async chat(res: http.ServerResponse, dialect: Dialect, body: unknown): Promise<void> {
    const model = modelOf(body);
    if (!isRecord(body) || body.stream !== true) {
      return sendBody(res, 400, errorBody(dialect, 400, model));
    }
    const reply = this.queue.shift() ?? (await this.respond?.(body)) ?? { kind: 'text', text: `I hear you: ${lastUserText(body)}` };
    const info: ReplyInfo = { model, serial: ++this.serial, inputTokens: countWords(body.messages) };
    switch (reply.kind) {
      case 'text': {
        const stream = textStream(dialect, info, splitText(reply.text, reply.chunks));
        return sendStream(res, [...stream.opening, ...stream.text, ...stream.ending], reply.chunkDelayMs ?? this.defaultChunkDelayMs);
      }
      case 'tool_call': {
        if (reply.thenText !== undefined) this.queue.unshift({ kind: 'text', text: reply.thenText });
        const stream = toolCallStream(dialect, info, reply.name, reply.arguments);
        return sendStream(res, [...stream.opening, ...stream.ending], this.defaultChunkDelayMs);
      }
      case 'cut': {
        const stream = textStream(dialect, info, splitText(reply.text));
        await sendStream(res, [...stream.opening, ...stream.text], this.defaultChunkDelayMs, { end: false });
        res.socket?.destroy();
        return;
      }
      case 'fixture':
        return replay(res, fixturePath(reply.file), reply.delayMs ?? 0);
      case 'error': {
        const text = reply.file !== undefined ? await readFile(fixturePath(reply.file), 'utf8') : reply.body;
        return sendBody(res, reply.status, text ?? errorBody(dialect, reply.status, model), reply.headers);
      }
      case 'hang':
        return; // close() drops the connection
      case 'raw':
        return sendRaw(res, reply);
      case 'keepalive':
        return sendForever(res, () => ': keep-alive\n\n', reply.everyMs);
      case 'endless': {
        const stream = textStream(dialect, info, [reply.text]);
        res.writeHead(200, SSE_HEADERS);
        for (const event of stream.opening) res.write(event);
        return sendForever(res, () => stream.text[0]!, reply.everyMs ?? 0);
      }
    }
  }
}

function fixturePath(file: string): string {
  return path.isAbsolute(file) ? file : path.join(FIXTURES_DIR, file);
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** Writes events one by one with a pause between them; waits for each write so a cut comes after the text. */
async function sendStream(res: http.ServerResponse, events: string[], delayMs: number, { end = true } = {}): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  for (const [i, event] of events.entries()) {
    if (i > 0 && delayMs > 0) await sleep(delayMs);
    if (res.destroyed) return;
    await new Promise<void>((resolve) => res.write(event, () => resolve()));
  }
  if (end) res.end();
}

/** A fixture's exact bytes in about a dozen writes, so reads split inside JSON objects and UTF-8 characters. */
async function replay(res: http.ServerResponse, file: string, delayMs: number): Promise<void> {
  const bytes = await readFile(file);
  const types: Record<string, string> = { '.sse': SSE_HEADERS['content-type'], '.ndjson': 'application/x-ndjson' };
  res.writeHead(200, { ...SSE_HEADERS, 'content-type': types[path.extname(file)] ?? 'application/json' });
  const size = Math.max(1, Math.ceil(bytes.length / 12));
  for (let offset = 0; offset < bytes.length; offset += size) {
    if (offset > 0) await (delayMs > 0 ? sleep(delayMs) : new Promise((resolve) => setImmediate(resolve)));
    if (res.destroyed) return;
    res.write(bytes.subarray(offset, offset + size));
  }
  res.end();
}

function sendBody(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  const type = parseBody(body) === body ? 'text/plain; charset=utf-8' : 'application/json';
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
}

async function readRequest(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function hasKey(req: http.IncomingMessage, key: string): boolean {
  return req.headers.authorization === `Bearer ${key}` || req.headers['x-api-key'] === key;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function modelOf(body: unknown): string {
  return isRecord(body) && typeof body.model === 'string' ? body.model : 'fake-model';
}

/** The text of a message's content: a string, or OpenAI / Anthropic content parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of [...messages].reverse()) {
    const text = isRecord(message) && message.role === 'user' ? contentText(message.content) : '';
    if (text) return text;
  }
  return '';
}

/** A stand-in for prompt tokens: deterministic, and grows with the prompt. */
function countWords(messages: unknown): number {
  const all = Array.isArray(messages) ? messages.map((m) => (isRecord(m) ? contentText(m.content) : '')).join(' ') : '';
  return all.split(/\s+/).filter(Boolean).length;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A `raw` reply: the writes as given, then an end or a dropped connection. */
async function sendRaw(res: http.ServerResponse, reply: Extract<FakeResponse, { kind: 'raw' }>): Promise<void> {
  res.writeHead(reply.status ?? 200, { ...SSE_HEADERS, 'content-type': reply.contentType ?? SSE_HEADERS['content-type'] });
  for (const [i, chunk] of reply.writes.entries()) {
    if (i > 0) await (reply.delayMs ? sleep(reply.delayMs) : new Promise((resolve) => setImmediate(resolve)));
    if (res.destroyed) return;
    await new Promise<void>((resolve) => res.write(chunk, () => resolve()));
  }
  if (reply.end === false) res.socket?.destroy();
  else res.end();
}

/** Writes `event()` every `everyMs` (0: whenever the socket drains) until the client goes away or the server closes. */
async function sendForever(res: http.ServerResponse, event: () => string, everyMs: number): Promise<void> {
  if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
  while (!res.destroyed && !res.writableEnded) {
    const flushed = res.write(event());
    if (everyMs > 0) await sleep(everyMs);
    else if (!flushed) await new Promise<void>((resolve) => res.once('drain', () => resolve()).once('close', () => resolve()));
    else await new Promise((resolve) => setImmediate(resolve));
  }
}
