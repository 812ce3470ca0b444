// Restoring memories, their journal and their citations from Anima's own archive
// (electron/imports/anima-archive.ts): the rows as the export wrote them, put back in bulk inside the
// importer's one transaction. The importer has already chosen each row's id (the archive's own, or a
// new one where that id holds another memory here) and rewritten the references to match; this room
// writes them, makes the segmented search text again, and moves the id counters past them.
import type { Transaction } from '../db/database.js';
import { restoreColumns } from '../db/columns.js';
import { segmentForIndex } from './segment.js';

type Row = Record<string, unknown>;
/** The importer's transaction (or, for the reads a preview makes, the database). */
type Tx = Pick<Transaction, 'query'>;

const list = (columns: readonly string[]) => columns.map((c) => `r.${c}`).join(', ');

/** Runs `sql(columns)` (an INSERT of the rows in $1) and says how many rows it wrote. */
async function count(tx: Tx, table: string, sql: (columns: string[]) => string, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const columns = await restoreColumns(tx, table, rows);
  const r = await tx.query<{ n: number }>(`WITH ins AS (${sql(columns)} RETURNING 1) SELECT count(*)::int AS n FROM ins`, [JSON.stringify(rows)]);
  return Number(r.rows[0]?.n ?? 0);
}

/** For each of these ids held here: whether it is the same memory (created at the same moment). */
export async function memoriesHere(tx: Tx, rows: { id: number; created_at: string }[]): Promise<Map<number, boolean>> {
  if (!rows.length) return new Map();
  const r = await tx.query<{ id: number; same: boolean }>(
    `SELECT m.id::float8 AS id, m.created_at = a.created_at AS same
       FROM memories m JOIN jsonb_to_recordset($1::jsonb) AS a(id bigint, created_at timestamptz) ON a.id = m.id`,
    [JSON.stringify(rows)],
  );
  return new Map(r.rows.map((x) => [Number(x.id), x.same]));
}

/** Ids of journal entries held here. */
export async function memoryChangeIdsHere(tx: Tx, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const r = await tx.query<{ id: number }>('SELECT id::float8 AS id FROM memory_changes WHERE id = ANY($1::bigint[])', [ids]);
  return new Set(r.rows.map((x) => Number(x.id)));
}

/** The largest memory and journal ids here (new ids are taken past them). */
export async function memoryIdCeilings(tx: Tx): Promise<{ memories: number; changes: number }> {
  const r = await tx.query<{ m: number; c: number }>(
    'SELECT coalesce((SELECT max(id) FROM memories), 0)::float8 AS m, coalesce((SELECT max(id) FROM memory_changes), 0)::float8 AS c',
  );
  return { memories: Number(r.rows[0]?.m ?? 0), changes: Number(r.rows[0]?.c ?? 0) };
}

/** Memories with their ids; `superseded_by` comes after (restoreSupersededBy), once every row is in. */
export function restoreMemories(tx: Tx, rows: Row[]): Promise<number> {
  const prepared = rows.map((row) => ({ ...row, superseded_by: null, fts_segmented: segmentForIndex(String(row.content ?? '')) }));
  return count(
    tx,
    'memories',
    (c) => `INSERT INTO memories (${c.join(', ')})
     SELECT ${list(c)} FROM json_populate_recordset(NULL::memories, $1::json) AS r ON CONFLICT (id) DO NOTHING`,
    prepared,
  );
}

export async function restoreSupersededBy(tx: Tx, pairs: { id: number; superseded_by: number }[]): Promise<void> {
  if (!pairs.length) return;
  await tx.query(
    `UPDATE memories m SET superseded_by = u.superseded_by FROM jsonb_to_recordset($1::jsonb) AS u(id bigint, superseded_by bigint)
      WHERE m.id = u.id AND m.superseded_by IS NULL`,
    [JSON.stringify(pairs)],
  );
}

/** Journal entries with their ids; `undone_by` comes after (restoreUndoneBy). */
export function restoreMemoryChanges(tx: Tx, rows: Row[]): Promise<number> {
  return count(
    tx,
    'memory_changes',
    (c) => `INSERT INTO memory_changes (${c.join(', ')}) OVERRIDING SYSTEM VALUE
     SELECT ${list(c)} FROM json_populate_recordset(NULL::memory_changes, $1::json) AS r ON CONFLICT (id) DO NOTHING`,
    rows.map((row) => ({ ...row, undone_by: null })),
  );
}

export async function restoreUndoneBy(tx: Tx, pairs: { id: number; undone_by: number }[]): Promise<void> {
  if (!pairs.length) return;
  await tx.query(
    `UPDATE memory_changes c SET undone_by = u.undone_by FROM jsonb_to_recordset($1::jsonb) AS u(id bigint, undone_by bigint)
      WHERE c.id = u.id AND c.undone_by IS NULL`,
    [JSON.stringify(pairs)],
  );
}

/** Citations (the importer passes only those whose message is here); one already recorded is left. */
export function restoreMemoryReferences(tx: Tx, rows: Row[]): Promise<number> {
  return count(
    tx,
    'memory_references',
    (c) => `INSERT INTO memory_references (${c.join(', ')})
     SELECT ${list(c)} FROM json_populate_recordset(NULL::memory_references, $1::json) AS r ON CONFLICT DO NOTHING`,
    rows,
  );
}

/** The next memory and journal entry take ids past the restored ones. */
export async function advanceMemoryIds(tx: Tx): Promise<void> {
  await tx.query(`SELECT setval(pg_get_serial_sequence('memories', 'id'), greatest((SELECT max(id) FROM memories), 1))`);
  await tx.query(`SELECT setval(pg_get_serial_sequence('memory_changes', 'id'), greatest((SELECT max(id) FROM memory_changes), 1))`);
}
