// Browser mode: the host's API over HTTP + server-sent events, and the renderer bundle, on loopback.
//
// Every request passes the gates in gates.ts first — Host, Origin, method, token, body, in that
// order; that file says why. Then routes.ts answers calls and files, sse.ts the event stream,
// exports.ts an export's download; errors.ts maps error codes to statuses, connections.ts keeps the
// sockets' books. This file binds 127.0.0.1, wires the gates to the routes, and closes with grace.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Host } from '../host/types.js';
import { listenOn } from './connections.js';
import { serveExport } from './exports.js';
import { admit, assertUsableToken, gateKeys } from './gates.js';
import type { BrowserLink } from './link.js';
import { CLOSE_GRACE_MS, handleRequests, SHUTTING_DOWN } from './listener.js';
import { defaultLog, describe, type ServeLogLevel } from './log.js';
import { refusal, refuse, setCommonHeaders } from './respond.js';
import { answerCall, resolveStaticRoot, serveStatic } from './routes.js';
import { startLanListener, type LanListener } from './lan.js';
import type { RateLimiter } from './rate-limit.js';
import { createEventStreams } from './sse.js';

export { statusForErrorCode } from './errors.js';
export type { ServeLogLevel } from './log.js';

export interface ServeOptions {
  host: Host;
  /** The built renderer: index.html and its assets. */
  staticDir: string;
  /** 0 picks a free port. Default: the link's port (a free one when it is taken), else a free one. */
  port?: number;
  /** Default: the link's token, else 32 random bytes, base64url (for this run only). */
  token?: string;
  /**
   * The data folder's remembered address (link.ts): its token, the port to try first, the port
   * served on remembered; its reset ends every event stream and refuses the old token at once.
   */
  link?: BrowserLink;
  log?: (level: ServeLogLevel, message: string) => void;
  /** Interval of the `: keepalive` comment on event streams. Default 15 s; tests shorten it. */
  keepAliveMs?: number;
  /**
   * `--listen ADDR`: a second listener, HTTPS only, on ADDR for paired devices (lan.ts). Its port:
   * `port` (0: a free one); default the one it had last time (`link`), else the loopback port + 1,
   * or a free one when that is taken (then remembered, so paired devices find it again).
   * `names`: the server's own names (default: lan.ts serverNames).
   */
  lan?: { address: string; port?: number; names?: string[]; limiter?: RateLimiter };
}

export interface RunningServer {
  /** http://127.0.0.1:PORT/?token=TOKEN — what the launcher prints (the new token after a reset). */
  readonly url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  readonly token: string;
  /** The folder's remembered port was taken by another program: it, and this run's port instead. */
  movedFrom: number | null;
  /** The LAN listener, when `lan` was given. */
  lan: LanListener | null;
  /** Ends event streams and closes the server. Does not close the host: the caller owns it. */
  close(): Promise<void>;
}

const BIND_ADDRESS = '127.0.0.1';
const DEFAULT_KEEPALIVE_MS = 15_000;

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { host } = opts;
  const log = opts.log ?? defaultLog;
  let token = opts.token ?? opts.link?.token ?? randomBytes(32).toString('base64url');
  assertUsableToken(token);
  const staticRoot = await resolveStaticRoot(opts.staticDir);
  const events = createEventStreams(host, log, opts.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
  let keys = gateKeys(token, null);
  let closing = false;

  const server = createServer();
  const connections = handleRequests(server, { label: 'serve', log }, handle);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    setCommonHeaders(res);
    if (closing) return refuse(res, SHUTTING_DOWN);
    const admission = await admit(req, keys);
    switch (admission.kind) {
      case 'refused':
        return refuse(res, admission);
      case 'aborted':
        return;
      case 'pair': // only the LAN listener opens /api/pair
        return refuse(res, refusal(404, { code: 'unknown_method', message: 'There is no such API endpoint.' }));
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

  // The folder's own port first; taken by another program, a free one (said to the person, and
  // remembered: the address the tabs of the old one had cannot be served anyway). An explicit port
  // that is taken fails as before.
  const remembered = opts.port === undefined ? (opts.link?.port ?? null) : null;
  let movedFrom: number | null = null;
  try {
    await listenOn(server, BIND_ADDRESS, opts.port ?? remembered ?? 0).catch(async (err: unknown) => {
      if (remembered === null || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      movedFrom = remembered;
      log('warn', `serve: port ${remembered}, this folder's usual one, is taken; serving on a free one`);
      await listenOn(server, BIND_ADDRESS, 0);
    });
  } catch (err) {
    events.closeAll();
    throw err;
  }
  server.on('error', (err) => log('error', `serve: server error: ${describe(err)}`));

  const port = (server.address() as AddressInfo).port;
  keys = gateKeys(token, port);
  await opts.link?.rememberPort(port).catch((err: Error) => log('warn', `serve: the port was not remembered: ${err.message}`));
  // A reset link: the old token is refused from the next request on, and open tabs learn it at once
  // (their event streams end; reconnecting, they are refused).
  const offReset = opts.link?.onReset((next) => {
    token = next;
    keys = gateKeys(next, port);
    events.endStreams();
    log('info', 'serve: the browser link was reset');
  });
  const origin = `http://127.0.0.1:${port}`;
  log('info', `serve: listening on ${origin}`);

  let lan: LanListener | null = null;
  if (opts.lan) {
    const { address, names, limiter } = opts.lan;
    const common = { host, staticRoot, address, names, limiter, log, keepAliveMs: opts.keepAliveMs ?? DEFAULT_KEEPALIVE_MS };
    try {
      const usual = opts.link?.lanPort ?? (port < 65535 ? port + 1 : 0);
      lan = await startLanListener({ ...common, port: opts.lan.port ?? usual }).catch((err: unknown) => {
        if (opts.lan!.port !== undefined || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        log('warn', `serve: port ${usual} for the local network is taken; serving on a free one`);
        return startLanListener({ ...common, port: 0 });
      });
      await opts.link?.rememberLanPort(lan.port).catch((err: Error) => log('warn', `serve: the LAN port was not remembered: ${err.message}`));
    } catch (err) {
      offReset?.();
      events.closeAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      connections.destroyAll();
      throw err;
    }
  }

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      offReset?.();
      const lanClosed = lan?.close();
      events.closeAll();
      connections.drain();
      const cutOff = setTimeout(() => connections.destroyAll(), CLOSE_GRACE_MS);
      server.close(() => {
        clearTimeout(cutOff);
        void Promise.resolve(lanClosed).then(() => {
          log('info', 'serve: closed');
          resolve();
        });
      });
    });
    return closed;
  }

  return {
    get url() {
      return `${origin}/?token=${encodeURIComponent(token)}`;
    },
    origin,
    port,
    get token() {
      return token;
    },
    movedFrom,
    lan,
    close,
  };
}
