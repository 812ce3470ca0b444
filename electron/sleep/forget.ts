// What the sleep cycle wrote from a deleted conversation alone: its anchors and imprints are hidden
// (diary blocks are append-only; `hidden_at` is their tombstone) and shown again on restore.
// Narratives and dreams tell a whole day and stay.
import type { Database } from '../db/open.js';

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

/** Shows these blocks again (a restored conversation's). */
export async function unhideBlocks(db: Pick<Database, 'query'>, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  const r = await db.query(`UPDATE diary_blocks SET hidden_at = NULL WHERE id = ANY($1::bigint[]) AND kind IN ('anchor', 'imprint')`, [ids]);
  return r.affectedRows ?? 0;
}
