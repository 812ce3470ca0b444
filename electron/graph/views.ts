// What the Graph view and the entity panel read: the whole map (the most mentioned entities), the
// neighbourhood of one entity (ego), search by name, and one entity with its relations, facts,
// conversations and history.
import type { Transaction } from '../db/database.js';
import { ApiError, type EntityDetail, type EntityEdge, type EntityKind } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { checkId, checkKinds, checkTime, clamp } from './checks.js';
import type { GraphContext, Queryable } from './context.js';
import { history } from './edits.js';
import { memoriesMentioning, messagesMentioning } from './mention-rows.js';
import { nameKey } from './names.js';
import { AMBIGUOUS_SIMILARITY } from './resolution.js';
import {
  EDGE_COLUMNS,
  ENTITY_COLUMNS,
  USER_ENTITY_ID,
  VALID_AT,
  entitiesByIds,
  iso,
  requireEntity,
  rowsAsJson,
  toEdge,
  toEntity,
  type EdgeRow,
  type EntityRow,
  type StoredEntity,
  type StoredEntityChange,
} from './rows.js';

export interface GraphNode extends StoredEntity {
  /** Hops from the centre (0 for the centre itself) in an ego graph; 0 in graph(). */
  hop: number;
}

export interface GraphView {
  nodes: GraphNode[];
  edges: EntityEdge[];
  /** Active entities and all edges, in graph() (the whole graph may be more than was drawn). */
  totalEntities?: number;
  totalEdges?: number;
}

export interface GraphFilter {
  /** Only these kinds (the centre of an ego graph is always shown). */
  kinds?: EntityKind[];
  /** The graph as it was then: edges whose valid time holds at this instant (edges without one always do). */
  at?: string;
}

/**
 * One entity as the store reads it: the API's EntityDetail with the memories as ids
 * (MemoryStore.getMany turns them into memories) and the store's entity and journal shapes.
 */
export type StoredEntityDetail = Omit<EntityDetail, 'entity' | 'history' | 'profile' | 'facts'> & {
  entity: StoredEntity;
  history: StoredEntityChange[];
  /** Memories that mention it, active ones first, newest first. */
  factIds: number[];
  /** The observation memory deep sleep keeps about it (profileOf), left out of factIds; null when there is none. */
  profileMemoryId: number | null;
};

export async function detail(
  ctx: GraphContext,
  id: number,
  opts: { relations?: number; facts?: number; conversations?: number } = {},
): Promise<StoredEntityDetail> {
  const entity = await requireEntity(ctx.db, checkId(id, 'id'));
  const edgeLimit = clamp(opts.relations ?? 50, 1, 500);
  const edges = await ctx.db.query<EdgeRow & { other_id: number; other_name: string; other_kind: EntityKind }>(
    `SELECT x.*, o.id AS other_id, o.name AS other_name, o.kind AS other_kind FROM (
       (SELECT ${EDGE_COLUMNS}, target_id AS other FROM entity_edges WHERE source_id = $1 ORDER BY weight DESC LIMIT ${edgeLimit})
       UNION ALL
       (SELECT ${EDGE_COLUMNS}, source_id AS other FROM entity_edges WHERE target_id = $1 ORDER BY weight DESC LIMIT ${edgeLimit})
     ) x JOIN entities o ON o.id = x.other AND o.status = 'active'
     WHERE x.other <> $1
     ORDER BY x.weight DESC, x.id LIMIT ${edgeLimit}`,
    [entity.id],
  );
  const profileMemoryId = await profileOf(ctx, entity.id);
  // The profile names the entity too; it is shown as the profile, not as one of the facts.
  const mentioningMemories = (await memoriesMentioning(ctx.db, entity.id)).filter((m) => m !== profileMemoryId);
  const factIds = await ctx.sources.memories.activeThenNewest(mentioningMemories, clamp(opts.facts ?? 50, 1, 500));
  const mentioningMessages = await messagesMentioning(ctx.db, entity.id);
  const chats = await ctx.sources.conversations.chatsHolding(mentioningMessages.ids, mentioningMessages.at, clamp(opts.conversations ?? 50, 1, 500));
  return {
    entity,
    relations: edges.rows.map((r) => ({ ...toEdge(r), other: { id: Number(r.other_id), name: r.other_name, kind: r.other_kind } })),
    factIds,
    conversations: chats.map((c) => ({ id: c.id, title: c.title, mentions: c.messages, lastAt: iso(c.lastAt)! })),
    history: await history(ctx.db, entity.id),
    profileMemoryId,
  };
}

/**
 * The entity's profile as it stands: the linked memory while active; if something later superseded
 * it (a merge), the active end of its chain; if an undo took it back, the active profile it had
 * replaced (MemoryStore.activeVersionOf follows the memories). Null when there is none.
 */
export async function profileOf(ctx: GraphContext, id: number): Promise<number | null> {
  const linked = (await ctx.db.query<{ p: number | null }>('SELECT profile_memory_id AS p FROM entities WHERE id = $1', [checkId(id, 'id')])).rows[0]?.p;
  if (linked === null || linked === undefined) return null;
  return ctx.sources.memories.activeVersionOf(Number(linked));
}

/** Live entities whose name or alias matches: the same key, then names starting with it, then similar ones. */
export async function searchEntities(db: Database, query: string, limit = 20): Promise<StoredEntity[]> {
  const key = nameKey(query);
  if (!key) return [];
  const max = clamp(Math.trunc(limit), 1, 100);
  const rows = await db.transaction(async (tx) => {
    await tx.query(`SET LOCAL pg_trgm.similarity_threshold = ${AMBIGUOUS_SIMILARITY}`);
    return tx.query<{ id: number }>(
      `SELECT id, max(score) AS score, max(mention_count) AS n FROM (
         SELECT e.id, e.mention_count, CASE WHEN e.name_key = $1 THEN 3 WHEN e.name_key LIKE $2 ESCAPE '\\' THEN 2 ELSE similarity(e.name_key, $1) END AS score
         FROM entities e WHERE e.status = 'active' AND (e.name_key = $1 OR e.name_key LIKE $2 ESCAPE '\\' OR e.name_key % $1)
         UNION ALL
         SELECT e.id, e.mention_count, CASE WHEN a.alias_key = $1 THEN 3 WHEN a.alias_key LIKE $2 ESCAPE '\\' THEN 2 ELSE similarity(a.alias_key, $1) END
         FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
         WHERE e.status = 'active' AND (a.alias_key = $1 OR a.alias_key LIKE $2 ESCAPE '\\' OR a.alias_key % $1)
       ) c GROUP BY id ORDER BY max(score) DESC, max(mention_count) DESC, id LIMIT ${max}`,
      [key, `${key.replace(/[\\%_]/g, (c) => `\\${c}`)}%`],
    );
  });
  return entitiesByIds(
    db,
    rows.rows.map((r) => Number(r.id)),
  );
}

/** The most mentioned active entities and the edges among them. */
export async function graph(db: Database, opts: GraphFilter & { limit?: number; edgesPerNode?: number } = {}): Promise<GraphView> {
  const limit = clamp(opts.limit ?? 100, 1, 20_000);
  const kinds = checkKinds(opts.kinds);
  const at = checkTime(opts.at, 'at');
  const rows = await db.query<EntityRow>(
    // entity_counts holds the active entities' counts in the order asked (migration 037).
    `SELECT ${ENTITY_COLUMNS} FROM entity_counts c JOIN entities e ON e.id = c.entity_id
     WHERE e.status = 'active' AND ($1::text[] IS NULL OR e.kind = ANY($1::text[]))
     ORDER BY c.mention_count DESC, c.entity_id LIMIT ${limit}`,
    [kinds],
  );
  const nodes = rows.rows.map((r) => ({ ...toEntity(r), hop: 0 }));
  const totals = (
    await db.query<{ entities: number; edges: number }>(
      `SELECT (SELECT count(*) FROM entities WHERE status = 'active')::int AS entities, (SELECT count(*) FROM entity_edges)::int AS edges`,
    )
  ).rows[0]!;
  return {
    nodes,
    edges: await edgesAmong(
      db,
      nodes.map((n) => n.id),
      clamp(opts.edgesPerNode ?? 20, 1, 5_000),
      at,
    ),
    totalEntities: totals.entities,
    totalEdges: totals.edges,
  };
}

/** The earliest instant any relation's valid time names (the time slider's start), or null without relations. */
export async function earliestValidTime(db: Database): Promise<string | null> {
  const r = await db.query<{ t: Date | null }>(`SELECT least(min(valid_from), min(valid_to)) AS t FROM entity_edges`);
  return r.rows[0]?.t?.toISOString() ?? null;
}

/**
 * Where a neighbourhood view opens when no one chose: the most mentioned entity other than the two
 * fixed ones, or, when nothing has been mentioned yet (an imported graph), the person — every
 * conversation is theirs, so their neighbourhood is the natural first view.
 */
export async function defaultCentre(db: Database): Promise<number> {
  const top = await db.query<{ id: number }>(
    `SELECT e.id FROM entity_counts c JOIN entities e ON e.id = c.entity_id
     WHERE e.status = 'active' AND e.kind NOT IN ('self', 'user') AND c.mention_count > 0
     ORDER BY c.mention_count DESC, c.entity_id LIMIT 1`,
  );
  return top.rows[0] ? Number(top.rows[0].id) : USER_ENTITY_ID;
}

/**
 * The graph around one entity, `hops` steps out (1–3). Each step follows every frontier node's
 * `fanout` heaviest edges (either direction, one index range each, cut by LIMIT before anything
 * else is read), and only the `limit` strongest nodes go on to the next step: a hub costs its top
 * edges, not all of them. Hidden and merged entities are left out. A node reached at hop h ranks by
 * the weight of the edge that reached it; nearer hops first.
 */
export async function ego(db: Database, id: number, opts: GraphFilter & { hops?: number; limit?: number; fanout?: number } = {}): Promise<GraphView> {
  const centre = await requireEntity(db, checkId(id, 'id'));
  if (centre.status === 'merged') throw new ApiError('conflict', `Entity ${id} was merged into entity ${centre.mergedInto}; open that one.`, 'id');
  const h = clamp(Math.trunc(opts.hops ?? 2), 1, 3);
  const max = clamp(Math.trunc(opts.limit ?? 50), 1, 2000);
  const fan = clamp(Math.trunc(opts.fanout ?? 25), 1, 200);
  const kinds = checkKinds(opts.kinds);
  const at = checkTime(opts.at, 'at');
  return db.transaction(async (tx) => {
    // The planner, seeing ~10 edges per entity on average, prefers a bitmap scan that reads all of a
    // hub's thousands of edges and sorts them; the (end, weight DESC) index read in order stops at the LIMIT.
    await tx.query('SET LOCAL enable_bitmapscan = off');
    return egoIn(tx, centre.id, h, max, fan, kinds, at);
  });
}

async function egoIn(tx: Transaction, centreId: number, h: number, max: number, fan: number, kinds: string[] | null, at: string | null): Promise<GraphView> {
  const strength = new Map<number, { hop: number; weight: number }>([[centreId, { hop: 0, weight: Infinity }]]);
  let frontier = [centreId];
  for (let hop = 1; hop <= h && frontier.length; hop++) {
    const next = await tx.query<{ other: number; weight: number }>(
      `SELECT n.other, max(n.weight) AS weight FROM unnest($1::bigint[]) AS f(id)
       CROSS JOIN LATERAL (
         SELECT other, weight FROM (
           (SELECT target_id AS other, weight FROM entity_edges
            WHERE source_id = f.id AND ${VALID_AT('$3')} ORDER BY weight DESC LIMIT ${fan})
           UNION ALL
           (SELECT source_id AS other, weight FROM entity_edges
            WHERE target_id = f.id AND ${VALID_AT('$3')} ORDER BY weight DESC LIMIT ${fan})
         ) both_ways ORDER BY weight DESC LIMIT ${fan}
       ) n
       JOIN entities e ON e.id = n.other AND e.status = 'active' AND ($4::text[] IS NULL OR e.kind = ANY($4::text[]))
       WHERE NOT (n.other = ANY($2::bigint[]))
       GROUP BY n.other ORDER BY max(n.weight) DESC, n.other LIMIT ${max}`,
      [frontier, [...strength.keys()], at, kinds],
    );
    frontier = [];
    for (const r of next.rows) {
      strength.set(Number(r.other), { hop, weight: Number(r.weight) });
      frontier.push(Number(r.other));
    }
  }
  const chosen = [...strength.entries()]
    .sort((a, b) => a[1].hop - b[1].hop || b[1].weight - a[1].weight || a[0] - b[0])
    .slice(0, max + 1)
    .map(([nodeId]) => nodeId);
  const nodes = (await entitiesByIds(tx, chosen)).map((e) => ({ ...e, hop: strength.get(e.id)!.hop }));
  return { nodes, edges: await edgesAmong(tx, chosen, fan, at) };
}

/**
 * The edges among `ids` that hold at `at`, read in one scan of the (source, target) index, with
 * each node keeping its `perNode` heaviest: an edge is drawn when it is among the heaviest of either
 * end. A hub's thousands of edges to nodes not drawn are never read, a hub cannot crowd out a small
 * node's only tie, and the map stays bounded (at most perNode edges per node).
 */
async function edgesAmong(db: Queryable, ids: number[], perNode: number, at: string | null): Promise<EntityEdge[]> {
  if (ids.length < 2) return [];
  const rows = await rowsAsJson<EdgeRow>(
    db,
    `SELECT ${EDGE_COLUMNS} FROM entity_edges
     WHERE source_id = ANY($1::bigint[]) AND target_id = ANY($1::bigint[]) AND source_id <> target_id AND ${VALID_AT('$2')}`,
    [ids, at],
  );
  const heaviestFirst = rows.map(toEdge).sort((a, b) => b.weight - a.weight || a.id - b.id);
  const rank = new Map<number, number>();
  const nextRank = (node: number) => {
    const r = rank.get(node) ?? 0;
    rank.set(node, r + 1);
    return r;
  };
  return heaviestFirst.filter((e) => {
    const atSource = nextRank(e.source);
    const atTarget = nextRank(e.target);
    return atSource < perNode || atTarget < perNode;
  });
}
