// The forgets that still stand, for the readers that feed a model from the transcript: the nap leaves
// their messages out of what it shows the background model, and a rolling summary it writes is
// measured against their facts before it goes live (forgetting/summaries.ts).
import type { Database } from '../db/open.js';

export interface StandingForget {
  /** The forget's journal entry: what a text set aside on its behalf waits for. */
  changeId: number;
  /** The forgotten memory's text. */
  content: string;
  /** The messages it came from and those that cited it (as messagesBehind in sources.ts). */
  messageIds: string[];
}

/** An expired memory `m` joined to its latest journal entry `f`, kept only when that entry is its forget. */
const STANDING_FORGET = `JOIN LATERAL (SELECT c.id, c.action FROM memory_changes c WHERE c.memory_id = m.id ORDER BY c.id DESC LIMIT 1) f ON f.action = 'forget'`;

/**
 * Every forgotten memory whose latest journal entry is its forget (an undo of it brought it back), with
 * that entry and the messages behind it. Forgets are few next to memories: the status index finds the
 * expired memories, the journal's (memory_id, id) index their latest entry.
 */
export async function standingForgets(db: Pick<Database, 'query'>): Promise<StandingForget[]> {
  const r = await db.query<{ change_id: number; content: string; message_ids: string[] }>(
    `SELECT f.id::float8 AS change_id, m.content,
            ARRAY(SELECT unnest(m.source_message_ids) UNION SELECT r.message_id FROM memory_references r WHERE r.memory_id = m.id) AS message_ids
       FROM memories m ${STANDING_FORGET}
      WHERE m.status = 'expired'
      ORDER BY f.id`,
  );
  return r.rows.map((x) => ({ changeId: Number(x.change_id), content: x.content, messageIds: [...x.message_ids].sort() }));
}

/** The forget that stands for each of these memories (as standingForgets counts them): memory id → its journal entry. A memory not forgotten has none. */
export async function standingForgetIds(db: Pick<Database, 'query'>, memoryIds: number[]): Promise<Map<number, number>> {
  if (!memoryIds.length) return new Map();
  const r = await db.query<{ memory_id: number; change_id: number }>(
    `SELECT m.id::float8 AS memory_id, f.id::float8 AS change_id
       FROM memories m ${STANDING_FORGET}
      WHERE m.id = ANY($1::bigint[]) AND m.status = 'expired'`,
    [memoryIds],
  );
  return new Map(r.rows.map((x) => [Number(x.memory_id), Number(x.change_id)]));
}
