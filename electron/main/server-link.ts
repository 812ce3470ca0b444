// The desktop window as a client of the person's own Anima server: the pure part, tested in plain
// Node against a real LAN listener (remote-server.ts wires it into Electron).
//
// - parsePairingLink: the address Settings → Devices shows under the QR code,
//   `https://<address>:<port>/#pair=<secret>&fp=<64 hex>` (devices/devices.ts writes it).
// - checkServer: reaches the server with its certificate pinned to that fingerprint — the TLS
//   handshake is finished and the peer certificate's SHA-256 compared before one byte of HTTP is
//   written — and asks for its web app manifest, which proves it is Anima.
// - pinnedVerify: the same pin for Chromium (session.setCertificateVerifyProc).
// - the remembered server in `<userData>/remote-server.json` (owner-only, written aside and renamed).
//
// This module must not import `electron`.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import path from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

import type { RememberedServer } from '../../shared/bridge.js';

export const REMEMBERED_FILE = 'remote-server.json';
export const CHECK_TIMEOUT_MS = 8_000;
/** The manifest is a few hundred bytes; anything much larger is not Anima's. */
const MAX_BODY_BYTES = 64 * 1024;
const PROBE_PATH = '/manifest.webmanifest';

export type ServerRefusal = 'invalid_link' | 'server_unreachable' | 'certificate_mismatch';

export class ServerLinkError extends Error {
  constructor(
    readonly code: ServerRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'ServerLinkError';
  }
}

export interface PairingLink {
  /** `https://<address>:<port>` as URL.origin spells it. */
  origin: string;
  /** The host name or IP address as one connects to it (no IPv6 brackets). */
  hostname: string;
  port: number;
  secret: string;
  /** Upper-case colon hex (AB:CD:…), as tls.ts and browsers write it. */
  fingerprint: string;
  /** The link to load in the window: the origin, `/` and the pairing fragment. */
  href: string;
}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const SECRET = /^[A-Za-z0-9_-]{1,200}$/;
const HEX64 = /^[0-9a-f]{64}$/i;

const invalid = (message: string) => new ServerLinkError('invalid_link', message);

/** `AB:CD:…` from 64 hex digits, or from colon hex in either case. */
export function colonHex(fingerprint: string): string | null {
  const hex = fingerprint.replace(/:/g, '');
  if (!HEX64.test(hex)) return null;
  return hex.toUpperCase().match(/../g)!.join(':');
}

function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** The URL's host name without IPv6 brackets, when it is an IP address or a DNS name. */
function plainHostname(url: URL): string | null {
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (isIP(name)) return name;
  return DNS_NAME.test(name) ? name : null;
}

/** A pairing link, checked; throws ServerLinkError('invalid_link') saying what is wrong. */
export function parsePairingLink(raw: unknown): PairingLink {
  if (typeof raw !== 'string' || raw.length > 2048) throw invalid('The pairing link is not text of a reasonable length.');
  const url = parseUrl(raw.trim());
  if (!url) throw invalid('This is not a link.');
  if (url.protocol !== 'https:') throw invalid('A pairing link starts with https://.');
  if (url.username || url.password) throw invalid('A pairing link carries no user name or password.');
  const hostname = plainHostname(url);
  if (!hostname) throw invalid('The link does not name a server by its address or host name.');
  if (url.pathname !== '/' || url.search) throw invalid('A pairing link has nothing between the address and #pair=.');
  const params = new URLSearchParams(url.hash.replace(/^#/, ''));
  const secret = params.get('pair') ?? '';
  if (!SECRET.test(secret)) throw invalid('The link has no pairing code (#pair=…).');
  const fingerprint = colonHex(params.get('fp') ?? '');
  if (!fingerprint || (params.get('fp') ?? '').includes(':')) throw invalid('The link has no certificate fingerprint (fp= and 64 hex digits).');
  const port = url.port ? Number(url.port) : 443;
  return { origin: url.origin, hostname, port, secret, fingerprint, href: `${url.origin}/#pair=${secret}&fp=${fingerprint.replace(/:/g, '').toLowerCase()}` };
}

/** `https://host:port` of a remembered server, checked the same way (no fragment). */
export function parseOrigin(raw: string): { origin: string; hostname: string; port: number } | null {
  const url = parseUrl(raw);
  if (!url || url.protocol !== 'https:' || url.username || url.password || url.origin !== raw) return null;
  const hostname = plainHostname(url);
  if (!hostname) return null;
  return { origin: url.origin, hostname, port: url.port ? Number(url.port) : 443 };
}

/** SHA-256 of a DER certificate, colon hex. */
export function fingerprintOfDer(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

/** SHA-256 of a PEM certificate's DER (the first certificate in the text), colon hex; null when there is none. */
export function fingerprintOfPem(pem: string): string | null {
  const match = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  if (!match) return null;
  const der = Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64');
  return der.length ? fingerprintOfDer(der) : null;
}

export type CheckResult = { ok: true } | { ok: false; code: ServerRefusal; message: string };

/**
 * Reaches `origin` with its certificate pinned to `fingerprint` and asks for Anima's web app
 * manifest. A certificate with another fingerprint ends the connection right after the handshake,
 * before any request is written. Everything — connecting, the handshake, the answer — within
 * `timeoutMs`.
 */
export function checkServer(origin: string, fingerprint: string, opts: { timeoutMs?: number } = {}): Promise<CheckResult> {
  const target = parseOrigin(origin);
  const pinned = colonHex(fingerprint);
  if (!target || !pinned) return Promise.resolve({ ok: false, code: 'invalid_link', message: 'The server address or fingerprint is not valid.' });
  const timeoutMs = opts.timeoutMs ?? CHECK_TIMEOUT_MS;

  return new Promise<CheckResult>((resolve) => {
    let settled = false;
    let socket: TLSSocket | null = null;
    const finish = (result: CheckResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(result);
    };
    const unreachable = (why: string) => finish({ ok: false, code: 'server_unreachable', message: `The server at ${target.origin} did not answer: ${why}.` });
    const timer = setTimeout(() => unreachable(`no answer within ${+(timeoutMs / 1000).toFixed(1)} s`), timeoutMs);

    socket = tlsConnect({
      host: target.hostname,
      port: target.port,
      // SNI only for names (never for IP addresses, as RFC 6066 says).
      ...(isIP(target.hostname) ? {} : { servername: target.hostname }),
      // Nobody vouches for the certificate: it is trusted by its fingerprint alone, compared below.
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    // `on`, not `once`: destroying the socket after the result may report one more error.
    socket.on('error', (err: NodeJS.ErrnoException) => unreachable(err.code ?? err.message));
    socket.once('secureConnect', () => {
      const raw = socket!.getPeerCertificate().raw as Buffer | undefined;
      const presented = raw ? fingerprintOfDer(raw) : null;
      if (presented !== pinned) {
        finish({
          ok: false,
          code: 'certificate_mismatch',
          message: `The server at ${target.origin} showed a certificate with another fingerprint (${presented ?? 'none'}) than the pairing link's.`,
        });
        return;
      }
      const req = httpRequest(
        {
          createConnection: () => socket!,
          method: 'GET',
          path: PROBE_PATH,
          // The LAN listener answers only to its own names at its port: the Host is the link's.
          headers: { Host: new URL(target.origin).host, Accept: 'application/manifest+json, application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) return finish(notAnima(target.origin));
            chunks.push(chunk);
          });
          res.on('end', () => {
            if (res.statusCode !== 200) return finish(notAnima(target.origin, `it answered ${res.statusCode}`));
            try {
              const manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name?: unknown };
              finish(manifest.name === 'Anima' ? { ok: true } : notAnima(target.origin));
            } catch {
              finish(notAnima(target.origin));
            }
          });
          res.on('error', (err: NodeJS.ErrnoException) => unreachable(err.code ?? err.message));
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => unreachable(err.code ?? err.message));
      req.end();
    });
  });
}

function notAnima(origin: string, why = 'its answer is not Anima’s'): CheckResult {
  return { ok: false, code: 'server_unreachable', message: `The server at ${origin} is not an Anima server (${why}).` };
}

/** The parts of Electron's setCertificateVerifyProc request this reads. */
export interface VerifyRequestLike {
  hostname: string;
  certificate: { data: string };
}

/** Accept (0), reject (-2), or leave to Chromium's own verification (-3). */
export type VerifyResult = 0 | -2 | -3;

/**
 * For session.setCertificateVerifyProc: the remembered server's certificate is accepted only when
 * its fingerprint is the pinned one; every other host name is left to Chromium. Chromium passes the
 * host name without the port, so the pin holds for every port of that host (the window is only
 * ever allowed onto the remembered origin).
 */
export function pinnedVerify(request: VerifyRequestLike, remembered: Pick<RememberedServer, 'origin' | 'fingerprint'> | null): VerifyResult {
  const target = remembered ? parseOrigin(remembered.origin) : null;
  if (!remembered || !target) return -3;
  const hostname = request.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (hostname !== target.hostname) return -3;
  const presented = fingerprintOfPem(request.certificate.data);
  return presented !== null && presented === colonHex(remembered.fingerprint) ? 0 : -2;
}

// ---------------------------------------------------------------------------------------------
// The remembered server
// ---------------------------------------------------------------------------------------------

export interface RememberedState extends RememberedServer {
  /** Where the window was last: the app starts there. */
  lastUsed: 'server' | 'local';
}

/** The remembered server, or null when there is none or the file is not one of ours (then it is ignored). */
export async function readRemembered(file: string): Promise<RememberedState | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const value = JSON.parse(text) as Partial<RememberedState>;
    const origin = typeof value.origin === 'string' ? parseOrigin(value.origin) : null;
    const fingerprint = typeof value.fingerprint === 'string' ? colonHex(value.fingerprint) : null;
    const since = typeof value.since === 'string' && !Number.isNaN(Date.parse(value.since)) ? value.since : null;
    if (!origin || !fingerprint || !since || (value.lastUsed !== 'server' && value.lastUsed !== 'local')) return null;
    return { origin: origin.origin, fingerprint, since, lastUsed: value.lastUsed };
  } catch {
    return null;
  }
}

/** Written aside (owner-only) and renamed, so a crash leaves the old file or the new one. */
export async function writeRemembered(file: string, state: RememberedState): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.mkdir(path.dirname(file), { recursive: true });
  const { origin, fingerprint, since, lastUsed } = state;
  await fs.writeFile(tmp, `${JSON.stringify({ origin, fingerprint, since, lastUsed }, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(tmp, file);
}

export async function deleteRemembered(file: string): Promise<void> {
  await fs.rm(file, { force: true });
}

/** The contract's view of it (without where the window was last). */
export function publicServer(state: RememberedState): RememberedServer {
  return { origin: state.origin, fingerprint: state.fingerprint, since: state.since };
}
