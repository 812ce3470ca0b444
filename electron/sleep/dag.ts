// The sleep cycle's runner: a small DAG of steps, persisted row by row so a night interrupted by a
// crash, a quit or a power loss resumes where it stopped instead of redoing (and re-paying for)
// the model calls it already made. The steps themselves live elsewhere; this file only orders,
// locks, records and resumes them.
import os from 'node:os';
import type { SleepRunStatus, SleepStepInfo, SleepStepStatus, SleepTrigger } from '../../shared/api.js';
import type { Transaction } from '../db/database.js';
import type { Database } from '../db/open.js';

export type { SleepRunStatus, SleepStepStatus, SleepTrigger };

/** A step failed, but reports what it did before failing (kept with the step). */
export class StepFailure extends Error {
  constructor(
    message: string,
    readonly stats: Record<string, number>,
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

/**
 * A step chose not to run tonight (the snapshot while the person is chatting): 'skipped' with this
 * reason, its dependants skipped too; the night is still done, and the next one does it.
 */
export class StepSkipped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StepSkipped';
  }
}

/**
 * A step ends the night early — over budget, or the person pressed Stop. The step is 'stopped' with
 * its partial stats, the steps after it are skipped with this message, and the run is 'stopped'.
 */
export class CycleStop extends Error {
  constructor(
    message: string,
    readonly stats: Record<string, number>,
  ) {
    super(message);
    this.name = 'CycleStop';
  }
}

export interface StepContext {
  db: Database;
  runId: number;
  stepId: string;
  sleepDay: string;
  trigger: SleepTrigger;
  /** Steps that make many calls should check it and stop early; the runner only checks between steps. */
  signal: AbortSignal;
  /** Refreshes the run's heartbeat; a step that runs for long should call it now and then. */
  heartbeat(): Promise<void>;
}

export interface SleepStep {
  id: string;
  dependsOn: string[];
  /** Resolves with the step's stats (counts), stored with the step. */
  run(ctx: StepContext): Promise<Record<string, number>>;
}

export interface SleepProgress {
  runId: number;
  stepId: string;
  status: SleepStepStatus;
  /** Steps that reached a final state (done, failed, skipped), carried-over ones included. */
  done: number;
  total: number;
}

export interface RunCycleOptions {
  sleepDay: string;
  trigger: SleepTrigger;
  signal?: AbortSignal;
  onProgress?(event: SleepProgress): void;
  /** A 'running' run whose heartbeat is older than this is abandoned. Default 30 minutes. */
  staleAfterMs?: number;
  /**
   * When the run began, by the caller's clock (default: the database's). The scheduler compares it
   * with sleep boundaries it computes from its own clock, so both must come from the same one.
   */
  startedAt?: Date;
}

export interface CycleResult {
  runId: number;
  status: Exclude<SleepRunStatus, 'running'>;
  steps: Record<string, SleepStepStatus>;
  /** Why the run stopped or failed. */
  error: string | null;
}

/** Thrown when another live cycle holds the lock. */
export class SleepBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SleepBusyError';
  }
}

const DEFAULT_STALE_MS = 30 * 60_000;

/** Throws on duplicate ids, unknown dependencies and cycles; returns the steps in a run order. */
export function orderSteps(steps: SleepStep[]): SleepStep[] {
  const byId = new Map<string, SleepStep>();
  for (const step of steps) {
    if (byId.has(step.id)) throw new Error(`Sleep step "${step.id}" is defined twice.`);
    byId.set(step.id, step);
  }
  for (const step of steps) {
    for (const dep of step.dependsOn) {
      if (!byId.has(dep)) throw new Error(`Sleep step "${step.id}" depends on unknown step "${dep}".`);
    }
  }
  // Depth-first, visiting steps in the order given, so independent steps keep their listed order
  // and the order is the same every night (predictable logs and tests).
  const ordered: SleepStep[] = [];
  const state = new Map<string, 'visiting' | 'visited'>();
  const visit = (step: SleepStep, path: string[]): void => {
    const seen = state.get(step.id);
    if (seen === 'visited') return;
    if (seen === 'visiting') {
      const loop = [...path.slice(path.indexOf(step.id)), step.id];
      throw new Error(`Sleep steps form a cycle: ${loop.join(' → ')}.`);
    }
    state.set(step.id, 'visiting');
    for (const dep of step.dependsOn) visit(byId.get(dep)!, [...path, step.id]);
    state.set(step.id, 'visited');
    ordered.push(step);
  };
  for (const step of steps) visit(step, []);
  return ordered;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else — still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface RunningRow {
  id: number;
  sleep_day: string;
  holder_pid: number;
  holder_host: string;
  heartbeat_age_ms: number;
}

type WaitedFor = NonNullable<SleepStepInfo['waitedFor']>;
const NEEDS_WORDS: Record<WaitedFor['how'], string> = { failed: 'failed', skipped: 'was skipped', stopped: 'stopped early' };
const NEEDS_REASON = /^needs (\S+), which (failed|was skipped|stopped early)$/;

/** The reason stored for a step skipped because a step it needs did not finish ("needs a, which failed"). */
export function needsReason({ step, how }: WaitedFor): string {
  return `needs ${step}, which ${NEEDS_WORDS[how]}`;
}

/** The step and outcome a stored reason names, when it is needsReason's: read where it is written. */
export function readNeedsReason(reason: string | null): WaitedFor | null {
  const m = reason === null ? null : NEEDS_REASON.exec(reason);
  if (!m) return null;
  const how = (Object.keys(NEEDS_WORDS) as WaitedFor['how'][]).find((k) => NEEDS_WORDS[k] === m[2])!;
  return { step: m[1]!, how };
}

/** The words for an aborted night: the reason given to abort(), else "stopped". */
function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (typeof r === 'string') return r;
  if (r instanceof Error && r.name !== 'AbortError') return r.message;
  return 'the cycle was stopped';
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The reason an abandoned run (its process died: kill -9, power loss) is marked failed with. */
export const INTERRUPTED = 'interrupted';

const RUNNING_ROWS = `SELECT id, sleep_day, holder_pid, holder_host,
        (extract(epoch FROM now() - heartbeat_at) * 1000)::float8 AS heartbeat_age_ms
   FROM sleep_runs WHERE status = 'running' ORDER BY id`;

/** Whether a 'running' row's holder is still at work. */
function holderIsLive(row: RunningRow, host: string, staleMs: number): boolean {
  const recent = row.heartbeat_age_ms < staleMs;
  // Another machine's process cannot be checked (a synced folder): only its heartbeat counts.
  // On this machine a dead pid is decisive; a live pid with an old heartbeat is a reused pid.
  return row.holder_host === host ? recent && isAlive(row.holder_pid) : recent;
}

/** Marks an abandoned run failed/"interrupted" so its unfinished steps are resumed by the next run. */
async function markInterrupted(tx: Transaction, id: number): Promise<void> {
  await tx.query(`UPDATE sleep_runs SET status = 'failed', error = $2, finished_at = now() WHERE id = $1`, [id, INTERRUPTED]);
  await tx.query(`UPDATE sleep_steps SET status = 'failed', error = $2, finished_at = now() WHERE run_id = $1 AND status = 'running'`, [id, INTERRUPTED]);
}

/**
 * Marks every 'running' run whose holder is gone as failed/"interrupted", leaving a live one alone;
 * returns their ids. The host calls it at launch, so a night that died with its process is not shown
 * as still running until the next cycle happens to start.
 */
export async function releaseAbandoned(db: Database, staleAfterMs = DEFAULT_STALE_MS): Promise<number[]> {
  const host = os.hostname();
  return db.transaction(async (tx) => {
    const released: number[] = [];
    for (const row of (await tx.query<RunningRow>(RUNNING_ROWS)).rows) {
      if (holderIsLive(row, host, staleAfterMs)) continue;
      await markInterrupted(tx, row.id);
      released.push(Number(row.id));
    }
    return released;
  });
}

/**
 * Takes the cycle lock: a new 'running' row. A previous 'running' row is either live (→ SleepBusyError)
 * or abandoned (→ marked failed/"interrupted" so its unfinished steps are resumed).
 */
async function acquire(db: Database, opts: RunCycleOptions): Promise<number> {
  const host = os.hostname();
  const staleMs = opts.staleAfterMs ?? DEFAULT_STALE_MS;
  return db.transaction(async (tx) => {
    for (const row of (await tx.query<RunningRow>(RUNNING_ROWS)).rows) {
      if (holderIsLive(row, host, staleMs)) {
        const who = row.holder_pid === process.pid && row.holder_host === host ? 'this process' : `process ${row.holder_pid} on ${row.holder_host}`;
        throw new SleepBusyError(`A sleep cycle is already running (run ${row.id} for ${row.sleep_day}, held by ${who}).`);
      }
      await markInterrupted(tx, row.id);
    }
    const inserted = await tx.query<{ id: number }>(
      `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, started_at)
       VALUES ($1, $2, $3, $4, coalesce($5::timestamptz, now())) RETURNING id::int AS id`,
      [opts.sleepDay, opts.trigger, process.pid, host, opts.startedAt?.toISOString() ?? null],
    );
    return inserted.rows[0]!.id;
  });
}

/** Steps already done in the latest unfinished run of this sleep day, with their stats. */
async function carriedOver(db: Database, sleepDay: string, runId: number): Promise<Map<string, { fromRun: number; stats: unknown }>> {
  const latest = (
    await db.query<{ id: number; status: SleepRunStatus }>(
      `SELECT id::int AS id, status FROM sleep_runs WHERE sleep_day = $1 AND id < $2 ORDER BY id DESC LIMIT 1`,
      [sleepDay, runId],
    )
  ).rows[0];
  // A completed night is not resumed: running the day again (a manual re-run) means all of it.
  if (!latest || latest.status === 'done') return new Map();
  const rows = (
    await db.query<{ step_id: string; stats: unknown }>(`SELECT step_id, stats FROM sleep_steps WHERE run_id = $1 AND status = 'done'`, [latest.id])
  ).rows;
  return new Map(rows.map((r) => [r.step_id, { fromRun: latest.id, stats: r.stats }]));
}

/**
 * The runs that make up this night so far: `runId` and the unfinished runs of the same sleep day it
 * resumes (every run since the day's last completed one). A step asking "what did tonight write"
 * must look at all of them — after a crash, what the interrupted run wrote is part of tonight.
 */
export async function nightRuns(db: Database, sleepDay: string, runId: number): Promise<number[]> {
  const rows = (
    await db.query<{ id: number }>(
      `SELECT id::int AS id FROM sleep_runs
        WHERE sleep_day = $1 AND id <= $2
          AND id > coalesce((SELECT max(id) FROM sleep_runs WHERE sleep_day = $1 AND status = 'done' AND id < $2), 0)
        ORDER BY id`,
      [sleepDay, runId],
    )
  ).rows;
  return rows.map((r) => Number(r.id));
}

/**
 * Runs one sleep cycle for `sleepDay`. Steps run one at a time in dependency order; each step's
 * state is committed before and after it, and no transaction spans a step. Throws SleepBusyError
 * when another live cycle runs, and Error for an invalid graph (before touching the database).
 */
export async function runCycle(db: Database, steps: SleepStep[], opts: RunCycleOptions): Promise<CycleResult> {
  const ordered = orderSteps(steps);
  const signal = opts.signal ?? new AbortController().signal;
  const runId = await acquire(db, opts);
  const status = new Map<string, SleepStepStatus>();
  // For a skipped step: the failed step it (transitively) waited for, named in its reason.
  const rootFailure = new Map<string, string>();
  const total = ordered.length;
  let finished = 0;

  const progress = (stepId: string, s: SleepStepStatus) => {
    try {
      opts.onProgress?.({ runId, stepId, status: s, done: finished, total });
    } catch {
      // A broken listener must not break the night.
    }
  };
  const heartbeat = async () => {
    await db.query(`UPDATE sleep_runs SET heartbeat_at = now() WHERE id = $1`, [runId]);
  };
  const setStep = async (stepId: string, s: SleepStepStatus, fields: { reason?: string; stats?: unknown; error?: string } = {}) => {
    status.set(stepId, s);
    await db.query(
      `UPDATE sleep_steps SET status = $3, reason = $4, stats = $5, error = $6,
              started_at = CASE WHEN $3 = 'running' THEN now() ELSE started_at END,
              finished_at = CASE WHEN $3 IN ('done', 'failed', 'skipped', 'stopped') THEN now() ELSE NULL END
        WHERE run_id = $1 AND step_id = $2`,
      [runId, stepId, s, fields.reason ?? null, fields.stats === undefined ? null : JSON.stringify(fields.stats), fields.error ?? null],
    );
  };

  let runStatus: CycleResult['status'] = 'failed';
  let runError: string | null = null;
  try {
    const carried = await carriedOver(db, opts.sleepDay, runId);
    await db.transaction(async (tx) => {
      for (const step of ordered) {
        const prior = carried.get(step.id);
        await tx.query(
          `INSERT INTO sleep_steps (run_id, step_id, status, reason, stats, finished_at)
           VALUES ($1, $2, $3, $4, $5, CASE WHEN $3 = 'done' THEN now() END)`,
          [runId, step.id, prior ? 'done' : 'pending', prior ? `done in run ${prior.fromRun}` : null, prior ? JSON.stringify(prior.stats) : null],
        );
      }
    });
    for (const step of ordered) if (carried.has(step.id)) status.set(step.id, 'done');
    finished = carried.size;

    let stopReason: string | null = null;
    for (const step of ordered) {
      if (status.get(step.id) === 'done') continue;
      if (stopReason === null && signal.aborted) stopReason = abortReason(signal);
      if (stopReason !== null) {
        finished++;
        await setStep(step.id, 'skipped', { reason: `not run: ${stopReason}` });
        progress(step.id, 'skipped');
        continue;
      }
      const blocker = step.dependsOn.find((d) => status.get(d) !== 'done');
      if (blocker !== undefined) {
        const root = rootFailure.get(blocker) ?? blocker;
        rootFailure.set(step.id, root);
        finished++;
        const how = status.get(root) === 'stopped' ? 'stopped' : status.get(root) === 'skipped' ? 'skipped' : 'failed';
        await setStep(step.id, 'skipped', { reason: needsReason({ step: root, how }) });
        progress(step.id, 'skipped');
        continue;
      }
      await setStep(step.id, 'running');
      progress(step.id, 'running');
      try {
        const stats = await step.run({ db, runId, stepId: step.id, sleepDay: opts.sleepDay, trigger: opts.trigger, signal, heartbeat });
        finished++;
        // A step that noticed the abort and returned early did not finish its work.
        if (signal.aborted) {
          stopReason = abortReason(signal);
          await setStep(step.id, 'stopped', { stats, error: stopReason });
          progress(step.id, 'stopped');
        } else {
          await setStep(step.id, 'done', { stats });
          progress(step.id, 'done');
        }
      } catch (err) {
        finished++;
        if (err instanceof StepSkipped && !signal.aborted) {
          await setStep(step.id, 'skipped', { reason: err.message });
          progress(step.id, 'skipped');
        } else if (err instanceof CycleStop || signal.aborted) {
          stopReason = err instanceof CycleStop ? err.message : abortReason(signal);
          // Stop cancels the call in flight, so the step usually fails with a StepFailure: its stats
          // (chunks already written, calls made) are what it finished, and still worth showing.
          const partial = err instanceof CycleStop || err instanceof StepFailure ? err.stats : undefined;
          await setStep(step.id, 'stopped', { stats: partial, error: stopReason });
          progress(step.id, 'stopped');
        } else {
          await setStep(step.id, 'failed', { error: errorText(err), stats: err instanceof StepFailure ? err.stats : undefined });
          progress(step.id, 'failed');
        }
      }
      await heartbeat();
    }
    // Steps skipped by choice (and what needed them) do not fail the night; a failed step does.
    const failed = ordered.filter((s) => status.get(s.id) === 'failed').map((s) => s.id);
    runStatus = stopReason !== null ? 'stopped' : failed.length ? 'failed' : 'done';
    if (stopReason !== null) runError = stopReason;
    else if (failed.length) runError = `${failed.join(', ')} failed`;
  } catch (err) {
    // The runner itself broke (the database went away, most likely): record it if we still can.
    runError = errorText(err);
    runStatus = 'failed';
    throw err;
  } finally {
    const counts: Record<string, number> = { total };
    for (const s of status.values()) counts[s] = (counts[s] ?? 0) + 1;
    await db
      .query(`UPDATE sleep_runs SET status = $2, finished_at = now(), heartbeat_at = now(), stats = $3, error = $4 WHERE id = $1`, [
        runId,
        runStatus,
        JSON.stringify(counts),
        runError,
      ])
      .catch(() => {});
  }
  return {
    runId,
    status: runStatus,
    steps: Object.fromEntries(ordered.map((s) => [s.id, status.get(s.id) ?? 'pending'])),
    error: runError,
  };
}
