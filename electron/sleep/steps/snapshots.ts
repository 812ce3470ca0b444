// The safety copies' bookkeeping: whether the data changed since the day's last copy (a retry of the
// same sleep day then reuses it instead of writing another few megabytes), and which copies to keep —
// the newest copies of nights that finished, never pushed out by the copies of failed retries.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { nightlyManifestDir, removeCopy } from '../../backups/copies.js';
import { SelfLayer } from '../../companion/self-layer.js';
import { Conversations } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import { changeTimes } from '../../memory/reads.js';

/** "2026-12-04-run12.tar.gz" → 12. */
const FILE_NAME = /^(\d{4}-\d{2}-\d{2})-run(\d+)\.tar\.gz$/;

export function snapshotName(sleepDay: string, runId: number): string {
  return `${sleepDay}-run${runId}.tar.gz`;
}

const fingerprintKey = (file: string) => `snapshot:${file}`;

/**
 * A number that changes when anything the person would want back changes: the conversations (count
 * and last change of each), every memory's last change, the diary (blocks written or hidden; the
 * morning digest, a report each run writes, left out) and the self layer. 48 bits of a SHA-256.
 */
export async function dataFingerprint(db: Database): Promise<number> {
  const conversations = new Conversations(db);
  const chats = [...(await conversations.list({ archived: false })), ...(await conversations.list({ archived: true }))]
    .map((c) => `${c.id}:${c.messageCount}:${c.updatedAt}:${c.archived}`)
    .sort();
  const memories = await changeTimes(db);
  const diary = (
    await db.query<{ n: number; last: number | null; hidden: number; hidden_last: string | null }>(
      `SELECT count(*)::int AS n, max(id)::float8 AS last, count(hidden_at)::int AS hidden, max(hidden_at)::text AS hidden_last
         FROM diary_blocks WHERE kind <> 'digest'`,
    )
  ).rows[0]!;
  const self = (await new SelfLayer(db).list()).map((b) => `${b.key}:${b.updatedAt}`);
  const hash = createHash('sha256').update(JSON.stringify({ chats, memories, diary, self })).digest('hex');
  return Number.parseInt(hash.slice(0, 12), 16);
}

/** Records the fingerprint of the data a copy holds (a sleep cursor named after the file). */
export async function recordFingerprint(db: Database, file: string, fingerprint: number): Promise<void> {
  await db.query(`INSERT INTO sleep_cursors (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, [
    fingerprintKey(file),
    fingerprint,
  ]);
}

/**
 * The newest copy of this sleep day that is still on disk and holds exactly the data there is now;
 * null when there is none (or the data changed since).
 */
export async function reusableCopy(db: Database, dir: string, sleepDay: string, fingerprint: number): Promise<{ file: string; runId: number } | null> {
  const rows = (
    await db.query<{ name: string; value: number }>(
      `SELECT name, value::float8 AS value FROM sleep_cursors WHERE name LIKE $1 ORDER BY updated_at DESC, name DESC`,
      [`${fingerprintKey(`${sleepDay}-run`)}%`],
    )
  ).rows;
  for (const r of rows) {
    const file = r.name.slice(fingerprintKey('').length);
    const m = FILE_NAME.exec(file);
    if (!m || m[1] !== sleepDay) continue;
    if (Number(r.value) === fingerprint && fs.existsSync(path.join(dir, file))) return { file, runId: Number(m[2]) };
    // Only the newest copy of the day can hold the data as it is now.
    return null;
  }
  return null;
}

/**
 * Keeps `keep` copies: this run's own, then the newest copies of nights that finished (a copy a
 * finished night reused counts as its), and only with room left the newest of failed or stopped
 * nights. When the night before this one did not finish, this run is a retry: its copy comes on top
 * of the `keep` good ones instead of pushing the oldest out — failed retries never push out the last
 * good copies (and each drops the previous failed one). Copies whose run is unknown (named by hand)
 * count as good. Returns how many are kept.
 */
export async function pruneCopies(db: Database, dir: string, currentRunId: number, keep: number): Promise<number> {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.tar.gz') && !f.startsWith('.'))
    .map((f) => ({ f, t: fs.statSync(path.join(dir, f)).mtimeMs, run: Number(FILE_NAME.exec(f)?.[2] ?? NaN) }))
    .sort((a, b) => b.t - a.t || (a.f < b.f ? 1 : -1));
  const runs = files.filter((x) => Number.isFinite(x.run)).map((x) => x.run);
  const rows = (
    await db.query<{ id: number; status: string; copy_of: number | null }>(
      `SELECT r.id::int AS id, r.status, (s.stats->>'copy_of_run')::int AS copy_of
         FROM sleep_runs r LEFT JOIN sleep_steps s ON s.run_id = r.id AND s.step_id = 'snapshot'
        WHERE r.id = ANY($1::bigint[]) OR (r.status = 'done' AND s.stats ? 'copy_of_run')`,
      [runs],
    )
  ).rows;
  const good = new Set<number>();
  const known = new Set<number>();
  for (const r of rows) {
    known.add(Number(r.id));
    if (r.status === 'done') {
      good.add(Number(r.id));
      if (r.copy_of !== null) good.add(Number(r.copy_of));
    }
  }
  const isGood = (x: (typeof files)[number]) => !Number.isFinite(x.run) || !known.has(x.run) || good.has(x.run);
  const previous = (await db.query<{ status: string }>(`SELECT status FROM sleep_runs WHERE id < $1 ORDER BY id DESC LIMIT 1`, [currentRunId])).rows[0];
  const retry = previous !== undefined && previous.status !== 'done';
  const own = files.filter((x) => x.run === currentRunId);
  const goodOnes = files.filter((x) => x.run !== currentRunId && isGood(x)).slice(0, Math.max(0, retry ? keep : keep - own.length));
  const kept = [...own, ...goodOnes];
  for (const x of files) if (x.run !== currentRunId && !isGood(x) && kept.length < keep) kept.push(x);
  const keepSet = new Set(kept.map((x) => x.f));
  for (const x of files) {
    if (keepSet.has(x.f)) continue;
    // The copy with its manifest and its pictures (hard links: the data folder's own files stay).
    removeCopy(path.join(dir, x.f), nightlyManifestDir(dir));
    await db.query(`DELETE FROM sleep_cursors WHERE name = $1`, [fingerprintKey(x.f)]);
  }
  return kept.length;
}
