// One very large event (a huge reply delta) reaches every event-stream client that is reading, and
// the events after it too: a reader is dropped only for a backlog that stays, never for one event.
import { describe, expect, it } from 'vitest';
import { host, server, TOKEN, useServer } from './testing/server-harness.js';
import { PATIENCE_MS } from '../testing/patience.js';

useServer();

/** Reads the raw stream until `marker` has arrived; resolves with how many bytes came. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, marker: string, timeoutMs = PATIENCE_MS): Promise<{ bytes: number; tail: string }> {
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  let bytes = 0;
  let tail = '';
  while (Date.now() < deadline) {
    const chunk = await reader.read();
    if (chunk.done) break;
    bytes += chunk.value.length;
    // Only the end matters: keep a window, not the whole 12 MB.
    tail = (tail + decoder.decode(chunk.value, { stream: true })).slice(-4096);
    if (tail.includes(marker)) return { bytes, tail };
  }
  throw new Error(`"${marker}" did not arrive (${bytes} bytes read)`);
}

describe('GET /api/events with one very large event', () => {
  it('delivers a 12 MB event and the next one to a reading client, which stays subscribed', async () => {
    const res = await fetch(`${server.origin}/api/events?token=${TOKEN}`);
    const reader = res.body!.getReader();
    await readUntil(reader, 'event: hello');
    const huge = 'x'.repeat(12 * 1024 * 1024);
    host.emit('chat.delta', { conversationId: 'c1', messageId: 'm1', text: huge });
    host.emit('chat.delta', { conversationId: 'c1', messageId: 'm1', text: 'after-the-big-one' });
    const { bytes, tail } = await readUntil(reader, 'after-the-big-one');
    expect(bytes).toBeGreaterThan(huge.length);
    expect(tail).toContain('event: chat.delta');
    expect(host.listeners.size).toBe(1);
    await reader.cancel();
  });
});
