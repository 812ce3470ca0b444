// Restoring the entity graph from Anima's own archive (electron/imports/anima-archive.ts): entities,
// their aliases and their edges (co-mentions and typed relations with valid time), as the export
// wrote them, in bulk inside the importer's one transaction. The importer has chosen each entity's id
// (the archive's, the one already here by the same name and kind, or a new one) and rewritten the
// aliases and edges to match. Mention rows are not in an archive: the indexer finds them again.
import type { Transaction } from '../db/database.js';
import { restoreColumns } from '../db/columns.js';

type Row = Record<string, unknown>;
/** The importer's transaction (or, for the reads a preview makes, the database). */
type Tx = Pick<Transaction, 'query'>;

const list = (columns: readonly string[]) => columns.map((c) => `r.${c}`).join(', ');

/** What is here to match archive entities against: every entity's id, kind, name key, status and creation moment. */
export async function entitiesHere(tx: Tx): Promise<{ id: number; kind: string; name_key: string; status: string; created_at: string }[]> {
  const r = await tx.query<{ id: number; kind: string; name_key: string; status: string; created_at: string }>(
    `SELECT id::float8 AS id, kind, name_key, status, to_json(created_at) #>> '{}' AS created_at FROM entities`,
  );
  return r.rows.map((x) => ({ ...x, id: Number(x.id) }));
}

/** For each of these edge ids held here: whether it is the same edge (created at the same moment). */
export async function edgesHere(tx: Tx, rows: { id: number; created_at: string }[]): Promise<Map<number, boolean>> {
  if (!rows.length) return new Map();
  const r = await tx.query<{ id: number; same: boolean }>(
    `SELECT e.id::float8 AS id, e.created_at = a.created_at AS same
       FROM entity_edges e JOIN jsonb_to_recordset($1::jsonb) AS a(id bigint, created_at timestamptz) ON a.id = e.id`,
    [JSON.stringify(rows)],
  );
  return new Map(r.rows.map((x) => [Number(x.id), x.same]));
}

export async function edgeIdCeiling(tx: Tx): Promise<number> {
  const r = await tx.query<{ m: number }>('SELECT coalesce(max(id), 0)::float8 AS m FROM entity_edges');
  return Number(r.rows[0]?.m ?? 0);
}

/** Runs `sql(columns)` (an INSERT of the rows in $1) and says how many rows it wrote. */
async function insertCount(tx: Tx, table: string, sql: (columns: string[]) => string, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const columns = await restoreColumns(tx, table, rows);
  const r = await tx.query<{ n: number }>(`WITH ins AS (${sql(columns)} RETURNING 1) SELECT count(*)::int AS n FROM ins`, [JSON.stringify(rows)]);
  return Number(r.rows[0]?.n ?? 0);
}

/** Entities, all in one statement (a merged one names the entity it went into, checked at the statement's end). */
export async function restoreEntities(tx: Tx, rows: Row[]): Promise<number> {
  const n = await insertCount(
    tx,
    'entities',
    (c) => `INSERT INTO entities (${c.join(', ')})
     SELECT ${list(c)} FROM json_populate_recordset(NULL::entities, $1::json) AS r ON CONFLICT DO NOTHING`,
    rows,
  );
  await tx.query(`SELECT setval(pg_get_serial_sequence('entities', 'id'), greatest((SELECT max(id) FROM entities), 2))`);
  return n;
}

/**
 * The companion's and the person's own nodes (one of each in every folder) take the archive's name,
 * dates and counts — only in a folder with no graph yet, where they are still as the migration made them.
 */
export async function restoreFixedEntities(tx: Tx, rows: Row[]): Promise<void> {
  const fixed = rows.filter((r) => r.kind === 'self' || r.kind === 'user');
  if (!fixed.length) return;
  await tx.query(
    `UPDATE entities e SET name = r.name, name_key = r.name_key, status = r.status, first_seen = r.first_seen, last_seen = r.last_seen,
            mention_count = r.mention_count, created_at = r.created_at, updated_at = r.updated_at, profile_memory_id = r.profile_memory_id
       FROM json_populate_recordset(NULL::entities, $1::json) AS r
      WHERE e.kind = r.kind AND r.status <> 'merged'`,
    [JSON.stringify(fixed)],
  );
}

export function restoreEntityAliases(tx: Tx, rows: Row[]): Promise<number> {
  return insertCount(
    tx,
    'entity_aliases',
    (c) => `INSERT INTO entity_aliases (${c.join(', ')})
     SELECT ${list(c)} FROM json_populate_recordset(NULL::entity_aliases, $1::json) AS r ON CONFLICT DO NOTHING`,
    rows,
  );
}

export async function restoreEntityEdges(tx: Tx, rows: Row[]): Promise<number> {
  const n = await insertCount(
    tx,
    'entity_edges',
    (c) => `INSERT INTO entity_edges (${c.join(', ')}) OVERRIDING SYSTEM VALUE
     SELECT ${list(c)} FROM json_populate_recordset(NULL::entity_edges, $1::json) AS r ON CONFLICT DO NOTHING`,
    rows,
  );
  await tx.query(`SELECT setval(pg_get_serial_sequence('entity_edges', 'id'), greatest((SELECT max(id) FROM entity_edges), 1))`);
  return n;
}
