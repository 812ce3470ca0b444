// The graph's part in deleting a conversation: which of its messages have mentions (recordMentions
// with no text takes them out, counts and co-mention edges with them), and, when its messages are
// purged, the rows that still name them.
import type { Database } from '../db/open.js';

/** The messages among `ids` that have entity mentions. */
export async function messagesWithMentions(db: Pick<Database, 'query'>, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const r = await db.query<{ id: string }>('SELECT DISTINCT message_id AS id FROM entity_mentions WHERE message_id = ANY($1::text[]) ORDER BY 1', [ids]);
  return r.rows.map((x) => x.id);
}

/** Removes the scan rows (and any mention a late queue item wrote) of messages about to be purged. */
export async function dropMessageRows(q: Pick<Database, 'query'>, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query('DELETE FROM entity_mentions WHERE message_id = ANY($1::text[])', [ids]);
  await q.query('DELETE FROM entity_scans WHERE message_id = ANY($1::text[])', [ids]);
}
