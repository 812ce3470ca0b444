// The server side of bench:devices, in its own process as a home server is: the host on a fresh data
// folder with the loopback fake model as its connection, the loopback listener (this machine's
// window, where the owner starts pairings) and the HTTPS LAN listener on 127.0.0.1 for the paired
// devices. Prints one line, DEVICES_HOST={json}, then serves until SIGTERM.
//   node --import tsx --import ./scripts/register-sql.mjs bench/devices-host.ts --data-dir DIR --model URL
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createHost } from '../electron/host/index.js';
import { startServer } from '../electron/serve/server.js';
import { ensureCertificate } from '../electron/serve/tls.js';

export interface DevicesHostInfo {
  /** The loopback listener and its owner token. */
  origin: string;
  token: string;
  /** The HTTPS listener for devices; null when it did not start (then the clients use the loopback one). */
  lan: { origin: string; certPem: string; fingerprint: string } | null;
  /** Why there is no HTTPS listener, in words. */
  lanMissing: string | null;
}

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, model: { type: 'string' } } });
if (!values['data-dir'] || !values.model) {
  console.error('devices-host: --data-dir and --model are needed');
  process.exit(2);
}
const dataDir = path.resolve(values['data-dir']);
const warnings: string[] = [];
const log = (level: string, message: string) => {
  if (level !== 'info') warnings.push(`${level}: ${message}`);
};

const host = await createHost({ dataDir, mode: 'browser', detectLocalServers: false, log, sleep: { tickMs: 0 }, backups: { tickMs: 0 }, vaultAuto: false });
// Only "sleep now" runs a cycle, with a budget that never stops it; no naps beside the chat.
await host.api['settings.update']({ timeZone: 'UTC', sleep: { auto: false, nap: false, maxCallsPerNight: 10_000, maxTokensPerNight: 100_000_000 } });
const provider = await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake model', baseUrl: `${values.model}/v1`, model: 'fake-model' });
await host.api['settings.update']({ chatProviderId: provider.id });

const staticDir = path.join(dataDir, 'bench-static');
fs.mkdirSync(staticDir, { recursive: true });
fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>');
// As `anima serve --listen 127.0.0.1` runs it: the LAN listener on loopback (a bench never opens a port to the network).
const server = await startServer({ host, staticDir, port: 0, token: randomBytes(32).toString('base64url'), log, lan: { address: '127.0.0.1', port: 0 } });
const lan = server.lan;
let info: DevicesHostInfo;
if (!lan) {
  info = { origin: server.origin, token: server.token, lan: null, lanMissing: 'the server started without its LAN listener' };
} else {
  const certificate = await ensureCertificate(dataDir, lan.names);
  info = {
    origin: server.origin,
    token: server.token,
    lan: { origin: `https://127.0.0.1:${lan.port}`, certPem: certificate.cert, fingerprint: lan.fingerprint },
    lanMissing: null,
  };
}
console.log(`DEVICES_HOST=${JSON.stringify(info)}`);

let closing = false;
async function close(): Promise<void> {
  if (closing) return;
  closing = true;
  await server.close().catch(() => {});
  await host.close().catch(() => {});
  if (warnings.length) console.error(`host warnings (${warnings.length}):\n  ${warnings.slice(0, 10).join('\n  ')}`);
  process.exit(0);
}
process.once('SIGTERM', () => void close());
process.once('SIGINT', () => void close());
// The parent went away without a word: stop too.
process.stdin.on('end', () => void close());
process.stdin.resume();
