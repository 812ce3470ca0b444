// A request with two Host headers is refused (RFC 9112 §3.2), whichever comes first: Node itself
// keeps only the first, so without this gate a request could pass on one name and mean another.
import { mkdtemp, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../host/types.js';
import { startTestHost } from '../testing/host.js';
import { startServer, type RunningServer } from './server.js';

let host: Host;
let server: RunningServer;

beforeAll(async () => {
  const staticDir = await mkdtemp(path.join(tmpdir(), 'anima-serve-host-'));
  await writeFile(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>');
  host = await startTestHost();
  server = await startServer({ host, staticDir, token: 'tok-host-header', log: () => {} });
});

afterAll(async () => {
  await server.close();
  await host.close();
});

/** Sends one raw HTTP/1.1 request and resolves with the status line. */
function rawRequest(lines: string[], body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n')) {
        resolve(answer.slice(0, answer.indexOf('\r\n')));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.write([...lines, 'Connection: close', '', body].join('\r\n'));
  });
}

describe('the Host header', () => {
  it('serves a request with one good Host header', async () => {
    expect(await rawRequest(['GET / HTTP/1.1', `Host: 127.0.0.1:${server.port}`])).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses two Host headers with 400, the good one first or last', async () => {
    const good = `Host: 127.0.0.1:${server.port}`;
    expect(await rawRequest(['GET / HTTP/1.1', good, 'Host: evil.example'])).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawRequest(['GET / HTTP/1.1', 'Host: evil.example', good])).toMatch(/^HTTP\/1\.1 400/);
    expect(
      await rawRequest([
        'POST /api/call/app.info HTTP/1.1',
        good,
        good,
        'Authorization: Bearer tok-host-header',
        'Content-Type: application/json',
        'Content-Length: 2',
        '',
        '{}',
      ]),
    ).toMatch(/^HTTP\/1\.1 400/);
  });
});
