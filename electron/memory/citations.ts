// Citations: how a memory earns its place in the resident block. Only `[[anima:ID]]` markers in
// the body of a person's or the companion's message count. Tool results never reach here (the chat
// engine calls recordCitations for stored message bodies only), and a bare "12" or "anima:12" is
// just text — the brackets are what make a citation deliberate.
import type { Database, Transaction } from '../db/database.js';

import { chatMessagesContaining } from '../conversations/conversations.js';

type Queryable = Database | Transaction;

// Up to 15 digits: every id a bigint identity will hand out, and nothing that overflows a double.
const MARKER = /\[\[anima:(\d{1,15})\]\]/g;

/** Distinct memory ids cited in `text`, in the order first cited. */
export function parseCitations(text: string): number[] {
  const ids: number[] = [];
  for (const m of text.matchAll(MARKER)) {
    const id = Number(m[1]);
    if (id > 0 && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * Credits the active memories cited in a stored message: one memory_references row per memory and
 * one more on its reference_count — once per message, however often the message repeats the marker
 * or is recorded again. Ids that do not exist or are not active (forgotten, superseded) are ignored,
 * and so is a memory the reply's requests never showed the model (`shown`, for a reply): a marker
 * it made up, or copied from an example, earns nothing. Returns the ids credited by this call.
 */
export async function recordCitations(db: Database, messageId: string, text: string, shown?: readonly number[]): Promise<number[]> {
  const cited = parseCitations(text).filter((id) => !shown || shown.includes(id));
  if (cited.length === 0) return [];
  return db.transaction(async (tx) => {
    const inserted = await tx.query<{ memory_id: number }>(
      `INSERT INTO memory_references (message_id, memory_id)
       SELECT $1, m.id FROM memories m WHERE m.id = ANY($2::bigint[]) AND m.status = 'active'
       ON CONFLICT DO NOTHING
       RETURNING memory_id`,
      [messageId, cited],
    );
    const credited = inserted.rows.map((r) => Number(r.memory_id));
    if (credited.length > 0) {
      await tx.query('UPDATE memories SET reference_count = reference_count + 1 WHERE id = ANY($1::bigint[])', [credited]);
    }
    return cited.filter((id) => credited.includes(id));
  });
}

export interface RefSyncResult {
  /** Memories whose reference_count changed. */
  memories: number;
  /** (message, memory) credits after the sync. */
  references: number;
}

/**
 * memory-ref-sync: recomputes every reference count from the stored messages, so counts survive a
 * crash between a reply and its bookkeeping, and merges keep their history of use.
 *
 * Which messages count: every stored person/companion message on the chosen line of a chat
 * conversation (an earlier version, a deleted message or a branch's copy does not; choosing another
 * version is followed by this recount); replies still streaming do not, and background
 * conversations (the app's own model runs) never do.
 * A reply that records what its requests showed the model (shown_memory_ids) credits only those.
 *
 * A citation is credited to the active end of the cited memory's chain: a memory that was superseded
 * passes its citations on to what superseded it. A chain that ends in a forgotten memory, or an id
 * that never existed, credits nothing — the same rule as a live citation. (One deliberate difference:
 * a marker naming a memory that was already superseded when written is ignored live but credited to
 * the successor here — the model used that knowledge, which now lives on in the successor.) Superseded memories end at
 * zero (their use now belongs to the successor); forgotten ones keep the count they had, so undoing a
 * forget brings the memory back as it was.
 */
export async function syncReferenceCounts(db: Database): Promise<RefSyncResult> {
  return db.transaction(async (tx) => {
    const activeEnd = await chainEnds(tx);
    const messages = await chatMessagesContaining(tx, '[[anima:');
    const messageIds: string[] = [];
    const memoryIds: number[] = [];
    for (const message of messages) {
      const credited = new Set<number>();
      for (const id of parseCitations(message.content)) {
        if (message.shown && !message.shown.includes(id)) continue;
        const end = activeEnd.get(id);
        if (end !== undefined) credited.add(end);
      }
      for (const memoryId of credited) {
        messageIds.push(message.id);
        memoryIds.push(memoryId);
      }
    }

    await tx.query(`DELETE FROM memory_references r USING memories m WHERE m.id = r.memory_id AND m.status <> 'expired'`);
    await tx.query(
      `INSERT INTO memory_references (message_id, memory_id)
       SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING`,
      [messageIds, memoryIds],
    );
    const changed = await tx.query<{ id: number }>(
      `WITH counts AS (
         SELECT m.id, (SELECT count(*)::int FROM memory_references r WHERE r.memory_id = m.id) AS n
         FROM memories m WHERE m.status <> 'expired')
       UPDATE memories m SET reference_count = c.n FROM counts c
       WHERE m.id = c.id AND m.reference_count <> c.n
       RETURNING m.id`,
    );
    return { memories: changed.rows.length, references: memoryIds.length };
  });
}

/** For every memory id, the active memory at the end of its superseded_by chain (if it ends in one). */
async function chainEnds(db: Queryable): Promise<Map<number, number>> {
  const rows = await db.query<{ id: number; status: string; superseded_by: number | null }>('SELECT id, status, superseded_by FROM memories');
  const byId = new Map(rows.rows.map((r) => [Number(r.id), r]));
  const ends = new Map<number, number>();
  for (const start of byId.keys()) {
    let current = byId.get(start);
    // A chain cannot loop when written by MemoryStore; the step limit guards a hand-edited database.
    for (let steps = 0; current && steps <= byId.size; steps++) {
      if (current.status === 'active') {
        ends.set(start, Number(current.id));
        break;
      }
      if (current.status !== 'superseded' || current.superseded_by === null) break;
      current = byId.get(Number(current.superseded_by));
    }
  }
  return ends;
}
