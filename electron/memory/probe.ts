// What a save is to the memories already there, decided before it is written (MemoryStore.create and
// the sleep cycle's prepared batches): the same fact as an active memory (update that one), a new
// value for an active memory's slot (supersede it), a fact the person forgot that an automatic writer
// is about to bring back (skip it, quietly), or new. The database finds candidates with index probes;
// the rules in same-fact.ts and same-slot.ts decide.
import type { Transaction } from '../db/database.js';
import { MEMORY_TYPES, type Memory, type MemoryActor, type MemoryType } from '../../shared/api.js';
import { vectorDuplicate, type ProbeVector } from '../embed/duplicates.js';
import { COLUMNS, findMemory, toMemory, type MemoryRow } from './rows.js';
import { compareFacts, differInFact } from './same-fact.js';
import { sameSlot, slotContext } from './same-slot.js';

/**
 * A save is a near-duplicate of an active memory of the same type when the two are identical up to
 * case, whitespace and punctuation (memory_dedupe_key, migration 003), or when same-fact.ts judges a
 * look-alike the same fact. Look-alikes are the memories whose pg_trgm similarity is at least this:
 * low enough to bring in restatements whose letters differ a lot ("doesn't" / "does not", "three" /
 * "3", "named" / "called": 0.55–0.75), since similarity alone decides nothing — "Anna" / "Hanna",
 * "is" / "is not allergic" and "7 am" / "9 am" score 0.8–0.9 and are other facts. bench:memory pairs
 * (dev): 0.5 and 0.6 join every restatement, 0.7 misses 2 of 12; each step down widens the index probe
 * (at 20k memories a save slowed markedly at 0.5), so 0.6.
 */
export const NEAR_DUPLICATE_SIMILARITY = 0.6;
/** Look-alikes judged per save, most similar first (active ones of the save's type and expired ones). */
const LOOK_ALIKES = 30;
/**
 * How much of a slot's context ("the person lives in") a memory must hold (pg_trgm word similarity)
 * to be asked whether the save gives that slot a new value. The slot rule decides; this only finds.
 * CJK has no spaces, so a context's last trigram ("住在 ") never matches: "我住在" holds 3 of 4.
 */
const SLOT_CONTEXT_SIMILARITY = 0.8;
const CJK_SLOT_CONTEXT_SIMILARITY = 0.7;
/** Memories per slot probe, newest first. */
const SLOT_CANDIDATES = 30;
/**
 * A forgotten memory from the same source messages as an automatic save is brought back by it when the
 * two look this alike (trigram similarity) and no number, negation, antonym or name tells them apart:
 * light sleep reading the same message again words the fact a little differently.
 */
export const FORGOTTEN_LOOK_ALIKE = 0.4;

/** Who writes without the person: their saves never bring back what was forgotten (see automatic). */
const AUTOMATIC: ReadonlySet<MemoryActor> = new Set(['light-sleep', 'deep-sleep', 'graph', 'system']);
/**
 * Whose saves supersede an active memory when they give its slot a new value. Not deep sleep's: it
 * consolidates by its own explicit decisions (merge, split, the contradiction round's links), and a
 * merged memory must not supersede one of the memories it is about to link.
 */
const SUPERSEDERS: ReadonlySet<MemoryActor> = new Set(['person', 'companion', 'light-sleep']);
/** Forgets that stay forgotten: the person's own, and the companion's (it forgets when the person asks it to). */
const FORGETTERS: MemoryActor[] = ['person', 'companion'];

export type Match =
  { kind: 'new' } | { kind: 'same'; memory: Memory } | { kind: 'slot'; memory: Memory } | { kind: 'forgotten'; memory: Memory; changeId: number };

export interface ProbeWrite {
  type: MemoryType;
  content: string;
  actor: MemoryActor;
  sourceMessageIds: string[];
  entityNames?: string[];
  keepApart?: boolean;
}

/**
 * Which saves may bring a forgotten memory back: the person's, always (they can add anything again by
 * hand). The sleep cycle's and the graph's never when it is the same fact, or a look-alike from the same
 * messages. The chat model's `remember` only when it comes from other messages: it saves because the
 * person just said it again; re-reading the very message the person's forgotten memory came from is
 * not that.
 */
function guardsForgotten(w: ProbeWrite): 'all' | 'same-messages' | 'none' {
  if (AUTOMATIC.has(w.actor)) return 'all';
  return w.actor === 'companion' ? 'same-messages' : 'none';
}

export async function probe(tx: Transaction, w: ProbeWrite, vector?: ProbeVector | null): Promise<Match> {
  const guard = guardsForgotten(w);
  const near = w.keepApart && guard !== 'all' ? [] : await lookAlikes(tx, w.type, w.content);
  const active = near.filter((row) => row.status === 'active' && row.type === w.type);
  // An active memory saying the same (the person added it again by hand, or brought it back) is
  // updated: that is not bringing back what was forgotten.
  const same = w.keepApart ? null : await activeTwin(tx, w, active, vector);
  if (same) return { kind: 'same', memory: same };
  const forgotten =
    guard === 'none'
      ? null
      : await forgottenTwin(
          tx,
          w,
          guard,
          near.filter((row) => row.status === 'expired'),
        );
  if (forgotten) return forgotten;
  if (w.keepApart || !SUPERSEDERS.has(w.actor)) return { kind: 'new' };
  const slot = active.find((row) => sameSlot(row.content, w.content)) ?? (await slotTwin(tx, w.type, w.content));
  return slot ? { kind: 'slot', memory: toMemory(slot) } : { kind: 'new' };
}

/** The active memory of the type that says the same fact: the same words, a look-alike the same-fact rule joins, or (with a model) the same meaning. */
async function activeTwin(tx: Transaction, w: ProbeWrite, lookAlikes: MemoryRow[], vector?: ProbeVector | null): Promise<Memory | null> {
  // An index probe shaped so the planner cannot wander off to a full scan (no ORDER BY … LIMIT: it
  // tempts the planner into walking the primary key).
  const twins = await tx.query<MemoryRow>(
    `SELECT ${COLUMNS} FROM memories
     WHERE status = 'active' AND type = $1 AND memory_dedupe_key(content) = memory_dedupe_key($2)`,
    [w.type, w.content],
  );
  if (twins.rows.length) return toMemory(twins.rows.reduce((a, b) => (Number(b.id) < Number(a.id) ? b : a)));
  const same = lookAlikes.find((row) => compareFacts(row.content, w.content) === 'same');
  if (same) return toMemory(same);
  // The same thing in other words (embed/duplicates.ts), when the save was embedded — never when a
  // number, a negation, an antonym or a name tells them apart.
  const similar = vector ? await vectorDuplicate(tx, w.type, w.content, vector) : null;
  const found = similar === null ? null : await findMemory(tx, similar);
  return found && found.status === 'active' && !differInFact(found.content, w.content) ? found : null;
}

/**
 * The condition that puts a probe on the trigram index of the active memories of a type (migration
 * 031): the group is an expression no other index holds, so the planner cannot take the status or
 * the dedupe index instead and compute similarity on every row. The type is written into the SQL
 * (a partial index is chosen by the query's own words) and checked against the known types first.
 */
function lookAlikeGroup(type: MemoryType): string {
  if (!MEMORY_TYPES.includes(type)) throw new Error(`Unknown memory type: ${String(type)}`);
  return `memory_look_alike_group(status, type) = '${type}'`;
}
const EXPIRED_GROUP = `memory_look_alike_group(status, type) = '(expired)'`;

/**
 * The memories whose trigram similarity to the text is at least NEAR_DUPLICATE_SIMILARITY, most
 * similar first: active ones of the type (near-duplicates, slots) and expired ones of any type (what
 * was forgotten) — one index probe for both.
 */
async function lookAlikes(tx: Transaction, type: MemoryType, content: string): Promise<MemoryRow[]> {
  // SET LOCAL: the connection is shared, and recall may tune the threshold for its own queries.
  // The planner underrates the trigram index at a high threshold (it chose a scan 10× slower). Two
  // materialised trigram probes, each on the index of its group (migration 031: the active memories
  // of the type, the expired ones), reading their candidates' rows themselves: at 20k memories
  // ~10 ms a save against ~28 ms on one index over every memory, and 290 ms when the probe gave ids
  // only and the planner (no statistics in PGlite) joined them to a scan of every expired memory,
  // computing similarity on each. The text reaches the probe as a sub-select the planner cannot look
  // into: given the constant, it estimated `%` by computing similarity against the column's
  // statistics on every save (median 65 → 43 ms a probe then, the same rows).
  await tx.query(`SET LOCAL pg_trgm.similarity_threshold = ${NEAR_DUPLICATE_SIMILARITY}`);
  await tx.query('SET LOCAL enable_seqscan = off');
  const near = await tx.query<MemoryRow>(
    `WITH candidates AS MATERIALIZED (
       SELECT ${COLUMNS}, similarity(content, $1) AS sim FROM memories WHERE ${lookAlikeGroup(type)} AND content % (SELECT $1::text)
       UNION ALL
       SELECT ${COLUMNS}, similarity(content, $1) AS sim FROM memories WHERE ${EXPIRED_GROUP} AND content % (SELECT $1::text))
     SELECT ${COLUMNS} FROM candidates WHERE sim >= $2
     ORDER BY sim DESC, id LIMIT $3`,
    [content, NEAR_DUPLICATE_SIMILARITY, LOOK_ALIKES],
  );
  await tx.query('SET LOCAL enable_seqscan = on');
  return near.rows;
}

/**
 * The newest active memory of the type whose slot the save gives a new value: found by the words
 * before the value ("the person lives in"), which a memory of that slot holds whatever its value —
 * "lives in Brno" and "lives in Prague" are only ~0.4–0.65 alike as wholes. Only saves that name a slot.
 */
async function slotTwin(tx: Transaction, type: MemoryType, content: string): Promise<MemoryRow | null> {
  const context = slotContext(content);
  if (!context) return null;
  const threshold = /\p{Script=Han}$/u.test(context) ? CJK_SLOT_CONTEXT_SIMILARITY : SLOT_CONTEXT_SIMILARITY;
  await tx.query(`SET LOCAL pg_trgm.word_similarity_threshold = ${threshold}`);
  await tx.query('SET LOCAL enable_seqscan = off');
  // On the index of the type's active memories, reading its candidates' rows itself, as lookAlikes does.
  const rows = await tx.query<MemoryRow>(
    `WITH candidates AS MATERIALIZED (SELECT ${COLUMNS} FROM memories WHERE ${lookAlikeGroup(type)} AND (SELECT $1::text) <% content)
     SELECT ${COLUMNS} FROM candidates ORDER BY id DESC LIMIT $2`,
    [context, SLOT_CANDIDATES],
  );
  await tx.query('SET LOCAL enable_seqscan = on');
  return rows.rows.find((row) => sameSlot(row.content, content)) ?? null;
}

/**
 * The same kind of memory about the same named things from the same messages — deep sleep's profile
 * of an entity, rewritten each night in other words: the one the person forgot, made again.
 */
function sameSubject(old: Memory, w: ProbeWrite): boolean {
  const key = (names: string[]) => [...new Set(names.map((n) => n.trim().toLowerCase()))].sort().join('\n');
  return old.type === w.type && old.entityNames.length > 0 && key(old.entityNames) === key(w.entityNames ?? []);
}

/**
 * A memory the person (or the companion on their word) forgot that this automatic save would bring
 * back: the same fact (any source; from the look-alikes already probed), or a look-alike from the same
 * source messages. Forgotten means expired by a 'forget' that is the memory's latest journal entry (an
 * undo of it brought it back).
 */
async function forgottenTwin(tx: Transaction, w: ProbeWrite, guard: 'all' | 'same-messages', expiredLookAlikes: MemoryRow[]): Promise<Match | null> {
  const candidates: { row: MemoryRow; sameMessages: boolean; sim: number }[] = [];
  if (guard === 'all') {
    for (const row of expiredLookAlikes) if (compareFacts(row.content, w.content) === 'same') candidates.push({ row, sameMessages: false, sim: 1 });
  }
  if (w.sourceMessageIds.length) {
    // Expired memories are few; the status index finds them, the array overlap the same messages.
    const shared = await tx.query<MemoryRow & { sim: number }>(
      `SELECT ${COLUMNS}, similarity(content, $1)::float8 AS sim FROM memories
       WHERE status = 'expired' AND source_message_ids && $2::text[] ORDER BY sim DESC, id LIMIT ${LOOK_ALIKES}`,
      [w.content, w.sourceMessageIds],
    );
    for (const row of shared.rows) {
      if (
        compareFacts(row.content, w.content) === 'same' ||
        (row.sim >= FORGOTTEN_LOOK_ALIKE && !differInFact(row.content, w.content)) ||
        sameSubject(toMemory(row), w)
      ) {
        candidates.push({ row, sameMessages: true, sim: row.sim });
      }
    }
  }
  if (!candidates.length) return null;
  const last = await tx.query<{ memory_id: number; id: number; action: string; actor: MemoryActor }>(
    `SELECT DISTINCT ON (memory_id) memory_id::float8 AS memory_id, id::float8 AS id, action, actor FROM memory_changes
     WHERE memory_id = ANY($1::bigint[]) ORDER BY memory_id, id DESC`,
    [candidates.map((c) => c.row.id)],
  );
  const forgets = new Map(last.rows.filter((r) => r.action === 'forget' && FORGETTERS.includes(r.actor)).map((r) => [Number(r.memory_id), Number(r.id)]));
  const hit = candidates.find((c) => forgets.has(Number(c.row.id)));
  return hit ? { kind: 'forgotten', memory: toMemory(hit.row), changeId: forgets.get(Number(hit.row.id))! } : null;
}
