// The LAN listener on IPv6, over real TLS on ::1 with a real host: `--listen ::1` (a specific IPv6
// address), `--listen ::` (every network: IPv6 and IPv4 reach it), the certificate's subjectAltName
// carrying the IPv6 addresses (checked as a TLS client checks it: no servername override), the Host
// and Origin gates with `[::1]:port`, the pairing address in brackets, a device paired over IPv6.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import type { Host } from '../host/types.js';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { serverNames } from './lan.js';
import { createRateLimiter } from './rate-limit.js';
import { startServer, type RunningServer } from './server.js';
import { canonicalIp, CERTIFICATE_FILE, normaliseNames } from './tls.js';
import { httpsCall, type HttpsCallOptions, type HttpsReply } from './testing/https-call.js';

const dirs: string[] = [];
const running: { host: Host; server: RunningServer }[] = [];

function tempDir(prefix: string): string {
  const dir = tempDataDir(prefix);
  dirs.push(dir);
  return dir;
}

async function start(address: string, names?: string[]): Promise<{ host: Host; server: RunningServer }> {
  const page = tempDir('anima-lan6-page-');
  fs.writeFileSync(path.join(page, 'index.html'), '<!doctype html><title>Anima</title>');
  const host = await startTestHost({ dataDir: tempDir('anima-lan6-'), sleep: { tickMs: 0 } });
  const server = await startServer({
    host,
    staticDir: page,
    port: 0,
    token: 'per-run-token-0123456789abcdef',
    log: () => {},
    lan: { address, port: 0, limiter: createRateLimiter(), ...(names ? { names } : {}) },
  });
  const one = { host, server };
  running.push(one);
  return one;
}

afterEach(async () => {
  for (const { host, server } of running.splice(0)) {
    await server.close();
    await host.close();
  }
});

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const certificateOf = (host: Host) => JSON.parse(fs.readFileSync(path.join(host.dataDir, CERTIFICATE_FILE), 'utf8')) as { cert: string; names: string[] };

/**
 * An HTTPS request to `address` (an IP, as a client dials it) trusting the folder's certificate and
 * checking it against that address — as a paired phone's browser does. Node writes the Host header
 * `[::1]:port` for an IPv6 address by itself.
 */
function request(
  one: { host: Host; server: RunningServer },
  address: string,
  method: string,
  urlPath: string,
  opts: HttpsCallOptions = {},
): Promise<HttpsReply> {
  return httpsCall({ host: address, port: one.server.lan!.port, ca: certificateOf(one.host).cert }, method, urlPath, opts);
}

describe('IPv6 addresses, written as browsers write them', () => {
  it('canonicalises IPv6 (brackets, zeros, upper case, an IPv4 tail) and refuses a zone or a non-address', () => {
    expect(canonicalIp('::1')).toBe('::1');
    expect(canonicalIp('[::1]')).toBe('::1');
    expect(canonicalIp('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalIp('FD00:0:0::20')).toBe('fd00::20');
    expect(canonicalIp('::ffff:192.168.1.20')).toBe('::ffff:c0a8:114');
    expect(canonicalIp('192.168.1.20')).toBe('192.168.1.20');
    expect(canonicalIp('fe80::1%eth0')).toBeNull();
    expect(canonicalIp('my-laptop')).toBeNull();
    expect(canonicalIp('::1:')).toBeNull();
    expect(normaliseNames(['0:0:0:0:0:0:0:1', 'LOCALHOST', '[::1]'])).toEqual(['::1', 'localhost']);
  });

  it('names :: by every IPv4 and IPv6 address but the link-local, ::1 among them; a specific address by itself', () => {
    const all = serverNames('::');
    const nics = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []);
    for (const nic of nics) {
      if (nic.family === 'IPv4') expect(all).toContain(nic.address);
      else if (!nic.address.startsWith('fe80:')) expect(all).toContain(canonicalIp(nic.address));
    }
    expect(all).toEqual(expect.arrayContaining(['::1', '127.0.0.1', 'localhost']));
    expect(all.some((n) => n.startsWith('fe80:'))).toBe(false);
    expect(serverNames('0.0.0.0')).not.toContain('::1');
    const one = serverNames('0:0:0:0:0:0:0:1');
    expect(one).toEqual(expect.arrayContaining(['::1', '127.0.0.1', 'localhost']));
    expect(one.filter((n) => n.includes(':'))).toEqual(['::1']);
  });
});

describe('the LAN listener on ::1 over real TLS', () => {
  it('answers at https://[::1]:port with a certificate naming ::1; Host and Origin [::1]:port pass, others are refused', async () => {
    const one = await start('::1');
    const lan = one.server.lan!;
    expect(lan.address).toBe('::1');
    expect(lan.origin).toBe(`https://[::1]:${lan.port}`);
    expect(lan.names).toContain('::1');
    const cert = new X509Certificate(certificateOf(one.host).cert);
    expect(cert.checkIP('::1')).toBe('::1');
    expect(cert.subjectAltName).toMatch(/IP Address:0:0:0:0:0:0:0:1\b/);

    // The page, reached as a browser at https://[::1]:port reaches it (the certificate checked against ::1).
    const page = await request(one, '::1', 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Anima</title>');
    // The Origin the browser sends from that page passes; another page's does not.
    const own = await request(one, '::1', 'POST', '/api/pair', { body: { secret: 'wrong', name: 'Phone' }, headers: { Origin: `https://[::1]:${lan.port}` } });
    expect(own.status).toBe(401);
    const foreign = await request(one, '::1', 'POST', '/api/pair', {
      body: { secret: 'wrong', name: 'Phone' },
      headers: { Origin: `https://[::2]:${lan.port}` },
    });
    expect(foreign.status).toBe(403);
    // A Host naming another address (DNS rebinding, or a name this server does not carry) is refused.
    const otherHost = await request(one, '::1', 'GET', '/', { headers: { Host: `[::2]:${lan.port}` } });
    expect(otherHost.status).toBe(403);
    expect(otherHost.body).toContain('This server answers only to its own names');
    const wrongPort = await request(one, '::1', 'GET', '/', { headers: { Host: `[::1]:${lan.port + 1}` } });
    expect(wrongPort.status).toBe(403);
  });

  it('pairs a device over IPv6: the pairing address is in brackets, the token works there, Settings → Devices lists the address', async () => {
    const one = await start('[::1]');
    const lan = one.server.lan!;
    const listing = await one.host.api['devices.list']({});
    expect(listing.listening).toMatchObject({ address: '::1', port: lan.port });
    const pairing = await one.host.api['devices.pairingStart']({});
    expect(pairing.url).toMatch(new RegExp(`^https://\\[::1\\]:${lan.port}/#pair=`));
    const url = new URL(pairing.url);
    expect(url.hostname).toBe('[::1]');
    const paired = await request(one, '::1', 'POST', '/api/pair', {
      body: { secret: pairing.secret, name: 'Phone' },
      headers: { Origin: url.origin },
    });
    expect(paired.status).toBe(200);
    const { token } = JSON.parse(paired.body) as { token: string };
    const call = await request(one, '::1', 'POST', '/api/call/conversations.list', { token, body: {}, headers: { Origin: url.origin } });
    expect(call.status).toBe(200);
    expect(JSON.parse(call.body)).toEqual([]);
  });
});

describe('the LAN listener on :: (every network)', () => {
  it('is reached over IPv6 and IPv4 alike, with one certificate naming both', async () => {
    const one = await start('::');
    const lan = one.server.lan!;
    expect(lan.address).toBe('::');
    expect(lan.names).toEqual(expect.arrayContaining(['::1', '127.0.0.1']));
    // The address shown first is a LAN one (IPv4 where there is one), never a loopback name.
    expect(lan.origin).not.toMatch(/\/\/(\[::1\]|127\.|localhost)/);
    const cert = new X509Certificate(certificateOf(one.host).cert);
    expect(cert.checkIP('::1')).toBe('::1');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect((await request(one, '::1', 'GET', '/')).status).toBe(200);
    expect((await request(one, '127.0.0.1', 'GET', '/')).status).toBe(200);
  });

  it('pairs at an IPv6 LAN address, in brackets, where the machine has no IPv4 one', async () => {
    const one = await start('::', ['::1', 'FD00:0:0::20', 'localhost', '127.0.0.1']);
    const lan = one.server.lan!;
    expect(lan.names).toEqual(['127.0.0.1', '::1', 'fd00::20', 'localhost']);
    expect(lan.origin).toBe(`https://[fd00::20]:${lan.port}`);
    const pairing = await one.host.api['devices.pairingStart']({});
    expect(pairing.url).toMatch(new RegExp(`^https://\\[fd00::20\\]:${lan.port}/#pair=`));
    expect(new X509Certificate(certificateOf(one.host).cert).checkIP('fd00::20')).toBe('fd00::20');
  });
});
