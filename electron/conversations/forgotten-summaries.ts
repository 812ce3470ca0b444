// A conversation's rolling summary (written by the overflow nap, carried by every request that leaves
// older turns out) is the model's own retelling of those turns: it can say a fact the person then
// forgets. Forgetting a memory sets aside the summaries that say it again (migration 036), in the
// forget's transaction, on behalf of its journal entry; the undo brings them back.
//
// Set aside, the summary is no longer what `Conversations.rollingSummary` reads, so no request
// carries it and the next overflow nap does not carry on from it: as when a conversation has none,
// chat.ts `noteOverflow` asks for a nap (no summary covers the turns leaving the window), and the
// nap (sleep/nap.ts) summarises every turn from the first through the newest half afresh —
// `saveRollingSummary` takes it, as the live seq went back to 0 — and writing it drops what was set
// aside: the newer summary stays, whatever is undone later.
import type { Database } from '../db/open.js';
import { RESTATES_ANYWHERE, restatesFromSameMessages } from '../memory/restatements.js';

/**
 * Sets aside, on behalf of the forget `changeId`, every rolling summary that says `memory.content`
 * again: the summaries of the conversations `messageIds` (the messages the memory came from and those
 * that cited it) are in at restatesFromSameMessages, any other holding its words nearly word for word
 * at RESTATES_ANYWHERE — the diary's measures (memory/restatements.ts). A summary another forget set
 * aside gets this one too (it stays aside until both are undone). Returns the conversations' ids.
 */
export async function setAsideSummariesRestating(
  tx: Pick<Database, 'query'>,
  memory: { content: string; messageIds: string[] },
  changeId: number,
): Promise<string[]> {
  // Summaries are few (only a conversation that outgrew the context window has one) and short, so
  // every one is measured, without an index: 0.2 s a forget at 1,000 summaries of 150 words, 0.6 s at
  // 3,000 (on two busy cores; a trigram index went unused at those sizes). The live one is measured,
  // or else the one set aside (never both: writing a summary drops the one set aside).
  const r = await tx.query<{ id: string }>(
    `WITH near AS MATERIALIZED (
        SELECT DISTINCT conversation_id AS id FROM messages WHERE cardinality($2::text[]) > 0 AND id = ANY($2::text[])),
      summaries AS (
        SELECT c.id, CASE WHEN c.rolling_summary <> '' THEN c.rolling_summary ELSE c.rolling_summary_set_aside END AS text,
               CASE WHEN c.id IN (SELECT id FROM near) THEN $3::float8 ELSE $4::float8 END AS needed
          FROM conversations c
         WHERE (c.rolling_summary <> '' OR c.rolling_summary_set_aside IS NOT NULL)
           AND NOT coalesce(c.rolling_summary_forgotten_by, '{}') @> ARRAY[$5::bigint])
      UPDATE conversations c SET
        rolling_summary_set_aside = coalesce(c.rolling_summary_set_aside, c.rolling_summary),
        rolling_summary_set_aside_seq = coalesce(c.rolling_summary_set_aside_seq, c.rolling_summary_seq),
        rolling_summary_set_aside_at = CASE WHEN c.rolling_summary_set_aside IS NULL THEN c.rolling_summary_at ELSE c.rolling_summary_set_aside_at END,
        rolling_summary_forgotten_by = array_append(coalesce(c.rolling_summary_forgotten_by, '{}'), $5::bigint),
        rolling_summary = '', rolling_summary_seq = 0, rolling_summary_at = NULL
       WHERE c.id IN (SELECT s.id FROM summaries s WHERE word_similarity($1, s.text) >= s.needed)
       RETURNING c.id`,
    [memory.content, memory.messageIds, restatesFromSameMessages(memory.content), RESTATES_ANYWHERE, changeId],
  );
  return r.rows.map((x) => x.id).sort();
}

/**
 * Takes back what these forgets (memory journal ids) set aside, in the caller's transaction: a summary
 * comes back once no forget that still stands holds it. Returns the ids of the conversations whose
 * summary came back.
 */
export async function bringBackSummariesForgottenBy(tx: Pick<Database, 'query'>, changeIds: number[]): Promise<string[]> {
  if (!changeIds.length) return [];
  const touched = await tx.query<{ id: string }>(
    `UPDATE conversations SET rolling_summary_forgotten_by = (SELECT array_agg(x ORDER BY x) FROM unnest(rolling_summary_forgotten_by) x WHERE x <> ALL($1::bigint[]))
      WHERE rolling_summary_forgotten_by && $1::bigint[] RETURNING id`,
    [changeIds],
  );
  if (!touched.rows.length) return [];
  const r = await tx.query<{ id: string }>(
    `UPDATE conversations SET rolling_summary = rolling_summary_set_aside, rolling_summary_seq = rolling_summary_set_aside_seq,
            rolling_summary_at = rolling_summary_set_aside_at,
            rolling_summary_set_aside = NULL, rolling_summary_set_aside_seq = NULL, rolling_summary_set_aside_at = NULL
      WHERE id = ANY($1::text[]) AND rolling_summary_forgotten_by IS NULL AND rolling_summary_set_aside IS NOT NULL AND rolling_summary = ''
      RETURNING id`,
    [touched.rows.map((x) => x.id)],
  );
  return r.rows.map((x) => x.id).sort();
}
