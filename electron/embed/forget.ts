// Vectors of messages that must not be searched by meaning: a deleted conversation's (made again by
// the backfill if it is restored) and messages switched off the record.
import type { Database } from '../db/open.js';

/** Deletes the vectors of these messages (by seq), every model's; returns how many. */
export async function dropMessageVectors(q: Pick<Database, 'query'>, seqs: number[]): Promise<number> {
  if (!seqs.length) return 0;
  const r = await q.query(`DELETE FROM embeddings WHERE source = 'message' AND source_id = ANY($1::bigint[])`, [seqs]);
  return r.affectedRows ?? 0;
}
