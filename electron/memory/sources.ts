// What the memory room answers about memories' sources, for deleting a conversation: which active
// memories came from those messages alone (they go with it), and the citation rows that name its
// messages (they go when its messages are purged); and, for forgetting a memory "…and what it came
// from", the messages behind one memory.
import type { Database } from '../db/open.js';

/**
 * Active memories whose source messages are all among `messageIds` (and that have any): what was
 * learned from those messages alone. A memory that also came from other messages stays.
 */
export async function memoriesOnlyFrom(db: Pick<Database, 'query'>, messageIds: string[]): Promise<number[]> {
  if (!messageIds.length) return [];
  const r = await db.query<{ id: number }>(
    `SELECT id::float8 AS id FROM memories
      WHERE status = 'active' AND cardinality(source_message_ids) > 0 AND source_message_ids <@ $1::text[] ORDER BY id`,
    [messageIds],
  );
  return r.rows.map((x) => Number(x.id));
}

/** Removes the citation rows of these messages (before the messages themselves are purged); returns how many. */
export async function dropReferencesOf(q: Pick<Database, 'query'>, messageIds: string[]): Promise<number> {
  if (!messageIds.length) return 0;
  const r = await q.query('DELETE FROM memory_references WHERE message_id = ANY($1::text[])', [messageIds]);
  return r.affectedRows ?? 0;
}

/**
 * The messages a memory came from and the ones that cited it (`[[anima:ID]]` in a reply): every
 * message that says the fact, in id order. Ids only — some may have been purged since.
 */
export async function messagesBehind(db: Pick<Database, 'query'>, memoryId: number): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT DISTINCT x.id FROM (
        SELECT unnest(source_message_ids) AS id FROM memories WHERE id = $1
        UNION SELECT message_id FROM memory_references WHERE memory_id = $1) x
      ORDER BY x.id`,
    [memoryId],
  );
  return r.rows.map((x) => x.id);
}
