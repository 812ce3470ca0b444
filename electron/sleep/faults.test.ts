// The sleep cycle under faults, on real PGlite on disk: a process killed mid-step, a clock that jumps,
// two cycles racing for the lock, a model that hangs or cuts off, the app closing mid-night. Each
// must end with a consistent database (nothing half-written, nothing read twice), an honest status,
// and a next run that finishes the work.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { findTask, sleepResponder, type SleepPurpose } from '../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, SleepRun } from '../../shared/api.js';
import { LOCK_FILE } from '../db/lock.js';
import { openDatabase, type Database } from '../db/open.js';
import type { Host } from '../host/types.js';
import { MemoryStore } from '../memory/store.js';
import { dbTemplate, startTestHost, tempDataDir } from '../testing/host.js';
import { INTERRUPTED, type SleepStep } from './dag.js';
import { CLOSING } from './service.js';
import { copyDataDir, readTwice, seedDataDir, seedMessages, sleepService, snapshotFiles, threeDaysOfChat, type ServiceHarness } from './testing/fixture.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CHILD = path.join(REPO, 'electron', 'sleep', 'testing', 'sleep-child.ts');
/** Every wait in this file is bounded: a hung cycle fails the test instead of hanging the run. */
const WAIT_MS = 30_000;
/** Child processes boot tsx and PGlite, several at once on a small machine: their waits are longer. */
const CHILD_WAIT_MS = 90_000;

let fake: FakeLlm;
const scratch: string[] = [];
const hosts: Host[] = [];

function scratchDir(prefix = 'anima-sleep-faults-'): string {
  const dir = tempDataDir(prefix);
  scratch.push(dir);
  return dir;
}

/** Rejects after `ms` with a message that says what was awaited. */
function within<T>(p: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`)), ms)),
    ),
  ]);
}

// ---- The model: every host and child uses its own model name, and the fake answers per name ----

/** A well-behaved background model: schema-valid answers built from each prompt. */
const model = sleepResponder();
const routes = new Map<string, NonNullable<FakeLlm['respond']>>();

function modelOf(body: unknown): string {
  return typeof body === 'object' && body !== null && typeof (body as { model?: unknown }).model === 'string' ? (body as { model: string }).model : '';
}

/** Answers like `model`, except the `nth` call for `purpose`, which gets `fault`; `reached` resolves when it comes. */
function faultAt(purpose: SleepPurpose, nth: number, fault: FakeResponse): { respond: NonNullable<FakeLlm['respond']>; reached: Promise<void> } {
  let n = 0;
  let reached!: () => void;
  const promise = new Promise<void>((resolve) => (reached = resolve));
  return {
    reached: promise,
    respond: async (body) => {
      if (findTask(body)?.purpose === purpose && ++n === nth) {
        reached();
        return fault;
      }
      return model(body);
    },
  };
}

// ---- Hosts ----

async function openHost(dataDir: string, options: Parameters<typeof startTestHost>[0] = {}): Promise<Host> {
  const host = await startTestHost({ dataDir, sleep: { tickMs: 0 }, ...options });
  hosts.push(host);
  return host;
}

async function closeHost(host: Host): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

async function saveModel(host: Host, name: string, contextTokens?: number) {
  return host.api['providers.save']({ kind: 'openai-compatible', name, baseUrl: fake.baseUrl, model: name, ...(contextTokens ? { contextTokens } : {}) });
}

type Finished = ApiEvents['sleep.finished'];

/** Records a host's sleep.finished events; `of(runId)` waits (bounded) for one run's. */
function finishes(host: Host) {
  const seen: Finished[] = [];
  const waiters = new Set<() => void>();
  const off = host.on((event, payload) => {
    if (event !== 'sleep.finished') return;
    seen.push(payload);
    for (const w of waiters) w();
  });
  return {
    off,
    of(runId: number): Promise<Finished> {
      return within(
        new Promise<Finished>((resolve) => {
          const check = () => {
            const f = seen.find((e) => e.runId === runId);
            if (f) {
              waiters.delete(check);
              resolve(f);
            }
          };
          waiters.add(check);
          check();
        }),
        WAIT_MS,
        `run ${runId} to finish`,
      );
    },
  };
}

/** "Sleep now", then the run's end. */
async function sleepNow(host: Host): Promise<Finished> {
  const events = finishes(host);
  try {
    const { runId } = await host.api['sleep.now']({});
    expect(runId).not.toBeNull();
    return await events.of(runId!);
  } finally {
    events.off();
  }
}

async function runs(host: Host): Promise<SleepRun[]> {
  return host.api['sleep.runs']({ limit: 20 });
}

const stepOf = (run: SleepRun | undefined, stepId: string) => run?.steps.find((s) => s.stepId === stepId);

/** What a night left for the person, through the API: diary, light-sleep memories, dreams, the digest's proposals. */
async function outcome(host: Host) {
  const days = await host.api['diary.days']({ limit: 30 });
  const diary = days
    .flatMap((d) => [...d.anchors, ...d.imprints, ...d.narratives])
    .map((b) => `${b.kind} ${b.day} ${b.conversationId ?? '-'} ${b.title ?? ''}: ${b.body}`)
    .sort();
  const memories = (await host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 })).items
    .filter((m) => m.source === 'light-sleep')
    .map((m) => m.content)
    .sort();
  const dreams = (await host.api['dreams.list']({})).map((d) => d.day);
  const digest = await host.api['sleep.digest']({});
  return { diary, memories, dreams, proposals: digest?.proposals.map((p) => `${p.action} ${p.memoryId}`) ?? [] };
}

/** Opens a closed data folder's database, for the checks the API cannot make. */
async function withDb<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(dataDir);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

// ---- The child process that gets killed ----

interface Child {
  process: ChildProcess;
  waitFor(pattern: RegExp, what: string): Promise<RegExpMatchArray>;
  /** SIGKILL, then wait until the process has exited and been reaped (its pid no longer answers). */
  kill(): Promise<void>;
}

function spawnChild(args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-sql.mjs', CHILD, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ANIMA_DEBUG: '' },
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  let gone = false;
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      wake();
      resolve();
    }),
  );
  const said = () => `\n--- child stdout ---\n${lines.join('\n')}\n--- child stderr ---\n${stderr}`;
  return {
    process: child,
    waitFor(pattern, what) {
      let check = () => {};
      return within(
        new Promise<RegExpMatchArray>((resolve, reject) => {
          check = () => {
            const m = lines.map((l) => pattern.exec(l)).find(Boolean);
            if (m) resolve(m);
            else if (gone) reject(new Error(`the child exited before ${what}${said()}`));
          };
          waiters.add(check);
          check();
        }).finally(() => waiters.delete(check)),
        CHILD_WAIT_MS,
        () => `${what}${said()}`,
      );
    },
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await within(exited, WAIT_MS, 'the killed child to exit');
    },
  };
}

// ---- Fixture: three days of chat, seeded once, copied per test ----

let fixture: string;
/** Some days back, so "sleep now" on the real clock comes after all of the fixture's chat. */
const FIRST_DAY = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
const CHAT = threeDaysOfChat(FIRST_DAY);
/** A 512-token context: one light-sleep call per conversation-day, six in all (see threeDaysOfChat). */
const SMALL_CONTEXT = 512;

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = (body) => (routes.get(modelOf(body)) ?? model)(body);
  fixture = scratchDir('anima-sleep-fixture-');
  await seedDataDir(fixture, dbTemplate(), {
    settings: { timeZone: 'UTC' },
    messages: CHAT,
    // A pin nobody has used for months: deep sleep proposes unpinning it, and the digest must list that.
    prepare: async (db) => {
      await new MemoryStore(db).create({
        type: 'world',
        content: 'Mara keeps a sketchbook of every city she visits.',
        pinned: true,
        source: 'user',
        actor: 'person',
      });
      await db.query(`UPDATE memories SET updated_at = now() - interval '90 days', created_at = now() - interval '90 days'`);
    },
  });
}, 120_000);

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

afterAll(async () => {
  await fake?.close();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

// ---- 1. Killed mid-step ----

describe('a process killed in the middle of a night', () => {
  type Point = 'light-sleep' | 'snapshot' | 'dream';
  const kills = new Map<Point, { dir: string; child: Child; reached: Promise<unknown> }>();
  let clean: Awaited<ReturnType<typeof outcome>>;
  let cleanLightCalls: number;

  beforeAll(async () => {
    // The processes to kill start first, each on its own copy and under its own model name: their
    // boot (tsx, PGlite) overlaps the clean night below. Each then waits at its kill point.
    const start = (point: Point, extra: string[], fault?: ReturnType<typeof faultAt>) => {
      const dir = copyDataDir(fixture, scratchDir());
      const name = `fake-kill-${point}`;
      if (fault) routes.set(name, fault.respond);
      const child = spawnChild([dir, fake.baseUrl, '--model', name, '--context', String(SMALL_CONTEXT), ...extra]);
      kills.set(point, { dir, child, reached: fault?.reached ?? child.waitFor(/^snapshot-held$/, 'the snapshot step to be held') });
    };
    // The third of six light-sleep calls never answers: two chunks are committed when the kill comes.
    start('light-sleep', [], faultAt('light-sleep', 3, { kind: 'hang' }));
    // The snapshot step blocks before dumping anything.
    start('snapshot', ['--hold-snapshot']);
    // The dream call never answers: light sleep, the snapshot and deep sleep are done.
    start('dream', [], faultAt('dream', 1, { kind: 'hang' }));
    for (const k of kills.values()) k.reached.catch(() => {}); // awaited (and reported) by each test

    // The same fixture slept once, undisturbed, in this process: what every resumed night must equal.
    const host = await openHost(copyDataDir(fixture, scratchDir()));
    await saveModel(host, 'fake-clean', SMALL_CONTEXT);
    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    clean = await outcome(host);
    cleanLightCalls = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.purpose === 'light-sleep').length;
    // Six conversation-days, each read once: six calls, six anchors; one dream; the stale pin proposed for unpinning.
    expect(cleanLightCalls).toBe(6);
    expect(clean.diary.filter((l) => l.startsWith('anchor '))).toHaveLength(6);
    expect(clean.dreams).toHaveLength(1);
    expect(clean.proposals).toEqual([expect.stringMatching(/^unpin \d+$/)]);
    await closeHost(host);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...kills.values()].map((k) => k.child.kill()));
  });

  /** Kills the child at its point, then opens its data folder in this process as the next launch. */
  async function killAndReopen(point: Point): Promise<{ host: Host; dir: string; killedRun: number }> {
    const { dir, child, reached } = kills.get(point)!;
    let killedRun: number;
    try {
      killedRun = Number((await child.waitFor(new RegExp(`^progress (\\d+) ${point} running$`), `${point} to start`))[1]);
      await within(reached, CHILD_WAIT_MS, `the kill point in ${point}`);
    } finally {
      await child.kill();
    }
    // The dead process left its data-folder lock; the next launch must see it is stale, not refuse.
    const lock = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(child.process.pid);
    const host = await openHost(dir);

    // Everything acknowledged before the kill is there, and the status is honest at once: nothing
    // runs, and the dead process's night is shown interrupted, not running.
    const conversations = await host.api['conversations.list']({});
    const messages = (await Promise.all(conversations.map((c) => host.api['conversations.get']({ id: c.id })))).flatMap((c) => c.messages);
    expect(messages).toHaveLength(CHAT.length);
    expect(messages.every((m) => m.status === 'complete')).toBe(true);
    const status = await host.api['sleep.status']({});
    expect(status.running).toBeNull();
    expect(status.lastRun).toMatchObject({ id: killedRun, status: 'failed', error: INTERRUPTED });
    expect(stepOf(status.lastRun!, point)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    return { host, dir, killedRun };
  }

  it('during a light-sleep call: the committed chunks stay, the rest is read once, the night ends as an undisturbed one', async () => {
    const { host, dir, killedRun } = await killAndReopen('light-sleep');
    const before = (await host.api['sleep.audit']({ limit: 100 })).items;
    expect(before.filter((a) => a.runId === killedRun).map((a) => a.status)).toEqual(['ok', 'ok']);
    expect((await host.api['diary.days']({ limit: 30 })).flatMap((d) => d.anchors)).toHaveLength(2);

    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    const [run, old] = await runs(host);
    expect(old).toMatchObject({ id: killedRun, status: 'failed', error: INTERRUPTED });
    expect(stepOf(run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${killedRun}` });
    // Only the four chunks the killed run had not committed were asked again.
    const calls = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.purpose === 'light-sleep');
    expect(calls.filter((a) => a.runId === run!.id)).toHaveLength(4);
    expect(calls.filter((a) => a.status === 'ok')).toHaveLength(cleanLightCalls);
    expect(await outcome(host)).toEqual(clean);

    await closeHost(host);
    await withDb(dir, async (db) => {
      // No message was consolidated into two anchors or two narratives.
      expect(await readTwice(db)).toEqual([]);
      expect((await db.query(`SELECT 1 FROM sleep_runs WHERE status = 'running'`)).rows).toHaveLength(0);
    });
  }, 120_000);

  it('during the snapshot: light sleep is carried over, not asked again; the snapshot is taken again, whole', async () => {
    const { host, dir, killedRun } = await killAndReopen('snapshot');
    expect(snapshotFiles(dir)).toEqual([]);

    const resumed = await sleepNow(host);
    expect(resumed).toMatchObject({ status: 'done', error: null });
    const [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'done', reason: `done in run ${killedRun}` });
    expect(stepOf(run, 'snapshot')).toMatchObject({ status: 'done', reason: null });
    const calls = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.purpose === 'light-sleep');
    expect(calls.map((a) => a.runId)).toEqual(Array(6).fill(killedRun));
    expect(snapshotFiles(dir)).toEqual([`${resumed.sleepDay}-run${run!.id}.tar.gz`]);
    // The dream comes from the day the interrupted run's light sleep wrote about.
    expect(await outcome(host)).toEqual(clean);
  }, 120_000);

  it('during the dream: deep sleep is carried over, the dream and the digest still cover the whole night', async () => {
    const { host, killedRun } = await killAndReopen('dream');
    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    const [run] = await runs(host);
    for (const step of ['light-sleep', 'snapshot', 'deep-sleep']) {
      expect(stepOf(run, step)).toMatchObject({ status: 'done', reason: `done in run ${killedRun}` });
    }
    const calls = (await host.api['sleep.audit']({ limit: 100 })).items;
    expect(calls.filter((a) => a.runId === run!.id).map((a) => a.purpose)).toEqual(['dream']);
    // The unpin proposal deep sleep made in the killed run is in the morning digest.
    expect(await outcome(host)).toEqual(clean);
  }, 120_000);
});

// ---- 2 & 3. The scheduler on a clock the test moves; the lock ----

describe('the scheduler and the lock', () => {
  let db: Database;
  let dir: string;
  let providerId: string;
  let clock = new Date('2026-01-15T12:00:00Z');
  const services: ServiceHarness[] = [];

  beforeAll(async () => {
    // A copy of the fixture opens faster than the template loads; each test truncates what it needs empty.
    dir = copyDataDir(fixture, scratchDir());
    db = await openDatabase(dir);
    const h = await sleepService(db, dir, { now: () => clock });
    providerId = (await h.deps.providers.save({ kind: 'openai-compatible', name: 'fake-scheduler', baseUrl: fake.baseUrl, model: 'fake-scheduler' })).id;
  }, 60_000);

  beforeEach(async () => {
    // Each service is built at a clock before any test's ticks (a clock that starts in the future is a test of its own).
    clock = new Date('2026-01-01T00:00:00Z');
    // TRUNCATE, not DELETE: diary blocks are append-only, and a truncate is not a row delete.
    await db.exec(`TRUNCATE conversations, sleep_runs, settings, memories CASCADE`);
  });

  afterEach(async () => {
    await Promise.all(services.splice(0).map((h) => h.service.close()));
  });

  afterAll(async () => {
    await db?.close();
  });

  /**
   * Two steps that do no real work, so whatever chat waits stays waiting: only the scheduler's memory of
   * what it ran stops it. With `readAll`, step a marks all chat read, as light sleep would.
   */
  function quietSteps(o: { failB?: () => boolean; gate?: Promise<void>; readAll?: boolean } = {}): SleepStep[] {
    return [
      {
        id: 'a',
        dependsOn: [],
        async run() {
          if (o.readAll) {
            await db.query(
              `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq)
               SELECT 'light-sleep', conversation_id, max(seq) FROM messages GROUP BY conversation_id
               ON CONFLICT (step_id, conversation_id) DO UPDATE SET last_seq = EXCLUDED.last_seq`,
            );
          }
          return { n: 1 };
        },
      },
      {
        id: 'b',
        dependsOn: ['a'],
        async run(ctx) {
          if (o.gate) {
            // Waits for the test, or for a stop (the app closing), whichever comes first.
            await new Promise<void>((resolve) => {
              void o.gate!.then(resolve);
              ctx.signal.addEventListener('abort', () => resolve(), { once: true });
            });
          }
          if (o.failB?.()) throw new Error('the model connection failed');
          return { n: 1 };
        },
      },
    ];
  }

  async function scheduler(o: { idleMs?: number; retryMs?: number; steps?: Parameters<typeof sleepService>[2]['steps'] | null } = {}): Promise<ServiceHarness> {
    // steps: null means the real night (light sleep and the rest, with the loopback model).
    const h = await sleepService(db, dir, {
      now: () => clock,
      steps: o.steps === null ? undefined : (o.steps ?? quietSteps()),
      idleMs: o.idleMs,
      retryMs: o.retryMs,
    });
    await h.settings.update({ timeZone: 'Europe/Berlin', chatProviderId: providerId });
    services.push(h);
    return h;
  }

  /** Moves the clock and runs one scheduler check, waiting for the cycle it started (if any). */
  async function tickAt(h: ServiceHarness, iso: string) {
    clock = new Date(iso);
    const started = await h.service.tick();
    await within(h.service.idle(), WAIT_MS, 'the cycle to finish');
    return started;
  }

  async function ticksBetween(h: ServiceHarness, fromIso: string, toIso: string, everyMin: number): Promise<void> {
    for (let t = Date.parse(fromIso); t <= Date.parse(toIso); t += everyMin * 60_000) await tickAt(h, new Date(t).toISOString());
  }

  async function runRows() {
    return (
      await db.query<{ id: number; sleep_day: string; trigger: string; status: string; started_at: Date; error: string | null }>(
        `SELECT id::int AS id, sleep_day, trigger, status, started_at, error FROM sleep_runs ORDER BY id`,
      )
    ).rows.map((r) => ({ ...r, started_at: r.started_at.toISOString() }));
  }

  /** Chat at these instants (UTC ISO), one short message each. */
  async function chatAt(...instants: string[]): Promise<void> {
    await seedMessages(
      db,
      instants.map((at, i) => ({
        conversation: `Chat ${at.slice(0, 10)}`,
        at: new Date(at),
        role: 'user' as const,
        content: `Message ${i + 1}: the garden is coming along.`,
      })),
    );
  }

  describe('when a night is due', () => {
    it('waits for the sleep time, then sleeps once on the day that ended — and says when the next is', async () => {
      await chatAt('2026-01-14T19:00:00Z'); // 20:00 in Berlin (CET, UTC+1)
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T00:30:00Z')).toBeNull(); // 01:30: the 14th has not ended
      expect(await tickAt(h, '2026-01-15T00:59:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:01:00Z')).toMatchObject({ sleepDay: '2026-01-14' }); // 02:01
      expect(await tickAt(h, '2026-01-15T01:02:00Z')).toBeNull(); // already slept (the quiet steps left the chat unread)
      expect(await tickAt(h, '2026-01-15T22:00:00Z')).toBeNull();
      expect(await runRows()).toEqual([
        expect.objectContaining({ sleep_day: '2026-01-14', trigger: 'schedule', status: 'done', started_at: '2026-01-15T01:01:00.000Z' }),
      ]);
      const status = await h.service.status();
      expect(status).toMatchObject({ running: null, sleepDay: '2026-01-15', nextAt: '2026-01-16T01:00:00.000Z', blocked: null });
      expect(status.lastRun).toMatchObject({ sleepDay: '2026-01-14', trigger: 'schedule', status: 'done' });
    });

    it('does not run with nothing to consolidate, nor with automatic sleep off', async () => {
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull(); // nothing said yet
      await chatAt('2026-01-14T19:00:00Z');
      await h.settings.update({ sleep: { auto: false } });
      expect(await tickAt(h, '2026-01-15T01:10:00Z')).toBeNull();
      // Chat after the boundary is tomorrow night's, not tonight's.
      await h.settings.update({ sleep: { auto: true } });
      await db.exec(`TRUNCATE conversations CASCADE`);
      await chatAt('2026-01-15T01:30:00Z');
      expect(await tickAt(h, '2026-01-15T01:40:00Z')).toBeNull();
      expect(await runRows()).toEqual([]);
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
    });

    it('waits while the person is chatting, then sleeps once they have been quiet for idleMs', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      clock = new Date('2026-01-15T01:00:00Z');
      const h = await scheduler({ idleMs: 10 * 60_000 }); // launched at 02:00: launching counts as activity
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull();
      clock = new Date('2026-01-15T01:08:00Z');
      h.service.touch(); // a message sent
      expect(await tickAt(h, '2026-01-15T01:15:00Z')).toBeNull();
      clock = new Date('2026-01-15T01:16:00Z');
      h.events.emit('chat.delta', { conversationId: 'c', messageId: 'm', text: '…' }); // a reply streaming
      expect(await tickAt(h, '2026-01-15T01:25:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:26:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect((await runRows()).map((r) => r.started_at)).toEqual(['2026-01-15T01:26:00.000Z']);
    });

    it('retries a failed automatic night only after retryMs, resuming the steps it finished', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let failing = true;
      // Step a reads all the chat: what is left to do is the failed step, not unread messages.
      const h = await scheduler({ retryMs: 60 * 60_000, steps: quietSteps({ failB: () => failing, readAll: true }) });
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T01:30:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T02:04:00Z')).toBeNull();
      failing = false;
      expect(await tickAt(h, '2026-01-15T02:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T03:30:00Z')).toBeNull(); // done now: nothing more tonight
      const [first, second] = await runRows();
      expect(first).toMatchObject({ status: 'failed', error: 'b failed' });
      expect(second).toMatchObject({ status: 'done', trigger: 'catch-up', sleep_day: '2026-01-14' });
      const carried = (await db.query<{ reason: string }>(`SELECT reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'a'`, [second!.id])).rows[0];
      expect(carried?.reason).toBe(`done in run ${first!.id}`);
    });
  });

  describe('when the app was away', () => {
    it('opened three days late: one catch-up run reads all three days, an anchor for each', async () => {
      routes.set('fake-scheduler', model);
      await chatAt('2026-01-14T19:00:00Z', '2026-01-15T19:00:00Z', '2026-01-16T19:00:00Z', '2026-01-16T20:00:00Z');
      // The real night this time: light sleep and the rest, with the loopback model.
      const h = await scheduler({ steps: null });
      expect(await tickAt(h, '2026-01-19T08:00:00Z')).toMatchObject({ sleepDay: '2026-01-18' });
      expect(await tickAt(h, '2026-01-19T08:10:00Z')).toBeNull();
      expect(await runRows()).toEqual([expect.objectContaining({ trigger: 'catch-up', status: 'done', sleep_day: '2026-01-18' })]);
      const anchors = (await db.query<{ day: string }>(`SELECT day FROM diary_blocks WHERE kind = 'anchor' ORDER BY day`)).rows.map((r) => r.day);
      expect(anchors).toEqual(['2026-01-14', '2026-01-15', '2026-01-16']);
      expect((await db.query(`SELECT 1 FROM sleep_watermarks`)).rows).toHaveLength(3);
    }, 60_000);

    it('a laptop asleep for a week: one catch-up when it wakes, then the nightly rhythm', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-14T22:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-21T07:00:00Z')).toMatchObject({ sleepDay: '2026-01-20' });
      expect(await tickAt(h, '2026-01-21T07:10:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-21T18:00:00Z')).toBeNull();
      await chatAt('2026-01-21T19:00:00Z');
      expect(await tickAt(h, '2026-01-22T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-21' });
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger])).toEqual([
        ['2026-01-20', 'catch-up'],
        ['2026-01-21', 'schedule'],
      ]);
    });
  });

  describe('when the clock misbehaves', () => {
    it('a time zone change moves the boundary (Berlin → Tokyo) without a second night for the same day', async () => {
      await chatAt('2026-01-14T15:00:00Z'); // 16:00 in Berlin
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-14T17:30:00Z')).toBeNull(); // 18:30 in Berlin: the 14th goes on
      // Flying east: in Tokyo it is 02:30 on the 15th, so the 14th has ended there.
      await h.settings.update({ timeZone: 'Asia/Tokyo' });
      expect(await tickAt(h, '2026-01-14T17:31:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      // Slept on: Berlin's 02:00 (01:00 UTC) means nothing in Tokyo, where it is 10:00 on the 15th.
      expect(await tickAt(h, '2026-01-14T20:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull();
      // The next boundary is Tokyo's 02:00 (17:00 UTC).
      await chatAt('2026-01-15T05:00:00Z');
      expect(await tickAt(h, '2026-01-15T16:55:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T17:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
      expect(await h.service.status()).toMatchObject({ nextAt: '2026-01-16T17:00:00.000Z' });
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([
        ['2026-01-14', 'schedule', '2026-01-14T17:31:00.000Z'],
        ['2026-01-15', 'schedule', '2026-01-15T17:05:00.000Z'],
      ]);
    });

    it('the spring-forward night (Berlin, 29 March, no 02:00): exactly one cycle, when the clocks jump', async () => {
      await chatAt('2026-03-28T20:00:00Z', '2026-03-29T00:30:00Z');
      const h = await scheduler();
      await ticksBetween(h, '2026-03-28T23:00:00Z', '2026-03-29T04:00:00Z', 10);
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([['2026-03-28', 'schedule', '2026-03-29T01:00:00.000Z']]);
    });

    it('the fall-back night (Berlin, 25 October, 02:00 twice): exactly one cycle, at the first 02:00', async () => {
      await chatAt('2026-10-24T18:00:00Z', '2026-10-24T23:30:00Z');
      const h = await scheduler();
      await ticksBetween(h, '2026-10-24T23:00:00Z', '2026-10-25T03:00:00Z', 10);
      // More chat between the two 02:00s does not make the second one a new boundary.
      await chatAt('2026-10-25T00:40:00Z');
      await ticksBetween(h, '2026-10-25T00:50:00Z', '2026-10-25T02:00:00Z', 10);
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([['2026-10-24', 'schedule', '2026-10-25T00:00:00.000Z']]);
    });

    it('a clock that jumps back does not sleep the same day twice, nor break', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T00:30:00Z')).toBeNull(); // back before 02:00
      expect(await tickAt(h, '2026-01-14T21:00:00Z')).toBeNull(); // back to the evening before
      expect(await h.service.status()).toMatchObject({ running: null, sleepDay: '2026-01-14', nextAt: '2026-01-15T01:00:00.000Z' });
      expect(await tickAt(h, '2026-01-15T01:10:00Z')).toBeNull(); // past 02:00 again: already slept
      await chatAt('2026-01-15T19:00:00Z');
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
      expect((await runRows()).map((r) => r.sleep_day)).toEqual(['2026-01-14', '2026-01-15']);
    });

    it('a clock that was a week ahead at launch and is then corrected: the due night still runs', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      clock = new Date('2026-01-22T10:00:00Z'); // wrong at launch
      const h = await scheduler({ idleMs: 2 * 60_000 });
      expect(await tickAt(h, '2026-01-15T08:00:00Z')).toBeNull(); // corrected: quiet for idleMs from now on
      expect(await tickAt(h, '2026-01-15T08:03:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T08:10:00Z')).toBeNull();
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger])).toEqual([['2026-01-14', 'catch-up']]);
    });
  });

  describe('when the app closes, or the person stops the night', () => {
    it('a night stopped by closing the app is resumed by the next launch’s first check', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // Step a reads all the chat: what is left to do is step b, not unread messages.
      const first = await scheduler({ steps: quietSteps({ gate, readAll: true }) });
      const bRunning = new Promise<void>((resolve) =>
        first.events.on((event, p) => event === 'sleep.progress' && p.stepId === 'b' && p.status === 'running' && resolve()),
      );
      clock = new Date('2026-01-15T01:05:00Z');
      expect(await first.service.tick()).toMatchObject({ sleepDay: '2026-01-14' });
      await within(bRunning, WAIT_MS, 'step b to start');
      await within(first.service.close(), WAIT_MS, 'the service to close');
      release();
      const [stopped] = await runRows();
      expect(stopped).toMatchObject({ status: 'stopped', error: CLOSING });
      const stoppedSteps = (
        await db.query<{ step_id: string; status: string; reason: string | null }>(
          `SELECT step_id, status, reason FROM sleep_steps WHERE run_id = $1 ORDER BY step_id`,
          [stopped!.id],
        )
      ).rows;
      expect(stoppedSteps).toEqual([
        { step_id: 'a', status: 'done', reason: null },
        { step_id: 'b', status: 'stopped', reason: null },
      ]);

      const next = await scheduler({ steps: quietSteps({ readAll: true }) }); // the next launch, an hour later
      expect(await tickAt(next, '2026-01-15T02:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      const [, resumed] = await runRows();
      expect(resumed).toMatchObject({ status: 'done', sleep_day: '2026-01-14' });
      const carried = (await db.query<{ reason: string }>(`SELECT reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'a'`, [resumed!.id])).rows[0];
      expect(carried?.reason).toBe(`done in run ${stopped!.id}`);
      expect(await tickAt(next, '2026-01-15T02:10:00Z')).toBeNull();
    });

    it('a night the person stopped waits for the next night', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const h = await scheduler({ steps: quietSteps({ gate }) });
      const bRunning = new Promise<void>((resolve) =>
        h.events.on((event, p) => event === 'sleep.progress' && p.stepId === 'b' && p.status === 'running' && resolve()),
      );
      clock = new Date('2026-01-15T01:05:00Z');
      await h.service.tick();
      await within(bRunning, WAIT_MS, 'step b to start');
      expect(h.service.stop()).toBe(true);
      release();
      await within(h.service.idle(), WAIT_MS, 'the stopped cycle');
      expect(await runRows()).toEqual([expect.objectContaining({ status: 'stopped', error: 'stopped by you' })]);
      expect(await tickAt(h, '2026-01-15T05:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
    });
  });

  describe('the lock', () => {
    it('two services on one database: the second is refused while the first runs, then runs', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const a = await scheduler({ steps: quietSteps({ gate }) });
      const b = await scheduler();
      const refusals: ApiEvents['sleep.finished'][] = [];
      b.events.on((event, payload) => event === 'sleep.finished' && refusals.push(payload));

      const first = await a.service.now();
      expect(first.runId).not.toBeNull();
      // "Sleep now" says why it cannot: another cycle holds the lock.
      await expect(b.service.now()).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/already running .*held by this process/) });
      await within(b.service.idle(), WAIT_MS, 'the refused start');
      expect(refusals).toEqual([
        expect.objectContaining({
          status: 'failed',
          error: expect.stringMatching(new RegExp(`already running \\(run ${first.runId} .*held by this process\\)`)),
        }),
      ]);
      // The refusal touched nothing: one run, still running, and both services say so.
      expect((await runRows()).map((r) => [r.id, r.status])).toEqual([[first.runId, 'running']]);
      expect((await a.service.status()).running).toMatchObject({ runId: first.runId });
      expect(await b.service.status()).toMatchObject({ running: null, lastRun: { id: first.runId, status: 'running' } });
      // A launch-time sweep leaves a live holder alone.
      expect(await b.service.recover()).toEqual([]);

      release();
      await within(a.service.idle(), WAIT_MS, 'the first cycle');
      const second = await b.service.now();
      await within(b.service.idle(), WAIT_MS, 'the second cycle');
      expect((await runRows()).map((r) => [r.id, r.status])).toEqual([
        [first.runId, 'done'],
        [second.runId, 'done'],
      ]);
    });

    it('a run left by a dead process, or with a heartbeat long gone, is taken over and its steps resumed', async () => {
      const h = await scheduler();
      const day = (await h.service.status()).sleepDay;
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // a pid that certainly is not running now
      const holder = async (pid: number, heartbeatAgo: string) => {
        const id = (
          await db.query<{ id: number }>(
            `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, heartbeat_at)
             VALUES ($1, 'schedule', $2, $3, now() - $4::interval) RETURNING id::int AS id`,
            [day, pid, os.hostname(), heartbeatAgo],
          )
        ).rows[0]!.id;
        await db.query(`INSERT INTO sleep_steps (run_id, step_id, status, stats) VALUES ($1, 'a', 'done', '{"n": 7}'), ($1, 'b', 'running', NULL)`, [id]);
        return id;
      };

      // Alive and beating: refused.
      const live = await holder(process.pid, '1 second');
      await expect(h.service.now()).rejects.toMatchObject({ code: 'conflict' });
      await within(h.service.idle(), WAIT_MS, 'the refused start');
      // Alive, but silent for two hours: a reused pid, not a cycle. Taken over; step a is not redone.
      await db.query(`UPDATE sleep_runs SET heartbeat_at = now() - interval '2 hours' WHERE id = $1`, [live]);
      const takeover = await h.service.now();
      await within(h.service.idle(), WAIT_MS, 'the takeover');
      // Dead: marked interrupted at launch (recover), then resumed.
      const gone = await holder(dead, '1 second');
      expect(await h.service.recover()).toEqual([gone]);
      expect((await h.service.status()).lastRun).toMatchObject({ id: gone, status: 'failed', error: INTERRUPTED });
      const resumed = await h.service.now();
      await within(h.service.idle(), WAIT_MS, 'the resume');

      const rows = (
        await db.query<{ run_id: number; step_id: string; status: string; reason: string | null; error: string | null }>(
          `SELECT run_id::int AS run_id, step_id, status, reason, error FROM sleep_steps ORDER BY run_id, step_id`,
        )
      ).rows;
      expect(rows).toEqual([
        { run_id: live, step_id: 'a', status: 'done', reason: null, error: null },
        { run_id: live, step_id: 'b', status: 'failed', reason: null, error: INTERRUPTED },
        { run_id: takeover.runId, step_id: 'a', status: 'done', reason: `done in run ${live}`, error: null },
        { run_id: takeover.runId, step_id: 'b', status: 'done', reason: null, error: null },
        { run_id: gone, step_id: 'a', status: 'done', reason: null, error: null },
        { run_id: gone, step_id: 'b', status: 'failed', reason: null, error: INTERRUPTED },
        { run_id: resumed.runId, step_id: 'a', status: 'done', reason: `done in run ${gone}`, error: null },
        { run_id: resumed.runId, step_id: 'b', status: 'done', reason: null, error: null },
      ]);
      expect((await runRows()).map((r) => [r.id, r.status, r.error])).toEqual([
        [live, 'failed', INTERRUPTED],
        [takeover.runId, 'done', null],
        [gone, 'failed', INTERRUPTED],
        [resumed.runId, 'done', null],
      ]);
    });
  });
});

// ---- 4 & 5. The model failing mid-night; the app closing mid-night ----

describe('the model failing in the middle of a night', () => {
  it('a call that hangs times out, a connection cut mid-answer fails: each recorded, nothing half-written, the next night finishes', async () => {
    const dir = copyDataDir(fixture, scratchDir());
    const host = await openHost(dir, { providerTimeoutMs: 800 });
    await saveModel(host, 'fake-faults', SMALL_CONTEXT);

    // 1. The first light-sleep call never answers.
    routes.set('fake-faults', faultAt('light-sleep', 1, { kind: 'hang' }).respond);
    expect(await sleepNow(host)).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    let [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/background model did not answer .*0 of 6 chunks were done/),
    });
    for (const step of ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest']) {
      expect(stepOf(run, step)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
    }
    let audit = (await host.api['sleep.audit']({ limit: 100 })).items;
    expect(audit.map((a) => [a.purpose, a.status])).toEqual([['light-sleep', 'error']]);
    expect(audit[0]!.error).toMatch(/stopped answering \(nothing for 0\.8 s\)/);
    expect(await outcome(host)).toEqual({ diary: [], memories: [], dreams: [], proposals: [] });
    expect((await host.api['sleep.status']({})).running).toBeNull();

    // 2. The third call is cut off mid-answer: the two before it are kept, nothing of the third.
    routes.set('fake-faults', faultAt('light-sleep', 3, { kind: 'cut', text: '{"memories": [{"type": "world", "content": "Mara' }).respond);
    expect(await sleepNow(host)).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'failed', error: expect.stringMatching(/2 of 6 chunks were done/) });
    audit = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.runId === run!.id);
    expect(audit.map((a) => a.status).reverse()).toEqual(['ok', 'ok', 'error']);
    expect(audit[0]!.error).toMatch(/ended before the reply was complete/);
    expect((await outcome(host)).diary.filter((l) => l.startsWith('anchor '))).toHaveLength(2);

    // 3. The model behaves: the next night reads the four chunks left, and only those.
    routes.set('fake-faults', model);
    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')?.stats).toMatchObject({ calls: 4, chunks_done: 4 });
    expect((await outcome(host)).diary.filter((l) => l.startsWith('anchor '))).toHaveLength(6);
    await closeHost(host);
    await withDb(dir, async (db) => expect(await readTwice(db)).toEqual([]));
  }, 90_000);
});

describe('the app closing in the middle of a night', () => {
  it('host.close() stops the cycle at once, recorded as stopped; the next start resumes it', async () => {
    const dir = copyDataDir(fixture, scratchDir());
    let host = await openHost(dir);
    await saveModel(host, 'fake-closing', SMALL_CONTEXT);
    const fault = faultAt('light-sleep', 3, { kind: 'hang' });
    routes.set('fake-closing', fault.respond);
    const events = finishes(host);
    const { runId } = await host.api['sleep.now']({});
    await within(fault.reached, WAIT_MS, 'the third light-sleep call');
    // The hanging call is cancelled, not waited for (the provider's own timeout is a minute).
    await within(closeHost(host), 10_000, 'the host to close');
    expect(await events.of(runId!)).toMatchObject({ status: 'stopped', error: CLOSING });

    routes.set('fake-closing', model);
    host = await openHost(dir);
    const [stopped] = await runs(host);
    expect(stopped).toMatchObject({ id: runId, status: 'stopped', error: CLOSING });
    expect(stepOf(stopped, 'memory-ref-sync')).toMatchObject({ status: 'done' });
    expect(stepOf(stopped, 'light-sleep')).toMatchObject({ status: 'stopped', error: CLOSING });
    expect(stepOf(stopped, 'digest')).toMatchObject({ status: 'skipped', reason: `not run: ${CLOSING}` });
    expect((await host.api['sleep.status']({})).running).toBeNull();
    expect((await host.api['diary.days']({ limit: 30 })).flatMap((d) => d.anchors)).toHaveLength(2);
    // The cancelled call is in the audit log as what it was.
    const audit = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.runId === runId);
    expect(audit.map((a) => [a.status, a.error]).reverse()).toEqual([
      ['ok', null],
      ['ok', null],
      ['error', 'The request was stopped.'],
    ]);

    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    const [run] = await runs(host);
    expect(stepOf(run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${runId}` });
    expect(stepOf(run, 'light-sleep')?.stats).toMatchObject({ calls: 4, chunks_done: 4 });
    expect((await host.api['diary.days']({ limit: 30 })).flatMap((d) => d.anchors)).toHaveLength(6);
  }, 90_000);
});
