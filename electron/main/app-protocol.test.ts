import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppRequestHandler, mimeType } from './app-protocol.js';
import { CONTENT_SECURITY_POLICY } from './security-rules.js';

let base: string;
let root: string;
let handle: ReturnType<typeof createAppRequestHandler>;

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'anima-app-protocol-'));
  root = path.join(base, 'renderer');
  await mkdir(path.join(root, 'assets'), { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<!doctype html><div id="root"></div>');
  await writeFile(path.join(root, 'assets', 'main.js'), 'console.log(1)');
  await writeFile(path.join(base, 'secret.txt'), 'top secret');
  handle = createAppRequestHandler(root);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const get = (url: string, method = 'GET') => handle({ url, method });

describe('app:// handler', () => {
  it('serves index.html with the CSP header', async () => {
    const res = await get('app://anima/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await res.text()).toContain('id="root"');
  });

  it('serves module scripts as JavaScript', async () => {
    const res = await get('app://anima/assets/main.js');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('console.log(1)');
  });

  it('falls back to index.html for client-side routes, not for missing assets', async () => {
    expect(await (await get('app://anima/settings')).text()).toContain('id="root"');
    expect((await get('app://anima/assets/missing.js')).status).toBe(404);
  });

  it('never serves anything outside the root', async () => {
    for (const url of ['app://anima/../secret.txt', 'app://anima/%2e%2e/secret.txt', 'app://anima/..%2fsecret.txt']) {
      const res = await get(url);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('top secret');
    }
  });

  it('accepts only reads', async () => {
    expect((await get('app://anima/index.html', 'POST')).status).toBe(405);
    const head = await get('app://anima/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('knows the types a Vite bundle contains', () => {
    expect(mimeType('a.css')).toBe('text/css; charset=utf-8');
    expect(mimeType('a.WOFF2')).toBe('font/woff2');
    expect(mimeType('a.svg')).toBe('image/svg+xml');
    expect(mimeType('a.unknown')).toBe('application/octet-stream');
  });
});
