// The small steps: reference counts, the mood series, and the snapshot taken before deep sleep.
import fs from 'node:fs';
import path from 'node:path';
import { nightlyManifestDir, writeCopy } from '../../backups/copies.js';
import { engineOf } from '../../db/database.js';
import { syncReferenceCounts } from '../../memory/citations.js';
import { databaseDir, type Database } from '../../db/open.js';
import { StepSkipped, type SleepStep, type StepContext } from '../dag.js';
import { LIGHT_SLEEP } from './light-sleep.js';
import type { SleepStepDeps } from './deps.js';
import { dataFingerprint, pruneCopies, recordFingerprint, reusableCopy, snapshotName } from './snapshots.js';

export const MEMORY_REF_SYNC = 'memory-ref-sync';
export const MOOD_TREND = 'mood-trend';
export const SNAPSHOT = 'snapshot';
export const DEFAULT_KEEP_SNAPSHOTS = 7;
/**
 * PGlite's dump holds the database (and this thread) for one to a few seconds, so it waits until the
 * person has been quiet this long; a night of chatting leaves the copy — and deep sleep, which must
 * not run without one — to the next night rather than freezing a reply mid-conversation.
 */
export const SNAPSHOT_QUIET_MS = 10_000;
const DEFAULT_SNAPSHOT_WAIT_MS = 60_000;

/**
 * Recounts every memory's citations from the stored messages (the live count can miss a crash), and
 * refreshes the planner's statistics: PGlite has no autovacuum, and without statistics a grown table
 * is planned as if it were empty (a trigram probe over 20,000 entities became a sequential scan).
 */
export function refSyncStep(deps: SleepStepDeps): SleepStep {
  return {
    id: MEMORY_REF_SYNC,
    dependsOn: [],
    async run() {
      const r = await syncReferenceCounts(deps.db);
      const t0 = performance.now();
      await deps.db.exec('ANALYZE');
      return { memories_changed: r.memories, references: r.references, analyze_ms: Math.round(performance.now() - t0) };
    },
  };
}

interface DayRow {
  day: string;
  valence: number;
  arousal: number;
  anchors: number;
}

/** Trailing mean over the days (with anchors) within `span` calendar days up to and including `day`. */
function trailing(days: DayRow[], index: number, span: number, key: 'valence' | 'arousal'): number {
  const end = Date.parse(`${days[index]!.day}T00:00:00Z`);
  let sum = 0;
  let n = 0;
  for (let i = index; i >= 0; i--) {
    if (end - Date.parse(`${days[i]!.day}T00:00:00Z`) >= span * 86_400_000) break;
    sum += days[i]![key];
    n++;
  }
  return sum / n;
}

/** Rebuilds the mood series from the visible anchors: daily means with 7- and 30-day trends. */
export async function rebuildMoodDays(db: Database): Promise<number> {
  const days = (
    await db.query<DayRow>(
      `SELECT day, avg((mood->>'valence')::float8) AS valence, avg((mood->>'arousal')::float8) AS arousal, count(*)::int AS anchors
         FROM diary_blocks
        WHERE kind = 'anchor' AND hidden_at IS NULL AND mood ? 'valence' AND mood ? 'arousal'
        GROUP BY day ORDER BY day`,
    )
  ).rows;
  const rows = days.map((d, i) => [
    d.day,
    d.valence,
    d.arousal,
    d.anchors,
    trailing(days, i, 7, 'valence'),
    trailing(days, i, 30, 'valence'),
    trailing(days, i, 7, 'arousal'),
    trailing(days, i, 30, 'arousal'),
  ]);
  await db.transaction(async (tx) => {
    // Derived data: the whole series is replaced, never the anchors it comes from.
    await tx.query('DELETE FROM mood_days');
    if (rows.length === 0) return;
    const col = (k: number) => rows.map((r) => r[k]);
    await tx.query(
      `INSERT INTO mood_days (day, valence, arousal, anchors, valence7, valence30, arousal7, arousal30)
       SELECT * FROM unnest($1::text[], $2::real[], $3::real[], $4::int[], $5::real[], $6::real[], $7::real[], $8::real[])`,
      [col(0), col(1), col(2), col(3), col(4), col(5), col(6), col(7)],
    );
  });
  return rows.length;
}

/** Daily valence/arousal from the anchors, with 7- and 30-day trends (the series the Diary charts). */
export function moodTrendStep(deps: SleepStepDeps): SleepStep {
  return {
    id: MOOD_TREND,
    dependsOn: [LIGHT_SLEEP],
    async run() {
      return { days: await rebuildMoodDays(deps.db) };
    },
  };
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += dirBytes(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

export function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

async function waitForQuiet(deps: SleepStepDeps, ctx: StepContext): Promise<void> {
  const quiet = deps.quietForMs ?? (() => Infinity);
  const deadline = performance.now() + (deps.snapshotWaitMs ?? DEFAULT_SNAPSHOT_WAIT_MS);
  while (quiet() < SNAPSHOT_QUIET_MS) {
    if (ctx.signal.aborted) return;
    if (performance.now() >= deadline) {
      throw new StepSkipped('you were chatting: the safety copy pauses the database for a moment, so it — and deep sleep after it — waits for a quiet night');
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, SNAPSHOT_QUIET_MS - quiet())));
    await ctx.heartbeat();
  }
}

export function snapshotsDir(dataDir: string): string {
  return path.join(dataDir, 'snapshots');
}

/**
 * A copy of the whole database before deep sleep changes anything (PGlite's own consistent dump, a
 * gzipped tarball that `loadDataDir` opens). The last few are kept, finished nights' before failed
 * ones' (snapshots.ts); a retry of the same day with nothing changed reuses the day's copy. When the
 * disk is nearly full the snapshot is skipped with a warning rather than filling it: deep sleep's
 * changes are all undoable.
 */
export function snapshotStep(deps: SleepStepDeps): SleepStep {
  return {
    id: SNAPSHOT,
    dependsOn: [LIGHT_SLEEP],
    async run(ctx): Promise<Record<string, number>> {
      // On a PostgreSQL server there is no folder to copy: its own backups (pg_dump) apply there.
      if (engineOf(deps.db) === 'postgres') {
        deps.log('info', 'sleep: no snapshot — the data is on a PostgreSQL server, whose own backups apply');
        return { skipped_server_engine: 1 };
      }
      const dir = snapshotsDir(deps.dataDir);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A retry of the same sleep day with nothing changed since its copy keeps that copy (no new one).
      const same = await reusableCopy(ctx.db, dir, ctx.sleepDay, await dataFingerprint(ctx.db));
      if (same) return { reused: 1, copy_of_run: same.runId };
      const dbBytes = dirBytes(databaseDir(deps.dataDir));
      // The dump is compressed, but size it as if it were not, plus room for the night's own writes.
      const needed = dbBytes + 256 * 1024 * 1024;
      const free = (deps.freeBytes ?? freeBytes)(dir);
      if (free < needed) {
        deps.log('warn', `sleep: no snapshot tonight — ${Math.round(free / 2 ** 20)} MB free, about ${Math.round(needed / 2 ** 20)} MB needed`);
        return { skipped_low_disk: 1, free_mb: Math.round(free / 2 ** 20), needed_mb: Math.round(needed / 2 ** 20) };
      }
      await waitForQuiet(deps, ctx);
      const started = performance.now();
      const fingerprint = await dataFingerprint(ctx.db);
      const name = snapshotName(ctx.sleepDay, ctx.runId);
      // The one writer of safety copies (backups/copies.ts): written aside and renamed, so a kill
      // mid-write never leaves a truncated file that looks complete, with its manifest beside it.
      const { bytes } = await writeCopy(deps.db, [dir], name, {
        kind: 'nightly',
        createdAt: deps.now(),
        sleepDay: ctx.sleepDay,
        runId: ctx.runId,
        manifestDir: nightlyManifestDir(dir),
        countsFrom: ctx.db,
        // The pictures too, hard-linked (attachments/, companion/).
        dataDir: deps.dataDir,
      });
      await recordFingerprint(ctx.db, name, fingerprint);
      const kept = await pruneCopies(ctx.db, dir, ctx.runId, deps.keepSnapshots ?? DEFAULT_KEEP_SNAPSHOTS);
      for (const f of fs.readdirSync(dir)) if (f.endsWith('.partial')) fs.rmSync(path.join(dir, f), { force: true });
      return { bytes, kept, ms: Math.round(performance.now() - started), copy_of_run: ctx.runId };
    },
  };
}
