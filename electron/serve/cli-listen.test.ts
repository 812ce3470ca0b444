// `anima serve --listen` as a person runs it: its own process. Nonsense is refused in words before
// anything starts; --listen 127.0.0.1 prints the LAN address and the certificate's fingerprint, and
// the HTTPS listener answers with that certificate.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];

function serve(args: string[]): { child: ChildProcess; ready: Promise<{ out: string; code: number | null }> } {
  const dataDir = tempDataDir('anima-cli-listen-');
  const page = tempDataDir('anima-cli-listen-page-');
  dirs.push(dataDir, page);
  fs.writeFileSync(path.join(page, 'index.html'), '<!doctype html><title>Anima</title>');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'electron/cli.ts', 'serve', '--data-dir', dataDir, '--port', '0', '--no-open', ...args],
    { cwd: path.resolve(import.meta.dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1', ANIMA_STATIC_DIR: page } },
  );
  children.push(child);
  let out = '';
  const ready = new Promise<{ out: string; code: number | null }>((resolve) => {
    const check = () => /fingerprint \(SHA-256\): \S+\n/.test(out) && resolve({ out, code: null });
    child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), check()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ out, code }));
  });
  return { child, ready };
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('anima serve --listen', () => {
  it(
    'refuses an address that is not one, and --lan-port without --listen, in words',
    async () => {
      const bad = await serve(['--listen', 'my-laptop']).ready;
      expect(bad.code).toBe(1);
      expect(bad.out).toMatch(
        /--listen takes an address of this machine: 0\.0\.0\.0 for every IPv4 network, :: for every network \(IPv6 and IPv4\), or one such as .* — not “my-laptop”/,
      );
      const zoned = await serve(['--listen', 'fe80::1%eth0']).ready;
      expect(zoned.code).toBe(1);
      expect(zoned.out).toContain('--listen fe80::1%eth0: an IPv6 address with a zone (%…) cannot be opened in a browser. Use ::');
      const lonely = await serve(['--lan-port', '4001']).ready;
      expect(lonely.code).toBe(1);
      expect(lonely.out).toContain('--lan-port goes with --listen ADDR');
      const port = await serve(['--listen', '127.0.0.1', '--lan-port', 'eighty']).ready;
      expect(port.code).toBe(1);
      expect(port.out).toContain('--lan-port must be a port number, not “eighty”');
    },
    PATIENCE_MS * 3,
  );

  it(
    'serves HTTPS on the address with the printed fingerprint',
    async () => {
      const run = serve(['--listen', '127.0.0.1', '--lan-port', '0']);
      const { out, code } = await run.ready;
      expect(code, out).toBeNull();
      const lan = /On your local network \(HTTPS only\): https:\/\/127\.0\.0\.1:(\d+) /.exec(out);
      const fingerprint = /fingerprint \(SHA-256\): (\S+)/.exec(out)?.[1];
      expect(lan, out).not.toBeNull();
      const seen = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: Number(lan![1]), path: '/', rejectUnauthorized: false, agent: false }, (res) => {
          resolve((res.socket as TLSSocket).getPeerCertificate().fingerprint256);
          res.resume();
        });
        req.on('error', reject);
        req.end();
      });
      expect(seen).toBe(fingerprint);
      run.child.kill('SIGTERM');
      await new Promise((resolve) => run.child.once('close', resolve));
    },
    PATIENCE_MS * 2,
  );

  it(
    'serves HTTPS on an IPv6 address, printed in brackets, its certificate naming it',
    async () => {
      const run = serve(['--listen', '0:0:0:0:0:0:0:1', '--lan-port', '0']);
      const { out, code } = await run.ready;
      expect(code, out).toBeNull();
      const lan = /On your local network \(HTTPS only\): https:\/\/\[::1\]:(\d+) /.exec(out);
      const fingerprint = /fingerprint \(SHA-256\): (\S+)/.exec(out)?.[1];
      expect(lan, out).not.toBeNull();
      const seen = await new Promise<{ fingerprint: string; ip: string | undefined }>((resolve, reject) => {
        const req = request({ host: '::1', port: Number(lan![1]), path: '/', rejectUnauthorized: false, agent: false }, (res) => {
          const cert = (res.socket as TLSSocket).getPeerX509Certificate();
          resolve({ fingerprint: cert!.fingerprint256, ip: cert!.checkIP('::1') });
          res.resume();
        });
        req.on('error', reject);
        req.end();
      });
      expect(seen).toEqual({ fingerprint, ip: '::1' });
      run.child.kill('SIGTERM');
      await new Promise((resolve) => run.child.once('close', resolve));
    },
    PATIENCE_MS * 2,
  );
});
