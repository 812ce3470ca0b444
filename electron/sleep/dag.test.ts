import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { needsReason, orderSteps, readNeedsReason, runCycle, SleepBusyError, type SleepProgress, type SleepStep } from './dag.js';

let db: Database;
let dir: string;

beforeAll(async () => {
  dir = tempDataDir('anima-sleep-dag-');
  db = await openDatabase(dir, { template: dbTemplate() });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(`DELETE FROM auto_llm_runs; DELETE FROM sleep_steps; DELETE FROM sleep_runs;`);
});

/** A step that records its id in `log` and returns a stat; `fail` makes it throw. */
function step(id: string, dependsOn: string[], log: string[], fail = false): SleepStep {
  return {
    id,
    dependsOn,
    async run() {
      log.push(id);
      if (fail) throw new Error(`${id} broke`);
      return { items: id.length };
    },
  };
}

async function stepRows(runId: number) {
  return (
    await db.query<{ step_id: string; status: string; reason: string | null; error: string | null; stats: unknown }>(
      `SELECT step_id, status, reason, error, stats FROM sleep_steps WHERE run_id = $1 ORDER BY step_id`,
      [runId],
    )
  ).rows;
}

describe('graph validation', () => {
  it('rejects unknown dependencies, cycles and duplicate ids before touching the database', async () => {
    const log: string[] = [];
    await expect(runCycle(db, [step('a', ['nope'], log)], { sleepDay: '2026-01-01', trigger: 'manual' })).rejects.toThrow(/unknown step "nope"/);
    expect(() => orderSteps([step('a', ['c'], log), step('b', ['a'], log), step('c', ['b'], log)])).toThrow(/cycle: a → c → b → a/);
    expect(() => orderSteps([step('a', ['a'], log)])).toThrow(/cycle/);
    expect(() => orderSteps([step('a', [], log), step('a', [], log)])).toThrow(/twice/);
    expect((await db.query('SELECT 1 FROM sleep_runs')).rows).toHaveLength(0);
    expect(log).toEqual([]);
  });
});

describe('the reason of a step skipped for want of another', () => {
  it('is read back as the step and its outcome, so the UI can say it in any language', () => {
    for (const how of ['failed', 'skipped', 'stopped'] as const)
      expect(readNeedsReason(needsReason({ step: 'light-sleep', how }))).toEqual({ step: 'light-sleep', how });
    expect(needsReason({ step: 'a', how: 'failed' })).toBe('needs a, which failed');
    expect(readNeedsReason('done in run 4')).toBeNull();
    expect(readNeedsReason(null)).toBeNull();
  });
});

describe('runCycle', () => {
  it('runs steps in dependency order and records stats and progress', async () => {
    const log: string[] = [];
    const events: SleepProgress[] = [];
    const steps = [step('digest', ['narrative', 'imprint'], log), step('narrative', ['imprint'], log), step('imprint', [], log)];
    const result = await runCycle(db, steps, { sleepDay: '2026-01-01', trigger: 'schedule', onProgress: (e) => events.push(e) });
    expect(log).toEqual(['imprint', 'narrative', 'digest']);
    expect(result.status).toBe('done');
    const run = (await db.query<{ status: string; finished_at: Date | null; stats: unknown }>(`SELECT * FROM sleep_runs WHERE id = $1`, [result.runId]))
      .rows[0]!;
    expect(run.status).toBe('done');
    expect(run.finished_at).not.toBeNull();
    expect(run.stats).toEqual({ total: 3, done: 3 });
    const rows = await stepRows(result.runId);
    expect(rows.map((r) => [r.step_id, r.status, r.stats])).toEqual([
      ['digest', 'done', { items: 6 }],
      ['imprint', 'done', { items: 7 }],
      ['narrative', 'done', { items: 9 }],
    ]);
    expect(events.at(-1)).toEqual({ runId: result.runId, stepId: 'digest', status: 'done', done: 3, total: 3 });
    expect(events.filter((e) => e.status === 'running').map((e) => e.stepId)).toEqual(['imprint', 'narrative', 'digest']);
  });

  it('skips the dependants of a failed step with a reason and still runs independent steps', async () => {
    const log: string[] = [];
    const steps = [step('a', [], log, true), step('b', ['a'], log), step('c', ['b'], log), step('d', [], log), step('e', ['d'], log)];
    const result = await runCycle(db, steps, { sleepDay: '2026-01-02', trigger: 'manual' });
    expect(result.status).toBe('failed');
    expect(log).toEqual(['a', 'd', 'e']);
    const rows = await stepRows(result.runId);
    expect(rows.map((r) => [r.step_id, r.status, r.reason ?? r.error])).toEqual([
      ['a', 'failed', 'a broke'],
      ['b', 'skipped', 'needs a, which failed'],
      ['c', 'skipped', 'needs a, which failed'],
      ['d', 'done', null],
      ['e', 'done', null],
    ]);
  });

  it('resumes a crashed night: the dead holder is marked interrupted and only unfinished steps run', async () => {
    const dead = (
      await db.query<{ id: number }>(
        `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host) VALUES ('2026-01-03', 'schedule', 999999, $1) RETURNING id::int AS id`,
        [os.hostname()],
      )
    ).rows[0]!.id;
    await db.query(
      `INSERT INTO sleep_steps (run_id, step_id, status, stats) VALUES ($1, 'a', 'done', '{"items": 1}'), ($1, 'b', 'running', NULL), ($1, 'c', 'pending', NULL)`,
      [dead],
    );
    const log: string[] = [];
    const result = await runCycle(db, [step('a', [], log), step('b', ['a'], log), step('c', ['b'], log)], {
      sleepDay: '2026-01-03',
      trigger: 'catch-up',
    });
    expect(log).toEqual(['b', 'c']);
    expect(result).toMatchObject({ status: 'done', steps: { a: 'done', b: 'done', c: 'done' } });
    const old = (await db.query<{ status: string; error: string }>(`SELECT status, error FROM sleep_runs WHERE id = $1`, [dead])).rows[0]!;
    expect(old).toEqual({ status: 'failed', error: 'interrupted' });
    expect((await stepRows(dead)).find((r) => r.step_id === 'b')).toMatchObject({ status: 'failed', error: 'interrupted' });
    const carried = (await stepRows(result.runId)).find((r) => r.step_id === 'a')!;
    expect(carried).toMatchObject({ status: 'done', reason: `done in run ${dead}`, stats: { items: 1 } });

    // A completed night is not resumed: running the day again runs everything.
    const again: string[] = [];
    await runCycle(db, [step('a', [], again), step('b', ['a'], again), step('c', ['b'], again)], { sleepDay: '2026-01-03', trigger: 'manual' });
    expect(again).toEqual(['a', 'b', 'c']);
  });

  it('refuses to start while a live cycle holds the lock, and takes over one with a stale heartbeat', async () => {
    await db.query(`INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host) VALUES ('2026-01-04', 'schedule', $1, $2)`, [
      process.pid,
      os.hostname(),
    ]);
    const log: string[] = [];
    await expect(runCycle(db, [step('a', [], log)], { sleepDay: '2026-01-04', trigger: 'manual' })).rejects.toThrow(SleepBusyError);
    await expect(runCycle(db, [step('a', [], log)], { sleepDay: '2026-01-04', trigger: 'manual' })).rejects.toThrow(
      /already running \(run \d+ for 2026-01-04, held by this process\)/,
    );
    expect(log).toEqual([]);
    expect((await db.query(`SELECT 1 FROM sleep_runs`)).rows).toHaveLength(1);

    // The same live pid with a heartbeat far in the past is a reused pid, not a running cycle.
    await db.query(`UPDATE sleep_runs SET heartbeat_at = now() - interval '2 hours'`);
    const result = await runCycle(db, [step('a', [], log)], { sleepDay: '2026-01-04', trigger: 'manual' });
    expect(result.status).toBe('done');
    expect(log).toEqual(['a']);
  });

  it('stops at the next step boundary when aborted: the interrupted step is stopped, the rest skipped, and a resume runs them', async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const steps: SleepStep[] = [
      step('a', [], log),
      {
        id: 'b',
        dependsOn: ['a'],
        async run() {
          log.push('b');
          controller.abort('the app was closing'); // The person quit mid-step: b returns, c never starts.
          return { items: 1 };
        },
      },
      step('c', ['b'], log),
      step('d', [], log),
    ];
    const result = await runCycle(db, steps, { sleepDay: '2026-01-05', trigger: 'schedule', signal: controller.signal });
    expect(result.status).toBe('stopped');
    expect(log).toEqual(['a', 'b']);
    // b may have returned early because of the abort: it is not counted as done.
    expect(result.steps).toEqual({ a: 'done', b: 'stopped', c: 'skipped', d: 'skipped' });
    expect(result.error).toBe('the app was closing');
    const run = (await db.query<{ status: string; error: string }>(`SELECT status, error FROM sleep_runs WHERE id = $1`, [result.runId])).rows[0]!;
    expect(run).toEqual({ status: 'stopped', error: 'the app was closing' });
    const skipped = (await db.query<{ reason: string }>(`SELECT reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'c'`, [result.runId])).rows[0]!;
    expect(skipped.reason).toBe('not run: the app was closing');

    const rest: string[] = [];
    const resumed = await runCycle(db, [step('a', [], rest), step('b', ['a'], rest), step('c', ['b'], rest), step('d', [], rest)], {
      sleepDay: '2026-01-05',
      trigger: 'catch-up',
    });
    expect(rest).toEqual(['b', 'c', 'd']);
    expect(resumed.status).toBe('done');
  });
});

describe('diary_blocks append-only trigger', () => {
  it('refuses rewriting and deleting a block but allows hiding it', async () => {
    const id = (
      await db.query<{ id: number }>(`INSERT INTO diary_blocks (day, kind, title, body) VALUES ('2026-01-01', 'narrative', 'T', 'B') RETURNING id::int AS id`)
    ).rows[0]!.id;
    await expect(db.query(`UPDATE diary_blocks SET body = 'rewritten' WHERE id = $1`, [id])).rejects.toThrow(/append-only/);
    await expect(db.query(`UPDATE diary_blocks SET title = NULL WHERE id = $1`, [id])).rejects.toThrow(/append-only/);
    await expect(db.query(`UPDATE diary_blocks SET mood = '{"valence": 1}' WHERE id = $1`, [id])).rejects.toThrow(/append-only/);
    await expect(db.query(`DELETE FROM diary_blocks WHERE id = $1`, [id])).rejects.toThrow(/append-only/);
    await db.query(`UPDATE diary_blocks SET hidden_at = now() WHERE id = $1`, [id]);
    const row = (await db.query<{ body: string; hidden_at: Date | null }>(`SELECT body, hidden_at FROM diary_blocks WHERE id = $1`, [id])).rows[0]!;
    expect(row.body).toBe('B');
    expect(row.hidden_at).toBeInstanceOf(Date);
  });
});
