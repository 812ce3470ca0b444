// What the sleep cycle derived from a fact and still says it: when the person forgets a memory, the
// texts written from the same messages that hold its words again go with it — deep sleep's memories
// (an entity's profile, a merge) here, the diary's blocks in electron/sleep/forget.ts — or the fact
// would reach the model again through them. One measure for both, pg_trgm's word similarity: the
// forgotten text against the best-matching stretch of the other, so a fact told inside a longer
// sentence counts in full.
import type { Queryable } from './rows.js';
import { hasCjk } from './segment.js';

/**
 * How much of a forgotten memory's text a text written from the same messages must hold to say it
 * again. Measured on restatements as the diary and profiles word them — "She told me she is allergic
 * to peanuts, and we planned Lisbon…" for "Mara is allergic to peanuts.": 0.82; "What I remember: Mara
 * is allergic to peanuts.": 1.0; "…works night shifts as a nurse at Riverside hospital" for "…works as
 * a nurse at the Riverside hospital": 0.72 — against texts about other things that share a name or a
 * word: 0.21–0.38 ("not allergic to cats": 0.5). CJK, which pg_trgm reads as whole runs between
 * punctuation, matches less of a restatement ("用户住在上海" inside a longer sentence: 0.43, an
 * unrelated one 0): 0.4.
 */
export const RESTATES_FROM_SAME_MESSAGES = 0.6;
const RESTATES_FROM_SAME_MESSAGES_CJK = 0.4;
/**
 * Without the link of shared messages (a memory the person wrote by hand has none; a fact said in
 * another conversation too): only the fact nearly word for word. A short memory ("Mara likes tea")
 * finds a stretch alike in many texts, and that alone is no evidence.
 */
export const RESTATES_ANYWHERE = 0.9;

/** The word similarity a text from the same messages needs to say `content` again. */
export function restatesFromSameMessages(content: string): number {
  return hasCjk(content) ? RESTATES_FROM_SAME_MESSAGES_CJK : RESTATES_FROM_SAME_MESSAGES;
}

/**
 * Deep sleep's active memories (profiles, merges) written from the messages `memory` came from that
 * say its text again: what forgetting it takes along (MemoryStore.forget, in the same batch).
 */
export async function derivedRestatements(tx: Queryable, memory: { id: number; content: string; sourceMessageIds: string[] }): Promise<number[]> {
  if (!memory.sourceMessageIds.length) return [];
  const r = await tx.query<{ id: number }>(
    `SELECT id::float8 AS id FROM memories
      WHERE status = 'active' AND source = 'deep-sleep' AND id <> $1 AND source_message_ids && $2::text[]
        AND word_similarity($3, content) >= $4
      ORDER BY id`,
    [memory.id, memory.sourceMessageIds, memory.content, restatesFromSameMessages(memory.content)],
  );
  return r.rows.map((x) => Number(x.id));
}
