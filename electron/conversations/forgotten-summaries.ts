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
// aside: the newer summary stays, whatever is undone later. The nap shows the model none of the
// messages behind a standing forget, and the summary it writes is measured here against every standing
// forget before it goes live (forgetting/summaries.ts): one that says a forgotten fact anyway is set
// aside at once, on behalf of those forgets.
import type { Database } from '../db/open.js';
import { RESTATES_ANYWHERE, restatesFromSameMessages } from '../memory/restatements.js';
import type { StandingForget } from '../memory/standing-forgets.js';

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
  return setAsideRestating(tx, [{ ...memory, changeId }], null);
}

/**
 * Sets aside the conversation's live rolling summary, just written, when it says one of these
 * forgotten facts again (by the measures of setAsideSummariesRestating), on behalf of every forget it
 * restates: undoing those brings it back. Returns whether it was set aside.
 */
export async function setAsideSummaryIfRestating(tx: Pick<Database, 'query'>, conversationId: string, forgotten: StandingForget[]): Promise<boolean> {
  if (!forgotten.length) return false;
  return (await setAsideRestating(tx, forgotten, conversationId)).length > 0;
}

/** The one measure and move of both: the summaries (of `onlyConversation`, or all) that restate any of `forgotten`. */
async function setAsideRestating(tx: Pick<Database, 'query'>, forgotten: StandingForget[], onlyConversation: string | null): Promise<string[]> {
  const behind = forgotten.flatMap((f) => f.messageIds.map((id) => [f.changeId, id] as const));
  // Summaries are few (only a conversation that outgrew the context window has one) and short, so
  // every one is measured, without an index: 0.2 s a forget at 1,000 summaries of 150 words, 0.6 s at
  // 3,000 (on two busy cores; a trigram index went unused at those sizes). The live one is measured,
  // or else the one set aside (never both: writing a summary drops the one set aside).
  const r = await tx.query<{ id: string }>(
    `WITH forgotten AS MATERIALIZED (
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[]) AS f (content, change_id, near_needed)),
      near AS MATERIALIZED (
        SELECT DISTINCT b.change_id, m.conversation_id AS id
          FROM unnest($4::bigint[], $5::text[]) AS b (change_id, message_id) JOIN messages m ON m.id = b.message_id),
      summaries AS (
        SELECT c.id, CASE WHEN c.rolling_summary <> '' THEN c.rolling_summary ELSE c.rolling_summary_set_aside END AS text,
               coalesce(c.rolling_summary_forgotten_by, '{}') AS forgotten_by
          FROM conversations c
         WHERE (c.rolling_summary <> '' OR c.rolling_summary_set_aside IS NOT NULL) AND ($7::text IS NULL OR c.id = $7::text)),
      restating AS (
        SELECT s.id, array_agg(f.change_id ORDER BY f.change_id) AS change_ids
          FROM summaries s CROSS JOIN forgotten f
         WHERE NOT s.forgotten_by @> ARRAY[f.change_id]
           AND word_similarity(f.content, s.text) >=
               CASE WHEN EXISTS (SELECT 1 FROM near n WHERE n.change_id = f.change_id AND n.id = s.id) THEN f.near_needed ELSE $6::float8 END
         GROUP BY s.id)
      UPDATE conversations c SET
        rolling_summary_set_aside = coalesce(c.rolling_summary_set_aside, c.rolling_summary),
        rolling_summary_set_aside_seq = coalesce(c.rolling_summary_set_aside_seq, c.rolling_summary_seq),
        rolling_summary_set_aside_at = CASE WHEN c.rolling_summary_set_aside IS NULL THEN c.rolling_summary_at ELSE c.rolling_summary_set_aside_at END,
        rolling_summary_forgotten_by = coalesce(c.rolling_summary_forgotten_by, '{}') || r.change_ids,
        rolling_summary = '', rolling_summary_seq = 0, rolling_summary_at = NULL
        FROM restating r
       WHERE c.id = r.id
       RETURNING c.id`,
    [
      forgotten.map((f) => f.content),
      forgotten.map((f) => f.changeId),
      forgotten.map((f) => restatesFromSameMessages(f.content)),
      behind.map(([changeId]) => changeId),
      behind.map(([, id]) => id),
      RESTATES_ANYWHERE,
      onlyConversation,
    ],
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
