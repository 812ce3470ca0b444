// The browser-mode server over real loopback HTTP, against a fake host: how it starts, the static files it
// serves (and the paths it refuses), and the Host and Origin guards. Harness: testing/server-harness.ts.
import { describe, expect, it } from 'vitest';
import { startServer } from './server.js';
import { staticDir, host, server, TOKEN, SECRET_MARKER, INDEX_HTML, ASSET_JS, call, raw, useServer } from './testing/server-harness.js';

useServer();

describe('startServer', () => {
  it('binds to 127.0.0.1 and reports a URL carrying the token', () => {
    expect(server.origin).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${TOKEN}`);
    expect(server.token).toBe(TOKEN);
    expect(server.port).toBeGreaterThan(0);
  });

  it('makes a random base64url token of 32 bytes by default', async () => {
    const other = await startServer({ host, staticDir, log: () => {} });
    try {
      expect(other.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(other.token).not.toBe(TOKEN);
      expect(other.port).not.toBe(server.port);
    } finally {
      await other.close();
    }
  });

  it('refuses a token that cannot travel in a header or URL', async () => {
    await expect(startServer({ host, staticDir, token: 'has space', log: () => {} })).rejects.toThrow(/token/);
    await expect(startServer({ host, staticDir, token: '', log: () => {} })).rejects.toThrow(/token/);
  });
});

describe('static files', () => {
  it.each(['/', `/?token=${TOKEN}`, '/index.html'])('serves the app page at %s', async (p) => {
    const res = await fetch(`${server.origin}${p}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await res.text()).toBe(INDEX_HTML);
  });

  it('serves assets with their content types and no CSP', async () => {
    const js = await fetch(`${server.origin}/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBeNull();
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toBe(ASSET_JS);

    const css = await fetch(`${server.origin}/assets/style.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers HEAD with headers only', async () => {
    const res = await fetch(`${server.origin}/assets/app.js`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(ASSET_JS.length));
    expect(await res.text()).toBe('');
  });

  it('returns 404 for missing files and directories', async () => {
    for (const p of ['/missing.js', '/assets/', '/assets', '/assets/nope.css']) {
      const res = await fetch(`${server.origin}${p}`);
      expect(res.status, p).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'Not found.' } });
    }
  });

  it.each([
    '/../package.json',
    '/%2e%2e/package.json',
    '/..%2fpackage.json',
    '/%2E%2E%2Fpackage.json',
    '/assets/../../package.json',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/..\\package.json',
    '/..%5cpackage.json',
    '/index.html%00.js',
    '/.env',
    '/escape.json',
    '/%',
  ])('never serves a file outside the static dir: %s', async (p) => {
    const res = await raw(p);
    expect([403, 404]).toContain(res.status);
    expect(res.body).not.toContain(SECRET_MARKER);
  });

  it('refuses methods other than GET and HEAD with 405', async () => {
    const res = await raw('/index.html', {}, 'PUT');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    const del = await fetch(`${server.origin}/api/call/chat.send`, { method: 'DELETE', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('POST');
    const postEvents = await fetch(`${server.origin}/api/events?token=${TOKEN}`, { method: 'POST' });
    expect(postEvents.status).toBe(405);
  });
});

describe('host and origin guards', () => {
  it.each(['evil.example', `evil.example:${0}`, '127.0.0.1', '127.0.0.1:1', 'localhost.evil.example'])(
    'refuses a foreign Host header (%s) with 403, for pages and the API',
    async (hostHeader) => {
      const page = await raw('/', { Host: hostHeader });
      expect(page.status).toBe(403);
      expect(page.body).not.toContain('<html');
      const events = await raw(`/api/events?token=${TOKEN}`, { Host: hostHeader });
      expect(events.status).toBe(403);
      expect(JSON.parse(events.body)).toEqual({
        error: { code: 'unauthorized', message: 'This server answers only to 127.0.0.1 and localhost.' },
      });
    },
  );

  it('accepts localhost:PORT as the Host', async () => {
    const res = await raw('/', { Host: `localhost:${server.port}` });
    expect(res.status).toBe(200);
    expect(res.body).toBe(INDEX_HTML);
  });

  it('refuses a call from a foreign Origin with 403, even with the right token', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'Requests from other sites are not allowed.' } });
    expect(host.calls).toEqual([]);
  });

  it('checks the Origin before the token', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'http://evil.example', Authorization: 'Bearer wrong' } });
    expect(res.status).toBe(403);
  });

  it('refuses the event stream to a foreign Origin with 403', async () => {
    const res = await fetch(`${server.origin}/api/events?token=${TOKEN}`, { headers: { Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'Requests from other sites are not allowed.' } });
    expect(host.listeners.size).toBe(0);
  });

  it('refuses Origin: null (sandboxed frames, file pages)', async () => {
    const res = await call('conversations.create', {}, { headers: { Origin: 'null' } });
    expect(res.status).toBe(403);
  });

  it('accepts its own origin under either name', async () => {
    for (const origin of [server.origin, `http://localhost:${server.port}`]) {
      const res = await call('conversations.create', { title: 'x' }, { headers: { Origin: origin } });
      expect(res.status, origin).toBe(200);
    }
  });
});
