// The gates every request passes before a route sees it.
//
// Anything on this machine — including every web page open in the user's browser — can reach a
// loopback port, so each request passes these gates, in this order:
//   1. Exactly one Host header (else 400), and it is 127.0.0.1:PORT or localhost:PORT (else 403). A DNS-rebinding page talks to
//      us under its own host name; this is what stops it reading the bundle or the API.
//   2. /api/*: an Origin header, when present, must be this server's own origin (else 403
//      unauthorized). Checked BEFORE the token so a foreign page learns nothing from the token
//      check — not even whether a guess was close — and a leaked token is useless from another site.
//   3. An HTTP method the path does not take → 405 (with Allow). It reveals nothing, so no token.
//   4. /api/*: the per-run token — `Authorization: Bearer` for calls, `?token=` for the event stream
//      (EventSource cannot send headers) and for an export's download (a link cannot either).
//      Compared in constant time. Never accepted in the query of a call: URLs end up in logs and history.
//      The LAN listener (lan.ts) takes a paired device's token instead, never the per-run one, refuses
//      a device the owner-only methods (403), and counts each refused token against the remote
//      address (rate-limit.ts: 429 with Retry-After once too many failed).
//   5. /api/call/*: Content-Length over the limit → 413; Content-Type must be application/json
//      (415). Besides being the contract, a foreign page cannot send that type without a CORS
//      preflight, which this server never grants. The body is read up to the limit only (413 the
//      moment it is passed; the connection is then closed unread). An empty body is "no input".
// Static files need no token: they are the public build and hold no data.
//
// admit() runs them in that order; each gate below answers with a Refusal or null (pass).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import { MAX_BODY_BYTES, OWNER_ONLY_METHODS, isApiMethod, type ApiMethod } from '../../shared/api.js';
import type { RateLimiter } from './rate-limit.js';
import { refusal, type Refusal } from './respond.js';

/** What a request passed every gate for. */
export type Admission =
  | Refusal
  | { kind: 'static'; path: string }
  | { kind: 'events'; device: string | null }
  /** GET /api/exports/<name>: `name` as the path spells it (undecoded); exports.ts decides whether it is one. */
  | { kind: 'export'; name: string; device: string | null }
  /** `device`: the paired device that called (LAN listener); null: the owner with the per-run token. */
  | { kind: 'call'; method: ApiMethod; body: Buffer; device: string | null }
  /** POST /api/pair on the LAN listener: no token, a JSON body (lan.ts reads the secret). */
  | { kind: 'pair'; body: Buffer }
  /** The client went away while its body was being read: there is no one to answer. */
  | { kind: 'aborted' };

/** What the gates compare a request with. */
export interface GateKeys {
  hosts: ReadonlySet<string>;
  origins: ReadonlySet<string>;
  /** The per-run token's digest; null on the LAN listener, which never takes it. */
  tokenDigest: Buffer | null;
  /** What a wrong Host header is told. */
  hostRefusal?: string;
  /** LAN listener: the paired device a token belongs to (null: unknown or revoked). */
  device?: (token: string) => Promise<string | null>;
  /** LAN listener: POST /api/pair is open. */
  pairing?: boolean;
  /** LAN listener: failed tokens per remote address. */
  limiter?: RateLimiter;
}

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The methods each endpoint takes, as the Allow header lists them. HEAD costs nothing for files and HTTP expects it wherever GET works. */
const ALLOW = { call: 'POST', events: 'GET', export: 'GET', pair: 'POST', static: 'GET, HEAD' } as const;

const OWNER_ONLY = refusal(403, {
  code: 'unauthorized',
  message: 'Only the computer Anima runs on can do this: a paired device cannot manage devices or the browser link.',
});

const UNAUTHORIZED = refusal(401, { code: 'unauthorized', message: 'Missing or wrong token. Open the address the launcher printed.' });

/** Throws unless the token can travel in a header and a query unescaped. */
export function assertUsableToken(token: string): void {
  if (!token || !TOKEN68.test(token)) {
    throw new Error('serve: the token must be a non-empty string of URL- and header-safe characters');
  }
}

/** The keys for a server on `port`; with null (not listening yet) no host and no origin pass. */
export function gateKeys(token: string, port: number | null): GateKeys {
  return {
    hosts: new Set(port === null ? [] : [`127.0.0.1:${port}`, `localhost:${port}`]),
    origins: new Set(port === null ? [] : [`http://127.0.0.1:${port}`, `http://localhost:${port}`]),
    tokenDigest: digest(token),
  };
}

/** Runs the gates in their order; the first that refuses answers the request. */
export async function admit(req: IncomingMessage, keys: GateKeys): Promise<Admission> {
  // Node keeps the first of several Host headers; RFC 9112 §3.2 says such a request is refused with 400.
  if (countHeader(req.rawHeaders, 'host') > 1) {
    return refusal(400, { code: 'invalid_input', message: 'A request must carry exactly one Host header.' });
  }
  const wrongHost = checkHost(req.headers.host, keys.hosts, keys.hostRefusal);
  if (wrongHost) return wrongHost;

  const { path, query } = splitUrl(req.url);
  const endpoint = endpointOf(path, keys.pairing === true);
  if (endpoint.kind !== 'static') {
    const foreign = checkOrigin(req.headers.origin, keys.origins);
    if (foreign) return foreign;
  }
  if (endpoint.kind === 'unknown') {
    return refusal(404, { code: 'unknown_method', message: 'There is no such API endpoint.' });
  }

  const wrongMethod = checkMethod(req.method ?? 'GET', ALLOW[endpoint.kind]);
  if (wrongMethod) return wrongMethod;
  if (endpoint.kind === 'static') return { kind: 'static', path };

  const remote = req.socket.remoteAddress ?? '';
  const waitSeconds = keys.limiter?.blockedFor(remote) ?? 0;
  if (waitSeconds > 0) return tooManyFailures(waitSeconds);

  let device: string | null = null;
  if (endpoint.kind !== 'pair') {
    const bearer = bearerToken(req.headers.authorization);
    const presented = endpoint.kind === 'events' || endpoint.kind === 'export' ? (query.get('token') ?? bearer) : bearer;
    const owner = keys.tokenDigest !== null && checkToken(presented, keys.tokenDigest);
    if (!owner) {
      device = presented && keys.device && TOKEN68.test(presented) ? await keys.device(presented) : null;
      if (device === null) {
        keys.limiter?.fail(remote);
        return UNAUTHORIZED;
      }
    }
  }
  if (endpoint.kind === 'events') return { kind: 'events', device };
  if (endpoint.kind === 'export') return { kind: 'export', name: endpoint.rawName, device };

  let method: ApiMethod | 'pair' = 'pair';
  if (endpoint.kind === 'call') {
    const named = apiMethod(endpoint.rawMethod);
    if (typeof named !== 'string') return named;
    if (device !== null && OWNER_ONLY_METHODS.has(named)) return OWNER_ONLY;
    method = named;
  }

  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return payloadTooLarge(req);
  if (!isJsonContentType(req.headers['content-type'])) {
    return refusal(415, { code: 'invalid_input', message: 'The request body must be JSON (Content-Type: application/json).' });
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'too_large') return payloadTooLarge(req);
  if (body === 'aborted') return { kind: 'aborted' };
  return method === 'pair' ? { kind: 'pair', body } : { kind: 'call', method, body, device };
}

/** 429 for an address that failed too often; Retry-After says when it may try again. */
export function tooManyFailures(waitSeconds: number): Refusal {
  return refusal(
    429,
    { code: 'unauthorized', message: `Too many failed attempts from this device. Try again in ${waitSeconds} seconds.` },
    { 'Retry-After': String(waitSeconds) },
  );
}

// -----------------------------------------------------------------------------------------------
// The gates
// -----------------------------------------------------------------------------------------------

type Endpoint =
  { kind: 'call'; rawMethod: string } | { kind: 'events' } | { kind: 'export'; rawName: string } | { kind: 'pair' } | { kind: 'unknown' } | { kind: 'static' };

function splitUrl(url: string | undefined): { path: string; query: URLSearchParams } {
  const rawUrl = url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  return {
    path: queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt),
    query: new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1)),
  };
}

function endpointOf(path: string, pairing: boolean): Endpoint {
  if (pairing && path === '/api/pair') return { kind: 'pair' };
  if (path.startsWith('/api/call/')) return { kind: 'call', rawMethod: path.slice('/api/call/'.length) };
  if (path === '/api/events') return { kind: 'events' };
  if (path.startsWith('/api/exports/')) return { kind: 'export', rawName: path.slice('/api/exports/'.length) };
  if (path === '/api' || path.startsWith('/api/')) return { kind: 'unknown' };
  return { kind: 'static' };
}

function countHeader(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count++;
  return count;
}

/** Gate 1: DNS rebinding. */
function checkHost(header: string | undefined, hosts: ReadonlySet<string>, message = 'This server answers only to 127.0.0.1 and localhost.'): Refusal | null {
  const host = header?.toLowerCase();
  if (host && hosts.has(host)) return null;
  return refusal(403, { code: 'unauthorized', message });
}

/** Gate 2: other web pages. */
function checkOrigin(origin: string | undefined, origins: ReadonlySet<string>): Refusal | null {
  if (origin === undefined || origins.has(origin)) return null;
  return refusal(403, { code: 'unauthorized', message: 'Requests from other sites are not allowed.' });
}

/** Gate 3: `allow` lists the methods the path takes, comma-separated, as the Allow header does. */
function checkMethod(method: string, allow: string): Refusal | null {
  if (allow.split(', ').includes(method)) return null;
  return refusal(405, { code: 'unknown_method', message: 'This HTTP method is not allowed here.' }, { Allow: allow });
}

/** Gate 4: the per-run token, in constant time. */
function checkToken(presented: string | null | undefined, tokenDigest: Buffer): boolean {
  if (!presented) return false;
  // Hashing first makes both sides the same length, so the comparison's time says nothing
  // about the token's length either.
  return timingSafeEqual(digest(presented), tokenDigest);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The API method a call's path names, or the 404 for a name there is no such method for. */
function apiMethod(rawMethod: string): ApiMethod | Refusal {
  let name: string;
  try {
    name = decodeURIComponent(rawMethod);
  } catch {
    name = '';
  }
  if (isApiMethod(name)) return name;
  return refusal(404, { code: 'unknown_method', message: `Unknown API method: ${truncate(name || rawMethod, 80)}` });
}

/** Gate 5: the 413 for a body over the limit. */
function payloadTooLarge(req: IncomingMessage): Refusal {
  // The rest of the body is never read: closing the connection is the only way to refuse it,
  // and Node destroys the socket once this response is flushed.
  req.pause();
  return refusal(413, { code: 'payload_too_large', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` }, { Connection: 'close' });
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

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
