// What the sleep cycle wrote that a forget takes along. Diary blocks are append-only: `hidden_at` is
// their tombstone, and the readers that feed a model (recall and its vectors, the sleep steps, the
// morning greeting) and the Diary view leave hidden blocks out.
// - A deleted conversation: the anchors and imprints written from it alone are hidden, and shown
//   again on restore. Narratives and dreams tell a whole day and stay.
// - A forgotten memory: the blocks that say the fact again are hidden on behalf of the forget's
//   journal entry (`forgotten_by`, migration 033), and shown again when it is undone. Blocks light
//   sleep writes later are measured the same way against every forget that still stands, in the
//   transaction that writes them.
import type { Database } from '../db/open.js';
import { RESTATES_ANYWHERE, restatesFromSameMessages } from '../memory/restatements.js';
import { segmentForIndex } from '../memory/segment.js';
import type { StandingForget } from '../memory/standing-forgets.js';

/**
 * Hides the anchors and imprints written from this conversation alone: its own (by conversation id,
 * unless their sources name other messages) or any whose source messages are all among `messageIds`.
 * Returns the ids hidden now (already hidden ones are left as they are).
 */
export async function hideBlocksOnlyFrom(db: Pick<Database, 'query'>, conversationId: string, messageIds: string[]): Promise<number[]> {
  const r = await db.query<{ id: number }>(
    `UPDATE diary_blocks SET hidden_at = now()
      WHERE hidden_at IS NULL AND kind IN ('anchor', 'imprint')
        AND ((conversation_id = $1 AND source_message_ids <@ $2::text[])
          OR (cardinality(source_message_ids) > 0 AND source_message_ids <@ $2::text[]))
      RETURNING id::float8 AS id`,
    [conversationId, messageIds],
  );
  return r.rows.map((x) => Number(x.id)).sort((a, b) => a - b);
}

/** Shows these blocks again (a restored conversation's), except those a forget that still stands hides. */
export async function unhideBlocks(db: Pick<Database, 'query'>, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  const r = await db.query(`UPDATE diary_blocks SET hidden_at = NULL WHERE id = ANY($1::bigint[]) AND kind IN ('anchor', 'imprint') AND forgotten_by IS NULL`, [
    ids,
  ]);
  return r.affectedRows ?? 0;
}

/**
 * Hides the diary blocks that say a forgotten memory's text again, on behalf of the forget's journal
 * entry `changeId`, in the forget's transaction: those written from `messageIds` (the messages the
 * memory came from and those that cited it) and the dream of their day (written from them) at
 * restatesFromSameMessages, any other that holds all its words at RESTATES_ANYWHERE (memory/
 * restatements.ts has the measures; the full-text match comes first because word similarity over
 * every block took 1–2 s a forget at 3,000 blocks). A block another forget already hides gets this
 * one too (it stays hidden until both are undone); one hidden otherwise is left as it is; the digest
 * (counts, no facts) is never hidden. Returns the ids of the blocks this forget hides.
 */
export async function hideBlocksRestating(tx: Pick<Database, 'query'>, memory: { content: string; messageIds: string[] }, changeId: number): Promise<number[]> {
  return hideRestating(tx, [{ ...memory, changeId }], null);
}

/**
 * Hides, in the transaction that wrote them, the blocks just written that say one of these forgotten
 * facts again, on behalf of every forget they restate (undoing those shows them), by the measures of
 * hideBlocksRestating. Light sleep shows the model none of the messages behind a standing forget, so a
 * block of its own gives them as its `passedOver` ones: written from that stretch, it is measured as
 * one written from them. Returns the ids hidden.
 */
export async function hideWrittenBlocksRestating(
  tx: Pick<Database, 'query'>,
  written: { id: number; passedOver: string[] }[],
  forgotten: StandingForget[],
): Promise<number[]> {
  if (!written.length || !forgotten.length) return [];
  return hideRestating(tx, forgotten, written);
}

/**
 * The one measure and move of both: the blocks (among `written`, or all) that restate any of
 * `forgotten`. The scope test ($8) folds away at planning, as the parameters are bound before it:
 * everywhere, the full-text index finds each forget's word-for-word candidates; among the blocks just
 * written, they are matched against every forget directly (an index probe per forget took 11 ms each,
 * 11 s at 1,000 forgets; directly, 8 new blocks against 1,000 forgets among 3,000 blocks take 0.1 s,
 * reading the standing forgets 0.04 s more, on two busy cores).
 */
async function hideRestating(
  tx: Pick<Database, 'query'>,
  forgotten: StandingForget[],
  written: { id: number; passedOver: string[] }[] | null,
): Promise<number[]> {
  const r = await tx.query<{ id: number }>(
    `WITH forgotten AS MATERIALIZED (
        SELECT f.change_id, f.content, f.near_needed, plainto_tsquery('english', f.words) AS words,
               ARRAY(SELECT jsonb_array_elements_text(f.message_ids::jsonb)) AS message_ids
          FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::text[], $5::text[]) AS f (change_id, content, near_needed, words, message_ids)),
      written AS MATERIALIZED (
        SELECT w.id, ARRAY(SELECT jsonb_array_elements_text(w.passed_over::jsonb)) AS passed_over
          FROM unnest($6::bigint[], $7::text[]) AS w (id, passed_over)),
      written_text AS MATERIALIZED (
        SELECT b.id, b.search_fts FROM written w JOIN diary_blocks b ON b.id = w.id),
      behind AS MATERIALIZED (
        SELECT f.change_id, b.id, b.day FROM forgotten f JOIN diary_blocks b ON b.source_message_ids && f.message_ids
         WHERE cardinality(f.message_ids) > 0 AND ($8::boolean OR b.id IN (SELECT id FROM written))
        UNION
        SELECT f.change_id, b.id, b.day FROM forgotten f JOIN written w ON w.passed_over && f.message_ids JOIN diary_blocks b ON b.id = w.id),
      candidates AS (
        SELECT change_id, id, true AS near FROM behind
        UNION ALL
        SELECT x.change_id, b.id, true FROM behind x JOIN diary_blocks b ON b.kind = 'dream' AND b.day = x.day
         WHERE $8::boolean OR b.id IN (SELECT id FROM written)
        UNION ALL
        SELECT f.change_id, b.id, false FROM forgotten f JOIN diary_blocks b ON b.search_fts @@ f.words WHERE $8::boolean
        UNION ALL
        SELECT f.change_id, b.id, false FROM forgotten f JOIN written_text b ON b.search_fts @@ f.words),
      restating AS (
        SELECT c.id, array_agg(DISTINCT c.change_id ORDER BY c.change_id) AS change_ids
          FROM candidates c JOIN forgotten f ON f.change_id = c.change_id JOIN diary_blocks x ON x.id = c.id
         WHERE word_similarity(f.content, coalesce(x.title, '') || ' ' || x.body) >= CASE WHEN c.near THEN f.near_needed ELSE $9::float8 END
           AND NOT coalesce(x.forgotten_by, '{}') @> ARRAY[c.change_id]
         GROUP BY c.id)
      UPDATE diary_blocks b SET hidden_at = coalesce(b.hidden_at, now()), forgotten_by = coalesce(b.forgotten_by, '{}') || r.change_ids
        FROM restating r
       WHERE b.id = r.id AND b.kind <> 'digest' AND (b.hidden_at IS NULL OR b.forgotten_by IS NOT NULL)
       RETURNING b.id::float8 AS id`,
    [
      forgotten.map((f) => f.changeId),
      forgotten.map((f) => f.content),
      forgotten.map((f) => restatesFromSameMessages(f.content)),
      forgotten.map((f) => segmentForIndex(f.content) ?? f.content),
      forgotten.map((f) => JSON.stringify(f.messageIds)),
      (written ?? []).map((w) => w.id),
      (written ?? []).map((w) => JSON.stringify(w.passedOver)),
      written === null,
      RESTATES_ANYWHERE,
    ],
  );
  return r.rows.map((x) => Number(x.id)).sort((a, b) => a - b);
}

/**
 * Takes back what these forgets (memory journal ids) hid, in the caller's transaction: a block comes
 * back once no forget that still stands hides it. Returns how many came back.
 */
export async function showBlocksForgottenBy(tx: Pick<Database, 'query'>, changeIds: number[]): Promise<number> {
  if (!changeIds.length) return 0;
  const touched = await tx.query<{ id: number }>(
    `UPDATE diary_blocks SET forgotten_by = (SELECT array_agg(x ORDER BY x) FROM unnest(forgotten_by) x WHERE x <> ALL($1::bigint[]))
      WHERE forgotten_by && $1::bigint[] RETURNING id::float8 AS id`,
    [changeIds],
  );
  if (!touched.rows.length) return 0;
  const r = await tx.query(`UPDATE diary_blocks SET hidden_at = NULL WHERE id = ANY($1::bigint[]) AND forgotten_by IS NULL`, [touched.rows.map((x) => x.id)]);
  return r.affectedRows ?? 0;
}
