// Browser mode: the host's API over HTTP + server-sent events, and the renderer bundle, on loopback.
//
// Anything on this machine — including every web page open in the user's browser — can reach a
// loopback port, so each request passes these gates, in this order:
//   1. Host header is 127.0.0.1:PORT or localhost:PORT (else 403). A DNS-rebinding page talks to
//      us under its own host name; this is what stops it reading the bundle or the API.
//   2. /api/*: an Origin header, when present, must be this server's own origin (else 403
//      unauthorized). Checked BEFORE the token so a foreign page learns nothing from the token
//      check — not even whether a guess was close — and a leaked token is useless from another site.
//   3. An HTTP method the path does not take → 405 (with Allow). It reveals nothing, so no token.
//   4. /api/*: the per-run token — `Authorization: Bearer` for calls, `?token=` for the event stream
//      (EventSource cannot send headers). Compared in constant time. Never accepted in the query
//      of a call: URLs end up in logs and history.
//   5. /api/call/*: Content-Length over the limit → 413; Content-Type must be application/json
//      (415). Besides being the contract, a foreign page cannot send that type without a CORS
//      preflight, which this server never grants. The body is read up to the limit only (413 the
//      moment it is passed; the connection is then closed unread). An empty body is "no input".
// Static files need no token: they are the public build and hold no data.
//
// Error statuses (the body is always {error:{code, message, field?}}; the code is what the
// renderer acts on, the status is for logs and tools):
//   invalid_input 400 · unauthorized 401 · not_found 404 · unknown_method 404 · conflict 409 ·
//   data_dir_locked 409 · no_provider 409 · cancelled 409 · payload_too_large 413 ·
//   provider_timeout 504 · every other provider_* 502 · model_not_found, model_network and
//   model_integrity 502 (the model host failed) · model_not_installed, model_damaged and model_busy 409 ·
//   model_disk_full 507 · model_io and internal 500 · anything unexpected 500.
// provider_* are gateway failures: the request was fine, the model behind us failed. Never 401/404/
// 429 for them — provider_auth as 401 would look like our own token was rejected, and
// provider_model_not_found as 404 like an unknown method. no_provider and cancelled are 409: the
// request was valid but the app's state (nothing configured; the user pressed Stop) prevents it.
// An ApiError('internal') is treated like any unexpected error: its message may carry internals.
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

import { ApiError, ERROR_CODES, MAX_BODY_BYTES, isApiMethod, type ApiErrorShape, type ErrorCode } from '../../shared/api.js';
import type { Host } from '../host/types.js';

export type ServeLogLevel = 'info' | 'warn' | 'error';

export interface ServeOptions {
  host: Host;
  /** The built renderer: index.html and its assets. */
  staticDir: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  token?: string;
  log?: (level: ServeLogLevel, message: string) => void;
  /** Interval of the `: keepalive` comment on event streams. Default 15 s; tests shorten it. */
  keepAliveMs?: number;
}

export interface RunningServer {
  /** http://127.0.0.1:PORT/?token=TOKEN — what the launcher prints. */
  url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  token: string;
  /** Ends event streams and closes the server. Does not close the host: the caller owns it. */
  close(): Promise<void>;
}

const BIND_ADDRESS = '127.0.0.1';
const DEFAULT_KEEPALIVE_MS = 15_000;
/** How long close() lets in-flight calls finish before cutting their sockets. */
const CLOSE_GRACE_MS = 1_000;
/** An event-stream client that has this much unsent data is not reading; it is dropped (EventSource reconnects). */
const MAX_SSE_BACKLOG_BYTES = 8 * 1024 * 1024;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

const INTERNAL_MESSAGE = 'Something went wrong inside Anima. The details are in the log.';

const CSP = CONTENT_SECURITY_POLICY;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
};

const ERROR_STATUS: Record<ErrorCode, number> = {
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
  model_not_found: 502,
  model_network: 502,
  model_integrity: 502,
  model_not_installed: 409,
  model_damaged: 409,
  model_busy: 409,
  model_disk_full: 507,
  model_io: 500,
  internal: 500,
};

/** The HTTP status for an API error code. */
export function statusForErrorCode(code: ErrorCode): number {
  return ERROR_STATUS[code] ?? 500;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { host } = opts;
  const log = opts.log ?? defaultLog;
  const token = opts.token ?? randomBytes(32).toString('base64url');
  if (!token || !TOKEN68.test(token)) {
    throw new Error('serve: the token must be a non-empty string of URL- and header-safe characters');
  }
  const tokenDigest = digest(token);
  const keepAliveMs = opts.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;

  // Resolved once so every containment check compares real paths, symlinks included.
  const staticRoot = await realpath(path.resolve(opts.staticDir));
  if (!(await stat(staticRoot)).isDirectory()) throw new Error('serve: staticDir is not a directory');

  const sseClients = new Set<SseClient>();
  let closing = false;
  let port = 0;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  // Requests in progress per socket. close() destroys a socket the moment it has none: Node's own
  // idle tracking misses sockets whose client went away half-open (an aborted event stream), and
  // those would hold close() until the grace period ran out.
  const sockets = new Map<Socket, number>();

  const server = createServer((req, res) => {
    const socket = req.socket;
    const before = sockets.get(socket);
    if (before !== undefined) sockets.set(socket, before + 1);
    res.once('close', () => {
      const current = sockets.get(socket);
      if (current === undefined) return;
      sockets.set(socket, current - 1);
      if (closing && current - 1 <= 0) socket.destroy();
    });
    handle(req, res).catch((err: unknown) => {
      log('error', `serve: unhandled error for ${req.method} ${pathOnly(req.url)}: ${describe(err)}`);
      if (!res.headersSent && !res.destroyed) sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, 0);
    socket.once('close', () => sockets.delete(socket));
  });
  // A peer that vanishes mid-request raises clientError; answer if we can, never crash.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const code = err.code ?? '';
    if (!socket.writable || code.startsWith('ECONN')) {
      socket.destroy();
      return;
    }
    const status =
      code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large'
      : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout'
      : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    setCommonHeaders(res);
    if (closing) {
      res.setHeader('Connection', 'close');
      sendError(res, 503, { code: 'internal', message: 'Anima is shutting down.' });
      return;
    }

    const hostHeader = req.headers.host?.toLowerCase();
    if (!hostHeader || !allowedHosts.has(hostHeader)) {
      sendError(res, 403, { code: 'unauthorized', message: 'This server answers only to 127.0.0.1 and localhost.' });
      return;
    }

    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const query = new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1));
    const method = req.method ?? 'GET';

    if (rawPath === '/api' || rawPath.startsWith('/api/')) {
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedOrigins.has(origin)) {
        sendError(res, 403, { code: 'unauthorized', message: 'Requests from other sites are not allowed.' });
        return;
      }
      if (rawPath.startsWith('/api/call/')) {
        if (method !== 'POST') return methodNotAllowed(res, 'POST');
        return handleCall(req, res, rawPath.slice('/api/call/'.length));
      }
      if (rawPath === '/api/events') {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        return handleEvents(req, res, query);
      }
      sendError(res, 404, { code: 'unknown_method', message: 'There is no such API endpoint.' });
      return;
    }

    // HEAD costs nothing for files and HTTP expects it wherever GET works.
    if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    await serveStatic(res, rawPath);
  }

  // ---------------------------------------------------------------------------------------------
  // POST /api/call/<method>
  // ---------------------------------------------------------------------------------------------

  async function handleCall(req: IncomingMessage, res: ServerResponse, rawMethod: string): Promise<void> {
    if (!checkToken(bearerToken(req.headers.authorization))) return unauthorized(res);

    let name: string;
    try {
      name = decodeURIComponent(rawMethod);
    } catch {
      name = '';
    }
    if (!isApiMethod(name)) {
      sendError(res, 404, { code: 'unknown_method', message: `Unknown API method: ${truncate(name || rawMethod, 80)}` });
      return;
    }

    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return payloadTooLarge(req, res);

    if (!isJsonContentType(req.headers['content-type'])) {
      sendError(res, 415, { code: 'invalid_input', message: 'The request body must be JSON (Content-Type: application/json).' });
      return;
    }

    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === 'too_large') return payloadTooLarge(req, res);
    if (body === 'aborted') return;

    let input: unknown;
    if (body.length > 0) {
      try {
        input = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
      } catch {
        sendError(res, 400, { code: 'invalid_input', message: 'The request body is not valid JSON.' });
        return;
      }
    }

    let value: unknown;
    try {
      value = await host.call(name, input);
    } catch (err) {
      const apiError = asApiError(err);
      if (!apiError || apiError.code === 'internal') {
        log('error', `serve: ${name} failed: ${describe(err)}`);
        sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
        return;
      }
      sendError(res, statusForErrorCode(apiError.code), apiError.toJSON());
      return;
    }

    let json: string;
    try {
      json = JSON.stringify(value) ?? 'null';
    } catch (err) {
      log('error', `serve: the result of ${name} could not be serialised: ${describe(err)}`);
      sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      return;
    }
    sendJson(res, 200, json);
  }

  function payloadTooLarge(req: IncomingMessage, res: ServerResponse): void {
    // The rest of the body is never read: closing the connection is the only way to refuse it,
    // and Node destroys the socket once this response is flushed.
    req.pause();
    res.setHeader('Connection', 'close');
    sendError(res, 413, {
      code: 'payload_too_large',
      message: `The request is larger than ${MAX_BODY_BYTES} bytes.`,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // GET /api/events
  // ---------------------------------------------------------------------------------------------

  function handleEvents(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    const presented = query.get('token') ?? bearerToken(req.headers.authorization);
    if (!checkToken(presented)) return unauthorized(res);

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // Proxies (and some dev tools) buffer responses unless told not to.
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);

    const client: SseClient = { res, unsubscribe: () => {} };
    sseClients.add(client);
    // Subscribed before hello: a client that reloads its state on hello misses nothing after it.
    client.unsubscribe = host.on((event, payload) => {
      // A name with a line break would forge extra SSE fields; the contract has none.
      if (/[\r\n]/.test(event)) {
        log('warn', 'serve: dropped an event whose name contains a line break');
        return;
      }
      let data: string;
      try {
        data = JSON.stringify(payload) ?? 'null';
      } catch (err) {
        log('error', `serve: event ${event} could not be serialised: ${describe(err)}`);
        return;
      }
      write(client, `event: ${event}\ndata: ${data}\n\n`);
    });
    write(client, 'retry: 1000\nevent: hello\ndata: {}\n\n');

    res.on('close', () => dropClient(client));
  }

  function write(client: SseClient, chunk: string): void {
    const { res } = client;
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > MAX_SSE_BACKLOG_BYTES) {
      log('warn', 'serve: an event-stream client stopped reading; dropping it');
      res.destroy();
      return;
    }
    res.write(chunk);
  }

  function dropClient(client: SseClient): void {
    if (!sseClients.delete(client)) return;
    try {
      client.unsubscribe();
    } catch (err) {
      log('warn', `serve: unsubscribing an event stream failed: ${describe(err)}`);
    }
  }

  const keepAliveTimer = setInterval(() => {
    for (const client of sseClients) write(client, ': keepalive\n\n');
  }, keepAliveMs);
  keepAliveTimer.unref();

  // ---------------------------------------------------------------------------------------------
  // Static files
  // ---------------------------------------------------------------------------------------------

  async function serveStatic(res: ServerResponse, rawPath: string): Promise<void> {
    const file = await resolveStatic(rawPath);
    if (!file) {
      sendError(res, 404, { code: 'not_found', message: 'Not found.' });
      return;
    }
    const ext = path.extname(file.path).toLowerCase();
    const type = CONTENT_TYPES[ext] ?? 'application/octet-stream';
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Length', file.size);
    res.setHeader('Cache-Control', 'no-store');
    if (ext === '.html') res.setHeader('Content-Security-Policy', CSP);
    res.writeHead(200);
    if (res.req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = createReadStream(file.path);
    stream.on('error', (err) => {
      log('error', `serve: reading ${path.relative(staticRoot, file.path)} failed: ${describe(err)}`);
      res.destroy();
    });
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  }

  /** The file a URL path names inside staticRoot, or null for anything missing or outside it. */
  async function resolveStatic(rawPath: string): Promise<{ path: string; size: number } | null> {
    if (!rawPath.startsWith('/') || rawPath.includes('\\')) return null;
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      return null;
    }
    if (decoded.includes('\0') || decoded.includes('\\')) return null;
    const segments = decoded.split('/').filter((s) => s !== '');
    // '..' and hidden files are refused outright rather than normalised: no request that
    // spells them is legitimate, and refusing keeps the containment check a second line of defence.
    if (segments.some((s) => s.startsWith('.'))) return null;
    if (segments.length === 0) segments.push('index.html');

    const candidate = path.resolve(staticRoot, ...segments);
    if (!isInside(staticRoot, candidate)) return null;
    try {
      const real = await realpath(candidate);
      if (!isInside(staticRoot, real)) return null;
      const info = await stat(real);
      if (!info.isFile()) return null;
      return { path: real, size: info.size };
    } catch {
      return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers that need the token
  // ---------------------------------------------------------------------------------------------

  function checkToken(presented: string | null | undefined): boolean {
    if (!presented) return false;
    // Hashing first makes both sides the same length, so the comparison's time says nothing
    // about the token's length either.
    return timingSafeEqual(digest(presented), tokenDigest);
  }

  // ---------------------------------------------------------------------------------------------
  // Start and stop
  // ---------------------------------------------------------------------------------------------

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host: BIND_ADDRESS, port: opts.port ?? 0 });
  }).catch((err: unknown) => {
    clearInterval(keepAliveTimer);
    throw err;
  });
  server.on('error', (err) => log('error', `serve: server error: ${describe(err)}`));

  port = (server.address() as AddressInfo).port;
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  allowedOrigins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
  const origin = `http://127.0.0.1:${port}`;
  log('info', `serve: listening on ${origin}`);

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      clearInterval(keepAliveTimer);
      for (const client of [...sseClients]) {
        dropClient(client);
        client.res.end();
      }
      for (const [socket, active] of sockets) if (active === 0) socket.destroy();
      const cutOff = setTimeout(() => {
        for (const socket of sockets.keys()) socket.destroy();
      }, CLOSE_GRACE_MS);
      server.close(() => {
        clearTimeout(cutOff);
        log('info', 'serve: closed');
        resolve();
      });
    });
    return closed;
  }

  return { url: `${origin}/?token=${encodeURIComponent(token)}`, origin, port, token, close };
}

interface SseClient {
  res: ServerResponse;
  unsubscribe: () => void;
}

// -----------------------------------------------------------------------------------------------
// Pure helpers
// -----------------------------------------------------------------------------------------------

function defaultLog(level: ServeLogLevel, message: string): void {
  // stdout is the launcher's (it prints the URL there); diagnostics go to stderr.
  console.error(`[${level}] ${message}`);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1] ?? null;
}

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [mediaType = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') return false;
  // JSON is UTF-8 (RFC 8259); a different declared charset means we would misread it.
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** Reads at most `limit` bytes; stops listening the moment the limit is passed. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: Buffer | 'too_large' | 'aborted') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        req.pause();
        finish('too_large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(Buffer.concat(chunks, size));
    const onAbort = () => finish('aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/** An ApiError, also when it crossed a module boundary and lost its prototype; null for anything else. */
function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof Error && err.name === 'ApiError') {
    const { code, field } = err as Error & { code?: unknown; field?: unknown };
    if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) {
      return new ApiError(code as ErrorCode, err.message, typeof field === 'string' ? field : undefined);
    }
  }
  return null;
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function setCommonHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Stops other sites embedding our files with no-cors requests (<script src>, <img>).
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

function sendJson(res: ServerResponse, status: number, json: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-store',
  });
  res.end(json);
}

function sendError(res: ServerResponse, status: number, error: ApiErrorShape): void {
  sendJson(res, status, JSON.stringify({ error }));
}

function unauthorized(res: ServerResponse): void {
  sendError(res, 401, { code: 'unauthorized', message: 'Missing or wrong token. Open the address the launcher printed.' });
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  sendError(res, 405, { code: 'unknown_method', message: 'This HTTP method is not allowed here.' });
}

function pathOnly(url: string | undefined): string {
  // The event stream carries the token in its query: never let it reach a log.
  return (url ?? '/').split('?')[0] ?? '/';
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
