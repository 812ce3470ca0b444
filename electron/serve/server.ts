// Browser mode: the host's API over HTTP + server-sent events, and the renderer bundle, on loopback.
//
// Every request passes the gates in gates.ts first — Host, Origin, method, token, body, in that
// order; that file says why. Then routes.ts answers calls and files, sse.ts the event stream,
// exports.ts an export's download; errors.ts maps error codes to statuses, connections.ts keeps the
// sockets' books. This file binds 127.0.0.1, wires the gates to the routes, and closes with grace.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Host } from '../host/types.js';
import { answerClientError, trackConnections } from './connections.js';
import { serveExport } from './exports.js';
import { admit, assertUsableToken, gateKeys } from './gates.js';
import { defaultLog, describe, pathOnly, type ServeLogLevel } from './log.js';
import { INTERNAL_MESSAGE, refusal, refuse, sendError, setCommonHeaders } from './respond.js';
import { answerCall, resolveStaticRoot, serveStatic } from './routes.js';
import { createEventStreams } from './sse.js';

export { statusForErrorCode } from './errors.js';
export type { ServeLogLevel } from './log.js';

export interface ServeOptions {
  host: Host;
  /** The built renderer: index.html and its assets. */
  staticDir: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  token?: string;
  log?: (level: ServeLogLevel, message: string) => void;
  /** Interval of the `: keepalive` comment on event streams. Default 15 s; tests shorten it. */
  keepAliveMs?: number;
}

export interface RunningServer {
  /** http://127.0.0.1:PORT/?token=TOKEN — what the launcher prints. */
  url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  token: string;
  /** Ends event streams and closes the server. Does not close the host: the caller owns it. */
  close(): Promise<void>;
}

const BIND_ADDRESS = '127.0.0.1';
const DEFAULT_KEEPALIVE_MS = 15_000;
/** How long close() lets in-flight calls finish before cutting their sockets. */
const CLOSE_GRACE_MS = 1_000;

const SHUTTING_DOWN = refusal(503, { code: 'internal', message: 'Anima is shutting down.' }, { Connection: 'close' });

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { host } = opts;
  const log = opts.log ?? defaultLog;
  const token = opts.token ?? randomBytes(32).toString('base64url');
  assertUsableToken(token);
  const staticRoot = await resolveStaticRoot(opts.staticDir);
  const events = createEventStreams(host, log, opts.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
  let keys = gateKeys(token, null);
  let closing = false;

  const server = createServer((req, res) => {
    connections.track(req, res);
    handle(req, res).catch((err: unknown) => {
      log('error', `serve: unhandled error for ${req.method} ${pathOnly(req.url)}: ${describe(err)}`);
      if (!res.headersSent && !res.destroyed) sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      else res.destroy();
    });
  });
  const connections = trackConnections(server);
  server.on('clientError', answerClientError);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    setCommonHeaders(res);
    if (closing) return refuse(res, SHUTTING_DOWN);
    const admission = await admit(req, keys);
    switch (admission.kind) {
      case 'refused':
        return refuse(res, admission);
      case 'aborted':
        return;
      case 'call':
        return answerCall(res, admission, host, log);
      case 'events':
        return events.open(res);
      case 'export':
        return serveExport(res, host.exportsDir, admission.name, log);
      case 'static':
        return serveStatic(res, staticRoot, admission.path, log);
    }
  }

  await listen(server, opts.port ?? 0).catch((err: unknown) => {
    events.closeAll();
    throw err;
  });
  server.on('error', (err) => log('error', `serve: server error: ${describe(err)}`));

  const port = (server.address() as AddressInfo).port;
  keys = gateKeys(token, port);
  const origin = `http://127.0.0.1:${port}`;
  log('info', `serve: listening on ${origin}`);

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      events.closeAll();
      connections.drain();
      const cutOff = setTimeout(() => connections.destroyAll(), CLOSE_GRACE_MS);
      server.close(() => {
        clearTimeout(cutOff);
        log('info', 'serve: closed');
        resolve();
      });
    });
    return closed;
  }

  return { url: `${origin}/?token=${encodeURIComponent(token)}`, origin, port, token, close };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host: BIND_ADDRESS, port });
  });
}
