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
// The event stream is in sse.ts, the sockets' bookkeeping in connections.ts, and the error
// statuses, and why each, in errors.ts.
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { MAX_BODY_BYTES, isApiMethod } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { answerClientError, trackConnections } from './connections.js';
import { asApiError, statusForErrorCode } from './errors.js';
import { defaultLog, describe, pathOnly, type ServeLogLevel } from './log.js';
import { INTERNAL_MESSAGE, sendError, sendJson, setCommonHeaders } from './respond.js';
import { createEventStreams } from './sse.js';

export { statusForErrorCode } from './errors.js';
export type { ServeLogLevel } from './log.js';

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
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

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

  const events = createEventStreams(host, log, keepAliveMs);
  let closing = false;
  let port = 0;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  const server = createServer((req, res) => {
    connections.track(req, res);
    handle(req, res).catch((err: unknown) => {
      log('error', `serve: unhandled error for ${req.method} ${pathOnly(req.url)}: ${describe(err)}`);
      if (!res.headersSent && !res.destroyed) sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      else res.destroy();
    });
  });
  const connections = trackConnections(server);
  server.on('clientError', answerClientError);

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

    events.open(res);
  }

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
    events.closeAll();
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
      events.closeAll();
      connections.drain();
      const cutOff = setTimeout(() => connections.destroyAll(), CLOSE_GRACE_MS);
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

// -----------------------------------------------------------------------------------------------
// Pure helpers
// -----------------------------------------------------------------------------------------------

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

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function unauthorized(res: ServerResponse): void {
  sendError(res, 401, { code: 'unauthorized', message: 'Missing or wrong token. Open the address the launcher printed.' });
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  sendError(res, 405, { code: 'unknown_method', message: 'This HTTP method is not allowed here.' });
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
