// GET /api/events: the host's events as server-sent events, to every open stream.
import type { ServerResponse } from 'node:http';

import type { Host } from '../host/types.js';
import { describe, type ServeLog } from './log.js';

/**
 * An event-stream client with this much unsent data that has not caught up for STALLED_MS is not
 * reading; it is dropped (EventSource reconnects). One large event alone never drops a reader that
 * is reading it: only a backlog that stays.
 */
const MAX_SSE_BACKLOG_BYTES = 8 * 1024 * 1024;
const STALLED_MS = 30_000;

export interface EventStreams {
  /** Answers an admitted GET /api/events (see gates.ts) with a stream of the host's events. */
  open(res: ServerResponse): void;
  /** Stops the keep-alive and ends every stream. */
  closeAll(): void;
  /** Ends every open stream and keeps serving (the browser link was reset: the tabs reconnect and are refused). */
  endStreams(): void;
}

interface SseClient {
  res: ServerResponse;
  unsubscribe: () => void;
  /** Since when the backlog has been over the limit without draining; null while it keeps up. */
  backlogSince: number | null;
}

/** Starts the `: keepalive` comment every `keepAliveMs`; closeAll() stops it. */
export function createEventStreams(host: Host, log: ServeLog, keepAliveMs: number): EventStreams {
  const clients = new Set<SseClient>();

  function open(res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // Proxies (and some dev tools) buffer responses unless told not to.
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);

    const client: SseClient = { res, unsubscribe: () => {}, backlogSince: null };
    res.on('drain', () => (client.backlogSince = null));
    clients.add(client);
    // Subscribed before hello: a client that reloads its state on hello misses nothing after it.
    client.unsubscribe = host.on((event, payload) => {
      // A name with a line break would forge extra SSE fields; the contract has none.
      if (/[\r\n]/.test(event)) {
        log('warn', 'serve: dropped an event whose name contains a line break');
        return;
      }
      let data: string;
      try {
        data = JSON.stringify(payload) ?? 'null';
      } catch (err) {
        log('error', `serve: event ${event} could not be serialised: ${describe(err)}`);
        return;
      }
      write(client, `event: ${event}\ndata: ${data}\n\n`);
    });
    write(client, 'retry: 1000\nevent: hello\ndata: {}\n\n');

    res.on('close', () => drop(client));
  }

  function write(client: SseClient, chunk: string): void {
    const { res } = client;
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > MAX_SSE_BACKLOG_BYTES) {
      client.backlogSince ??= Date.now();
      if (Date.now() - client.backlogSince > STALLED_MS) {
        log('warn', 'serve: an event-stream client stopped reading; dropping it');
        res.destroy();
        return;
      }
    }
    res.write(chunk);
  }

  function drop(client: SseClient): void {
    if (!clients.delete(client)) return;
    try {
      client.unsubscribe();
    } catch (err) {
      log('warn', `serve: unsubscribing an event stream failed: ${describe(err)}`);
    }
  }

  const keepAliveTimer = setInterval(() => {
    for (const client of clients) write(client, ': keepalive\n\n');
  }, keepAliveMs);
  keepAliveTimer.unref();

  function endStreams(): void {
    for (const client of [...clients]) {
      drop(client);
      client.res.end();
    }
  }

  function closeAll(): void {
    clearInterval(keepAliveTimer);
    endStreams();
  }

  return { open, closeAll, endStreams };
}
