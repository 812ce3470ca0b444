// Several devices on one home server: three clients chat, each in its own conversation, against the
// loopback fake model while a sleep cycle runs.
//   npm run bench:devices [-- --clients 3 --sends 40 --every-ms 250 --http --json OUT]
//
// - The server runs in its own process (bench/devices-host.ts): a fresh data folder, the host, the
//   loopback listener (the owner's window) and the HTTPS LAN listener on 127.0.0.1, as `anima serve
//   --listen` starts them. The fake model runs in a third process (e2e/fake-llm/cli.ts --sleep: chat
//   echoes, sleep prompts get schema-valid answers), so neither's work is counted as the clients'.
// - Transport (`openTransport`, the one place that knows it): HTTPS to the LAN listener, each client a
//   paired device (the owner starts a pairing on the loopback listener, the device brings the secret
//   to POST /api/pair and gets its own token; the certificate is trusted by the fingerprint the
//   pairing gave). With --http (or if the LAN listener did not start, said in the output): the
//   loopback HTTP listener with the folder's token.
// - Each client opens its event stream, then chats: a message every --every-ms (or as soon as its
//   last reply finished, if later), waiting for its own reply to finish before the next. A warm-up of
//   a few turns each gives the night something to read; then the owner starts "sleep now" and the
//   measured turns begin. A turn counts when its send started while a cycle ran (a cycle that ends
//   before every client has --sends such turns is followed by another).
// - chat_write_ms: chat.send's request until its answer — the host answers once the person's message
//   (and the reply's placeholder) is stored.
// - event_lag_ms: from a client's chat.send request until each other client's event stream brings the
//   event that announces the new message (conversations.changed for that conversation, the last one
//   before the first event naming the reply): when another window can show it.
// - lost_events: between two markers (a settings change the owner makes once every stream is open,
//   and again at the end), every event one client received that another did not, by name and payload
//   (the n-th copy of an identical event counts as its own): must be 0. Order is checked too
//   (`streams_in_same_order`).
// Writes bench/results/devices.json (and --json OUT). Exits 0 when it measured.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DevicesHostInfo } from './devices-host.js';
import { percentile, round } from './util.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '3' },
    /** Measured turns per client, each started while a cycle ran. */
    sends: { type: 'string', default: '40' },
    'every-ms': { type: 'string', default: '250' },
    warmup: { type: 'string', default: '4' },
    json: { type: 'string' },
    /** The loopback HTTP listener even when there is an HTTPS one (to see what TLS costs). */
    http: { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(values.clients);
const SENDS = Number(values.sends);
const EVERY_MS = Number(values['every-ms']);
const WARMUP = Number(values.warmup);
for (const [flag, n, min] of [
  ['--clients', CLIENTS, 2],
  ['--sends', SENDS, 1],
  ['--every-ms', EVERY_MS, 0],
  ['--warmup', WARMUP, 1],
] as const) {
  if (!Number.isInteger(n) || n < min) {
    console.error(`${flag}: expected a whole number, at least ${min}`);
    process.exit(2);
  }
}
/** Bounds for hangs (this machine may be busy), not speed checks. */
const WAIT_MS = 120_000;
const MEASURE_LIMIT_MS = 10 * 60_000;
const MAX_CYCLES = 6;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-devices-'));
const children: ChildProcess[] = [];
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});
function fail(message: string): never {
  console.error(`bench:devices: ${message}`);
  process.exit(1);
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a child that prints `PREFIX=value` on a line when ready; resolves with the value. */
function startChild(args: string[], prefix: string): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start within ${WAIT_MS / 1000} s`)), WAIT_MS);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = new RegExp(`${prefix}=(.+)`).exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, value: m[1]!.trim() });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------------------------------------
// Transport: calls and an event stream, over HTTPS as a paired device or over loopback HTTP
// ---------------------------------------------------------------------------------------------

interface Received {
  name: string;
  data: string;
  /** performance.now() when it was parsed. */
  at: number;
}

interface Transport {
  kind: 'https' | 'http';
  call<T>(method: string, input: unknown): Promise<T>;
  /** Opens the event stream; resolves once the server said hello. */
  events(onEvent: (event: Received) => void): Promise<{ close(): void }>;
}

function send(url: string, agent: http.Agent, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      { method, agent, headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(WAIT_MS, () => req.destroy(new Error(`${method} ${u.pathname}: no answer within ${WAIT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** `streamAgent`: the event stream's own connection, as a browser's EventSource has. */
function transportOver(kind: Transport['kind'], base: string, token: string, agent: http.Agent, streamAgent: http.Agent): Transport {
  const auth = { Authorization: `Bearer ${token}` };
  return {
    kind,
    async call<T>(method: string, input: unknown): Promise<T> {
      const res = await send(`${base}/api/call/${method}`, agent, 'POST', { ...auth, 'Content-Type': 'application/json' }, JSON.stringify(input ?? {}));
      if (res.status !== 200) throw new Error(`${method}: ${res.status} ${res.text.slice(0, 300)}`);
      return JSON.parse(res.text) as T;
    },
    events(onEvent) {
      const u = new URL(`${base}/api/events?token=${encodeURIComponent(token)}`);
      const request = u.protocol === 'https:' ? https.request : http.request;
      return new Promise((resolve, reject) => {
        const req = request(u, { method: 'GET', agent: streamAgent }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`event stream: ${res.statusCode}`));
          res.setEncoding('utf8');
          let buffer = '';
          let hello = false;
          res.on('data', (chunk: string) => {
            const at = performance.now();
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              let name = 'message';
              const data: string[] = [];
              for (const line of block.split('\n')) {
                if (line.startsWith(':')) continue;
                const colon = line.indexOf(':');
                const field = colon === -1 ? line : line.slice(0, colon);
                const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
                if (field === 'event') name = value;
                else if (field === 'data') data.push(value);
              }
              if (!data.length) continue;
              if (name === 'hello') {
                if (!hello) resolve({ close: () => req.destroy() });
                hello = true;
                continue;
              }
              onEvent({ name, data: data.join('\n'), at });
            }
          });
        });
        // After hello, an error is the stream's end (closed here, or the server went away): nothing to do.
        req.on('error', reject);
        req.end();
      });
    },
  };
}

/**
 * The one place that chooses how a device reaches the server. HTTPS: the owner starts a pairing on
 * the loopback listener, the device pairs with the secret and trusts the certificate whose
 * fingerprint the pairing gave; else the loopback listener with the owner's token.
 */
async function openTransport(info: DevicesHostInfo, owner: Transport, name: string): Promise<Transport> {
  if (!info.lan || values.http) return transportOver('http', info.origin, info.token, new http.Agent({ keepAlive: true }), new http.Agent());
  const pairing = await owner.call<{ secret: string; fingerprint: string }>('devices.pairingStart', {});
  if (pairing.fingerprint !== info.lan.fingerprint) fail(`the pairing names certificate ${pairing.fingerprint}, the listener serves ${info.lan.fingerprint}`);
  const trust: https.AgentOptions = {
    ca: info.lan.certPem,
    checkServerIdentity: (_host, cert) =>
      cert.fingerprint256 === pairing.fingerprint ? undefined : new Error(`certificate ${cert.fingerprint256} is not the paired one`),
  };
  const agent = new https.Agent({ ...trust, keepAlive: true });
  const paired = await send(
    `${info.lan.origin}/api/pair`,
    agent,
    'POST',
    { 'Content-Type': 'application/json' },
    JSON.stringify({ secret: pairing.secret, name }),
  );
  if (paired.status !== 200) fail(`pairing ${name}: ${paired.status} ${paired.text.slice(0, 300)}`);
  const { token } = JSON.parse(paired.text) as { token: string };
  return transportOver('https', info.lan.origin, token, agent, new https.Agent(trust));
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

interface Sample {
  client: number;
  conversationId: string;
  assistantId: string;
  t0: number;
  writeMs: number;
  duringCycle: boolean;
}

interface Client {
  index: number;
  api: Transport;
  received: Received[];
  stream: { close(): void };
  conversationId: string;
  /** Resolves when an event matching `match` has arrived (including one that already did). */
  waitFor(match: (e: Received) => boolean, what: string): Promise<Received>;
}

async function openClient(index: number, api: Transport): Promise<Client> {
  const received: Received[] = [];
  const waiters = new Set<{ match: (e: Received) => boolean; resolve: (e: Received) => void }>();
  const stream = await api.events((e) => {
    received.push(e);
    for (const w of waiters) {
      if (w.match(e)) {
        waiters.delete(w);
        w.resolve(e);
      }
    }
  });
  const client: Client = {
    index,
    api,
    received,
    stream,
    conversationId: '',
    waitFor(match, what) {
      const seen = received.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (e: Received) => {
            clearTimeout(timer);
            resolve(e);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`client ${index}: no ${what} within ${WAIT_MS / 1000} s`));
        }, WAIT_MS);
        waiters.add(waiter);
      });
    },
  };
  client.conversationId = (await api.call<{ id: string }>('conversations.create', { title: `Device ${index + 1}` })).id;
  return client;
}

const LINES = [
  'I moved to Lisbon last spring and my sister Lena visits in June.',
  'Work was long today; the museum archive finally opened for me.',
  'My new bicycle is a green steel frame with a basket for groceries.',
  'I baked my grandmother’s orange cake, it came out dense again.',
  'Joana lent me a novel about a lighthouse keeper’s daughter.',
  'I am learning to play the cello, twenty minutes every evening.',
];

/** One turn: the send (timed), then its reply finishing on the sender's own stream. */
async function turn(c: Client, n: number): Promise<Omit<Sample, 'duringCycle'>> {
  const content = `${LINES[(c.index + n) % LINES.length]} (device ${c.index + 1}, message ${n + 1})`;
  const t0 = performance.now();
  const sent = await c.api.call<{ assistantMessage: { id: string } }>('chat.send', { conversationId: c.conversationId, content });
  const writeMs = performance.now() - t0;
  const id = sent.assistantMessage.id;
  await c.waitFor((e) => e.name === 'chat.finished' && e.data.includes(id), `chat.finished for ${id}`);
  return { client: c.index, conversationId: c.conversationId, assistantId: id, t0, writeMs };
}

// ---------------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------------

const t0 = performance.now();
const fake = await startChild(['--import', 'tsx', path.join('e2e', 'fake-llm', 'cli.ts'), '--port', '0', '--sleep', '--chunk-delay-ms', '1'], 'FAKE_LLM_URL');
// BENCH_SERVER_NODE_ARGS: extra flags for the server's node (e.g. --cpu-prof --cpu-prof-dir=DIR to see where its time goes).
const server = await startChild(
  [
    ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    '--import',
    'tsx',
    '--import',
    './scripts/register-sql.mjs',
    path.join('bench', 'devices-host.ts'),
    '--data-dir',
    path.join(scratch, 'data'),
    '--model',
    fake.value,
  ],
  'DEVICES_HOST',
);
const info = JSON.parse(server.value) as DevicesHostInfo;
const owner = transportOver('http', info.origin, info.token, new http.Agent({ keepAlive: true }), new http.Agent());
const transportLine = !info.lan
  ? `transport: http (HTTPS listener not available: ${info.lanMissing})`
  : values.http
    ? 'transport: http (loopback listener, as asked with --http)'
    : `transport: https (paired devices, LAN listener ${info.lan.origin})`;
const loadBefore = os.loadavg()[0]!;
console.log(transportLine);

const clients: Client[] = [];
for (let i = 0; i < CLIENTS; i++) clients.push(await openClient(i, await openTransport(info, owner, `Bench device ${i + 1}`)));

/** A settings change every stream sees: marks a point in every client's list. */
let markers = 0;
async function mark(): Promise<number[]> {
  markers += 1;
  const value = 10_000 - markers;
  await owner.call('settings.update', { sleep: { maxCallsPerNight: value } });
  const needle = `"maxCallsPerNight":${value}`;
  const seen = await Promise.all(clients.map((c) => c.waitFor((e) => e.name === 'settings.changed' && e.data.includes(needle), `marker ${markers}`)));
  return seen.map((e, i) => clients[i]!.received.indexOf(e));
}
const start = await mark();

// Warm-up: something for the night to read; the connections and the JIT warm.
await Promise.all(
  clients.map(async (c) => {
    for (let n = 0; n < WARMUP; n++) await turn(c, n);
  }),
);
console.log(`warm-up: ${WARMUP} turns per client in ${((performance.now() - t0) / 1000).toFixed(1)} s since start`);

// The night, and the measured turns while it runs.
let cycleRunning = false;
let cycles = 0;
let cycle: Promise<string> = Promise.resolve('none');
const runIds: number[] = [];
async function startCycle(): Promise<void> {
  const { runId } = await owner.call<{ runId: number | null }>('sleep.now', {});
  if (runId === null) fail('sleep.now started no cycle');
  cycles += 1;
  runIds.push(runId);
  cycleRunning = true;
  cycle = clients[0]!
    .waitFor((e) => e.name === 'sleep.finished' && JSON.parse(e.data).runId === runId, `sleep.finished for run ${runId}`)
    .then((e) => {
      cycleRunning = false;
      return (JSON.parse(e.data) as { status: string }).status;
    });
}
await startCycle();

const samples: Sample[] = [];
const counted = (i: number) => samples.filter((s) => s.client === i && s.duringCycle).length;
const measureStart = performance.now();
let restarting: Promise<void> | null = null;
await Promise.all(
  clients.map(async (c) => {
    for (let n = WARMUP; counted(c.index) < SENDS; n++) {
      if (performance.now() - measureStart > MEASURE_LIMIT_MS) break;
      if (!cycleRunning) {
        if (cycles >= MAX_CYCLES) break;
        // The cycle ended before every client had its turns: another one.
        restarting ??= startCycle().finally(() => (restarting = null));
        await restarting;
      }
      const due = performance.now() + EVERY_MS;
      const during = cycleRunning;
      const sample = await turn(c, n);
      samples.push({ ...sample, duringCycle: during });
      const wait = due - performance.now();
      if (wait > 0) await pause(wait);
    }
  }),
);
const measuredMs = performance.now() - measureStart;
const cycleStatus = await cycle;
const end = await mark();

for (const c of clients) c.stream.close();
await stopChild(server.child);
await stopChild(fake.child);

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

const measured = samples.filter((s) => s.duringCycle);
const writes = measured.map((s) => s.writeMs);

/** When `reader`'s stream brought the event that announced sample `s`'s message. */
function announcedAt(reader: Client, s: Sample): number | null {
  const firstOfReply = reader.received.findIndex((e) => e.data.includes(s.assistantId));
  if (firstOfReply < 0) return null;
  for (let k = firstOfReply - 1; k >= 0; k--) {
    const e = reader.received[k]!;
    if (e.name === 'conversations.changed' && e.data.includes(s.conversationId)) return e.at;
  }
  return null;
}
const lags: number[] = [];
let unannounced = 0;
for (const s of measured) {
  for (const reader of clients) {
    if (reader.index === s.client) continue;
    const at = announcedAt(reader, s);
    if (at === null) unannounced += 1;
    else lags.push(at - s.t0);
  }
}

// Every event between the markers, by name and payload, the n-th identical one counted as its own.
const windows = clients.map((c, i) => c.received.slice(start[i]! + 1, end[i]!));
const keyed = windows.map((w) => {
  const seen = new Map<string, number>();
  return w.map((e) => {
    const key = `${e.name}\n${e.data}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return `${key}\n#${n}`;
  });
});
const union = new Set(keyed.flat());
const lostEvents = keyed.reduce((lost, keys) => lost + (union.size - new Set(keys).size), 0);
const sameOrder = keyed.every((keys) => keys.join('\u0000') === keyed[0]!.join('\u0000'));

/** The sleep steps running when `t` came, as `c`'s stream told it. */
function stepsAt(c: Client, t: number): string {
  const running = new Set<string>();
  for (const e of c.received) {
    if (e.at > t) break;
    if (e.name !== 'sleep.progress') continue;
    const p = JSON.parse(e.data) as { stepId: string; status: string };
    if (p.status === 'running') running.add(p.stepId);
    else running.delete(p.stepId);
  }
  return [...running].sort().join('+') || '(between steps)';
}
const byStep = new Map<string, number[]>();
for (const s of measured) {
  const step = stepsAt(clients[s.client]!, s.t0);
  byStep.set(step, [...(byStep.get(step) ?? []), s.writeMs]);
}

const stats = (xs: number[]) => ({ p50: xs.length ? round(percentile(xs, 50), 1) : null, p95: xs.length ? round(percentile(xs, 95), 1) : null });
const result = {
  benchmark: 'three devices chatting on one server while a sleep cycle runs',
  transport: info.lan && !values.http ? 'https' : 'http',
  ...(info.lan ? {} : { transport_note: `HTTPS listener not available: ${info.lanMissing}` }),
  clients: CLIENTS,
  chat_write_ms: stats(writes),
  event_lag_ms: stats(lags),
  lost_events: lostEvents + unannounced,
  streams_in_same_order: sameOrder,
  /** chat_write_ms by the sleep step(s) running when the send started: where the slow writes come from. */
  chat_write_ms_by_step: Object.fromEntries([...byStep].map(([step, xs]) => [step, { n: xs.length, ...stats(xs) }])),
  events_per_stream: windows[0]!.length,
  turns_measured: measured.length,
  turns_outside_a_cycle: samples.length - measured.length,
  message_every_ms_per_client: EVERY_MS,
  sleep_cycles: cycles,
  last_cycle_status: cycleStatus,
  measured_s: round(measuredMs / 1000, 1),
  targets: { chat_write_ms_p95: 100, event_lag_ms_p95: 250, lost_events: 0 },
  node: process.version,
  cpus: os.cpus().length,
  /** The machine's 1-minute load average before and after: on a shared machine the figures follow it. */
  load_average: [round(loadBefore, 1), round(os.loadavg()[0]!, 1)],
};

console.log('');
console.log(transportLine);
console.log(`clients: ${CLIENTS}, turns measured while a cycle ran: ${measured.length} (${cycles} cycle(s), last ${cycleStatus})`);
console.log(`chat_write_ms  p50 ${result.chat_write_ms.p50}  p95 ${result.chat_write_ms.p95}  (target p95 ≤ 100)`);
console.log(`event_lag_ms   p50 ${result.event_lag_ms.p50}  p95 ${result.event_lag_ms.p95}  (target p95 ≤ 250)`);
console.log(`lost_events    ${result.lost_events}  (must be 0; streams in the same order: ${sameOrder ? 'yes' : 'no'})`);
for (const [step, xs] of byStep) console.log(`  during ${step}: n ${xs.length}, write p50 ${stats(xs).p50}, p95 ${stats(xs).p95}`);
console.log(`load average   ${result.load_average.join(' → ')} on ${result.cpus} CPUs`);

const out = [path.resolve('bench', 'results', 'devices.json'), ...(values.json ? [path.resolve(values.json)] : [])];
for (const file of out) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), file) || file}`);
}
console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
if (measured.length === 0) fail('no turn was measured while a cycle ran');
process.exit(0);
