// The desktop app's side of pairing with the person's own server, in plain Node: the pairing link, the
// pinned check against a real LAN listener over TLS on 127.0.0.1 (a real host, its certificate from
// serve/tls.ts, its real pairing link), a TLS listener with the same certificate that records every
// byte it is sent (a mismatch sends none), Chromium's verify proc with that real certificate, and the
// remembered server's file.
import fs from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import type { Host } from '../host/types.js';
import { createRateLimiter } from '../serve/rate-limit.js';
import { startServer, type RunningServer } from '../serve/server.js';
import { ensureCertificate, type Certificate } from '../serve/tls.js';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import {
  checkServer,
  colonHex,
  deleteRemembered,
  fingerprintOfPem,
  parsePairingLink,
  pinnedVerify,
  readRemembered,
  writeRemembered,
  ServerLinkError,
  type RememberedState,
} from './server-link.js';

const dirs: string[] = [];
const NAMES = ['127.0.0.1', 'localhost', 'anima-test.local'];
let host: Host;
let server: RunningServer;
let link: string;
let certificate: Certificate;
let other: Certificate;

function temp(prefix: string): string {
  const dir = tempDataDir(prefix);
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  const staticDir = temp('anima-remote-page-');
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>');
  // The web app manifest the renderer ships, as `npm run build` copies it beside index.html.
  fs.copyFileSync(path.join(import.meta.dirname, '../../renderer/public/manifest.webmanifest'), path.join(staticDir, 'manifest.webmanifest'));
  host = await startTestHost({ dataDir: temp('anima-remote-host-'), sleep: { tickMs: 0 } });
  server = await startServer({
    host,
    staticDir,
    port: 0,
    token: 'per-run-token-0123456789abcdef',
    log: () => {},
    lan: { address: '127.0.0.1', port: 0, names: NAMES, limiter: createRateLimiter() },
  });
  link = (await host.api['devices.pairingStart']({})).url;
  certificate = await ensureCertificate(host.dataDir, NAMES);
  other = await ensureCertificate(temp('anima-remote-other-'), NAMES);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await host?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * A TLS listener with `cert` that records every byte a client sends after the handshake and answers
 * `reply`; `closed` counts connections whose socket has closed (whatever was sent has been read by then).
 */
async function recorder(cert: Certificate, reply: string) {
  let received = '';
  let closed = 0;
  const tls: TlsServer = createTlsServer({ cert: cert.cert, key: cert.key }, (socket) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n\r\n')) socket.end(reply);
    });
    socket.on('error', () => {});
  });
  tls.on('connection', (raw: Socket) => raw.on('close', () => closed++));
  tls.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  return {
    port: (tls.address() as AddressInfo).port,
    received: () => received,
    closed: () => closed,
    close: () => new Promise<void>((resolve) => tls.close(() => resolve())),
  };
}

const MANIFEST = fs.readFileSync(path.join(import.meta.dirname, '../../renderer/public/manifest.webmanifest'), 'utf8');
const ok = (body: string, status = '200 OK') =>
  `HTTP/1.1 ${status}\r\nContent-Type: application/manifest+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
const hex = (fingerprint: string) => fingerprint.replace(/:/g, '').toLowerCase();

describe('the pairing link', () => {
  it('reads the link Settings → Devices shows', () => {
    const parsed = parsePairingLink(link);
    expect(parsed.origin).toBe(`https://127.0.0.1:${server.lan!.port}`);
    expect(parsed).toMatchObject({ hostname: '127.0.0.1', port: server.lan!.port, fingerprint: server.lan!.fingerprint });
    expect(parsed.secret.length).toBeGreaterThan(20);
    expect(parsed.href).toBe(link);
    expect(parsePairingLink(`https://Anima-Box.local:8443/#pair=abc_DEF-1&fp=${'ab'.repeat(32)}`)).toMatchObject({
      origin: 'https://anima-box.local:8443',
      hostname: 'anima-box.local',
      port: 8443,
      fingerprint: Array(32).fill('AB').join(':'),
    });
    expect(parsePairingLink(`https://[fd00::5]:8443/#pair=s&fp=${'0'.repeat(64)}`)).toMatchObject({ hostname: 'fd00::5', port: 8443 });
    expect(parsePairingLink(`https://192.168.1.20/#pair=s&fp=${'0'.repeat(64)}`)).toMatchObject({ port: 443 });
  });

  it.each([
    ['not text', 42],
    ['empty', ''],
    ['not a link', 'anima box please'],
    ['plain http', `http://127.0.0.1:8443/#pair=s&fp=${'0'.repeat(64)}`],
    ['another scheme', `ftp://127.0.0.1:8443/#pair=s&fp=${'0'.repeat(64)}`],
    ['credentials', `https://me:pw@127.0.0.1:8443/#pair=s&fp=${'0'.repeat(64)}`],
    ['a path', `https://127.0.0.1:8443/other/#pair=s&fp=${'0'.repeat(64)}`],
    ['a query', `https://127.0.0.1:8443/?token=x#pair=s&fp=${'0'.repeat(64)}`],
    ['no secret', `https://127.0.0.1:8443/#fp=${'0'.repeat(64)}`],
    ['a secret with other characters', `https://127.0.0.1:8443/#pair=a%20b&fp=${'0'.repeat(64)}`],
    ['no fingerprint', 'https://127.0.0.1:8443/#pair=s'],
    ['a short fingerprint', `https://127.0.0.1:8443/#pair=s&fp=${'0'.repeat(63)}`],
    ['a fingerprint that is not hex', `https://127.0.0.1:8443/#pair=s&fp=${'g'.repeat(64)}`],
    ['a host name with spaces', `https://anima%20box:8443/#pair=s&fp=${'0'.repeat(64)}`],
    ['far too long', `https://127.0.0.1:8443/#pair=${'s'.repeat(3000)}&fp=${'0'.repeat(64)}`],
  ])('refuses %s as invalid_link, in words', (_what, raw) => {
    let error: unknown;
    try {
      parsePairingLink(raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ServerLinkError);
    expect((error as ServerLinkError).code).toBe('invalid_link');
    expect((error as ServerLinkError).message.length).toBeGreaterThan(10);
  });
});

describe('checkServer', () => {
  it('a good link: the real LAN listener, its certificate pinned, answers as Anima', async () => {
    const { origin, fingerprint } = parsePairingLink(link);
    await expect(checkServer(origin, fingerprint)).resolves.toEqual({ ok: true });
  });

  it('a wrong fingerprint: certificate_mismatch, and not one byte of HTTP is sent', async () => {
    const { origin } = parsePairingLink(link);
    const wrong = await checkServer(origin, other.fingerprint);
    expect(wrong).toMatchObject({ ok: false, code: 'certificate_mismatch' });
    expect(!wrong.ok && wrong.message).toContain(server.lan!.fingerprint);

    // The same certificate on a listener that records what it is sent: the handshake happens, no request.
    const listener = await recorder(certificate, ok(MANIFEST));
    try {
      const at = `https://127.0.0.1:${listener.port}`;
      await expect(checkServer(at, other.fingerprint)).resolves.toMatchObject({ ok: false, code: 'certificate_mismatch' });
      await vi.waitFor(() => expect(listener.closed()).toBe(1), { timeout: PATIENCE_MS });
      expect(listener.received()).toBe('');
      // The positive control: with the right fingerprint the request arrives, with the link's Host.
      await expect(checkServer(at, certificate.fingerprint)).resolves.toEqual({ ok: true });
      expect(listener.received()).toMatch(new RegExp(`^GET /manifest\\.webmanifest HTTP/1\\.1\\r\\n[^]*Host: 127\\.0\\.0\\.1:${listener.port}\\r\\n`, 'i'));
    } finally {
      await listener.close();
    }
  });

  it('a closed port: server_unreachable', async () => {
    const probe: NetServer = createNetServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(checkServer(`https://127.0.0.1:${port}`, certificate.fingerprint)).resolves.toMatchObject({
      ok: false,
      code: 'server_unreachable',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('a listener that never finishes the handshake: server_unreachable within the bound', async () => {
    const sockets = new Set<Socket>();
    const silent: NetServer = createNetServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const result = await checkServer(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`, certificate.fingerprint, { timeoutMs: 300 });
      expect(result).toMatchObject({ ok: false, code: 'server_unreachable', message: expect.stringContaining('no answer') });
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a server with the right certificate that is not Anima: server_unreachable, in words', async () => {
    for (const reply of [ok('not found', '404 Not Found'), ok('{"name":"Something else"}'), ok('<html>')]) {
      const listener = await recorder(certificate, reply);
      try {
        const result = await checkServer(`https://127.0.0.1:${listener.port}`, certificate.fingerprint);
        expect(result).toMatchObject({ ok: false, code: 'server_unreachable', message: expect.stringContaining('not an Anima server') });
      } finally {
        await listener.close();
      }
    }
  });

  it('an address or fingerprint that is not one: invalid_link, nothing reached', async () => {
    await expect(checkServer('http://127.0.0.1:1', certificate.fingerprint)).resolves.toMatchObject({ code: 'invalid_link' });
    await expect(checkServer('https://127.0.0.1:1', 'AB:CD')).resolves.toMatchObject({ code: 'invalid_link' });
  });
});

describe('pinnedVerify (Chromium certificate verify proc)', () => {
  const remembered = () => ({ origin: parsePairingLink(link).origin, fingerprint: server.lan!.fingerprint });

  it('computes the fingerprint from the PEM as Node does', () => {
    expect(fingerprintOfPem(certificate.cert)).toBe(new X509Certificate(certificate.cert).fingerprint256);
    expect(fingerprintOfPem('no certificate here')).toBeNull();
    expect(colonHex(hex(certificate.fingerprint))).toBe(certificate.fingerprint);
  });

  it('accepts the remembered host only with the pinned certificate, leaves other hosts to Chromium', () => {
    expect(pinnedVerify({ hostname: '127.0.0.1', certificate: { data: certificate.cert } }, remembered())).toBe(0);
    expect(pinnedVerify({ hostname: '127.0.0.1', certificate: { data: other.cert } }, remembered())).toBe(-2);
    expect(pinnedVerify({ hostname: '127.0.0.1', certificate: { data: 'garbage' } }, remembered())).toBe(-2);
    expect(pinnedVerify({ hostname: 'localhost', certificate: { data: certificate.cert } }, remembered())).toBe(-3);
    expect(pinnedVerify({ hostname: 'example.com', certificate: { data: other.cert } }, remembered())).toBe(-3);
    expect(pinnedVerify({ hostname: '127.0.0.1', certificate: { data: certificate.cert } }, null)).toBe(-3);
  });
});

describe('the remembered server', () => {
  it('is written owner-only, read back, and a damaged file counts as none', async () => {
    const file = path.join(temp('anima-remote-file-'), 'profile', 'remote-server.json');
    expect(await readRemembered(file)).toBeNull();
    const state: RememberedState = {
      origin: 'https://192.168.1.20:8443',
      fingerprint: certificate.fingerprint,
      since: new Date(0).toISOString(),
      lastUsed: 'server',
    };
    await writeRemembered(file, state);
    expect(await readRemembered(file)).toEqual(state);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['remote-server.json']);

    fs.writeFileSync(file, '{"origin":"http://x","fingerprint":"AB","since":"x","lastUsed":"server"}');
    expect(await readRemembered(file)).toBeNull();
    fs.writeFileSync(file, 'not json');
    expect(await readRemembered(file)).toBeNull();
    await deleteRemembered(file);
    expect(fs.existsSync(file)).toBe(false);
    await deleteRemembered(file); // already gone: fine
  });
});
