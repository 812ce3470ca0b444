// What the sleep cycle wrote that a forget takes along. Diary blocks are append-only: `hidden_at` is
// their tombstone, and the readers that feed a model (recall and its vectors, the sleep steps, the
// morning greeting) and the Diary view leave hidden blocks out.
// - A deleted conversation: the anchors and imprints written from it alone are hidden, and shown
//   again on restore. Narratives and dreams tell a whole day and stay.
// - A forgotten memory: the blocks that say the fact again are hidden on behalf of the forget's
//   journal entry (`forgotten_by`, migration 033), and shown again when it is undone.
import type { Database } from '../db/open.js';
import { RESTATES_ANYWHERE, restatesFromSameMessages } from '../memory/restatements.js';
import { segmentForIndex } from '../memory/segment.js';

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
  const near = restatesFromSameMessages(memory.content);
  const r = await tx.query<{ id: number }>(
    `WITH behind AS MATERIALIZED (
        SELECT id, day FROM diary_blocks WHERE cardinality($2::text[]) > 0 AND source_message_ids && $2::text[]),
      candidates AS (
        SELECT b.id, $3::float8 AS needed FROM diary_blocks b
         WHERE b.id IN (SELECT id FROM behind) OR (b.kind = 'dream' AND b.day IN (SELECT day FROM behind))
        UNION ALL
        SELECT b.id, $4::float8 FROM diary_blocks b WHERE b.search_fts @@ plainto_tsquery('english', $6))
      UPDATE diary_blocks b SET hidden_at = coalesce(b.hidden_at, now()), forgotten_by = array_append(coalesce(b.forgotten_by, '{}'), $5::bigint)
       WHERE b.id IN (SELECT c.id FROM candidates c JOIN diary_blocks x ON x.id = c.id
                       WHERE word_similarity($1, coalesce(x.title, '') || ' ' || x.body) >= c.needed)
         AND b.kind <> 'digest' AND (b.hidden_at IS NULL OR b.forgotten_by IS NOT NULL) AND NOT coalesce(b.forgotten_by, '{}') @> ARRAY[$5::bigint]
       RETURNING b.id::float8 AS id`,
    [memory.content, memory.messageIds, near, RESTATES_ANYWHERE, changeId, segmentForIndex(memory.content) ?? memory.content],
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
