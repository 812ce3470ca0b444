// What the loopback listener (server.ts) and the LAN one (lan.ts) do alike around their own routes:
// each request's socket booked for close(), an error their handler let through answered, and the
// answer while they close.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

import { answerClientError, trackConnections, type Connections } from './connections.js';
import { describe, pathOnly, type ServeLog } from './log.js';
import { INTERNAL_MESSAGE, refusal, sendError } from './respond.js';

/** How long close() lets in-flight calls finish before cutting their sockets. */
export const CLOSE_GRACE_MS = 1_000;

/** The answer to a request that arrives while the listener closes. */
export const SHUTTING_DOWN = refusal(503, { code: 'internal', message: 'Anima is shutting down.' }, { Connection: 'close' });

export interface RequestHandling {
  /** Names the listener in the log: `serve`, `serve (LAN)`. */
  label: string;
  log: ServeLog;
  /** 'secureConnection' for an HTTPS server (see trackConnections). */
  connectionEvent?: 'connection' | 'secureConnection';
}

/**
 * Hands every request on `server` to `handle`, counting it on its socket until it is answered. An
 * error `handle` throws is logged and answered 500 — or, when the answer had begun, its socket cut; a
 * request too broken to reach `handle` is answered by answerClientError. Returns the sockets' books.
 */
export function handleRequests(
  server: HttpServer | HttpsServer,
  { label, log, connectionEvent }: RequestHandling,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Connections {
  const connections = trackConnections(server, connectionEvent);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    connections.track(req, res);
    handle(req, res).catch((err: unknown) => {
      log('error', `${label}: unhandled error for ${req.method} ${pathOnly(req.url)}: ${describe(err)}`);
      if (!res.headersSent && !res.destroyed) sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      else res.destroy();
    });
  });
  server.on('clientError', answerClientError);
  return connections;
}
