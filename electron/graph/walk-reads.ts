// What recall reads of the graph (electron/memory/recall/graph-walk.ts keeps the walk's scoring):
// the entities its best hits mention, each node's heaviest edges, and the mentions of the entities
// it reached or was asked about. Every read is "a key's top N by an indexed order"; recall runs them
// in one transaction with bitmap scans off (graphWalk says why), so each takes that transaction.
// Where one statement reads both the graph and the items (the newest mentions that are still
// searchable messages), mentionsOf() is the graph's half of recall's statement: a filter that must
// hold before each entity's LIMIT cannot move to a second statement without reading every mention.
import type { Queryable } from './context.js';

// Resolving a name, read-only, as memory_recall's `entity` does before it asks for an entity's items.
export { resolveName } from './resolution.js';
export { searchEntities } from './views.js';

/** One of a node's heaviest edges, to an entity that may be walked, with that entity's mention count. */
export interface WalkEdge {
  src: number;
  other: number;
  weight: number;
  mc: number;
}

/** An entity a seed message or memory mentions, with its mention count (null when it is hidden or merged). */
export interface SeedMention {
  entity: number;
  messageId: string | null;
  memoryId: number | null;
  mentionCount: number | null;
}

/** Edges that hold now: started (or no start), not ended (or no end). */
const VALID_NOW = `(x.valid_from IS NULL OR x.valid_from <= now()) AND (x.valid_to IS NULL OR x.valid_to > now())`;

/**
 * A node's `fanout` heaviest edges that hold now, either direction, to a live entity that may be
 * walked — with that entity's mention count. The entity is read by a scalar subquery on its key
 * before the LIMIT, so a hidden or merged neighbour takes no slot, and the check stays a primary-key
 * probe whatever the planner thinks (PGlite has no statistics: as a join it was planned as a scan of
 * the status index, 0.8 ms against 0.25 ms).
 */
function edgesOf(node: string, fanout: number, never: string): string {
  // OFFSET 0 keeps each subquery a parameterised probe (the planner may not flatten it into a join).
  const side = (other: string, self: string, index: string) => `(SELECT x.${other} AS other, x.weight, e.mc FROM entity_edges x
       JOIN LATERAL (SELECT en.mention_count AS mc FROM entities en WHERE en.id = x.${other} AND en.status = 'active' OFFSET 0) e ON true
       WHERE x.${self} = ${node} AND x.${other} <> ${node} AND x.weight > 0 AND ${VALID_NOW} AND NOT (x.${other} = ANY(${never}::bigint[]))
       ORDER BY x.weight DESC LIMIT ${fanout}) /* ${index} */`;
  return `(SELECT other, weight, mc FROM (
      ${side('target_id', 'source_id', 'entity_edges_out_idx')}
      UNION ALL
      ${side('source_id', 'target_id', 'entity_edges_in_idx')}
    ) both_ways ORDER BY weight DESC LIMIT ${fanout})`;
}

/**
 * The walk's first read, in one statement: the entities these messages and memories mention (not
 * `never`), in the order given, and — with `edges` — the `fanout` heaviest edges of each of them.
 */
export async function seedMentions(
  db: Queryable,
  o: { messageIds: string[]; memoryIds: number[]; never: readonly number[]; fanout: number; edges: boolean },
): Promise<{ mentions: SeedMention[]; edges: WalkEdge[] }> {
  const rows = (
    await db.query<{
      id: number;
      source: 'message' | 'memory' | null;
      key: string | null;
      mc: number | null;
      other: number | null;
      weight: number | null;
      omc: number | null;
    }>(
      `WITH seed AS (
         SELECT x.entity_id AS id, 'message' AS source, s.id AS key
         FROM unnest($1::text[]) AS s(id)
         CROSS JOIN LATERAL (SELECT x.entity_id FROM entity_mentions x WHERE x.message_id = s.id AND NOT (x.entity_id = ANY($3::bigint[])) OFFSET 0) x
         UNION ALL
         SELECT x.entity_id, 'memory', s.id::text FROM unnest($2::bigint[]) AS s(id)
         CROSS JOIN LATERAL (SELECT x.entity_id FROM entity_mentions x WHERE x.memory_id = s.id AND NOT (x.entity_id = ANY($3::bigint[])) OFFSET 0) x)
       SELECT s.id::float8 AS id, s.source, s.key,
              (SELECT CASE WHEN e.status = 'active' THEN e.mention_count END FROM entities e WHERE e.id = s.id) AS mc,
              NULL::float8 AS other, NULL::float8 AS weight, NULL::int AS omc
       FROM seed s
       ${
         o.edges
           ? `UNION ALL
       SELECT f.id::float8, NULL, NULL, NULL, n.other::float8, n.weight::float8, n.mc
       FROM (SELECT DISTINCT id FROM seed) f CROSS JOIN LATERAL ${edgesOf('f.id', o.fanout, '$3')} n`
           : ''
       }`,
      [o.messageIds, o.memoryIds, o.never],
    )
  ).rows;
  const mentions: SeedMention[] = [];
  const edges: WalkEdge[] = [];
  for (const r of rows) {
    if (r.source === null) {
      if (r.other !== null && r.weight !== null) edges.push({ src: Number(r.id), other: Number(r.other), weight: Number(r.weight), mc: Number(r.omc ?? 0) });
      continue;
    }
    mentions.push({
      entity: Number(r.id),
      messageId: r.source === 'message' ? r.key : null,
      memoryId: r.source === 'memory' ? Number(r.key) : null,
      mentionCount: r.mc === null ? null : Number(r.mc),
    });
  }
  return { mentions, edges };
}

/** A hop: the `fanout` heaviest edges of each frontier node, to entities that may be walked (not `never`). */
export async function heaviestEdges(db: Queryable, frontier: number[], fanout: number, never: readonly number[]): Promise<WalkEdge[]> {
  const rows = (
    await db.query<{ src: number; other: number; weight: number; mc: number }>(
      `SELECT f.id::float8 AS src, n.other::float8 AS other, n.weight::float8 AS weight, n.mc
       FROM unnest($1::bigint[]) AS f(id) CROSS JOIN LATERAL ${edgesOf('f.id', fanout, '$2')} n`,
      [frontier, never],
    )
  ).rows;
  return rows
    .filter((r) => r.other !== null && r.weight !== null)
    .map((r) => ({ src: Number(r.src), other: Number(r.other), weight: Number(r.weight), mc: Number(r.mc ?? 0) }));
}

/**
 * SQL for a FROM item: the mentions of the entity `entity` (an SQL expression, such as a lateral
 * column) in messages or in memories, as (item, seen_at) — item the message id or the memory id —
 * newest first and at most `limit` (an SQL expression) when one is given. Recall joins its items on
 * `item` in the same statement.
 */
export function mentionsOf(entity: string, of: 'message' | 'memory', limit?: string): string {
  const column = of === 'message' ? 'message_id' : 'memory_id';
  const newest = limit === undefined ? '' : ` ORDER BY x.seen_at DESC LIMIT ${limit}`;
  return `(SELECT x.${column} AS item, x.seen_at FROM entity_mentions x WHERE x.entity_id = ${entity} AND x.${column} IS NOT NULL${newest})`;
}

/** The memories that mention each of these entities, each entity's newest `limit` (memory id, seen_at). */
export async function newestMemoryMentions(db: Queryable, entityIds: number[], limit: number): Promise<{ id: number; at: Date }[]> {
  const rows = await db.query<{ id: number; at: Date }>(
    `SELECT i.id, i.at FROM unnest($1::bigint[]) AS f(id) CROSS JOIN LATERAL (
       SELECT x.memory_id::float8 AS id, x.seen_at AS at FROM entity_mentions x
       WHERE x.entity_id = f.id AND x.memory_id IS NOT NULL ORDER BY x.seen_at DESC LIMIT ${Math.trunc(limit)}) i`,
    [entityIds],
  );
  return rows.rows;
}

/** The names and aliases of these entities. */
export async function namesOf(db: Queryable, entityIds: number[]): Promise<string[]> {
  const rows = await db.query<{ n: string }>(
    `SELECT name AS n FROM entities WHERE id = ANY($1::bigint[]) UNION SELECT alias FROM entity_aliases WHERE entity_id = ANY($1::bigint[])`,
    [entityIds],
  );
  return rows.rows.map((r) => r.n);
}
