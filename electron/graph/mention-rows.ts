// Mentions: which entities each message and memory names (entity_mentions), what was read
// (entity_scans), and what derives from them — each entity's mention count and first/last seen, and
// the co-mention edges, whose weight counts the texts that name both ends.
import type { Transaction } from '../db/database.js';
import { ApiError, type EntityKind } from '../../shared/api.js';
import { findSecret } from '../memory/secret-filter.js';
import { checkId, invalid } from './checks.js';
import type { GraphContext, Log, Queryable } from './context.js';
import { detectMentionsAsync, isRefusedName, type MentionKind } from './mentions.js';
import { rowsAsJson } from './rows.js';
import { cleanName } from './names.js';
import { AMBIGUOUS_SIMILARITY, kindOfName, probeableKeys, resolveKeysWith, type ExactRow, type Resolution, type SimilarRow } from './resolution.js';

/** More names than this in one text are a list or a pasted document; the rest are not recorded. */
export const MAX_NAMES_PER_SOURCE = 50;

export interface RecordInput {
  messageId?: string;
  memoryId?: number;
  text: string;
  /** Names given with the text (memories.entity_names), with or without a kind. */
  names?: (string | { name: string; kind?: MentionKind })[];
  /** When it was said or learned; defaults to the message's or memory's created_at. */
  at?: Date;
  /** Who wrote the message: the person's own words ("I'm Marek") can name the person. */
  role?: 'user' | 'assistant';
}

export interface RecordedMention {
  entityId: number;
  surface: string;
  kind: EntityKind;
  origin: 'detected' | 'given';
  created: boolean;
}

/** One co-mention edge a merge folded into keep's, as its journal entry keeps it. */
export interface FoldedCoMention {
  other: number;
  weight: number;
  /** Texts that named keep, the merged entity and `other` together: counted once after the merge. */
  overlap: number;
}

/** Every unordered pair of a sorted id list, as [smaller, larger]. */
function pairsOf(ids: number[]): [number, number][] {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let i = 0; i < sorted.length; i++) for (let j = i + 1; j < sorted.length; j++) out.push([sorted[i]!, sorted[j]!]);
  return out;
}

const pairKey = ([a, b]: [number, number]) => `${a}:${b}`;

/**
 * Records the entities a message or memory mentions: names detected in `text` and names given
 * with it, each resolved to an entity (created when new), with mention rows, counts, first/last
 * seen and co-mention edge weights — in one transaction. Recording the same source again brings
 * it up to date (a memory that was edited): names no longer there lose their mention, and their
 * co-mention weights go down by one. Detection runs before the transaction opens.
 */
export async function recordMentions(ctx: GraphContext, input: RecordInput): Promise<RecordedMention[]> {
  return (await recordMentionsBatch(ctx, [input]))[0]!;
}

type Wanted = { name: string; key: string; kind: EntityKind; origin: 'detected' | 'given'; start?: number; end?: number; low?: boolean };

interface Prepared {
  column: 'message_id' | 'memory_id';
  sourceId: string | number;
  at: Date;
  wanted: Wanted[];
}

/**
 * recordMentions for many sources in one transaction, with a fixed number of statements whatever
 * the batch holds (the indexer's backfill and a long import record 100 texts at a time): one read of
 * what the sources already name, one resolution of every new name, one insert each for the new
 * entities, the mention rows and the scans, one update of the counts and one upsert of every
 * co-mention pair, weights summed over the batch. A name new to the graph that several texts of
 * the batch share becomes one entity. Returns each input's mentions, in input order.
 */
export async function recordMentionsBatch(ctx: GraphContext, inputs: RecordInput[]): Promise<RecordedMention[][]> {
  if (!inputs.length) return [];
  const prepared: Prepared[] = [];
  for (const input of inputs) {
    const hasMessage = input.messageId !== undefined;
    const hasMemory = input.memoryId !== undefined;
    if (hasMessage === hasMemory) invalid('messageId', 'Record mentions for a message or for a memory: exactly one of messageId and memoryId.');
    if (hasMemory) checkId(input.memoryId, 'memoryId');
    if (typeof input.text !== 'string') invalid('text', 'text must be a string.');
    const wanted = await namesIn(ctx.log, input.text, input.names ?? []);
    // The source's time, from the room that owns it (messages and memories are never deleted);
    // a caller that read the row already (the indexer) passes it.
    const sourceAt =
      input.at ??
      (hasMessage
        ? (await ctx.sources.conversations.findMessage(input.messageId!))?.createdAt
        : (await ctx.sources.memories.getMany([input.memoryId!]))[0]?.createdAt);
    if (sourceAt === undefined)
      throw new ApiError('not_found', hasMessage ? `There is no message ${input.messageId}.` : `There is no memory ${input.memoryId}.`);
    prepared.push({
      column: hasMessage ? 'message_id' : 'memory_id',
      sourceId: hasMessage ? input.messageId! : input.memoryId!,
      at: new Date(sourceAt),
      wanted,
    });
  }
  let touched = new Set<number>();
  const recorded = await ctx.db.transaction(async (tx) => {
    const messageIds = prepared.filter((p) => p.column === 'message_id').map((p) => String(p.sourceId));
    const memoryIds = prepared.filter((p) => p.column === 'memory_id').map((p) => Number(p.sourceId));
    // One read (migration 032's graph_mentions_read): what the sources already name, what every
    // name means by its key or an alias, and the trigram probe of the names nothing matched exactly:
    // each round trip to the database costs more than the lookups in it. Texts that name nothing
    // (most chat turns) are also marked read here when they never named anything either, and need
    // no second statement.
    const allKeys = [...new Set(prepared.flatMap((p) => p.wanted.map((w) => w.key)))];
    const scanOnly = allKeys.length === 0;
    const read = (
      await tx.query<{ read: { existing: { id: number; entity_id: number; surface_key: string; src: string }[]; exact: ExactRow[]; similar: SimilarRow[] } }>(
        'SELECT graph_mentions_read($1::text[], $2::bigint[], $3::text[], $4::text[], $5::real) AS read',
        [messageIds, memoryIds, allKeys, probeableKeys(allKeys), AMBIGUOUS_SIMILARITY],
      )
    ).rows[0]!.read;
    // Nothing named, before or now: the read marked the texts read.
    if (scanOnly && !read.existing.length) return prepared.map(() => []);
    const existingRows = read.existing;
    const srcKey = (p: Prepared) => (p.column === 'message_id' ? String(p.sourceId) : `memory:${p.sourceId}`);
    const existingBySource = new Map<string, typeof existingRows>();
    for (const r of existingRows) {
      const list = existingBySource.get(r.src) ?? [];
      list.push(r);
      existingBySource.set(r.src, list);
    }

    // A name already recorded for a source keeps its entity (it may have been merged since).
    const fresh = new Map<string, Wanted>();
    for (const p of prepared) {
      const kept = new Set((existingBySource.get(srcKey(p)) ?? []).map((r) => r.surface_key));
      for (const w of p.wanted) if (!kept.has(w.key) && !fresh.has(w.key)) fresh.set(w.key, w);
    }
    const resolved = await resolveKeysWith(tx, [...fresh.values()], read.exact, read.similar);
    // A low-confidence name (a lone unknown word at a sentence start) counts when the graph has the
    // name already (its key or an alias), or from its second text on.
    // (A name some text of the batch gives with confidence is made by that text: not low here.)
    const confidentKeys = new Set<string>();
    for (const p of prepared) for (const w of p.wanted) if (!w.low) confidentKeys.add(w.key);
    const lowKeys = new Set<string>();
    for (const p of prepared) for (const w of p.wanted) if (w.low && fresh.has(w.key) && !confidentKeys.has(w.key)) lowKeys.add(w.key);
    if (lowKeys.size) {
      const seen = sightingsOf(ctx);
      const accepted = new Set<string>();
      for (const key of lowKeys) {
        const r = resolved.get(key)!;
        if (r.via === 'name' || r.via === 'alias') accepted.add(key);
      }
      for (const p of prepared) {
        for (const w of p.wanted) {
          if (!w.low || !lowKeys.has(w.key) || accepted.has(w.key)) continue;
          const n = (seen.get(w.key) ?? 0) + 1;
          seen.delete(w.key);
          seen.set(w.key, n);
          if (n >= LOW_CONFIDENCE_TEXTS) accepted.add(w.key);
        }
      }
      while (seen.size > MAX_SIGHTINGS) seen.delete(seen.keys().next().value!);
      for (const p of prepared) p.wanted = p.wanted.filter((w) => !w.low || !lowKeys.has(w.key) || accepted.has(w.key));
      for (const key of lowKeys) if (!accepted.has(key)) fresh.delete(key);
    }
    // Names nothing matched: one entity per key for the whole batch, made by the write below. Until
    // then each has a stand-in id, -1, -2…, in `toCreate` order.
    const toCreate = [...fresh.values()].filter((w) => resolved.get(w.key)!.entityId === null);
    const idOfKey = new Map<string, number>();
    for (const [key, r] of resolved) if (r.entityId !== null) idOfKey.set(key, r.entityId);
    toCreate.forEach((w, i) => idOfKey.set(w.key, -(i + 1)));
    const createdSet = new Set(toCreate.map((_, i) => -(i + 1)));

    const results: RecordedMention[][] = [];
    const rows = { entity: [] as number[], message: [] as (string | null)[], memory: [] as (number | null)[], surface: [] as string[], key: [] as string[] };
    const spans = { start: [] as (number | null)[], end: [] as (number | null)[], origin: [] as string[], at: [] as Date[] };
    const goneIds: number[] = [];
    const added = new Map<number, { n: number; first: Date; last: Date }>();
    const removedEntities = new Set<number>();
    const pairDelta = new Map<string, number>();
    const creditedCreation = new Set<number>();
    for (const p of prepared) {
      const existing = existingBySource.get(srcKey(p)) ?? [];
      const before = new Set(existing.map((r) => Number(r.entity_id)));
      const kept = new Map(existing.map((r) => [r.surface_key, Number(r.entity_id)]));
      const wantedKeys = new Set(p.wanted.map((w) => w.key));
      const result: RecordedMention[] = [];
      for (const w of p.wanted) {
        const known = kept.get(w.key);
        if (known !== undefined) {
          result.push({ entityId: known, surface: w.name, kind: w.kind, origin: w.origin, created: false });
          continue;
        }
        const entityId = idOfKey.get(w.key)!;
        // The first text of the batch that names a new entity is the one that made it.
        const created = createdSet.has(entityId) && !creditedCreation.has(entityId);
        if (created) creditedCreation.add(entityId);
        rows.entity.push(entityId);
        rows.message.push(p.column === 'message_id' ? String(p.sourceId) : null);
        rows.memory.push(p.column === 'memory_id' ? Number(p.sourceId) : null);
        rows.surface.push(w.name);
        rows.key.push(w.key);
        spans.start.push(w.start ?? null);
        spans.end.push(w.end ?? null);
        spans.origin.push(w.origin);
        spans.at.push(p.at);
        result.push({ entityId, surface: w.name, kind: w.kind, origin: w.origin, created });
      }
      for (const r of existing) if (!wantedKeys.has(r.surface_key)) goneIds.push(Number(r.id));
      const after = new Set(result.map((m) => m.entityId));
      for (const e of after) {
        if (before.has(e)) continue;
        const a = added.get(e);
        if (a) {
          a.n++;
          if (p.at < a.first) a.first = p.at;
          if (p.at > a.last) a.last = p.at;
        } else added.set(e, { n: 1, first: p.at, last: p.at });
      }
      for (const e of before) if (!after.has(e)) removedEntities.add(e);
      const oldPairs = pairsOf([...before]);
      const newPairs = pairsOf([...after]);
      const oldKeys = new Set(oldPairs.map(pairKey));
      const newKeys = new Set(newPairs.map(pairKey));
      for (const pair of newPairs) if (!oldKeys.has(pairKey(pair))) pairDelta.set(pairKey(pair), (pairDelta.get(pairKey(pair)) ?? 0) + 1);
      for (const pair of oldPairs) if (!newKeys.has(pairKey(pair))) pairDelta.set(pairKey(pair), (pairDelta.get(pairKey(pair)) ?? 0) - 1);
      results.push(result);
    }

    if (goneIds.length) await tx.query('DELETE FROM entity_mentions WHERE id = ANY($1::bigint[])', [goneIds]);
    const plus: [number, number, number][] = [];
    const minus: [number, number, number][] = [];
    for (const [key, d] of pairDelta) {
      const [a, b] = key.split(':').map(Number) as [number, number];
      if (d > 0) plus.push([a, b, d]);
      else if (d < 0) minus.push([a, b, -d]);
    }
    // The new entities, the mention rows, the counts, the new co-mention weights and the scans in
    // one statement, with only the parts this batch needs.
    const list = [...added];
    const created = await writeMentions(tx, {
      create: toCreate.map((w, i) => {
        const a = added.get(-(i + 1))!;
        const candidates = resolved.get(w.key)!.candidates;
        return { name: w.name, key: w.key, kind: w.kind === 'self' || w.kind === 'user' ? 'person' : w.kind, n: a.n, first: a.first, last: a.last, candidates };
      }),
      rows,
      spans,
      counts: list.filter(([id]) => id > 0),
      plus,
      messageIds,
      memoryIds,
    });
    const realId = (id: number) => (id < 0 ? created[-id - 1]! : id);
    for (const result of results) for (const m of result) m.entityId = realId(m.entityId);
    // An entity one text dropped may have been named by another text of the batch: counted from its
    // rows, after the new rows are in.
    if (removedEntities.size) await refreshStats(tx, [...removedEntities]);
    await bumpCoMentions(tx, minus, -1);
    touched = new Set([...[...added.keys()].map(realId), ...removedEntities]);
    return results;
  });
  ctx.changed(touched);
  return recorded;
}

interface MentionWrite {
  /** New entities, stand-in ids -1, -2… in this order, with their counts over the batch. */
  create: { name: string; key: string; kind: EntityKind; n: number; first: Date; last: Date; candidates: Resolution['candidates'] }[];
  rows: { entity: number[]; message: (string | null)[]; memory: (number | null)[]; surface: string[]; key: string[] };
  spans: { start: (number | null)[]; end: (number | null)[]; origin: string[]; at: Date[] };
  /** Entities that were there before: texts added, first and last seen. */
  counts: [number, { n: number; first: Date; last: Date }][];
  /** Co-mention pairs (stand-in ids allowed) and the weight each gains. */
  plus: [number, number, number][];
  messageIds: string[];
  memoryIds: number[];
}

/**
 * The writes of a recording in one call of migration 032's graph_mentions_write, which runs each
 * part only when the batch has rows for it, on plans it keeps. New entities are inserted with their
 * counts; ids below zero stand for them (-1 the first). Returns the new entities' ids, in `create` order.
 */
async function writeMentions(tx: Transaction, w: MentionWrite): Promise<number[]> {
  const ambiguities = w.create.flatMap((c, i) =>
    c.candidates.length
      ? [{ stand_in: -(i + 1), surface: c.name, candidate_ids: c.candidates.map((x) => x.id), similarities: c.candidates.map((x) => x.similarity) }]
      : [],
  );
  const made = await tx.query<{ made: (number | string)[] }>(
    `SELECT graph_mentions_write($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[], $7::jsonb,
       $8::bigint[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::int[], $14::int[], $15::text[], $16::timestamptz[],
       $17::bigint[], $18::int[], $19::timestamptz[], $20::timestamptz[], $21::bigint[], $22::bigint[], $23::real[], $24::text[], $25::bigint[]) AS made`,
    [
      w.create.map((c) => c.kind),
      w.create.map((c) => c.name),
      w.create.map((c) => c.key),
      w.create.map((c) => c.n),
      w.create.map((c) => c.first),
      w.create.map((c) => c.last),
      JSON.stringify(ambiguities),
      w.rows.entity,
      w.rows.message,
      w.rows.memory,
      w.rows.surface,
      w.rows.key,
      w.spans.start,
      w.spans.end,
      w.spans.origin,
      w.spans.at,
      w.counts.map(([id]) => id),
      w.counts.map(([, a]) => a.n),
      w.counts.map(([, a]) => a.first),
      w.counts.map(([, a]) => a.last),
      w.plus.map((x) => x[0]),
      w.plus.map((x) => x[1]),
      w.plus.map((x) => x[2]),
      w.messageIds,
      w.memoryIds,
    ],
  );
  return (made.rows[0]!.made ?? []).map(Number);
}

/** Texts a low-confidence name must appear in before it becomes an entity. */
const LOW_CONFIDENCE_TEXTS = 2;
/** Low-confidence names remembered (in this process, oldest forgotten first). */
const MAX_SIGHTINGS = 20_000;
const sightings = new WeakMap<object, Map<string, number>>();
function sightingsOf(ctx: GraphContext): Map<string, number> {
  let m = sightings.get(ctx.db);
  if (!m) sightings.set(ctx.db, (m = new Map()));
  return m;
}

/** The names to record for a text: detected ones, then given ones (kinds from detection when they agree). */
async function namesIn(log: Log, text: string, given: (string | { name: string; kind?: MentionKind })[]): Promise<Wanted[]> {
  const out: Wanted[] = [];
  const seen = new Map<string, EntityKind>();
  for (const m of await detectMentionsAsync(text)) {
    const clean = cleanName(m.name);
    if (!clean || seen.has(clean.key)) continue;
    seen.set(clean.key, m.kind);
    out.push({ ...clean, kind: m.kind, origin: 'detected', start: m.start, end: m.end, ...(m.confidence === 'low' ? { low: true } : {}) });
  }
  for (const g of given) {
    const raw = typeof g === 'string' ? g : g?.name;
    const clean = typeof raw === 'string' ? cleanName(raw) : null;
    // A model lists what it read as names: a weekday, a greeting, or the transcript's own label for
    // the person ("Person", sleep/schemas.ts) is no one to make an entity of.
    if (!clean || isRefusedName(clean.name)) {
      // A credential is not quoted into the log.
      const shown = findSecret(String(raw)) ? 'a credential' : JSON.stringify(String(raw).slice(0, 40));
      if (raw) log('info', `graph: skipped a given entity name that is not a name (${shown})`);
      continue;
    }
    if (seen.has(clean.key)) continue;
    // A given name without a kind: what detection makes of the name on its own, else a thing.
    const kind = (typeof g === 'object' && g.kind) || (await kindOfName(clean.name)) || 'thing';
    seen.set(clean.key, kind);
    out.push({ ...clean, kind, origin: 'given' });
  }
  if (out.length > MAX_NAMES_PER_SOURCE) {
    log('info', `graph: ${out.length} names in one text; recording the first ${MAX_NAMES_PER_SOURCE}`);
    out.length = MAX_NAMES_PER_SOURCE;
  }
  return out;
}

async function bumpCoMentions(tx: Transaction, pairs: [number, number, number][], by: 1 | -1): Promise<void> {
  if (!pairs.length) return;
  const sources = pairs.map((p) => p[0]);
  const targets = pairs.map((p) => p[1]);
  const weights = pairs.map((p) => p[2]);
  if (by > 0) {
    await tx.query(
      `INSERT INTO entity_edges (source_id, target_id, relation, weight)
       SELECT s, t, 'co_mention', w FROM unnest($1::bigint[], $2::bigint[], $3::real[]) AS p(s, t, w)
       ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
       DO UPDATE SET weight = entity_edges.weight + EXCLUDED.weight, updated_at = now()`,
      [sources, targets, weights],
    );
    return;
  }
  // Derived rows: a pair no text mentions together any more has no edge.
  await tx.query(
    `UPDATE entity_edges e SET weight = greatest(e.weight - p.w, 0), updated_at = now()
     FROM unnest($1::bigint[], $2::bigint[], $3::real[]) AS p(s, t, w)
     WHERE e.relation = 'co_mention' AND e.source_id = p.s AND e.target_id = p.t`,
    [sources, targets, weights],
  );
  await tx.query(
    `DELETE FROM entity_edges e USING unnest($1::bigint[], $2::bigint[]) AS p(s, t)
     WHERE e.relation = 'co_mention' AND e.source_id = p.s AND e.target_id = p.t AND e.weight <= 0`,
    [sources, targets],
  );
}

/** Mention count and first/last seen from the mention rows themselves. */
export async function refreshStats(tx: Transaction, ids: number[]): Promise<void> {
  await tx.query(
    `UPDATE entities e SET mention_count = coalesce(s.n, 0), first_seen = s.first, last_seen = s.last, updated_at = now()
     FROM unnest($1::bigint[]) AS u(id)
     LEFT JOIN LATERAL (
       SELECT count(DISTINCT coalesce(m.message_id, m.memory_id::text))::int AS n, min(m.seen_at) AS first, max(m.seen_at) AS last
       FROM entity_mentions m WHERE m.entity_id = u.id
     ) s ON true
     WHERE e.id = u.id`,
    [ids],
  );
}

/** Adds `weights[i]` to the co-mention edge between `entityId` and `others[i]` (made when missing). */
async function addCoMentions(tx: Transaction, entityId: number, others: number[], weights: number[]): Promise<void> {
  await tx.query(
    `INSERT INTO entity_edges (source_id, target_id, relation, weight)
     SELECT least($1::bigint, o), greatest($1::bigint, o), 'co_mention', w FROM unnest($2::bigint[], $3::real[]) AS p(o, w)
     ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
     DO UPDATE SET weight = entity_edges.weight + EXCLUDED.weight, updated_at = now()`,
    [entityId, others, weights],
  );
}

/**
 * Folds the merged entity's co-mention edges into keep's: keep–x gets gone–x's weight, less the
 * texts that already named all three (weight counts texts, and those were counted on both edges);
 * the keep–gone edge goes. Imported edges have no mention rows behind them, so they simply add.
 * Runs before the mentions move. Returns what it folded, for undo.
 */
export async function foldCoMentions(tx: Transaction, keepId: number, goneId: number): Promise<FoldedCoMention[]> {
  const folded = (
    await tx.query<{ other: number; weight: number; overlap: number }>(
      `WITH gone_edges AS (
         DELETE FROM entity_edges WHERE relation = 'co_mention' AND (source_id = $2 OR target_id = $2)
         RETURNING CASE WHEN source_id = $2 THEN target_id ELSE source_id END AS other, weight
       ), shared AS (
         -- Messages and memories apart, each an equality join the (message_id | memory_id) indexes serve.
         SELECT other, count(DISTINCT src)::int AS n FROM (
           SELECT x.entity_id AS other, g.message_id AS src FROM entity_mentions g
           JOIN entity_mentions k ON k.message_id = g.message_id AND k.entity_id = $1
           JOIN entity_mentions x ON x.message_id = g.message_id AND x.entity_id NOT IN ($1, $2)
           WHERE g.entity_id = $2 AND g.message_id IS NOT NULL
           UNION ALL
           SELECT x.entity_id, 'memory:' || g.memory_id FROM entity_mentions g
           JOIN entity_mentions k ON k.memory_id = g.memory_id AND k.entity_id = $1
           JOIN entity_mentions x ON x.memory_id = g.memory_id AND x.entity_id NOT IN ($1, $2)
           WHERE g.entity_id = $2 AND g.memory_id IS NOT NULL
         ) t GROUP BY other
       )
       SELECT e.other::int AS other, e.weight, coalesce(s.n, 0) AS overlap FROM gone_edges e LEFT JOIN shared s ON s.other = e.other`,
      [keepId, goneId],
    )
  ).rows.map((r) => ({ other: Number(r.other), weight: Number(r.weight), overlap: Math.min(Number(r.overlap), Number(r.weight)) }));
  const add = folded.filter((f) => f.other !== keepId && f.weight - f.overlap > 0);
  if (add.length)
    await addCoMentions(
      tx,
      keepId,
      add.map((f) => f.other),
      add.map((f) => f.weight - f.overlap),
    );
  return folded;
}

/** Undoes foldCoMentions: keep–x gives back what it gained (mentions since stay with keep), gone–x comes back. */
export async function unfoldCoMentions(tx: Transaction, keepId: number, goneId: number, folded: FoldedCoMention[]): Promise<void> {
  const gained = folded.filter((f) => f.other !== keepId && f.weight - f.overlap > 0);
  if (gained.length) {
    await tx.query(
      `UPDATE entity_edges e SET weight = greatest(e.weight - p.w, 0), updated_at = now()
       FROM unnest($2::bigint[], $3::real[]) AS p(o, w)
       WHERE e.relation = 'co_mention' AND e.source_id = least($1::bigint, p.o) AND e.target_id = greatest($1::bigint, p.o)`,
      [keepId, gained.map((f) => f.other), gained.map((f) => f.weight - f.overlap)],
    );
    await tx.query(`DELETE FROM entity_edges e WHERE e.relation = 'co_mention' AND e.weight <= 0 AND (e.source_id = $1 OR e.target_id = $1)`, [keepId]);
  }
  if (folded.length)
    await addCoMentions(
      tx,
      goneId,
      folded.map((f) => f.other),
      folded.map((f) => f.weight),
    );
}

// ---- reading mentions ----

/** The memories that mention an entity. */
export async function memoriesMentioning(db: Queryable, entityId: number): Promise<number[]> {
  const rows = await rowsAsJson<{ id: number }>(db, 'SELECT DISTINCT memory_id AS id FROM entity_mentions WHERE entity_id = $1 AND memory_id IS NOT NULL', [
    entityId,
  ]);
  return rows.map((r) => Number(r.id));
}

/** The messages that mention an entity, each with its latest mention time as timestamptz text (exact, for comparing in SQL). */
export async function messagesMentioning(db: Queryable, entityId: number): Promise<{ ids: string[]; at: string[] }> {
  const rows = await rowsAsJson<{ id: string; at: string }>(
    db,
    'SELECT message_id AS id, max(seen_at)::text AS at FROM entity_mentions WHERE entity_id = $1 AND message_id IS NOT NULL GROUP BY message_id',
    [entityId],
  );
  return { ids: rows.map((r) => r.id), at: rows.map((r) => r.at) };
}

/** Of these messages, those never read for mentions, in the order given. */
export async function unscannedMessages(db: Queryable, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const r = await db.query<{ ids: string[] }>(
    `SELECT coalesce(json_agg(u.id ORDER BY u.n), '[]'::json) AS ids FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)
     WHERE NOT EXISTS (SELECT 1 FROM entity_scans s WHERE s.message_id = u.id)`,
    [ids],
  );
  return r.rows[0]!.ids;
}

/** Of these memories (`updatedAt[i]` when `ids[i]` last changed, timestamptz text), those never read or changed since, in the order given. */
export async function memoriesToRead(db: Queryable, ids: number[], updatedAt: string[]): Promise<number[]> {
  if (!ids.length) return [];
  const r = await db.query<{ ids: number[] }>(
    `SELECT coalesce(json_agg(u.id ORDER BY u.n), '[]'::json) AS ids FROM unnest($1::bigint[], $2::timestamptz[]) WITH ORDINALITY AS u(id, at, n)
     LEFT JOIN entity_scans s ON s.memory_id = u.id
     WHERE s.memory_id IS NULL OR s.scanned_at < u.at`,
    [ids, updatedAt],
  );
  return r.rows[0]!.ids.map(Number);
}
