// The browser-mode server over real loopback HTTP, against a fake host: GET /api/exports/<name>, the
// download of a finished export (the token in the query, the exact bytes, every gate still in front;
// anything that is not exactly an export in the exports folder is 404). Harness: testing/server-harness.ts.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { exportFileName } from '../archive/exports.js';
import { EXPORT_FILE_NAME } from './exports.js';
import { host, raw, server, TOKEN, useServer } from './testing/server-harness.js';

useServer();

const NAME = 'anima-export-2026-11-03-142501.zip';
const SECOND = 'anima-export-2026-11-03-142501-2.zip';
const OUTSIDE_MARKER = 'outside-exports-do-not-serve';
// Several read chunks (64 KiB each), so a stream cut short or a chunk sent twice would show.
const BYTES = randomBytes(300_000);

let root: string;
let exportsDir: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'anima-serve-exports-'));
  exportsDir = path.join(root, 'data', 'exports');
  await mkdir(exportsDir, { recursive: true });
  await writeFile(path.join(exportsDir, NAME), BYTES);
  await writeFile(path.join(exportsDir, SECOND), 'PK second');
  // An export still being written, a secret beside the data folder, and links out of the folder named like exports.
  await writeFile(path.join(exportsDir, `${'anima-export-2026-11-03-150000.zip'}.partial`), 'PK unfinished');
  await writeFile(path.join(root, 'secret.zip'), OUTSIDE_MARKER);
  await writeFile(path.join(root, 'data', 'anima-export-2026-01-01-000000.zip'), OUTSIDE_MARKER);
  await symlink(path.join(root, 'secret.zip'), path.join(exportsDir, 'anima-export-2026-11-04-000000.zip'));
  await symlink(path.join(exportsDir, NAME), path.join(exportsDir, 'anima-export-2026-11-05-000000.zip'));
  await mkdir(path.join(exportsDir, 'anima-export-2026-11-06-000000.zip'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

beforeEach(() => {
  host.exportsDir = exportsDir;
});

const url = (name: string, token: string | null = TOKEN) => `${server.origin}/api/exports/${name}${token === null ? '' : `?token=${token}`}`;

describe('GET /api/exports/<name>', () => {
  it('downloads a finished export with the token in the query: the exact bytes, as an attachment', async () => {
    const res = await fetch(url(NAME));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${NAME}"`);
    expect(res.headers.get('content-length')).toBe(String(BYTES.length));
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(Buffer.from(await res.arrayBuffer()).equals(BYTES)).toBe(true);

    const second = await fetch(url(SECOND));
    expect(second.status).toBe(200);
    expect(await second.text()).toBe('PK second');
  });

  it('takes the token as a Bearer header too, and from its own origin', async () => {
    const res = await fetch(url(NAME, null), { headers: { Authorization: `Bearer ${TOKEN}`, Origin: server.origin } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(BYTES)).toBe(true);
  });

  it('refuses a missing or wrong token with 401, before looking at the name', async () => {
    for (const target of [url(NAME, null), url(NAME, 'nope'), url(NAME, `${TOKEN}x`), url('no-such-file', null), url('..%2F..%2Fsecret.zip', 'nope')]) {
      const res = await fetch(target);
      expect(res.status, target).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const wrongHeader = await fetch(url(NAME, null), { headers: { Authorization: 'Bearer nope' } });
    expect(wrongHeader.status).toBe(401);
  });

  it.each([
    // traversal, spelled every way: plain (sent as written by node:http), encoded, double-encoded, backslashes
    '/api/exports/../secret.zip',
    '/api/exports/..%2Fsecret.zip',
    '/api/exports/..%2F..%2Fsecret.zip',
    '/api/exports/%2e%2e%2fsecret.zip',
    '/api/exports/%252e%252e%252fsecret.zip',
    '/api/exports/..%5Csecret.zip',
    `/api/exports/${NAME}/..%2F..%2Fsecret.zip`,
    `/api/exports/x/../${NAME}`,
    '/api/exports/..%2Fanima-export-2026-01-01-000000.zip',
    // absolute paths, plain and encoded
    `/api/exports/${encodeURIComponent(path.join('/', 'etc', 'passwd'))}`,
    '/api/exports//etc/passwd',
    `/api/exports/%2Ftmp%2F${NAME}`,
    // a name spelled differently: encoded characters, another case, a NUL, a stray suffix or prefix
    `/api/exports/${NAME.replace('-', '%2D')}`,
    `/api/exports/${NAME.toUpperCase()}`,
    `/api/exports/${NAME}%00`,
    `/api/exports/${NAME}.txt`,
    `/api/exports/x${NAME}`,
    // an export still being written; a missing one; links named like exports; a folder named like one
    '/api/exports/anima-export-2026-11-03-150000.zip.partial',
    '/api/exports/anima-export-2026-11-03-150000.zip',
    '/api/exports/anima-export-2026-11-04-000000.zip',
    '/api/exports/anima-export-2026-11-05-000000.zip',
    '/api/exports/anima-export-2026-11-06-000000.zip',
    // the folder itself, and other files of the data folder
    '/api/exports/',
    '/api/exports/.',
    '/api/exports/package.json',
  ])('answers 404 for %s', async (rawPath) => {
    const res = await raw(`${rawPath}${rawPath.includes('?') ? '&' : '?'}token=${TOKEN}`, { Host: `127.0.0.1:${server.port}` });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ error: { code: 'not_found', message: 'There is no such export.' } });
    expect(res.body).not.toContain(OUTSIDE_MARKER);
  });

  it("answers 404 for the export's own absolute path, encoded", async () => {
    const res = await raw(`/api/exports/${encodeURIComponent(path.join(exportsDir, NAME))}?token=${TOKEN}`);
    expect(res.status).toBe(404);
  });

  it('answers 404 when the host has no exports folder, or it is not there yet', async () => {
    host.exportsDir = undefined;
    expect((await fetch(url(NAME))).status).toBe(404);
    host.exportsDir = path.join(root, 'missing', 'exports');
    expect((await fetch(url(NAME))).status).toBe(404);
  });

  it('still passes the Host and Origin gates first', async () => {
    for (const hostHeader of ['evil.example', `evil.example:${server.port}`, `127.0.0.1:${server.port + 1}`]) {
      const res = await raw(`/api/exports/${NAME}?token=${TOKEN}`, { Host: hostHeader });
      expect(res.status, hostHeader).toBe(403);
      expect(res.body).not.toContain('PK');
    }
    const foreign = await raw(`/api/exports/${NAME}?token=${TOKEN}`, { Host: `127.0.0.1:${server.port}`, Origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toEqual({ error: { code: 'unauthorized', message: 'Requests from other sites are not allowed.' } });
  });

  it.each(['HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'])('refuses %s with 405 (Allow: GET)', async (method) => {
    const res = await raw(`/api/exports/${NAME}?token=${TOKEN}`, { Host: `127.0.0.1:${server.port}` }, method);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });

  it('never takes the token from the query of a call', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create?token=${TOKEN}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('knows every name the archive room writes, and nothing else', () => {
    const at = new Date('2026-11-03T14:25:01.789Z');
    expect(exportFileName(exportsDir, at)).toBe(SECOND.replace('-2.zip', '-3.zip'));
    expect(exportFileName(path.join(root, 'missing'), at)).toBe(NAME);
    expect(exportFileName(path.join(root, 'missing'), new Date('0999-01-02T03:04:05Z'))).toMatch(EXPORT_FILE_NAME);
    for (const name of [NAME, SECOND, exportFileName(exportsDir, at), 'anima-export-2026-11-03-142501-123456.zip']) expect(name).toMatch(EXPORT_FILE_NAME);
    for (const name of [`${NAME}.partial`, 'anima-export-2026-11-03-142501-0.zip', 'anima-export-2026-11-03-1425.zip', `../${NAME}`, `/${NAME}`, `${NAME}/`]) {
      expect(name).not.toMatch(EXPORT_FILE_NAME);
    }
  });
});
