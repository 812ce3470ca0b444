// The browser-mode server over real loopback HTTP, against a fake host: the event stream GET /api/events
// (token, hello, fan-out, keepalive, close). Harness: testing/server-harness.ts.
import { describe, expect, it } from 'vitest';
import { startServer } from './server.js';
import { staticDir, host, server, TOKEN, waitFor, openEvents, useServer } from './testing/server-harness.js';

useServer();

describe('GET /api/events', () => {
  it('requires the token', async () => {
    const missing = await fetch(`${server.origin}/api/events`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    const wrong = await fetch(`${server.origin}/api/events?token=nope`);
    expect(wrong.status).toBe(401);
    expect(host.listeners.size).toBe(0);
  });

  it('sends retry and hello, then host events with their JSON payloads, then unsubscribes on disconnect', async () => {
    const stream = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.res.headers.get('cache-control')).toBe('no-store');

    expect(await stream.next()).toEqual({ event: 'hello', data: '{}', retry: '1000' });
    expect(host.listeners.size).toBe(1);

    host.emit('chat.delta', { conversationId: 'c1', messageId: 'm1', text: 'line one\nline two "quoted"' });
    const delta = await stream.next();
    expect(delta?.event).toBe('chat.delta');
    expect(JSON.parse(delta!.data)).toEqual({ conversationId: 'c1', messageId: 'm1', text: 'line one\nline two "quoted"' });

    host.emit('conversations.changed', { conversationId: 'c2' });
    expect(await stream.next()).toEqual({ event: 'conversations.changed', data: '{"conversationId":"c2"}' });

    stream.abort();
    await waitFor(() => host.listeners.size === 0);
  });

  it('fans events out to every connected client', async () => {
    const a = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    const b = await openEvents(`${server.origin}/api/events?token=${TOKEN}`, {
      headers: { Origin: `http://localhost:${server.port}` },
    });
    expect((await a.next())?.event).toBe('hello');
    expect((await b.next())?.event).toBe('hello');
    expect(host.listeners.size).toBe(2);

    host.emit('conversations.changed', { conversationId: 'c9' });
    expect((await a.next())?.data).toBe('{"conversationId":"c9"}');
    expect((await b.next())?.data).toBe('{"conversationId":"c9"}');

    a.abort();
    await waitFor(() => host.listeners.size === 1);
    host.emit('conversations.changed', { conversationId: 'c10' });
    expect((await b.next())?.data).toBe('{"conversationId":"c10"}');
    b.abort();
    await waitFor(() => host.listeners.size === 0);
  });

  it('sends a keepalive comment on the configured interval', async () => {
    const fast = await startServer({ host, staticDir, token: TOKEN, keepAliveMs: 50, log: () => {} });
    try {
      const stream = await openEvents(`${fast.origin}/api/events?token=${TOKEN}`);
      expect((await stream.next())?.event).toBe('hello');
      await new Promise((r) => setTimeout(r, 200));
      host.emit('conversations.changed', { conversationId: 'k' });
      // Comments are counted as the reader passes them on the way to the event.
      expect((await stream.next())?.data).toBe('{"conversationId":"k"}');
      expect(stream.comments()).toBeGreaterThan(0);
      stream.abort();
    } finally {
      await fast.close();
    }
  });

  it('close() ends open streams promptly and leaves the host open', async () => {
    const stream = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
    expect((await stream.next())?.event).toBe('hello');

    await server.close();
    // Ended, not cut: a stream left open until the grace period runs out has its socket destroyed,
    // and reading it then fails ("terminated") instead of coming to a clean end.
    expect(await stream.next()).toBeNull();
    expect(host.listeners.size).toBe(0);
    expect(host.closed).toBe(false);

    await expect(fetch(`${server.origin}/`)).rejects.toThrow();
    // Closing twice is harmless (afterEach closes again).
    await server.close();
  });
});
