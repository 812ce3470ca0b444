import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../../e2e/fake-llm/server.js';
import { findTask, sleepResponder, type SleepPurpose } from '../../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, SleepRun } from '../../../shared/api.js';
import { openDatabase, type Database } from '../../db/open.js';
import type { Host } from '../../host/types.js';
import { MemoryStore } from '../../memory/store.js';
import { spawnScript, type ScriptChild } from '../../testing/child.js';
import { PATIENCE_MS } from '../../testing/patience.js';
import { dbTemplate, startTestHost, tempDataDir } from '../../testing/host.js';

import { seedDataDir, threeDaysOfChat } from './fixture.js';

export const REPO = path.resolve(import.meta.dirname, '..', '..', '..');
export const CHILD = path.join(REPO, 'electron', 'sleep', 'testing', 'sleep-child.ts');
/** Every wait in this file is bounded: a hung cycle fails the test instead of hanging the run. */
export const WAIT_MS = 2 * PATIENCE_MS;
/** Child processes boot tsx and PGlite, several at once on a small machine: their waits are longer. */
export const CHILD_WAIT_MS = 300_000;

export let fake: FakeLlm;
export const scratch: string[] = [];
export const hosts: Host[] = [];

export function scratchDir(prefix = 'anima-sleep-faults-'): string {
  const dir = tempDataDir(prefix);
  scratch.push(dir);
  return dir;
}

/** Rejects after `ms` with a message that says what was awaited. */
export function within<T>(p: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
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
export const model = sleepResponder();
export const routes = new Map<string, NonNullable<FakeLlm['respond']>>();

export function modelOf(body: unknown): string {
  return typeof body === 'object' && body !== null && typeof (body as { model?: unknown }).model === 'string' ? (body as { model: string }).model : '';
}

/** Answers like `model`, except the `nth` call for `purpose`, which gets `fault`; `reached` resolves when it comes. */
export function faultAt(purpose: SleepPurpose, nth: number, fault: FakeResponse): { respond: NonNullable<FakeLlm['respond']>; reached: Promise<void> } {
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

export async function openHost(dataDir: string, options: Parameters<typeof startTestHost>[0] = {}): Promise<Host> {
  const host = await startTestHost({ dataDir, sleep: { tickMs: 0 }, ...options });
  hosts.push(host);
  return host;
}

export async function closeHost(host: Host): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

export async function saveModel(host: Host, name: string, contextTokens?: number) {
  return host.api['providers.save']({ kind: 'openai-compatible', name, baseUrl: fake.baseUrl, model: name, ...(contextTokens ? { contextTokens } : {}) });
}

export type Finished = ApiEvents['sleep.finished'];

/** Records a host's sleep.finished events; `of(runId)` waits (bounded) for one run's. */
export function finishes(host: Host) {
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
export async function sleepNow(host: Host): Promise<Finished> {
  const events = finishes(host);
  try {
    const { runId } = await host.api['sleep.now']({});
    expect(runId).not.toBeNull();
    return await events.of(runId!);
  } finally {
    events.off();
  }
}

export async function runs(host: Host): Promise<SleepRun[]> {
  return host.api['sleep.runs']({ limit: 20 });
}

export const stepOf = (run: SleepRun | undefined, stepId: string) => run?.steps.find((s) => s.stepId === stepId);

/** What a night left for the person, through the API: diary, light-sleep memories, dreams, the digest's proposals. */
export async function outcome(host: Host) {
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
export async function withDb<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(dataDir);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

// ---- The child process that gets killed ----

/** The sleep child (testing/sleep-child.ts) with these arguments; see testing/child.ts. */
export function spawnChild(args: string[]): ScriptChild {
  return spawnScript(CHILD, args, { waitMs: CHILD_WAIT_MS });
}

// ---- Fixture: three days of chat, seeded once, copied per test ----

export let fixture: string;
/** Some days back, so "sleep now" on the real clock comes after all of the fixture's chat. */
export const FIRST_DAY = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
export const CHAT = threeDaysOfChat(FIRST_DAY);
/** A 512-token context: one light-sleep call per conversation-day, six in all (see threeDaysOfChat). */
export const SMALL_CONTEXT = 512;

/** The file's hooks: the loopback model routed by model name, the three-day fixture seeded once; hosts closed after each test, everything removed after. */
export function useFaultsHarness(): void {
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
}
