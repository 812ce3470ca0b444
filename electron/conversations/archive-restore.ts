// Restoring conversations and messages from Anima's own archive (electron/imports/anima-archive.ts):
// the rows exactly as the export wrote them (anima.json, one JSON object per row, every column but
// the derived ones), put back in bulk — many rows per statement, inside the importer's one transaction.
// Ids are kept (they are UUIDs: the same id is the same conversation); the segmented search text is
// made again here, as for any message written.
import type { Transaction } from '../db/database.js';
import { restoreColumns } from '../db/columns.js';
import { segmentForIndex } from '../memory/segment.js';

type Row = Record<string, unknown>;
/** The importer's transaction (or, for the reads a preview makes, the database). */
type Tx = Pick<Transaction, 'query'>;

const list = (columns: readonly string[]) => columns.map((c) => `r.${c}`).join(', ');

/** Which of these conversation ids are in the data folder already. */
export async function existingConversationIds(tx: Tx, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM conversations WHERE id = ANY($1::text[])', [ids]);
  return new Set(rows.map((r) => r.id));
}

/** Which of these message ids are in the data folder already. */
export async function existingMessageIds(tx: Tx, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM messages WHERE id = ANY($1::text[])', [ids]);
  return new Set(rows.map((r) => r.id));
}

/** Inserts conversation rows; one already here (same id) is left as it is. Returns how many were written. */
export async function restoreConversations(tx: Tx, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const columns = await restoreColumns(tx, 'conversations', rows);
  const r = await tx.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO conversations (${columns.join(', ')})
       SELECT ${list(columns)} FROM json_populate_recordset(NULL::conversations, $1::json) AS r
       ON CONFLICT (id) DO NOTHING RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    [JSON.stringify(rows)],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Inserts message rows in their order. `keepSeq`: the rows keep their seq (a folder with no messages);
 * otherwise each takes the next one, in the same order. `replaced_by` is set by a second statement
 * once every row of the batch list is in (a version names a later row). Returns the seq of each row
 * written, by id.
 */
export async function restoreMessages(tx: Tx, rows: Row[], keepSeq: boolean): Promise<Map<string, number>> {
  const written = new Map<string, number>();
  if (!rows.length) return written;
  const prepared = rows.map((row) => ({ ...row, replaced_by: null, fts_segmented: segmentForIndex(String(row.content ?? '')) }));
  const columns = await restoreColumns(tx, 'messages', prepared, keepSeq ? ['replaced_by'] : ['replaced_by', 'seq']);
  const r = await tx.query<{ id: string; seq: number }>(
    `INSERT INTO messages (${columns.join(', ')})
     SELECT ${list(columns)} FROM json_populate_recordset(NULL::messages, $1::json) WITH ORDINALITY AS r
      ORDER BY r.ordinality
     ON CONFLICT (id) DO NOTHING RETURNING id, seq::float8 AS seq`,
    [JSON.stringify(prepared)],
  );
  for (const row of r.rows) written.set(row.id, Number(row.seq));
  return written;
}

/**
 * Sets where restored conversations' rolling summaries end (the live one's seq and the one a forget set
 * aside), once their messages are in under the seqs they took here.
 */
export async function restoreSummarySeqs(
  tx: Tx,
  rows: { id: string; rolling_summary_seq: number; rolling_summary_set_aside_seq: number | null }[],
): Promise<void> {
  if (!rows.length) return;
  await tx.query(
    `UPDATE conversations c SET rolling_summary_seq = u.rolling_summary_seq, rolling_summary_set_aside_seq = u.rolling_summary_set_aside_seq
       FROM jsonb_to_recordset($1::jsonb) AS u(id text, rolling_summary_seq bigint, rolling_summary_set_aside_seq bigint)
      WHERE c.id = u.id`,
    [JSON.stringify(rows)],
  );
}

/** Sets replaced_by on restored messages (only these rows, only where it is still unset). */
export async function restoreReplacedBy(tx: Tx, pairs: { id: string; replaced_by: string }[]): Promise<void> {
  if (!pairs.length) return;
  await tx.query(
    `UPDATE messages m SET replaced_by = u.replaced_by
       FROM jsonb_to_recordset($1::jsonb) AS u(id text, replaced_by text)
      WHERE m.id = u.id AND m.replaced_by IS NULL`,
    [JSON.stringify(pairs)],
  );
}

/**
 * After the restored messages are in (and their replaced_by set): the tree of versions as the archive
 * had it. An archive with `parent_id` names each parent (written as is); its first messages are set
 * back to none (a message written without a parent follows the line's last: migration 023). An older
 * archive's parents are worked out as the migration did for messages written before it.
 */
export async function restoreParents(tx: Tx, rows: Row[]): Promise<void> {
  if (!rows.length) return;
  if ('parent_id' in rows[0]!) {
    const roots = rows.filter((r) => r.parent_id === null || r.parent_id === undefined).map((r) => String(r.id));
    await tx.query('UPDATE messages SET parent_id = NULL WHERE id = ANY($1::text[]) AND parent_id IS NOT NULL', [roots]);
  } else {
    await tx.query('SELECT link_message_parents($1::text[])', [[...new Set(rows.map((r) => String(r.conversation_id)))]]);
  }
}

/** After rows were written with their own seq: the next message takes a seq past them. */
export async function advanceMessageSeq(tx: Tx): Promise<void> {
  await tx.query(`SELECT setval(pg_get_serial_sequence('messages', 'seq'), greatest((SELECT max(seq) FROM messages), 1))`);
}

/** Whether the data folder holds any message at all (a restore into it may keep the archive's seq). */
export async function anyMessages(tx: Tx): Promise<boolean> {
  const { rows } = await tx.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM messages) AS any');
  return Boolean(rows[0]?.any);
}

/**
 * For a large restore into a folder with no messages: the messages' search indexes (full text and
 * trigram, both GIN) are dropped inside the importer's transaction and built again once every row is
 * in — one build costs a fraction of growing them row by row (measured on 20k messages: 15% less
 * work, and the rebuild is one step instead of a share of every batch). Returns the rebuild; a
 * rollback puts the indexes back as they were.
 */
export async function suspendMessageSearchIndexes(tx: Tx): Promise<() => Promise<void>> {
  const { rows } = await tx.query<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_catalog.pg_indexes
      WHERE schemaname = current_schema() AND tablename = 'messages' AND indexdef LIKE '% USING gin %'`,
  );
  for (const r of rows) await tx.query(`DROP INDEX "${r.name.replace(/"/g, '""')}"`);
  return async () => {
    for (const r of rows) await tx.query(r.def);
  };
}
