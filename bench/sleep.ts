// Sleep-cycle cost: what a night of consolidation spends (model calls and tokens per step), how much
// time the app itself takes around the model, what it writes, and how much a person chatting during
// the night feels it.
//   npm run bench:sleep -- [--data DIR] [--context TOKENS] [--stream-ms MS] [--json FILE] [--mode prose-then-json]
//
// --mode prose-then-json measures only what structured answers are worth with a model that answers in
// prose unless held to a schema (bench/sleep-prose.ts): unusable answers and repair calls per night,
// asked with the schema and by prompt alone (JSON keys structured_unusable, prompt_only_unusable,
// structured_repair_calls, prompt_only_repair_calls). Without it, everything below.
//
// - The LoCoMo conversations in DIR (default ../shared/bench/locomo/dev) are loaded exactly as
//   bench:locomo loads them (electron/conversations/import-locomo.ts → Conversations.appendMany: each session one
//   conversation on its own day) into a fresh data folder, which is then copied: two identical
//   folders, one to measure the cost on, one to chat on while it sleeps.
// - Each folder gets a fresh host (createHost, no local-server probing) with the loopback fake model
//   answering every sleep prompt through sleepResponder() (schema-valid answers built from the
//   prompt, streamed at one ~4-character chunk per --stream-ms, default 1 ms: 1,000 chunks a second,
//   faster than any local model, yet not the single burst no streaming server sends) saved as the
//   model connection, run in its own process; time zone UTC (the dataset's dates
//   are read as UTC, so sleep days are session dates), automatic runs off, and the night's budget
//   raised to the maximum the settings allow so one cycle can do all the work.
// - Cost: full cycles run through the host API (sleep.now, then the sleep.finished event) until no
//   light-sleep work is left. Calls and tokens come from the audit log (sleep.audit: every attempt,
//   repairs included), step times from sleep.runs, the rows written from the database once the host
//   is closed. Nothing else runs meanwhile, so the numbers are the dataset's alone.
// - Chat: on the twin folder the same first cycle runs while a chat message comes due every 25 ms
//   and is sent through chat.send (the API's only way to store a user message: it stores it before
//   any model call and returns once the reply has started), one at a time, each to one of a pool of
//   probe conversations that is not answering (chat.send refuses one that is). Each tick's latency
//   runs from the moment it came due to the return of the write that carried it, so a tick that
//   waited behind a slow write or a busy event loop (PGlite runs on this thread) counts its wait.
//   The same is measured for 3 s before the cycle, with nothing running. (Chatting on the cost
//   folder would add messages for a later cycle to read, more of them the slower the machine.)
// - Nap: on a third copy, each LoCoMo session is a chat day that ends with the person going quiet
//   (sessions in time order; the clock at the session's end, then the quiet minutes later): the
//   app's Napper is touched and its quiet check runs — the gates and one call when they pass —
//   then the person leaves (a second trigger with nothing new). The fake model answers each nap with
//   one memory from its most personal line. Then the same full cycles as above, so light sleep reads
//   the days knowing what the naps kept. nap_calls_per_100_msgs = (nap + light-sleep calls) × 100 /
//   messages: what daytime and nightly reading of the chat cost together (target ≤ 3).
//
// Numbers: per 100 messages and per sleep day (the LoCoMo turns; their distinct session dates);
// own_ms_per_300_msgs = (Σ cycle wall time − Σ audited model time − Σ snapshot step time) × 300 /
// messages; snapshot_ms = the longest snapshot step; chat_write_ms_p95 over every tick of the cycle
// (except, when the snapshot gave way to the chat, the ticks while it waited — see below).
// The fake model reports prompt tokens as words and completion tokens as ~4 characters each.
// Exits 0 when it measured.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { AuditEntry, SleepRun } from '../shared/api.js';
import { sleepDay } from '../shared/sleep-day.js';
import { openDatabase } from '../electron/db/open.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { importLocomo, turnContent } from '../electron/conversations/import-locomo.js';
import { createHost, type Host } from '../electron/host/index.js';
import { SelfLayer } from '../electron/companion/self-layer.js';
import { MemoryStore } from '../electron/memory/store.js';
import { modelsDir, Providers } from '../electron/providers/providers.js';
import { OwnerOnlyFileSecretStore } from '../electron/settings/secrets.js';
import { SettingsStore } from '../electron/settings/settings.js';
import { Napper, type NapOutcome } from '../electron/sleep/nap.js';
import { TASK_PREFIX, TRANSCRIPT_LINE } from '../electron/sleep/schemas.js';
import { startFakeLlm } from '../e2e/fake-llm/server.js';
import { spawn } from 'node:child_process';
import { locomoFiles, percentile, round } from './util.js';
import { measureProseThenJson, printProseThenJson } from './sleep-prose.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
    json: { type: 'string' },
    /** The fake connection's context window; default: what the app gives a new connection. */
    context: { type: 'string' },
    /** Pause between the fake model's streamed chunks (~4 characters each); 0 sends each answer in one burst. */
    'stream-ms': { type: 'string', default: '1' },
    /** `prose-then-json`: only the structured-answers comparison (see the top of the file). */
    mode: { type: 'string' },
  },
});
if (values.mode !== undefined && values.mode !== 'prose-then-json') {
  console.error(`--mode: expected prose-then-json, not "${values.mode}"`);
  process.exit(2);
}

const PROBE_EVERY_MS = 25;
const PROBE_CONVERSATIONS = 64;
/** How long the same chat writes run before the cycle, with nothing else running. */
const BASELINE_MS = 3_000;
const MAX_CYCLES = 12;
const CYCLE_TIMEOUT_MS = 30 * 60_000;

const contextTokens = values.context === undefined ? undefined : Number(values.context);
if (contextTokens !== undefined && (!Number.isInteger(contextTokens) || contextTokens < 512)) {
  console.error('--context: expected a whole number of tokens, at least 512');
  process.exit(2);
}

const dataDirIn = path.resolve(String(values.data));
const files = locomoFiles(dataDirIn);

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-sleep-'));
const costDir = path.join(scratch, 'cost');
const chatDir = path.join(scratch, 'chat');
const napDir = path.join(scratch, 'nap');
const cleanup = () => fs.rmSync(scratch, { recursive: true, force: true });
const t0 = performance.now();
const warnings: string[] = [];
/** What the steps refused from the model's answers (logged at info level), for a look at why. */
const refusals: string[] = [];

/** Gives up: the scratch folder goes with it (the process exit drops the databases and the server). */
function fail(message: string): never {
  console.error(message);
  if (warnings.length) console.error(`host log:\n  ${warnings.slice(0, 20).join('\n  ')}`);
  cleanup();
  process.exit(1);
}

// ---- load: exactly as bench:locomo ----
const loadStart = performance.now();
let turns = 0;
let skippedFiles = 0;
/** The probes say real things too (the dataset's turns). */
const probeTexts: string[] = [];
{
  const db = await openDatabase(costDir);
  const conversations = new Conversations(db);
  for (const file of files) {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(path.join(dataDirIn, file), 'utf8'));
    } catch (err) {
      console.warn(`skipped ${file}: not JSON (${(err as Error).message})`);
      skippedFiles++;
      continue;
    }
    try {
      turns += (await importLocomo(conversations, raw)).messageCount;
    } catch (err) {
      console.warn(`skipped ${file}: ${(err as Error).message}`);
      skippedFiles++;
      continue;
    }
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      for (const t of value) if (t && typeof t === 'object' && probeTexts.length < 5000) probeTexts.push(turnContent(t as Record<string, unknown>));
    }
  }
  await db.close();
}
const loadMs = performance.now() - loadStart;
if (turns === 0) {
  cleanup();
  console.error(`--data: no LoCoMo turns in ${dataDirIn}`);
  process.exit(2);
}
fs.cpSync(costDir, chatDir, { recursive: true });
fs.cpSync(costDir, napDir, { recursive: true });
console.log(`loaded ${files.length - skippedFiles} file(s), ${turns} turns in ${(loadMs / 1000).toFixed(1)} s`);

if (values.mode === 'prose-then-json') {
  const prose = await measureProseThenJson({ loadedDir: costDir, scratch, contextTokens, fail });
  cleanup();
  printProseThenJson(prose);
  console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (values.json) {
    const file = path.resolve(String(values.json));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(prose, null, 2)}\n`);
    console.log(`written to ${file}`);
  }
  const { structured, prompt_only } = prose.prose_then_json;
  if (structured.calls === 0 || prompt_only.calls === 0) {
    console.error('No background model call was made: nothing was measured.');
    process.exit(1);
  }
  process.exit(0);
}

// The fake model runs in its own process, as a real model server would: its work (building answers,
// streaming them) must not be counted as the app's time or delay the app's event loop.
const fake = await startFakeModelProcess();
async function startFakeModelProcess(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const streamMs = String(Number(values['stream-ms']) || 0);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('e2e', 'fake-llm', 'cli.ts'), '--port', '0', '--sleep', '--chunk-delay-ms', streamMs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A benchmark that fails half-way must not leave the server running.
  process.once('exit', () => child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the fake model server did not start within 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /FAKE_LLM_URL=(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`the fake model server exited with ${code}`)));
  });
  return {
    baseUrl: `${url}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- a host on a folder, ready to sleep ----
interface Session {
  host: Host;
  providerId: string;
  finished: Map<number, { status: string; error: string | null; at: number }>;
  /** Which step ran when, from sleep.progress. */
  steps: { at: number; step: string }[];
  stepAt(t: number): string;
  /** Probe conversations still answering, and since when (for the reply times). */
  answering: Map<string, { at: number; replies: number[] } | null>;
}

async function openSession(dataDir: string): Promise<Session> {
  const host = await createHost({
    dataDir,
    detectLocalServers: false,
    log: (level, message) => {
      if (level !== 'info') warnings.push(`${level}: ${message}`);
      else if (/refused/.test(message)) refusals.push(message);
    },
  });
  const missing = (['sleep.now', 'sleep.runs', 'sleep.audit'] as const).filter((m) => typeof host.api[m] !== 'function');
  if (missing.length) fail(`The host does not implement ${missing.join(', ')} yet (shared/api.ts declares them): nothing to measure.`);
  // Automatic runs off, so only "sleep now" runs; the night's budget as high as settings allow. Naps
  // off: the chat probes' conversations would nap beside the cycle (the nap is measured on its own).
  await host.api['settings.update']({ timeZone: 'UTC', sleep: { auto: false, maxCallsPerNight: 10_000, maxTokensPerNight: 100_000_000, nap: false } });
  const provider = await host.api['providers.save']({
    kind: 'openai-compatible',
    name: 'Fake sleep model',
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    ...(contextTokens !== undefined ? { contextTokens } : {}),
  });
  if ((await host.api['settings.get']({})).chatProviderId !== provider.id) await host.api['settings.update']({ chatProviderId: provider.id });
  const session: Session = {
    host,
    providerId: provider.id,
    finished: new Map(),
    steps: [{ at: 0, step: '(no cycle)' }],
    stepAt: (t) => session.steps.findLast((s) => s.at <= t)!.step,
    answering: new Map(),
  };
  host.on((event, payload) => {
    const now = performance.now();
    if (event === 'sleep.progress') {
      if (payload.status === 'running') session.steps.push({ at: now, step: payload.stepId });
      else if (session.stepAt(now) === payload.stepId) session.steps.push({ at: now, step: '(between steps)' });
    } else if (event === 'sleep.finished') {
      session.finished.set(payload.runId, { status: payload.status, error: payload.error, at: now });
      session.steps.push({ at: now, step: '(no cycle)' });
    } else if (event === 'chat.finished') {
      const since = session.answering.get(payload.conversationId);
      if (since) since.replies.push(now - since.at);
      session.answering.delete(payload.conversationId);
    }
  });
  return session;
}

interface Cycle {
  runId: number;
  run: SleepRun | undefined;
  wallMs: number;
  status: string;
  error: string | null;
}

/** One "sleep now", to its sleep.finished event. */
async function runCycle(s: Session, label: string): Promise<Cycle> {
  const started = performance.now();
  let runId: number | null = null;
  try {
    ({ runId } = await s.host.api['sleep.now']({}));
  } catch (err) {
    fail(`${label}: sleep.now failed: ${(err as Error).message}`);
  }
  if (runId === null)
    fail(`${label}: sleep.now started no cycle; status: ${JSON.stringify(await s.host.api['sleep.status']({}).catch((e: Error) => e.message))}`);
  const deadline = performance.now() + CYCLE_TIMEOUT_MS;
  while (!s.finished.has(runId) && performance.now() < deadline) await pause(10);
  const end = s.finished.get(runId) ?? fail(`${label}: run ${runId} did not finish within ${CYCLE_TIMEOUT_MS / 60_000} minutes`);
  const run = (await s.host.api['sleep.runs']({ limit: 100 })).find((r) => r.id === runId);
  const cycle: Cycle = { runId, run, wallMs: end.at - started, status: end.status, error: end.error };
  const ls = run?.steps.find((x) => x.stepId === 'light-sleep')?.stats;
  console.log(
    `${label}: run ${runId} (sleep day ${run?.sleepDay ?? '?'}) ${cycle.status}${cycle.error ? ` (${cycle.error})` : ''} in ${(cycle.wallMs / 1000).toFixed(1)} s` +
      (ls ? `; light sleep read ${ls.messages ?? '?'} messages in ${ls.calls ?? '?'} calls` : ''),
  );
  for (const step of run?.steps ?? []) {
    const stats = Object.entries(step.stats ?? {}).filter(([, v]) => v !== 0);
    console.log(
      `  ${step.stepId.padEnd(16)} ${step.status}${step.reason ? ` (${step.reason})` : ''}${stats.length ? `: ${stats.map(([k, v]) => `${k} ${v}`).join(', ')}` : ''}`,
    );
  }
  if (cycle.status === 'failed')
    fail(`${label} failed: ${cycle.error ?? 'no reason given'}; steps: ${JSON.stringify(run?.steps.map((x) => [x.stepId, x.status, x.error]))}`);
  return cycle;
}

// ---- cost: cycles until no light-sleep work is left ----
const cost = await openSession(costDir);
const cycles: Cycle[] = [];
for (let n = 1; n <= MAX_CYCLES; n++) {
  const cycle = await runCycle(cost, `cycle ${n}`);
  cycles.push(cycle);
  // Light-sleep work left: the budget stopped the night, or chunks waited (deferred or unreadable).
  const ls = cycle.run?.steps.find((x) => x.stepId === 'light-sleep')?.stats;
  if (cycle.status !== 'stopped' && !((ls?.deferred_chunks ?? 0) > 0) && !((ls?.invalid_chunks ?? 0) > 0)) break;
  if (n === MAX_CYCLES) console.warn(`stopped after ${MAX_CYCLES} cycles with light-sleep work still left`);
}
const audit: AuditEntry[] = [];
for (let offset = 0; ; offset += 200) {
  const page = await cost.host.api['sleep.audit']({ limit: 200, offset });
  audit.push(...page.items);
  if (page.items.length === 0 || audit.length >= page.total) break;
}
const ourRuns = new Set(cycles.map((c) => c.runId));
const calls = audit.filter((a) => a.runId !== null && ourRuns.has(a.runId));
const runs = cycles.flatMap((c) => (c.run ? [c.run] : []));
const stepMs = (stepId: string) =>
  runs
    .map((r) => r.steps.find((x) => x.stepId === stepId))
    .flatMap((x) => (x?.startedAt && x.finishedAt ? [Date.parse(x.finishedAt) - Date.parse(x.startedAt)] : []));
const snapshots = stepMs('snapshot');
/** A step's own count summed over the cycles (a step carried over from an earlier run repeats that run's stats: left out). */
const stepStat = (stepId: string, key: string) =>
  runs.reduce((sum, r) => {
    const step = r.steps.find((x) => x.stepId === stepId);
    return sum + (step && !step.reason?.startsWith('done in run') ? (step.stats?.[key] ?? 0) : 0);
  }, 0);
const modelMs = calls.reduce((sum, a) => sum + a.durationMs, 0);
const wallMs = cycles.reduce((sum, c) => sum + c.wallMs, 0);
const finalSettings = await cost.host.api['settings.get']({});
const connection = (await cost.host.api['providers.list']({})).find((p) => p.id === cost.providerId);
await cost.host.close();

// What was read and written, from the database (the host is closed: one process, one connection).
const rows: Record<string, number> = {};
let messages = 0;
let days = 0;
{
  const db = await openDatabase(costDir);
  const count = async (sql: string) => Number(Object.values((await db.query<Record<string, unknown>>(sql)).rows[0] ?? {})[0] ?? 0);
  const dates = (
    await db.query<{ created_at: Date }>(`SELECT m.created_at FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.kind = 'chat'`)
  ).rows;
  messages = dates.length;
  days = new Set(dates.map((r) => sleepDay(r.created_at, finalSettings.sleepTime, finalSettings.timeZone))).size;
  const kinds = Object.fromEntries(
    (await db.query<{ kind: string; n: number }>(`SELECT kind, count(*)::int AS n FROM diary_blocks GROUP BY kind`)).rows.map((r) => [r.kind, Number(r.n)]),
  );
  const actions = Object.fromEntries(
    (
      await db.query<{ action: string; n: number }>(
        `SELECT action, count(*)::int AS n FROM memory_changes WHERE actor IN ('light-sleep', 'deep-sleep') GROUP BY action`,
      )
    ).rows.map((r) => [r.action, Number(r.n)]),
  );
  Object.assign(rows, {
    memories: await count(`SELECT count(*)::int FROM memories WHERE source IN ('light-sleep', 'deep-sleep')`),
    memories_active: await count(`SELECT count(*)::int FROM memories WHERE source IN ('light-sleep', 'deep-sleep') AND status = 'active'`),
    anchors: kinds.anchor ?? 0,
    imprints: kinds.imprint ?? 0,
    narratives: kinds.narrative ?? 0,
    dreams: kinds.dream ?? 0,
    digests: kinds.digest ?? 0,
    superseded: actions.supersede ?? 0,
    expired: actions.expire ?? 0,
    // Deep sleep journals a split or a merge as new memories plus supersedes: its own counts say which.
    split: stepStat('deep-sleep', 'split'),
    merged: stepStat('deep-sleep', 'merged'),
    updated: actions.update ?? 0,
    forgotten: actions.forget ?? 0,
    memory_changes: Object.values(actions).reduce((a, b) => a + b, 0),
    proposals: await count(`SELECT count(*)::int FROM sleep_proposals`),
    mood_days: await count(`SELECT count(*)::int FROM mood_days`),
    watermarks: await count(`SELECT count(*)::int FROM sleep_watermarks`),
    audit_rows: await count(`SELECT count(*)::int FROM auto_llm_runs`),
    snapshot_files: fs.existsSync(path.join(costDir, 'snapshots'))
      ? fs.readdirSync(path.join(costDir, 'snapshots')).filter((f) => f.endsWith('.tar.gz')).length
      : 0,
  });
  await db.close();
}

// ---- chat while it sleeps: the same first cycle on the twin folder ----
interface ProbeLog {
  /** Each write's own time: chat.send's call to its return. */
  ms: number[];
  msStep: string[];
  /** One sample per tick: from the moment it came due to the return of the write that carried it. */
  felt: number[];
  feltStep: string[];
  replies: number[];
  skipped: number;
  errors: number;
}
const newLog = (): ProbeLog => ({ ms: [], msStep: [], felt: [], feltStep: [], replies: [], skipped: 0, errors: 0 });
let probeSerial = 0;

/**
 * Sends on a 25 ms grid, one write at a time, each to a probe conversation that is not answering.
 * Every tick that came due before a write began rides on that write (timing only the writes made
 * would hide a four-second stall behind one sample: coordinated omission).
 */
function startProbes(s: Session, probeIds: string[], log: ProbeLog): () => Promise<void> {
  let stop = false;
  const loop = (async () => {
    const start = performance.now();
    let next = 0; // the first tick no write has carried yet
    while (!stop) {
      const wait = start + next * PROBE_EVERY_MS - performance.now();
      if (wait > 0) await pause(wait);
      if (stop) break;
      const begin = performance.now();
      const last = Math.max(next, Math.floor((begin - start) / PROBE_EVERY_MS));
      const idle = probeIds.find((id) => !s.answering.has(id));
      if (!idle) {
        log.skipped += last - next + 1;
        next = last + 1;
        continue;
      }
      s.answering.set(idle, { at: begin, replies: log.replies });
      const content = probeTexts[probeSerial++ % probeTexts.length] || `Still awake? (${probeSerial})`;
      try {
        await s.host.api['chat.send']({ conversationId: idle, content: content.slice(0, 4000) });
        const end = performance.now();
        log.ms.push(end - begin);
        log.msStep.push(s.stepAt(begin));
        for (let tick = next; tick <= last; tick++) {
          const due = start + tick * PROBE_EVERY_MS;
          log.felt.push(end - due);
          log.feltStep.push(s.stepAt(due));
        }
      } catch (err) {
        s.answering.delete(idle);
        log.errors++;
        if (log.errors <= 3) warnings.push(`chat probe: ${(err as Error).message}`);
      }
      next = last + 1;
    }
  })();
  return async () => {
    stop = true;
    await loop;
    const deadline = performance.now() + 60_000;
    while (s.answering.size > 0 && performance.now() < deadline) await pause(20);
  };
}

const chat = await openSession(chatDir);
const probeIds: string[] = [];
for (let i = 0; i < PROBE_CONVERSATIONS; i++) probeIds.push((await chat.host.api['conversations.create']({ title: `Chatting while it sleeps ${i + 1}` })).id);
// Once the recall index the host builds at launch is ready (the first search waits for it) and the
// first replies have warmed up: the same writes with nothing else running, for comparison.
await chat.host.api['recall.search']({ query: 'warm up', limit: 5 });
await startProbes(chat, probeIds, newLog())();
const idleLog = newLog();
{
  const stop = startProbes(chat, probeIds, idleLog);
  await pause(BASELINE_MS);
  await stop();
}
const nightLog = newLog();
let chatCycle: Cycle | undefined;
/** How late timers fire during the cycle: how long this thread was kept busy. */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
{
  const stop = startProbes(chat, probeIds, nightLog);
  loopDelay.enable();
  chatCycle = await runCycle(chat, 'with chat');
  loopDelay.disable();
  await stop();
}
await chat.host.close();

// ---- the nap: each session a chat day that ends with the person going quiet ----
interface NapStats {
  sessions: number;
  calls: number;
  outcomes: Record<string, number>;
  kept: number;
  lightCalls: number;
  cycles: number;
}
const napStats = await measureNaps();
async function measureNaps(): Promise<NapStats> {
  // The nap's answers come from a fake in this process (the one in its own process knows only the
  // night's tasks); nothing here is timed.
  const napModel = await startFakeLlm({ defaultChunkDelayMs: 0 });
  napModel.respond = (body) => {
    const prompt = String(((body as { messages?: { role: string; content: unknown }[] }).messages ?? []).findLast((m) => m.role === 'user')?.content ?? '');
    return prompt.startsWith(`${TASK_PREFIX}nap`) ? { kind: 'text', text: JSON.stringify(napAnswerOf(prompt)) } : undefined;
  };
  const clock = { now: new Date() };
  const outcomes: Record<string, number> = {};
  let kept = 0;
  const db = await openDatabase(napDir);
  try {
    const settings = new SettingsStore(db, () => {});
    const providers = new Providers(db, new OwnerOnlyFileSecretStore(napDir), { modelsDir: modelsDir(napDir) });
    const selfLayer = new SelfLayer(db);
    await selfLayer.ensureDefaults();
    const provider = await providers.save({
      kind: 'openai-compatible',
      name: 'Fake nap model',
      baseUrl: `${napModel.url}/v1`,
      model: 'fake-model',
      ...(contextTokens !== undefined ? { contextTokens } : {}),
    });
    await settings.update({ chatProviderId: provider.id, timeZone: 'UTC', sleep: { auto: false, maxCallsPerNight: 10_000, maxTokensPerNight: 100_000_000 } });
    const quietMs = (await settings.get()).sleep.napQuietMinutes * 60_000;
    const napper = new Napper({
      db,
      providers,
      settings,
      selfLayer,
      now: () => clock.now,
      conversations: new Conversations(db),
      store: new MemoryStore(db),
      log: (level, message) => {
        if (level !== 'info') warnings.push(`nap ${level}: ${message}`);
      },
      onOutcome: (_id, reason, outcome: NapOutcome) => {
        const key = `${reason} ${outcome.status === 'skipped' ? `skipped (${outcome.why})` : outcome.status}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (outcome.status === 'done') kept += outcome.saved.length;
      },
    });
    const sessions = (
      await db.query<{ id: string; ended: Date }>(
        `SELECT m.conversation_id AS id, max(m.created_at) AS ended FROM messages m JOIN conversations c ON c.id = m.conversation_id
          WHERE c.kind = 'chat' GROUP BY m.conversation_id ORDER BY max(m.created_at), m.conversation_id`,
      )
    ).rows;
    for (const s of sessions) {
      clock.now = s.ended;
      napper.touched(s.id);
      clock.now = new Date(s.ended.getTime() + quietMs);
      await napper.checkQuiet();
      napper.leave(s.id);
      await napper.current(s.id);
    }
    await napper.close();
    const calls = Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM auto_llm_runs WHERE purpose = 'nap'`)).rows[0]!.n);
    await db.close();
    await napModel.close();

    // The nights: the same full cycles as the cost run, now after the naps.
    const night = await openSession(napDir);
    const runIds: number[] = [];
    for (let n = 1; n <= MAX_CYCLES; n++) {
      const cycle = await runCycle(night, `after naps, cycle ${n}`);
      runIds.push(cycle.runId);
      const ls = cycle.run?.steps.find((x) => x.stepId === 'light-sleep')?.stats;
      if (cycle.status !== 'stopped' && !((ls?.deferred_chunks ?? 0) > 0) && !((ls?.invalid_chunks ?? 0) > 0)) break;
    }
    let lightCalls = 0;
    for (let offset = 0; ; offset += 200) {
      const page = await night.host.api['sleep.audit']({ limit: 200, offset });
      lightCalls += page.items.filter((a) => a.purpose === 'light-sleep' && a.runId !== null && runIds.includes(a.runId)).length;
      if (page.items.length === 0 || offset + page.items.length >= page.total) break;
    }
    await night.host.close();
    return { sessions: sessions.length, calls, outcomes, kept, lightCalls, cycles: runIds.length };
  } catch (err) {
    await napModel.close();
    fail(`nap: ${(err as Error).message}`);
  }
}

/** One memory from the nap prompt's most personal line (first person, longest), as a real model might keep. */
function napAnswerOf(prompt: string): { memories: { type: 'world'; content: string; entities: string[]; sources: string[] }[] } {
  const lines = prompt.split('\n').flatMap((l) => {
    const m = TRANSCRIPT_LINE.exec(l);
    return m && /\b(I|I'm|I've|my|me)\b/.test(m[4]!) ? [{ ref: m[1]!, speaker: m[3]!, text: m[4]! }] : [];
  });
  const best = lines.sort((a, b) => b.text.length - a.text.length)[0];
  if (!best) return { memories: [] };
  const sentence = (/^[^.!?]{20,}[.!?]/.exec(best.text)?.[0] ?? best.text).slice(0, 300);
  return { memories: [{ type: 'world', content: `${best.speaker} said: ${sentence}`, entities: [best.speaker], sources: [best.ref] }] };
}

await fake.close();
cleanup();

// ---- report ----
const stepIds = [...new Set([...runs.flatMap((r) => r.steps.map((x) => x.stepId)), ...calls.map((a) => a.stepId ?? '(none)')])];
const per = (n: number, d: number, k = 1) => (d > 0 ? round((n * k) / d, 3) : 0);
const tokens = (a: AuditEntry, kind: 'prompt' | 'completion') =>
  kind === 'prompt' ? (a.promptTokens ?? Math.ceil(a.promptChars / 4)) : (a.completionTokens ?? Math.ceil(a.responseChars / 4));
const steps: Record<
  string,
  { calls_per_100_msgs: number; calls_per_sleep_day: number; prompt_tokens_per_100_msgs: number; completion_tokens_per_100_msgs: number }
> = {};
console.log(
  `\nSleep cycles — ${cycles.length} cycle(s) over ${messages} messages and ${days} sleep days; connection context ${connection?.contextTokens ?? '?'} tokens`,
);
console.log(
  ['step'.padEnd(16), 'calls', 'repair/bad', 'prompt tok', 'compl tok', 'calls/100m', 'calls/day', 'p tok/100m', 'c tok/100m', 'step ms']
    .map((h, i) => (i ? h.padStart(11) : h))
    .join(''),
);
for (const id of stepIds) {
  const mine = calls.filter((a) => (a.stepId ?? '(none)') === id);
  const p = mine.reduce((sum, a) => sum + tokens(a, 'prompt'), 0);
  const c = mine.reduce((sum, a) => sum + tokens(a, 'completion'), 0);
  steps[id] = {
    calls_per_100_msgs: per(mine.length, messages, 100),
    calls_per_sleep_day: per(mine.length, days),
    prompt_tokens_per_100_msgs: per(p, messages, 100),
    completion_tokens_per_100_msgs: per(c, messages, 100),
  };
  const cells = [
    mine.length,
    mine.filter((a) => a.status !== 'ok').length,
    p,
    c,
    ...Object.values(steps[id]),
    Math.round(stepMs(id).reduce((a, b) => a + b, 0)),
  ];
  console.log(id.padEnd(16) + cells.map((v) => String(v).padStart(11)).join(''));
}
// While the person chats, the snapshot only waits for a quiet moment and then leaves the copy (and
// deep sleep) to the next night: those seconds are chat with nothing else running, not the cycle's
// work, so they are left out of the p95 — when the copy was taken, its pause counts in full.
const snapshotOnlyWaited = chatCycle?.run?.steps.find((x) => x.stepId === 'snapshot')?.status === 'skipped';
const nightFelt = nightLog.felt.filter((_, i) => !(snapshotOnlyWaited && nightLog.feltStep[i] === 'snapshot'));
const snapshotTotal = snapshots.reduce((a, b) => a + b, 0);
const ownMs = wallMs - modelMs - snapshotTotal;
const result = {
  steps,
  own_ms_per_300_msgs: per(ownMs, messages, 300),
  snapshot_ms: snapshots.length ? round(Math.max(...snapshots), 1) : 0,
  chat_write_ms_p95: nightFelt.length ? round(percentile(nightFelt, 95), 2) : 0,
  rows,
  /** Nap and light-sleep calls together per 100 chat messages (the sessions napped as chat days, then the nights). */
  nap_calls_per_100_msgs: per(napStats.calls + napStats.lightCalls, messages, 100),
  nap: {
    sessions: napStats.sessions,
    nap_calls: napStats.calls,
    light_sleep_calls: napStats.lightCalls,
    nap_only_calls_per_100_msgs: per(napStats.calls, messages, 100),
    light_sleep_calls_per_100_msgs: per(napStats.lightCalls, messages, 100),
    memories_kept: napStats.kept,
    outcomes: napStats.outcomes,
  },
};
console.log(
  `\nwall ${(wallMs / 1000).toFixed(2)} s = model ${(modelMs / 1000).toFixed(2)} s (${calls.length} audited calls) + snapshots ${(snapshotTotal / 1000).toFixed(2)} s` +
    ` (${snapshots.map((x) => Math.round(x)).join(', ')} ms) + own ${(ownMs / 1000).toFixed(2)} s → ${result.own_ms_per_300_msgs} ms per 300 messages`,
);
console.log(
  `rows: ${Object.entries(rows)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`,
);
const dist = (list: number[]) =>
  list.length ? `p50 ${percentile(list, 50).toFixed(1)} ms, p95 ${percentile(list, 95).toFixed(1)} ms, max ${Math.max(...list).toFixed(1)} ms` : 'none';
console.log(`\nchat writes (chat.send, due every ${PROBE_EVERY_MS} ms, one at a time): "felt" from the moment one came due, "own" chat.send alone`);
for (const [name, log] of [
  ['with nothing running', idleLog],
  ['during the cycle', nightLog],
] as const) {
  console.log(
    `  ${name}: felt ${dist(log.felt)} (${log.felt.length} ticks); own ${dist(log.ms)} (${log.ms.length} writes); replies ${dist(log.replies)}` +
      (log.skipped || log.errors ? `; ${log.skipped} ticks skipped with every probe conversation answering, ${log.errors} errors` : ''),
  );
}
const bySteps = new Map<string, { felt: number[]; ms: number[] }>();
const slot = (step: string) => bySteps.get(step) ?? bySteps.set(step, { felt: [], ms: [] }).get(step)!;
nightLog.felt.forEach((ms, i) => slot(nightLog.feltStep[i]!).felt.push(ms));
nightLog.ms.forEach((ms, i) => slot(nightLog.msStep[i]!).ms.push(ms));
for (const [step, b] of bySteps) console.log(`    while ${step}: felt ${dist(b.felt)} (${b.felt.length}); own ${dist(b.ms)} (${b.ms.length})`);
console.log(
  `  event loop delay during the cycle: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p95 ${(loopDelay.percentile(95) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
);
console.log(
  `\nnap: ${napStats.sessions} sessions as chat days, each ending quiet: ${napStats.calls} nap calls (${Object.entries(napStats.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}), ${napStats.kept} memories kept; then ${napStats.cycles} cycle(s) with ${napStats.lightCalls} light-sleep calls` +
    ` → nap + light sleep ${result.nap_calls_per_100_msgs} calls per 100 messages (nap ${result.nap.nap_only_calls_per_100_msgs}, light sleep ${result.nap.light_sleep_calls_per_100_msgs}; target ≤ 3)`,
);
if (refusals.length) console.log(`refused by the steps (${refusals.length}):\n  ${refusals.slice(0, 8).join('\n  ')}`);
if (warnings.length) console.log(`host log (${warnings.length}):\n  ${warnings.slice(0, 10).join('\n  ')}`);
console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);

if (values.json) {
  const file = path.resolve(String(values.json));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file)}`);
}
if (calls.length === 0) {
  console.error('No background model call was made: nothing was measured.');
  process.exit(1);
}
