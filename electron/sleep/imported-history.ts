// Imported history and the sleep cycle. A conversation brought in from another app's export may hold
// years of messages; left unread, the next light sleep would try to read all of it in one night (a
// month of sleep at once, and the night's budget gone on the first days), and a nap would read the
// whole history the first time the person wrote in it. So the importer marks each imported
// conversation as already read by both, in the transaction that writes it: the watermarks move to its
// last message, and only what is said after the import is read, as for any conversation.
//
// The same transaction records the conversation's history (migration 018, `sleep_history`): it ends
// at that last message, and nothing of it is read yet. The catch-up (history.ts, "read my imported
// history" in Settings) reads it later, day by day, and moves `read_seq`; this file owns those rows.
import type { Transaction } from '../db/database.js';
import type { Database } from '../db/open.js';
import { NAP } from './nap.js';
import { LIGHT_SLEEP } from './steps/light-sleep.js';

/** The steps that read chat messages past a watermark: an imported conversation is marked read by each. */
export const STEPS_THAT_READ_MESSAGES = [LIGHT_SLEEP, NAP] as const;

type Query = Pick<Transaction | Database, 'query'>;

/**
 * Marks a conversation's messages through `lastSeq` as already read by light sleep and the nap, and
 * as imported history the catch-up has still to read. Takes the importer's transaction, so a
 * conversation is never stored without its marks. A mark never moves back (a grown conversation
 * imported again moves them on to its new last message).
 */
export async function markImportedHistoryRead(tx: Query, conversationId: string, lastSeq: number): Promise<void> {
  if (!(lastSeq > 0)) return;
  await tx.query(
    `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq)
     SELECT s, $2, $3 FROM unnest($1::text[]) AS s
     ON CONFLICT (step_id, conversation_id) DO UPDATE
       SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
    [[...STEPS_THAT_READ_MESSAGES], conversationId, lastSeq],
  );
  await tx.query(
    `INSERT INTO sleep_history (conversation_id, through_seq) VALUES ($1, $2)
     ON CONFLICT (conversation_id) DO UPDATE
       SET through_seq = greatest(sleep_history.through_seq, EXCLUDED.through_seq), updated_at = now()`,
    [conversationId, lastSeq],
  );
}

/** What of one conversation is imported history: messages after `read` up to `through` (seqs). */
export interface HistoryRange {
  read: number;
  through: number;
}

/** Every imported conversation with history still unread: conversation id → its range. */
export async function unreadHistory(db: Query): Promise<Map<string, HistoryRange>> {
  const rows = (
    await db.query<{ conversation_id: string; read_seq: number; through_seq: number }>(
      `SELECT conversation_id, read_seq::float8 AS read_seq, through_seq::float8 AS through_seq
         FROM sleep_history WHERE read_seq < through_seq`,
    )
  ).rows;
  return new Map(rows.map((r) => [r.conversation_id, { read: Number(r.read_seq), through: Number(r.through_seq) }]));
}

/** Every imported conversation's range, read or not (the whole history, for "days read of total"). */
export async function allHistory(db: Query): Promise<Map<string, HistoryRange>> {
  const rows = (
    await db.query<{ conversation_id: string; read_seq: number; through_seq: number }>(
      `SELECT conversation_id, read_seq::float8 AS read_seq, through_seq::float8 AS through_seq FROM sleep_history`,
    )
  ).rows;
  return new Map(rows.map((r) => [r.conversation_id, { read: Number(r.read_seq), through: Number(r.through_seq) }]));
}

/** The catch-up read these conversations through these seqs (in the transaction that writes what it read). Never moves back. */
export async function advanceHistory(tx: Query, last: Map<string, number>): Promise<void> {
  if (!last.size) return;
  await tx.query(
    `UPDATE sleep_history h SET read_seq = least(h.through_seq, greatest(h.read_seq, t.s)), updated_at = now()
       FROM unnest($1::text[], $2::bigint[]) AS t (c, s) WHERE h.conversation_id = t.c`,
    [[...last.keys()], [...last.values()]],
  );
}

export type HistoryState = 'reading' | 'paused';

export interface HistoryStateRow {
  state: HistoryState;
  startedAt: Date;
  error: string | null;
}

/** Whether the person asked for the catch-up (and whether it is paused); null when not, or finished. */
export async function historyState(db: Query): Promise<HistoryStateRow | null> {
  const row = (await db.query<{ state: HistoryState; started_at: Date; error: string | null }>(`SELECT state, started_at, error FROM sleep_history_state`))
    .rows[0];
  return row ? { state: row.state, startedAt: row.started_at, error: row.error } : null;
}

/** Sets the catch-up's state (keeps when it began); null forgets it (finished). */
export async function setHistoryState(db: Query, state: HistoryState | null): Promise<void> {
  if (state === null) {
    await db.query(`DELETE FROM sleep_history_state`);
    return;
  }
  await db.query(
    `INSERT INTO sleep_history_state (one, state) VALUES (true, $1)
     ON CONFLICT (one) DO UPDATE SET state = EXCLUDED.state, updated_at = now(), error = CASE WHEN EXCLUDED.state = 'reading' THEN NULL ELSE sleep_history_state.error END`,
    [state],
  );
}

/** Why the last pass stopped early (null: it went well). */
export async function setHistoryError(db: Query, error: string | null): Promise<void> {
  await db.query(`UPDATE sleep_history_state SET error = $1, updated_at = now()`, [error]);
}
