// Restoring the diary and the mood days from Anima's own archive (electron/imports/anima-archive.ts):
// the rows as the export wrote them, put back in bulk inside the importer's one transaction. Diary
// blocks are append-only and keep their ids, days and dates; the sleep run that wrote one is not in
// an archive (the cycle's bookkeeping stays behind), so `run_id` is left empty. A block already here
// (the same id written at the same moment, or the one anchor of its day and conversation, the one
// dream of its day) is left as it is.
import type { Transaction } from '../db/database.js';
import { restoreColumns } from '../db/columns.js';
import { segmentForIndex } from '../memory/segment.js';

type Row = Record<string, unknown>;
/** The importer's transaction (or, for the reads a preview makes, the database). */
type Tx = Pick<Transaction, 'query'>;

const list = (columns: readonly string[]) => columns.map((c) => `r.${c}`).join(', ');

/** For each of these ids held here: whether it is the same block (written at the same moment). */
export async function diaryBlocksHere(tx: Tx, rows: { id: number; created_at: string }[]): Promise<Map<number, boolean>> {
  if (!rows.length) return new Map();
  const r = await tx.query<{ id: number; same: boolean }>(
    `SELECT d.id::float8 AS id, d.created_at = a.created_at AS same
       FROM diary_blocks d JOIN jsonb_to_recordset($1::jsonb) AS a(id bigint, created_at timestamptz) ON a.id = d.id`,
    [JSON.stringify(rows)],
  );
  return new Map(r.rows.map((x) => [Number(x.id), x.same]));
}

export async function diaryIdCeiling(tx: Tx): Promise<number> {
  const r = await tx.query<{ m: number }>('SELECT coalesce(max(id), 0)::float8 AS m FROM diary_blocks');
  return Number(r.rows[0]?.m ?? 0);
}

/** Diary blocks with the ids the importer chose. Returns how many were written. */
export async function restoreDiaryBlocks(tx: Tx, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const prepared = rows.map((row) => ({
    ...row,
    run_id: null,
    fts_segmented: segmentForIndex(`${typeof row.title === 'string' ? row.title : ''} ${String(row.body ?? '')}`),
  }));
  const columns = await restoreColumns(tx, 'diary_blocks', prepared);
  const r = await tx.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO diary_blocks (${columns.join(', ')}) OVERRIDING SYSTEM VALUE
       SELECT ${list(columns)} FROM json_populate_recordset(NULL::diary_blocks, $1::json) AS r
       ON CONFLICT DO NOTHING RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    [JSON.stringify(prepared)],
  );
  await tx.query(`SELECT setval(pg_get_serial_sequence('diary_blocks', 'id'), greatest((SELECT max(id) FROM diary_blocks), 1))`);
  return Number(r.rows[0]?.n ?? 0);
}

/** Mood days not here yet (a day already here keeps its own figures). Returns how many were written. */
export async function restoreMoodDays(tx: Tx, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const columns = await restoreColumns(tx, 'mood_days', rows);
  const r = await tx.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO mood_days (${columns.join(', ')})
       SELECT ${list(columns)} FROM json_populate_recordset(NULL::mood_days, $1::json) AS r
       ON CONFLICT (day) DO NOTHING RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    [JSON.stringify(rows)],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** How many of these mood days are here already. */
export async function moodDaysHere(tx: Tx, days: string[]): Promise<number> {
  if (!days.length) return 0;
  const r = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM mood_days WHERE day = ANY($1::text[])', [days]);
  return Number(r.rows[0]?.n ?? 0);
}
