// The LAN listener over real TLS on 127.0.0.1 with a real host (PGlite on disk): the certificate and
// its fingerprint, pairing, device tokens (unpaired, revoked — calls and the event stream), the
// per-run token refused there, owner-only methods, the Host and Origin gates, the rate limit.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Host } from '../host/types.js';
import { startTestHost, tempDataDir, TEST_ENGINE } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { createRateLimiter } from './rate-limit.js';
import { startServer, type RunningServer } from './server.js';
import { CERTIFICATE_FILE, ensureCertificate } from './tls.js';
import { httpsCall, type HttpsCallOptions, type HttpsReply } from './testing/https-call.js';

const dirs: string[] = [];
const NAMES = ['127.0.0.1', 'localhost', 'anima-test.local'];
let host: Host;
let server: RunningServer;
let clock = 0; // ms added to the real time, for the secret's expiry

function page(): string {
  const dir = tempDataDir('anima-lan-page-');
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Anima</title>');
  return dir;
}

beforeEach(async () => {
  clock = 0;
  const dataDir = tempDataDir('anima-lan-');
  dirs.push(dataDir);
  host = await startTestHost({ dataDir, now: () => new Date(Date.now() + clock), sleep: { tickMs: 0 } });
  server = await startServer({
    host,
    staticDir: page(),
    port: 0,
    token: 'per-run-token-0123456789abcdef',
    log: () => {},
    lan: { address: '127.0.0.1', port: 0, names: NAMES, limiter: createRateLimiter() },
  });
});

afterEach(async () => {
  await server.close();
  await host.close();
});

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const certificate = () => JSON.parse(fs.readFileSync(path.join(host.dataDir, CERTIFICATE_FILE), 'utf8')) as { cert: string; key: string; names: string[] };

/** An HTTPS request to the LAN listener that trusts its certificate (as a paired phone does), unless `trust` is false. */
function lan(method: string, urlPath: string, opts: HttpsCallOptions & { trust?: boolean } = {}): Promise<HttpsReply> {
  const trusted = opts.trust === false ? {} : { ca: certificate().cert, servername: 'localhost' };
  return httpsCall({ host: '127.0.0.1', port: server.lan!.port, ...trusted }, method, urlPath, opts);
}

/** An event stream on the LAN listener: resolves once `hello` arrived; `closed` when the server ends it. */
function lanEvents(token: string): Promise<{ status: number; text: () => string; closed: Promise<void>; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: server.lan!.port,
        path: `/api/events?token=${encodeURIComponent(token)}`,
        agent: false,
        ca: certificate().cert,
        servername: 'localhost',
      },
      (res) => {
        let text = '';
        const closed = new Promise<void>((done) => {
          res.on('close', () => done());
          res.on('error', () => done());
          req.on('error', () => done());
        });
        const out = { status: res.statusCode ?? 0, text: () => text, closed, abort: () => req.destroy() };
        if (out.status !== 200) {
          res.resume();
          resolve(out);
          return;
        }
        res.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.includes('event: hello')) resolve(out);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function pairDevice(name = 'Phone'): Promise<{ token: string; deviceId: string }> {
  const start = await host.api['devices.pairingStart']({});
  const reply = await lan('POST', '/api/pair', { body: { secret: start.secret, name } });
  expect(reply.status).toBe(200);
  return reply.json() as { token: string; deviceId: string };
}

describe('the certificate', () => {
  it('is made for this folder with the server names; a client that pins it connects, one that does not trust it is refused', async () => {
    const kept = certificate();
    const x509 = new X509Certificate(kept.cert);
    expect(x509.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(x509.subjectAltName).toContain('DNS:localhost');
    expect(x509.subjectAltName).toContain('DNS:anima-test.local');
    expect(server.lan!.fingerprint).toBe(x509.fingerprint256);
    expect(server.lan!.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect((fs.statSync(path.join(host.dataDir, CERTIFICATE_FILE)).mode & 0o777).toString(8)).toBe('600');

    const pinned = await lan('GET', '/', { headers: { Host: `localhost:${server.lan!.port}` } });
    expect(pinned.status).toBe(200);
    expect(pinned.fingerprint).toBe(server.lan!.fingerprint);
    expect(pinned.headers['strict-transport-security']).toBeDefined();
    await expect(lan('GET', '/', { trust: false })).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('is kept for the same names, made anew when they change or it nears expiry', async () => {
    const first = await ensureCertificate(host.dataDir, [...NAMES].reverse());
    expect(first.fingerprint).toBe(server.lan!.fingerprint);
    const renamed = await ensureCertificate(host.dataDir, [...NAMES, '192.168.77.5']);
    expect(renamed.fingerprint).not.toBe(first.fingerprint);
    expect(new X509Certificate(renamed.cert).subjectAltName).toContain('IP Address:192.168.77.5');
    const later = await ensureCertificate(host.dataDir, [...NAMES, '192.168.77.5'], new Date(Date.now() + 380 * 86_400_000));
    expect(later.fingerprint).not.toBe(renamed.fingerprint);
    await expect(ensureCertificate(host.dataDir, ['not a name!'])).rejects.toThrow(/neither a host name nor an IP address/);
  });
});

describe('pairing', () => {
  it('a device pairs with the secret, calls with its own token and is listed with its last use', async () => {
    const start = await host.api['devices.pairingStart']({});
    expect(start.url).toBe(`https://127.0.0.1:${server.lan!.port}/#pair=${start.secret}&fp=${server.lan!.fingerprint.replace(/:/g, '').toLowerCase()}`);
    expect(start.fingerprint).toBe(server.lan!.fingerprint);
    expect(Date.parse(start.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);

    const paired = await lan('POST', '/api/pair', { body: { secret: start.secret, name: 'Marek’s phone' } });
    expect(paired.status).toBe(200);
    const { token, deviceId } = paired.json() as { token: string; deviceId: string };
    expect(token).toMatch(/^[\w-]{43}$/);

    const reply = await lan('POST', '/api/call/conversations.list', { token, body: {} });
    expect(reply.status).toBe(200);

    const list = await host.api['devices.list']({});
    expect(list.listening).toMatchObject({ address: '127.0.0.1', port: server.lan!.port, fingerprint: server.lan!.fingerprint });
    expect(list.devices).toHaveLength(1);
    expect(list.devices[0]).toMatchObject({ id: deviceId, name: 'Marek’s phone', revokedAt: null });
    expect(list.devices[0]!.lastUsedAt).not.toBeNull();

    // Only the digest is stored.
    const stored = JSON.stringify(await host.api['devices.list']({}));
    expect(stored).not.toContain(token);

    const renamed = await host.api['devices.rename']({ id: deviceId, name: 'Phone' });
    expect(renamed.name).toBe('Phone');
  });

  it('a used, replaced or expired secret is refused, and so is a body without one', async () => {
    const first = await host.api['devices.pairingStart']({});
    const second = await host.api['devices.pairingStart']({});
    expect((await lan('POST', '/api/pair', { body: { secret: first.secret, name: 'Old code' } })).status).toBe(401);
    expect((await lan('POST', '/api/pair', { body: { secret: second.secret, name: 'Tablet' } })).status).toBe(200);
    const used = await lan('POST', '/api/pair', { body: { secret: second.secret, name: 'Again' } });
    expect(used.status).toBe(401);
    expect((used.json() as { error: { message: string } }).error.message).toMatch(/wrong, used or expired/);

    const third = await host.api['devices.pairingStart']({});
    clock = 10 * 60_000 + 1_000;
    expect((await lan('POST', '/api/pair', { body: { secret: third.secret, name: 'Late' } })).status).toBe(401);
    expect((await lan('POST', '/api/pair', { body: { name: 'No secret' } })).status).toBe(400);
    expect((await host.api['devices.list']({})).devices.map((d) => d.name)).toEqual(['Tablet']);
  });

  it('is not offered on the loopback listener, and pairingStart says how to listen when there is no LAN listener', async () => {
    const start = await host.api['devices.pairingStart']({});
    const res = await fetch(`${server.origin}/api/pair`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ secret: start.secret, name: 'x' }),
    });
    expect(res.status).toBe(404);
    await server.close();
    await expect(host.api['devices.pairingStart']({})).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('--listen 0.0.0.0') });
    expect((await host.api['devices.list']({})).listening).toBeNull();
  });
});

describe('tokens on the LAN listener', () => {
  it('refuses an unpaired token, the per-run loopback token, and no token; the loopback listener refuses a device token', async () => {
    expect((await lan('POST', '/api/call/conversations.list', { token: 'never-paired-token', body: {} })).status).toBe(401);
    expect((await lan('POST', '/api/call/conversations.list', { token: server.token, body: {} })).status).toBe(401);
    expect((await lan('POST', '/api/call/conversations.list', { body: {} })).status).toBe(401);
    expect((await lanEvents(server.token)).status).toBe(401);

    const { token } = await pairDevice();
    const loopback = await fetch(`${server.origin}/api/call/conversations.list`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(loopback.status).toBe(401);
    const owner = await fetch(`${server.origin}/api/call/conversations.list`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(owner.status).toBe(200);
  });

  it('refuses a revoked device at once: its calls, and its open event stream is closed', async () => {
    const { token, deviceId } = await pairDevice();
    const other = await pairDevice('Laptop');
    const stream = await lanEvents(token);
    const otherStream = await lanEvents(other.token);
    expect(stream.status).toBe(200);

    const revoked = await host.api['devices.revoke']({ id: deviceId });
    expect(revoked.revokedAt).not.toBeNull();
    await withTimeout(stream.closed, 'the revoked device’s event stream was not closed');
    expect((await lan('POST', '/api/call/conversations.list', { token, body: {} })).status).toBe(401);
    expect((await lanEvents(token)).status).toBe(401);

    // The other device goes on.
    expect((await lan('POST', '/api/call/conversations.list', { token: other.token, body: {} })).status).toBe(200);
    await host.api['conversations.create']({});
    await waitFor(() => otherStream.text().includes('conversations.changed'));
    otherStream.abort();
    const list = await host.api['devices.list']({});
    expect(list.devices.map((d) => [d.name, d.revokedAt !== null])).toEqual([
      ['Laptop', false],
      ['Phone', true],
    ]);
  });

  // Safety copies are of the PGlite folder (on PostgreSQL the server's own backups apply).
  it.skipIf(TEST_ENGINE === 'postgres')('keeps a revocation through a restore to an older copy, and refuses a device paired since', async () => {
    const early = await pairDevice('Early phone');
    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    await host.api['devices.revoke']({ id: early.deviceId });
    const late = await pairDevice('Late laptop');
    const lateStream = await lanEvents(late.token);

    await host.api['backups.restore']({ id: copy!.id });
    await withTimeout(lateStream.closed, 'the stream of a device the copy does not know was not closed');
    expect((await lan('POST', '/api/call/conversations.list', { token: early.token, body: {} })).status).toBe(401);
    expect((await lan('POST', '/api/call/conversations.list', { token: late.token, body: {} })).status).toBe(401);
    expect((await host.api['devices.list']({})).devices.map((d) => [d.name, d.revokedAt !== null])).toEqual([['Early phone', true]]);
  });

  it('refuses a device the owner-only methods, in words', async () => {
    const { token, deviceId } = await pairDevice();
    for (const method of ['devices.list', 'devices.pairingStart', 'devices.revoke', 'devices.rename', 'app.resetBrowserLink']) {
      const reply = await lan('POST', `/api/call/${method}`, { token, body: method === 'devices.revoke' ? { id: deviceId } : {} });
      expect(reply.status, method).toBe(403);
      expect((reply.json() as { error: { message: string } }).error.message).toMatch(/Only the computer Anima runs on/);
    }
    expect((await host.api['devices.list']({})).devices[0]!.revokedAt).toBeNull();
  });
});

describe('the Host and Origin gates', () => {
  it('admit the server’s own names only', async () => {
    const { token } = await pairDevice();
    const port = server.lan!.port;
    for (const name of NAMES) {
      const reply = await lan('POST', '/api/call/conversations.list', {
        token,
        body: {},
        headers: { Host: `${name}:${port}`, Origin: `https://${name}:${port}` },
      });
      expect(reply.status, name).toBe(200);
    }
    expect((await lan('GET', '/', { headers: { Host: `evil.example:${port}` } })).status).toBe(403);
    expect((await lan('POST', '/api/call/conversations.list', { token, body: {}, headers: { Host: `attacker.test:${port}` } })).status).toBe(403);
    expect((await lan('POST', '/api/call/conversations.list', { token, body: {}, headers: { Origin: 'https://evil.example' } })).status).toBe(403);
    // The plain-HTTP origin of the same name is another origin.
    expect((await lan('POST', '/api/call/conversations.list', { token, body: {}, headers: { Origin: `http://127.0.0.1:${port}` } })).status).toBe(403);
    expect((await lan('POST', '/api/pair', { body: { secret: 'x', name: 'y' }, headers: { Origin: 'https://evil.example' } })).status).toBe(403);
  });
});

describe('the rate limit', () => {
  it('refuses an address after ten failures a minute with 429 and Retry-After, bad tokens and bad secrets alike', async () => {
    const { token } = await pairDevice();
    for (let i = 0; i < 5; i++) expect((await lan('POST', '/api/call/conversations.list', { token: `guess-${i}`, body: {} })).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await lan('POST', '/api/pair', { body: { secret: `guess-${i}`, name: 'x' } })).status).toBe(401);
    const limited = await lan('POST', '/api/call/conversations.list', { token, body: {} });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await lan('POST', '/api/pair', { body: { secret: 'x', name: 'y' } })).status).toBe(429);
    // The page itself and this machine's own window are not held up.
    expect((await lan('GET', '/')).status).toBe(200);
    const owner = await fetch(`${server.origin}/api/call/conversations.list`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(owner.status).toBe(200);
  });

  it('lets an address try again once the window has passed', () => {
    let now = 1_000_000;
    const limiter = createRateLimiter({ now: () => now });
    for (let i = 0; i < 10; i++) limiter.fail('10.0.0.9');
    expect(limiter.blockedFor('10.0.0.9')).toBe(60);
    expect(limiter.blockedFor('10.0.0.8')).toBe(0);
    now += 30_000;
    expect(limiter.blockedFor('10.0.0.9')).toBe(30);
    now += 30_001;
    expect(limiter.blockedFor('10.0.0.9')).toBe(0);
  });
});

async function withTimeout(p: Promise<unknown>, message: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(message)), PATIENCE_MS)))]).finally(() => clearTimeout(timer));
}

async function waitFor(condition: () => boolean): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > PATIENCE_MS) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}
