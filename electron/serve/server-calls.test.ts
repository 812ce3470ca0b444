// The browser-mode server over real loopback HTTP, against a fake host: POST /api/call/<method> (the token,
// the contract's methods, input checks, error statuses, body limits). Harness: testing/server-harness.ts.
import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_CODES, MAX_BODY_BYTES } from '../../shared/api.js';
import { statusForErrorCode } from './server.js';
import { host, server, logs, TOKEN, call, useServer } from './testing/server-harness.js';

useServer();

describe('POST /api/call/<method>', () => {
  it('returns the host value as JSON', async () => {
    const res = await call('conversations.create', { title: 'Hello' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ echoed: { title: 'Hello' } });
    expect(host.calls).toEqual([{ method: 'conversations.create', input: { title: 'Hello' } }]);
  });

  it('passes an empty body to the host as no input', async () => {
    const res = await call('conversations.create', '');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(host.calls).toEqual([{ method: 'conversations.create', input: undefined }]);
  });

  it('returns 401 without a token', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: 'unauthorized', message: 'Missing or wrong token. Open the address the launcher printed.' },
    });
    expect(host.calls).toEqual([]);
  });

  it.each([`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', TOKEN, `Basic ${TOKEN}`])(
    'returns 401 for a wrong token (%s)',
    async (authorization) => {
      const res = await call('conversations.create', {}, { headers: { Authorization: authorization } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      expect(host.calls).toEqual([]);
    },
  );

  it('does not accept the token in the query for calls', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create?token=${TOKEN}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('returns 404 unknown_method for a method not in the contract', async () => {
    const res = await call('db.dropEverything', {});
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'unknown_method', message: 'Unknown API method: db.dropEverything' } });
    expect(host.calls).toEqual([]);
  });

  it('does not treat Object.prototype names as methods', async () => {
    for (const m of ['constructor', '__proto__', 'hasOwnProperty']) {
      const res = await call(m, {});
      expect(res.status, m).toBe(404);
    }
    expect(host.calls).toEqual([]);
  });

  it('returns 404 unknown_method for any other /api path', async () => {
    for (const p of ['/api', '/api/', '/api/calls/app.info', '/api/call', '/api/nothing']) {
      const res = await fetch(`${server.origin}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status, p).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code, p).toBe('unknown_method');
    }
  });

  it('returns 400 naming the field for invalid input', async () => {
    const res = await call('chat.send', { conversationId: 'c1', content: '' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; field: string } };
    expect(body.error.code).toBe('invalid_input');
    expect(body.error.field).toBe('content');
    expect(body.error.message).toMatch(/^Invalid input for chat\.send — content: /);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'field', 'message']);
  });

  it('returns 400 invalid_input for malformed JSON without calling the host', async () => {
    const res = await call('chat.send', '{"conversationId": "c1",');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid_input', message: 'The request body is not valid JSON.' } });
    expect(host.calls).toEqual([]);
  });

  it('returns 400 for a body that is not UTF-8', async () => {
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]),
    });
    expect(res.status).toBe(400);
    expect(host.calls).toEqual([]);
  });

  it.each([undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'])(
    'returns 415 for Content-Type %s',
    async (type) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` };
      if (type) headers['Content-Type'] = type;
      const res = await fetch(`${server.origin}/api/call/conversations.create`, {
        method: 'POST',
        headers,
        body: type ? '{}' : new Uint8Array([0x7b, 0x7d]),
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({
        error: { code: 'invalid_input', message: 'The request body must be JSON (Content-Type: application/json).' },
      });
      expect(host.calls).toEqual([]);
    },
  );

  it('accepts application/json with a utf-8 charset', async () => {
    const res = await call('conversations.create', { title: 'é' }, { headers: { 'Content-Type': 'Application/JSON; charset=UTF-8' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: { title: 'é' } });
  });

  it('returns 500 for a plain Error without leaking its message, and logs the detail', async () => {
    const res = await call('app.info', {});
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal', message: 'Something went wrong inside Anima. The details are in the log.' },
    });
    expect(text).not.toContain('exploded');
    expect(text).not.toContain('/secret/path');
    expect(text).not.toContain('server-harness');
    const logged = logs
      .filter((l) => l.level === 'error')
      .map((l) => l.message)
      .join('\n');
    expect(logged).toContain('disk exploded at /secret/path/db');
  });

  it('keeps provider error codes intact with gateway statuses', async () => {
    const auth = await call('settings.get', {});
    expect(auth.status).toBe(502);
    expect(await auth.json()).toEqual({ error: { code: 'provider_auth', message: 'The provider rejected the API key.' } });

    const timeout = await call('chat.stop', { conversationId: 'c1' });
    expect(timeout.status).toBe(504);
    expect(await timeout.json()).toEqual({ error: { code: 'provider_timeout', message: 'The provider did not answer in time.' } });
  });

  it('maps not_found to 404 with its message', async () => {
    const res = await call('conversations.get', { id: 'x' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'No such conversation.' } });
  });

  it('maps every error code to the status errors.ts documents', () => {
    // Grouped by status, as the header of errors.ts lists them: each code of the contract must be in
    // its group, a new one too; provider_* are gateway failures, never 401, 404 or 429.
    const codesByStatus: Record<number, string[]> = {};
    for (const code of ERROR_CODES) (codesByStatus[statusForErrorCode(code)] ??= []).push(code);
    for (const codes of Object.values(codesByStatus)) codes.sort();
    expect(codesByStatus).toEqual({
      400: ['invalid_input'],
      401: ['unauthorized'],
      404: ['not_found', 'unknown_method'],
      409: ['cancelled', 'conflict', 'data_dir_locked', 'interrupted', 'model_busy', 'model_damaged', 'model_not_installed', 'no_provider'],
      413: ['payload_too_large'],
      500: ['internal', 'model_io'],
      502: [
        'model_integrity',
        'model_network',
        'model_not_found',
        'provider_auth',
        'provider_bad_response',
        'provider_context_overflow',
        'provider_model_not_found',
        'provider_not_installed',
        'provider_quota',
        'provider_rate_limited',
        'provider_server_error',
        'provider_unreachable',
      ],
      504: ['provider_timeout'],
      507: ['model_disk_full'],
    });
  });

  it('hides the message of an ApiError with code internal', async () => {
    host.handlers['conversations.create'] = async () => {
      throw new ApiError('internal', 'SQL: relation "secret_table" does not exist');
    };
    const res = await call('conversations.create', {});
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret_table');
  });

  it('answers 200 with a body exactly at the limit', async () => {
    // {"title":"xxx…"} padded to exactly MAX_BODY_BYTES; the echo handler accepts any input.
    const overhead = '{"title":""}'.length;
    const body = `{"title":"${'x'.repeat(MAX_BODY_BYTES - overhead)}"}`;
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    const res = await call('conversations.create', body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { echoed: { title: string } }).echoed.title.length).toBe(MAX_BODY_BYTES - overhead);
  });

  it('returns 413 for a body over 1 MB with Content-Length', async () => {
    const body = `{"title":"${'x'.repeat(MAX_BODY_BYTES)}"}`;
    const res = await call('conversations.create', body);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: { code: 'payload_too_large', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` },
    });
    expect(host.calls).toEqual([]);
  });

  it('returns 413 for a chunked body over 1 MB, without reading the rest', async () => {
    // A server that read to the end before answering would exhaust this stream; one that stops at
    // the limit answers while most of it is still unsent (socket buffers take a few MB at most).
    const total = 64 * 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${server.origin}/api/call/conversations.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const sentWhenAnswered = sent;
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: { code: 'payload_too_large', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` },
    });
    expect(sentWhenAnswered).toBeGreaterThan(MAX_BODY_BYTES);
    expect(sentWhenAnswered).toBeLessThan(total / 2);
    expect(host.calls).toEqual([]);
  });
});
