// The LAN listener (`anima serve --listen ADDR`): a second server, HTTPS only, on ADDR, for paired
// phones and laptops. The loopback listener (server.ts) stays as it is for this machine's window.
//
// It passes the same gates (gates.ts) with its own keys: the Host and Origin headers must name the
// server's own names (the same list the certificate carries, tls.ts) at this port; the token must be
// a paired device's (electron/devices/), never the per-run one; owner-only methods are refused to a
// device; POST /api/pair takes {secret, name} without a token. A wrong token or secret counts
// against the remote address (rate-limit.ts). A revoked device's open event streams are cut at once.
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import os from 'node:os';

import { pairRequest } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { listenOn } from './connections.js';
import { asApiError, statusForErrorCode } from './errors.js';
import { serveExport } from './exports.js';
import { admit, type GateKeys } from './gates.js';
import { CLOSE_GRACE_MS, handleRequests, SHUTTING_DOWN } from './listener.js';
import { describe, type ServeLog } from './log.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';
import { INTERNAL_MESSAGE, refuse, sendError, sendJson, setCommonHeaders } from './respond.js';
import { answerCall, serveStatic } from './routes.js';
import { createEventStreams } from './sse.js';
import { canonicalIp, ensureCertificate, normaliseNames } from './tls.js';

export interface LanOptions {
  host: Host;
  staticRoot: string;
  /** What --listen named: 0.0.0.0 (every IPv4 network), :: (every network, IPv6 and IPv4 where the OS allows), or one address of this machine. */
  address: string;
  /** 0: a free one. */
  port: number;
  /** The server's own names; default: serverNames(address). */
  names?: string[];
  log: ServeLog;
  keepAliveMs: number;
  limiter?: RateLimiter;
}

export interface LanListener {
  address: string;
  port: number;
  /** https://<first LAN name>:<port> */
  origin: string;
  names: string[];
  fingerprint: string;
  close(): Promise<void>;
}

const DNS_LABELS = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** An IPv6 link-local address (fe80::/10): usable only with a zone (%eth0), which no browser address or certificate can carry. */
const LINK_LOCAL = /^fe[89ab][0-9a-f]:/i;

/**
 * The names this machine is reached by: the address itself (or, for 0.0.0.0, every IPv4 address of
 * its interfaces; for ::, every IPv4 and IPv6 one but the link-local), its host name and
 * hostname.local (when they are DNS names), localhost, 127.0.0.1, and ::1 when it listens on IPv6.
 * IPv6 addresses are written as browsers write them (canonicalIp), without brackets.
 */
export function serverNames(address: string): string[] {
  const names = new Set<string>();
  const listened = canonicalIp(address) ?? address.toLowerCase();
  const v6 = isIP(listened) === 6;
  if (listened === '0.0.0.0' || listened === '::') {
    for (const list of Object.values(os.networkInterfaces())) {
      for (const nic of list ?? []) {
        if (nic.family === 'IPv4') names.add(nic.address);
        else if (v6 && nic.family === 'IPv6' && !LINK_LOCAL.test(nic.address) && !nic.address.includes('%')) names.add(canonicalIp(nic.address) ?? nic.address);
      }
    }
  } else {
    names.add(listened);
  }
  const hostname = os.hostname().toLowerCase().replace(/\.$/, '');
  if (DNS_LABELS.test(hostname)) {
    names.add(hostname);
    if (!hostname.includes('.')) names.add(`${hostname}.local`);
  }
  names.add('localhost');
  names.add('127.0.0.1');
  if (v6) names.add('::1');
  return [...names].sort();
}

/** A name as it stands in a URL or a Host header: an IPv6 address in brackets. */
const hostPart = (name: string) => (name.includes(':') ? `[${name}]` : name);
const isLoopbackName = (name: string) => name === 'localhost' || name.startsWith('127.') || name === '::1';

export async function startLanListener(opts: LanOptions): Promise<LanListener> {
  const { host, log } = opts;
  const devices = host.devices;
  if (!devices) throw new Error('serve: this host keeps no paired devices');
  // The address as browsers write it (an IPv6 one compressed, without brackets); the names likewise.
  let address = canonicalIp(opts.address) ?? opts.address;
  const names = normaliseNames(opts.names ?? serverNames(address));
  const certificate = await ensureCertificate(host.dataDir, names);
  const limiter = opts.limiter ?? createRateLimiter();
  const events = createEventStreams(host, log, opts.keepAliveMs);
  const streams = new Map<string, Set<ServerResponse>>();
  let keys: GateKeys = { hosts: new Set(), origins: new Set(), tokenDigest: null };
  let closing = false;

  const server = createServer({ cert: certificate.cert, key: certificate.key });
  const connections = handleRequests(server, { label: 'serve (LAN)', log, connectionEvent: 'secureConnection' }, handle);
  // A client that refuses the certificate (as it should until it has compared the fingerprint) is not an error here.
  server.on('tlsClientError', (err) => log('info', `serve (LAN): a TLS handshake failed: ${err.message}`));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    setCommonHeaders(res);
    // Only ever served over HTTPS: a browser may remember that for this name and port.
    res.setHeader('Strict-Transport-Security', 'max-age=31536000');
    if (closing) return refuse(res, SHUTTING_DOWN);
    const admission = await admit(req, keys);
    switch (admission.kind) {
      case 'refused':
        return refuse(res, admission);
      case 'aborted':
        return;
      case 'pair':
        return answerPair(req, res, admission.body);
      case 'call':
        return answerCall(res, admission, host, log);
      case 'events':
        events.open(res);
        if (admission.device !== null) watchStream(admission.device, res);
        return;
      case 'export':
        return serveExport(res, host.exportsDir, admission.name, log);
      case 'static':
        return serveStatic(res, opts.staticRoot, admission.path, log);
    }
  }

  async function answerPair(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    let parsed;
    try {
      parsed = pairRequest.safeParse(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)));
    } catch {
      parsed = null;
    }
    if (!parsed?.success) {
      sendError(res, 400, {
        code: 'invalid_input',
        message: 'Pairing needs JSON {"secret": "…", "name": "…"}: the code shown in Settings → Devices and a name for this device.',
      });
      return;
    }
    try {
      const result = await devices!.pair(parsed.data.secret, parsed.data.name);
      log('info', `serve (LAN): paired a device (${result.deviceId})`);
      sendJson(res, 200, JSON.stringify(result));
    } catch (err) {
      const apiError = asApiError(err);
      if (apiError?.code === 'unauthorized') limiter.fail(req.socket.remoteAddress ?? '');
      if (!apiError || apiError.code === 'internal') {
        log('error', `serve (LAN): pairing failed: ${describe(err)}`);
        sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
        return;
      }
      sendError(res, statusForErrorCode(apiError.code), apiError.toJSON());
    }
  }

  function watchStream(device: string, res: ServerResponse): void {
    let set = streams.get(device);
    if (!set) streams.set(device, (set = new Set()));
    set.add(res);
    res.on('close', () => {
      set.delete(res);
      if (set.size === 0 && streams.get(device) === set) streams.delete(device);
    });
  }

  // Revoked: its open streams end now (EventSource reconnects, and is refused).
  const offRevoke = devices.onRevoke((device) => {
    for (const res of streams.get(device) ?? []) res.destroy();
    streams.delete(device);
  });

  try {
    await listenOn(server, address, opts.port).catch(async (err: NodeJS.ErrnoException) => {
      // `::` where the OS has no IPv6: every IPv4 network, said once.
      if (address !== '::' || (err.code !== 'EAFNOSUPPORT' && err.code !== 'EADDRNOTAVAIL')) throw err;
      log('warn', `serve (LAN): this machine has no IPv6 (${err.code}); listening on every IPv4 network (0.0.0.0) instead`);
      await listenOn(server, '0.0.0.0', opts.port);
      address = '0.0.0.0';
    });
  } catch (err) {
    offRevoke();
    events.closeAll();
    throw err;
  }
  server.on('error', (err) => log('error', `serve (LAN): server error: ${describe(err)}`));
  const port = (server.address() as AddressInfo).port;
  keys = {
    hosts: new Set(names.map((n) => `${hostPart(n)}:${port}`)),
    origins: new Set(names.map((n) => `https://${hostPart(n)}:${port}`)),
    tokenDigest: null,
    hostRefusal: `This server answers only to its own names: ${names.join(', ')}.`,
    device: (token) => devices.authenticate(token),
    pairing: true,
    limiter,
  };
  const listening = { address, port, names, fingerprint: certificate.fingerprint };
  devices.setListening(listening);
  // For every network: an IPv4 LAN address first (what a phone most likely reaches), else an IPv6 one, else a name.
  const wildcard = address === '0.0.0.0' || address === '::';
  const lanNames = names.filter((n) => !isLoopbackName(n));
  const first = lanNames.find((n) => isIP(n) === 4) ?? lanNames.find((n) => isIP(n) === 6) ?? lanNames[0] ?? names[0]!;
  const origin = `https://${hostPart(wildcard ? first : address)}:${port}`;
  log('info', `serve (LAN): listening on ${origin}`);

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      offRevoke();
      devices!.setListening(null);
      events.closeAll();
      connections.drain();
      const cutOff = setTimeout(() => {
        connections.destroyAll();
        server.closeAllConnections();
      }, CLOSE_GRACE_MS);
      server.close(() => {
        clearTimeout(cutOff);
        resolve();
      });
    });
    return closed;
  }

  return { address, port, origin, names, fingerprint: certificate.fingerprint, close };
}
