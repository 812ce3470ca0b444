// The sleep cycle under a process killed mid-step (light sleep, the snapshot, the dream), on real
// PGlite on disk: a consistent database, an honest status, and a next run that finishes the work.
// Harness: testing/faults-harness.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../db/lock.js';
import type { Host } from '../host/types.js';
import { INTERRUPTED } from './dag.js';
import { copyDataDir, readTwice, snapshotFiles } from './testing/fixture.js';
import {
  CHILD_WAIT_MS,
  fake,
  scratchDir,
  within,
  routes,
  faultAt,
  openHost,
  closeHost,
  saveModel,
  sleepNow,
  runs,
  stepOf,
  outcome,
  withDb,
  spawnChild,
  fixture,
  CHAT,
  SMALL_CONTEXT,
  useFaultsHarness,
} from './testing/faults-harness.js';
import type { ScriptChild } from '../testing/child.js';

useFaultsHarness();

// ---- 1. Killed mid-step ----

describe('a process killed in the middle of a night', () => {
  type Point = 'light-sleep' | 'snapshot' | 'dream';
  const kills = new Map<Point, { dir: string; child: ScriptChild; reached: Promise<unknown> }>();
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
  });

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
  });

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
  });

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
  });
});
