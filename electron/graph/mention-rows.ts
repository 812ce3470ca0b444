// Mentions: which entities each message and memory names (entity_mentions), what was read
// (entity_scans), and what derives from them — each entity's mention count and first/last seen, and
// the co-mention edges, whose weight counts the texts that name both ends.
import type { Transaction } from '../db/database.js';
import { ApiError, type EntityKind } from '../../shared/api.js';
import { findSecret } from '../memory/secret-filter.js';
import { checkId, invalid } from './checks.js';
import type { GraphContext, Log, Queryable } from './context.js';
import { detectMentionsAsync, type MentionKind } from './mentions.js';
import { cleanName } from './names.js';
import { createEntity, kindOfName, resolveKeys } from './resolution.js';
import { rowsAsJson } from './rows.js';

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
  const hasMessage = input.messageId !== undefined;
  const hasMemory = input.memoryId !== undefined;
  if (hasMessage === hasMemory) invalid('messageId', 'Record mentions for a message or for a memory: exactly one of messageId and memoryId.');
  if (hasMemory) checkId(input.memoryId, 'memoryId');
  if (typeof input.text !== 'string') invalid('text', 'text must be a string.');

  const wanted = await namesIn(ctx.log, input.text, input.names ?? []);
  // The source's time, from the room that owns it (messages and memories are never deleted).
  const sourceAt = hasMessage
    ? (await ctx.sources.conversations.findMessage(input.messageId!))?.createdAt
    : (await ctx.sources.memories.getMany([input.memoryId!]))[0]?.createdAt;
  if (sourceAt === undefined) throw new ApiError('not_found', hasMessage ? `There is no message ${input.messageId}.` : `There is no memory ${input.memoryId}.`);
  const at = input.at ?? new Date(sourceAt);
  const column = hasMessage ? 'message_id' : 'memory_id';
  const sourceId = hasMessage ? input.messageId! : input.memoryId!;
  let touched: number[] = [];
  const recorded = await ctx.db.transaction(async (tx) => {
    const existing = (
      await tx.query<{ id: number; entity_id: number; surface_key: string }>(`SELECT id, entity_id, surface_key FROM entity_mentions WHERE ${column} = $1`, [
        sourceId,
      ])
    ).rows;
    const before = new Set(existing.map((r) => Number(r.entity_id)));
    const kept = new Map(existing.map((r) => [r.surface_key, Number(r.entity_id)]));
    const wantedKeys = new Set(wanted.map((w) => w.key));

    // A name already recorded for this source keeps its entity (it may have been merged since).
    const fresh = wanted.filter((w) => !kept.has(w.key));
    const resolved = await resolveKeys(tx, fresh);
    const result: RecordedMention[] = [];
    for (const w of wanted) {
      const known = kept.get(w.key);
      if (known !== undefined) {
        result.push({ entityId: known, surface: w.name, kind: w.kind, origin: w.origin, created: false });
        continue;
      }
      const r = resolved.get(w.key)!;
      let entityId = r.entityId;
      let created = false;
      if (entityId === null) {
        entityId = await createEntity(tx, w, at, r.candidates);
        created = true;
      }
      await tx.query(
        `INSERT INTO entity_mentions (entity_id, ${column}, surface, surface_key, span_start, span_end, origin, seen_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [entityId, sourceId, w.name, w.key, w.start ?? null, w.end ?? null, w.origin, at],
      );
      result.push({ entityId, surface: w.name, kind: w.kind, origin: w.origin, created });
    }
    const gone = existing.filter((r) => !wantedKeys.has(r.surface_key));
    if (gone.length) await tx.query('DELETE FROM entity_mentions WHERE id = ANY($1::bigint[])', [gone.map((r) => r.id)]);

    const after = new Set(result.map((m) => m.entityId));
    const added = [...after].filter((e) => !before.has(e));
    const removed = [...before].filter((e) => !after.has(e));
    if (added.length) {
      await tx.query(
        `UPDATE entities SET mention_count = mention_count + 1, first_seen = least(first_seen, $2), last_seen = greatest(last_seen, $2), updated_at = now()
         WHERE id = ANY($1::bigint[])`,
        [added, at],
      );
    }
    if (removed.length) await refreshStats(tx, removed);

    const oldPairs = new Set(pairsOf([...before]).map(pairKey));
    const newPairs = pairsOf([...after]);
    const newKeys = new Set(newPairs.map(pairKey));
    const plus = newPairs.filter((p) => !oldPairs.has(pairKey(p)));
    const minus = pairsOf([...before]).filter((p) => !newKeys.has(pairKey(p)));
    await bumpCoMentions(tx, plus, 1);
    await bumpCoMentions(tx, minus, -1);

    await tx.query(`INSERT INTO entity_scans (${column}, scanned_at) VALUES ($1, now()) ON CONFLICT (${column}) DO UPDATE SET scanned_at = now()`, [sourceId]);
    touched = [...added, ...removed];
    return result;
  });
  ctx.changed(touched);
  return recorded;
}

/** The names to record for a text: detected ones, then given ones (kinds from detection when they agree). */
async function namesIn(
  log: Log,
  text: string,
  given: (string | { name: string; kind?: MentionKind })[],
): Promise<{ name: string; key: string; kind: EntityKind; origin: 'detected' | 'given'; start?: number; end?: number }[]> {
  const out: { name: string; key: string; kind: EntityKind; origin: 'detected' | 'given'; start?: number; end?: number }[] = [];
  const seen = new Map<string, EntityKind>();
  for (const m of await detectMentionsAsync(text)) {
    const clean = cleanName(m.name);
    if (!clean || seen.has(clean.key)) continue;
    seen.set(clean.key, m.kind);
    out.push({ ...clean, kind: m.kind, origin: 'detected', start: m.start, end: m.end });
  }
  for (const g of given) {
    const raw = typeof g === 'string' ? g : g?.name;
    const clean = typeof raw === 'string' ? cleanName(raw) : null;
    if (!clean) {
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

async function bumpCoMentions(tx: Transaction, pairs: [number, number][], by: 1 | -1): Promise<void> {
  if (!pairs.length) return;
  const sources = pairs.map((p) => p[0]);
  const targets = pairs.map((p) => p[1]);
  if (by > 0) {
    await tx.query(
      `INSERT INTO entity_edges (source_id, target_id, relation, weight)
       SELECT s, t, 'co_mention', 1 FROM unnest($1::bigint[], $2::bigint[]) AS p(s, t)
       ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
       DO UPDATE SET weight = entity_edges.weight + 1, updated_at = now()`,
      [sources, targets],
    );
    return;
  }
  // Derived rows: a pair no text mentions together any more has no edge.
  await tx.query(
    `UPDATE entity_edges e SET weight = e.weight - 1, updated_at = now()
     FROM unnest($1::bigint[], $2::bigint[]) AS p(s, t)
     WHERE e.relation = 'co_mention' AND e.source_id = p.s AND e.target_id = p.t`,
    [sources, targets],
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
