// The entity graph: the only code that writes entities, their aliases, mentions and edges.
// Mentions come in from the write path (graph/indexer.ts queues every stored message and memory);
// the person renames, adds aliases, merges and hides — each journalled in entity_changes, and undone
// from there. Nothing the person did is ever deleted: a merged entity keeps its row (status
// 'merged', merged_into) and the journal lists the mentions and edges that moved, so undo moves them
// back; co-mention edges are derived from the mentions and recomputed.
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { ApiError, type MemoryActor } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { detectMentionsAsync, type MentionKind } from './mentions.js';
import { checkName, cleanName, nameKey as nameKeyOf } from './names.js';

type Queryable = PGlite | Transaction;
type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

export const ENTITY_KINDS = ['person', 'place', 'org', 'thing', 'topic', 'self', 'user'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];
export type EntityStatus = 'active' | 'merged' | 'hidden';

/** The two fixed nodes, seeded by migration 006. */
export const SELF_ENTITY_ID = 1;
export const USER_ENTITY_ID = 2;

/**
 * Trigram similarity (pg_trgm, on name keys) at or above which a new name is the same entity as an
 * existing one of a compatible kind. Measured pairs: spellings of one name score 0.58–0.83
 * ("melanie"/"melani" 0.67, "caroline"/"carolin" 0.70, "nimbus labs"/"nimbus lab" 0.77, "john smith"/
 * "jon smith" 0.62, "patrick rothfuss"/"pat rothfuss" 0.67, "george r. r. martin"/"george rr martin"
 * 0.83, "microsoft"/"microsft" 0.58); different names in the same frame score 0.14–0.58 ("maria"/
 * "mario" 0.50, "ana"/"anna" 0.50, "caroline"/"carol" 0.50, "mark"/"mary" 0.43, "new york"/"york" 0.56,
 * "nimbus labs"/"nimbus" 0.58, "john"/"joan" 0.25, "emma watson"/"emma stone" 0.28). The one bad pair
 * above 0.6 is "paris"/"parisa" (0.63), a place and a person — kinds must agree, which keeps them
 * apart. 0.6 errs towards a second entity (a typo like "microsft", 0.58, lands among the ambiguous
 * ones): a merge is one click, a wrong match hides a person. The companion and the person are
 * matched by their exact names and aliases only ("Animal" is 0.63 alike to "Anima").
 */
export const SAME_ENTITY_SIMILARITY = 0.6;
/**
 * From here up to SAME_ENTITY_SIMILARITY a name is close but not close enough ("carol" beside
 * "caroline", "nimbus" beside "nimbus labs"): a new entity is made and the candidates are recorded in
 * entity_ambiguities for the background model to judge later. Below it, names are just different.
 */
export const AMBIGUOUS_SIMILARITY = 0.45;

/** More names than this in one text are a list or a pasted document; the rest are not recorded. */
export const MAX_NAMES_PER_SOURCE = 50;

export interface Entity {
  id: number;
  kind: EntityKind;
  name: string;
  aliases: string[];
  status: EntityStatus;
  mergedInto: number | null;
  firstSeen: string | null;
  lastSeen: string | null;
  mentionCount: number;
  createdAt: string;
  updatedAt: string;
}

// Shapes follow the graph part of shared/api.ts (Entity, EntityEdge, EntityDetail), so the handlers
// pass them through; a few fields more (createdAt, actor, otherId) do no harm there.
export interface EntityEdge {
  id: number;
  source: number;
  target: number;
  relation: string;
  weight: number;
  validFrom: string | null;
  validTo: string | null;
  evidenceMemoryIds: number[];
}

export interface EntityChange {
  id: number;
  entityId: number;
  otherId: number | null;
  action: 'rename' | 'alias' | 'merge' | 'hide' | 'unhide' | 'relate' | 'strengthen' | 'close' | 'undo';
  actor: MemoryActor;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  undoneBy: number | null;
  createdAt: string;
}

export interface Resolution {
  /** The entity the name means, or null: nothing matched, or it was ambiguous. */
  entity: Entity | null;
  via: 'name' | 'alias' | 'similar' | 'ambiguous' | 'none';
  similarity?: number;
  /** Close entities that were not chosen (ambiguous), best first. */
  candidates: { id: number; name: string; similarity: number }[];
}

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

export interface GraphNode extends Entity {
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

export interface EntityDetail {
  entity: Entity;
  relations: (EntityEdge & { other: { id: number; name: string; kind: EntityKind } })[];
  /** Memories that mention it, active ones first, newest first (MemoryStore.getMany turns them into memories). */
  factIds: number[];
  conversations: { id: string; title: string; mentions: number; lastAt: string }[];
  history: EntityChange[];
  /** The observation memory deep sleep keeps about it (profileOf), left out of factIds; null when there is none. */
  profileMemoryId: number | null;
}

/** What a journalled change returns. */
/** One co-mention edge a merge folded into keep's, as its journal entry keeps it. */
interface FoldedCoMention {
  other: number;
  weight: number;
  /** Texts that named keep, the merged entity and `other` together: counted once after the merge. */
  overlap: number;
}

export interface EntityChangeResult {
  entity: Entity;
  changeId: number;
}

// ---- rows ----

interface EntityRow {
  id: number;
  kind: EntityKind;
  name: string;
  name_key: string;
  status: EntityStatus;
  merged_into: number | null;
  first_seen: Date | string | null;
  last_seen: Date | string | null;
  mention_count: number;
  created_at: Date | string;
  updated_at: Date | string;
  aliases?: string[] | null;
}

interface EdgeRow {
  id: number;
  source_id: number;
  target_id: number;
  relation: string;
  weight: number;
  valid_from: Date | string | null;
  valid_to: Date | string | null;
  evidence_memory_ids: number[];
}

interface ChangeRow {
  id: number;
  entity_id: number;
  other_id: number | null;
  action: EntityChange['action'];
  actor: MemoryActor;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  undone_by: number | null;
  created_at: Date | string;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * A query's rows as one JSON value. PGlite hands a result over field by field, which for the few
 * hundred entities or edges of a graph view costs more than the query itself; one json_agg value
 * parsed by JSON.parse costs about half. Timestamps then arrive as strings, which iso() reads.
 */
async function rowsAsJson<T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const result = await db.query<{ rows: T[] }>(`SELECT coalesce(json_agg(x), '[]'::json) AS rows FROM (${sql}) x`, params);
  return result.rows[0]!.rows;
}

const ENTITY_COLUMNS = `e.id, e.kind, e.name, e.name_key, e.status, e.merged_into, e.first_seen, e.last_seen, e.mention_count, e.created_at, e.updated_at,
  ARRAY(SELECT a.alias FROM entity_aliases a WHERE a.entity_id = e.id ORDER BY a.created_at, a.alias_key) AS aliases`;
const EDGE_COLUMNS = 'id, source_id, target_id, relation, weight, valid_from, valid_to, evidence_memory_ids';

function toEntity(r: EntityRow): Entity {
  return {
    id: Number(r.id),
    kind: r.kind,
    name: r.name,
    aliases: r.aliases ?? [],
    status: r.status,
    mergedInto: r.merged_into === null ? null : Number(r.merged_into),
    firstSeen: iso(r.first_seen),
    lastSeen: iso(r.last_seen),
    mentionCount: r.mention_count,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

function toEdge(r: EdgeRow): EntityEdge {
  return {
    id: Number(r.id),
    source: Number(r.source_id),
    target: Number(r.target_id),
    relation: r.relation,
    weight: Number(r.weight),
    validFrom: iso(r.valid_from),
    validTo: iso(r.valid_to),
    evidenceMemoryIds: (r.evidence_memory_ids ?? []).map(Number),
  };
}

function toChange(r: ChangeRow): EntityChange {
  return {
    id: Number(r.id),
    entityId: Number(r.entity_id),
    otherId: r.other_id === null ? null : Number(r.other_id),
    action: r.action,
    actor: r.actor,
    before: r.before,
    after: r.after,
    undoneBy: r.undone_by === null ? null : Number(r.undone_by),
    createdAt: iso(r.created_at)!,
  };
}

function invalid(field: string, message: string): never {
  throw new ApiError('invalid_input', message, field);
}

function checkId(id: unknown, field: string): number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) invalid(field, `${field} must be a positive whole number.`);
  return id;
}

/** Kinds that may be the same thing: the same kind; a person and the person (or the companion); anything and a vague kind. */
function kindsAgree(a: EntityKind, b: EntityKind): boolean {
  if (a === b) return true;
  const vague = (k: EntityKind) => k === 'thing' || k === 'topic';
  if (vague(a) || vague(b)) return true;
  const personal = (k: EntityKind) => k === 'person' || k === 'user' || k === 'self';
  return personal(a) && personal(b);
}

/** Every unordered pair of a sorted id list, as [smaller, larger]. */
function pairsOf(ids: number[]): [number, number][] {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let i = 0; i < sorted.length; i++) for (let j = i + 1; j < sorted.length; j++) out.push([sorted[i]!, sorted[j]!]);
  return out;
}

const pairKey = ([a, b]: [number, number]) => `${a}:${b}`;

interface Candidate {
  id: number;
  kind: EntityKind;
  name: string;
  mentionCount: number;
  similarity: number;
  via: 'name' | 'alias';
}

export class EntityStore {
  /** `onChange` hears which entities changed (new mentions, an edit, a merge), after the commit. */
  constructor(
    private readonly db: Database,
    private readonly log: Log = () => {},
    private readonly onChange: (entityIds: number[]) => void = () => {},
  ) {}

  private changed(ids: Iterable<number>): void {
    const list = [...new Set(ids)];
    if (!list.length) return;
    try {
      this.onChange(list);
    } catch (err) {
      this.log('error', `an entity change listener failed: ${(err as Error).message}`);
    }
  }

  // ---- reading ----

  /** The entity with aliases, or ApiError('not_found'). A merged one is returned as it is (see mergedInto). */
  async entity(id: number): Promise<Entity> {
    return this.requireEntity(this.db, checkId(id, 'id'));
  }

  async get(id: number, opts: { relations?: number; facts?: number; conversations?: number } = {}): Promise<EntityDetail> {
    const entity = await this.entity(id);
    const edgeLimit = clamp(opts.relations ?? 50, 1, 500);
    const edges = await this.db.query<EdgeRow & { other_id: number; other_name: string; other_kind: EntityKind }>(
      `SELECT x.*, o.id AS other_id, o.name AS other_name, o.kind AS other_kind FROM (
         (SELECT ${EDGE_COLUMNS}, target_id AS other FROM entity_edges WHERE source_id = $1 ORDER BY weight DESC LIMIT ${edgeLimit})
         UNION ALL
         (SELECT ${EDGE_COLUMNS}, source_id AS other FROM entity_edges WHERE target_id = $1 ORDER BY weight DESC LIMIT ${edgeLimit})
       ) x JOIN entities o ON o.id = x.other AND o.status = 'active'
       WHERE x.other <> $1
       ORDER BY x.weight DESC, x.id LIMIT ${edgeLimit}`,
      [entity.id],
    );
    const profileMemoryId = await this.profileOf(entity.id);
    // The profile names the entity too; it is shown as the profile, not as one of the facts.
    const facts = await this.db.query<{ id: number }>(
      `SELECT m.id FROM memories m
       WHERE m.id IN (SELECT memory_id FROM entity_mentions WHERE entity_id = $1 AND memory_id IS NOT NULL) AND m.id IS DISTINCT FROM $2::bigint
       ORDER BY (m.status = 'active') DESC, m.created_at DESC, m.id DESC LIMIT ${clamp(opts.facts ?? 50, 1, 500)}`,
      [entity.id, profileMemoryId],
    );
    const conversations = await this.db.query<{ id: string; title: string; mentions: number; last_at: Date }>(
      `SELECT c.id, c.title, count(DISTINCT x.message_id)::int AS mentions, max(x.seen_at) AS last_at
       FROM entity_mentions x JOIN messages m ON m.id = x.message_id JOIN conversations c ON c.id = m.conversation_id
       WHERE x.entity_id = $1 AND x.message_id IS NOT NULL AND c.kind = 'chat'
       GROUP BY c.id, c.title ORDER BY max(x.seen_at) DESC LIMIT ${clamp(opts.conversations ?? 50, 1, 500)}`,
      [entity.id],
    );
    return {
      entity,
      relations: edges.rows.map((r) => ({ ...toEdge(r), other: { id: Number(r.other_id), name: r.other_name, kind: r.other_kind } })),
      factIds: facts.rows.map((r) => Number(r.id)),
      conversations: conversations.rows.map((r) => ({ id: r.id, title: r.title, mentions: r.mentions, lastAt: iso(r.last_at)! })),
      history: await this.history(entity.id),
      profileMemoryId,
    };
  }

  /**
   * What a name means, without changing anything: the entity whose name or alias has the same key,
   * else the one entity of a compatible kind at least SAME_ENTITY_SIMILARITY alike. Close candidates
   * that are not chosen come back as `ambiguous`.
   */
  async resolve(name: string, kind?: EntityKind): Promise<Resolution> {
    const { key } = checkName(name);
    if (kind !== undefined && !ENTITY_KINDS.includes(kind)) invalid('kind', `Unknown entity kind "${String(kind)}": use one of ${ENTITY_KINDS.join(', ')}.`);
    return this.db.transaction(async (tx) => {
      const found = (await this.resolveKeys(tx, [{ key, kind }])).get(key)!;
      const entity = found.entityId === null ? null : await this.requireEntity(tx, found.entityId);
      return { entity, via: found.via, similarity: found.similarity, candidates: found.candidates };
    });
  }

  /** Live entities whose name or alias matches: the same key, then names starting with it, then similar ones. */
  async search(query: string, limit = 20): Promise<Entity[]> {
    const key = nameKeyOf(query);
    if (!key) return [];
    const max = clamp(Math.trunc(limit), 1, 100);
    const rows = await this.db.transaction(async (tx) => {
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
    return this.entities(rows.rows.map((r) => Number(r.id)));
  }

  /** The most mentioned active entities and the edges among them. */
  async graph(opts: GraphFilter & { limit?: number; edgesPerNode?: number } = {}): Promise<GraphView> {
    const limit = clamp(opts.limit ?? 100, 1, 20_000);
    const kinds = this.checkKinds(opts.kinds);
    const at = checkAt(opts.at);
    const rows = await this.db.query<EntityRow>(
      `SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.status = 'active' AND ($1::text[] IS NULL OR e.kind = ANY($1::text[]))
       ORDER BY e.mention_count DESC, e.id LIMIT ${limit}`,
      [kinds],
    );
    const nodes = rows.rows.map((r) => ({ ...toEntity(r), hop: 0 }));
    const totals = (
      await this.db.query<{ entities: number; edges: number }>(
        `SELECT (SELECT count(*) FROM entities WHERE status = 'active')::int AS entities, (SELECT count(*) FROM entity_edges)::int AS edges`,
      )
    ).rows[0]!;
    return {
      nodes,
      edges: await this.edgesAmong(this.db, nodes.map((n) => n.id), clamp(opts.edgesPerNode ?? 20, 1, 5_000), at),
      totalEntities: totals.entities,
      totalEdges: totals.edges,
    };
  }

  /** The earliest instant any relation's valid time names (the time slider's start), or null without relations. */
  async earliestValidTime(): Promise<string | null> {
    const r = await this.db.query<{ t: Date | null }>(`SELECT least(min(valid_from), min(valid_to)) AS t FROM entity_edges`);
    return r.rows[0]?.t?.toISOString() ?? null;
  }

  /**
   * Where a neighbourhood view opens when no one chose: the most mentioned entity other than the two
   * fixed ones, or, when nothing has been mentioned yet (an imported graph), the person — every
   * conversation is theirs, so their neighbourhood is the natural first view.
   */
  async defaultCentre(): Promise<number> {
    const top = await this.db.query<{ id: number }>(
      `SELECT id FROM entities WHERE status = 'active' AND kind NOT IN ('self', 'user') AND mention_count > 0
       ORDER BY mention_count DESC, id LIMIT 1`,
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
  async ego(id: number, opts: GraphFilter & { hops?: number; limit?: number; fanout?: number } = {}): Promise<GraphView> {
    const centre = await this.entity(id);
    if (centre.status === 'merged') throw new ApiError('conflict', `Entity ${id} was merged into entity ${centre.mergedInto}; open that one.`, 'id');
    const h = clamp(Math.trunc(opts.hops ?? 2), 1, 3);
    const max = clamp(Math.trunc(opts.limit ?? 50), 1, 2000);
    const fan = clamp(Math.trunc(opts.fanout ?? 25), 1, 200);
    const kinds = this.checkKinds(opts.kinds);
    const at = checkAt(opts.at);
    return this.db.transaction(async (tx) => {
      // The planner, seeing ~10 edges per entity on average, prefers a bitmap scan that reads all of a
      // hub's thousands of edges and sorts them; the (end, weight DESC) index read in order stops at the LIMIT.
      await tx.query('SET LOCAL enable_bitmapscan = off');
      return this.egoIn(tx, centre.id, h, max, fan, kinds, at);
    });
  }

  private async egoIn(tx: Transaction, centreId: number, h: number, max: number, fan: number, kinds: string[] | null, at: string | null): Promise<GraphView> {
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
    const nodes = (await this.entities(chosen, tx)).map((e) => ({ ...e, hop: strength.get(e.id)!.hop }));
    return { nodes, edges: await this.edgesAmong(tx, chosen, fan, at) };
  }

  /**
   * The edges among `ids` that hold at `at`, read in one scan of the (source, target) index, with
   * each node keeping its `perNode` heaviest: an edge is drawn when it is among the heaviest of either
   * end. A hub's thousands of edges to nodes not drawn are never read, a hub cannot crowd out a small
   * node's only tie, and the map stays bounded (at most perNode edges per node).
   */
  private async edgesAmong(db: Queryable, ids: number[], perNode: number, at: string | null): Promise<EntityEdge[]> {
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

  /** Entities by id, in the order asked; missing ids are skipped. */
  async entities(ids: number[], db: Queryable = this.db): Promise<Entity[]> {
    if (!ids.length) return [];
    const rows = await rowsAsJson<EntityRow>(db, `SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.id = ANY($1::bigint[])`, [ids]);
    const byId = new Map(rows.map((r) => [Number(r.id), toEntity(r)]));
    return ids.flatMap((i) => byId.get(i) ?? []);
  }

  async history(id: number): Promise<EntityChange[]> {
    const rows = await this.db.query<ChangeRow>('SELECT * FROM entity_changes WHERE entity_id = $1 OR other_id = $1 ORDER BY id', [checkId(id, 'id')]);
    return rows.rows.map(toChange);
  }

  private checkKinds(kinds: EntityKind[] | undefined): string[] | null {
    if (kinds === undefined) return null;
    const bad = kinds.find((k) => !ENTITY_KINDS.includes(k));
    if (bad !== undefined) invalid('kinds', `Unknown entity kind "${String(bad)}": use ${ENTITY_KINDS.join(', ')}.`);
    return kinds.length ? [...kinds] : null;
  }

  // ---- mentions ----

  /**
   * Records the entities a message or memory mentions: names detected in `text` and names given
   * with it, each resolved to an entity (created when new), with mention rows, counts, first/last
   * seen and co-mention edge weights — in one transaction. Recording the same source again brings
   * it up to date (a memory that was edited): names no longer there lose their mention, and their
   * co-mention weights go down by one. Detection runs before the transaction opens.
   */
  async recordMentions(input: RecordInput): Promise<RecordedMention[]> {
    const hasMessage = input.messageId !== undefined;
    const hasMemory = input.memoryId !== undefined;
    if (hasMessage === hasMemory) invalid('messageId', 'Record mentions for a message or for a memory: exactly one of messageId and memoryId.');
    if (hasMemory) checkId(input.memoryId, 'memoryId');
    if (typeof input.text !== 'string') invalid('text', 'text must be a string.');

    const wanted = await this.namesIn(input.text, input.names ?? []);
    let touched: number[] = [];
    const recorded = await this.db.transaction(async (tx) => {
      const source = hasMessage
        ? (await tx.query<{ at: Date }>('SELECT created_at AS at FROM messages WHERE id = $1', [input.messageId])).rows[0]
        : (await tx.query<{ at: Date }>('SELECT created_at AS at FROM memories WHERE id = $1', [input.memoryId])).rows[0];
      if (!source) throw new ApiError('not_found', hasMessage ? `There is no message ${input.messageId}.` : `There is no memory ${input.memoryId}.`);
      const at = input.at ?? source.at;
      const column = hasMessage ? 'message_id' : 'memory_id';
      const sourceId = hasMessage ? input.messageId! : input.memoryId!;

      const existing = (
        await tx.query<{ id: number; entity_id: number; surface_key: string }>(
          `SELECT id, entity_id, surface_key FROM entity_mentions WHERE ${column} = $1`,
          [sourceId],
        )
      ).rows;
      const before = new Set(existing.map((r) => Number(r.entity_id)));
      const kept = new Map(existing.map((r) => [r.surface_key, Number(r.entity_id)]));
      const wantedKeys = new Set(wanted.map((w) => w.key));

      // A name already recorded for this source keeps its entity (it may have been merged since).
      const fresh = wanted.filter((w) => !kept.has(w.key));
      const resolved = await this.resolveKeys(tx, fresh);
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
          entityId = await this.createEntity(tx, w.name, w.key, w.kind, at);
          created = true;
          // Later texts find it by its key; the close names it was not matched to wait for a judge.
          if (r.candidates.length) {
            await tx.query(
              'INSERT INTO entity_ambiguities (entity_id, surface, candidate_ids, similarities) VALUES ($1, $2, $3::bigint[], $4::real[])',
              [entityId, w.name, r.candidates.map((c) => c.id), r.candidates.map((c) => c.similarity)],
            );
          }
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
      if (removed.length) await this.refreshStats(tx, removed);

      const oldPairs = new Set(pairsOf([...before]).map(pairKey));
      const newPairs = pairsOf([...after]);
      const newKeys = new Set(newPairs.map(pairKey));
      const plus = newPairs.filter((p) => !oldPairs.has(pairKey(p)));
      const minus = pairsOf([...before]).filter((p) => !newKeys.has(pairKey(p)));
      await this.bumpCoMentions(tx, plus, 1);
      await this.bumpCoMentions(tx, minus, -1);

      await tx.query(
        `INSERT INTO entity_scans (${column}, scanned_at) VALUES ($1, now()) ON CONFLICT (${column}) DO UPDATE SET scanned_at = now()`,
        [sourceId],
      );
      touched = [...added, ...removed];
      return result;
    });
    this.changed(touched);
    return recorded;
  }

  /** The names to record for a text: detected ones, then given ones (kinds from detection when they agree). */
  private async namesIn(
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
        if (raw) this.log('info', `graph: skipped a given entity name that is not a name (${JSON.stringify(String(raw).slice(0, 40))})`);
        continue;
      }
      if (seen.has(clean.key)) continue;
      // A given name without a kind: what detection makes of the name on its own, else a thing.
      const kind = (typeof g === 'object' && g.kind) || (await kindOfName(clean.name)) || 'thing';
      seen.set(clean.key, kind);
      out.push({ ...clean, kind, origin: 'given' });
    }
    if (out.length > MAX_NAMES_PER_SOURCE) {
      this.log('info', `graph: ${out.length} names in one text; recording the first ${MAX_NAMES_PER_SOURCE}`);
      out.length = MAX_NAMES_PER_SOURCE;
    }
    return out;
  }

  private async createEntity(tx: Transaction, name: string, key: string, kind: EntityKind, at: Date | null): Promise<number> {
    const row = (
      await tx.query<{ id: number }>(
        `INSERT INTO entities (kind, name, name_key, first_seen, last_seen) VALUES ($1, $2, $3, $4, $4) RETURNING id`,
        [kind === 'self' || kind === 'user' ? 'person' : kind, name, key, at],
      )
    ).rows[0]!;
    return Number(row.id);
  }

  private async bumpCoMentions(tx: Transaction, pairs: [number, number][], by: 1 | -1): Promise<void> {
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
  private async refreshStats(tx: Transaction, ids: number[]): Promise<void> {
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

  /**
   * Folds the merged entity's co-mention edges into keep's: keep–x gets gone–x's weight, less the
   * texts that already named all three (weight counts texts, and those were counted on both edges);
   * the keep–gone edge goes. Imported edges have no mention rows behind them, so they simply add.
   * Runs before the mentions move. Returns what it folded, for undo.
   */
  private async foldCoMentions(tx: Transaction, keepId: number, goneId: number): Promise<FoldedCoMention[]> {
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
    if (add.length) {
      await tx.query(
        `INSERT INTO entity_edges (source_id, target_id, relation, weight)
         SELECT least($1::bigint, o), greatest($1::bigint, o), 'co_mention', w FROM unnest($2::bigint[], $3::real[]) AS p(o, w)
         ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
         DO UPDATE SET weight = entity_edges.weight + EXCLUDED.weight, updated_at = now()`,
        [keepId, add.map((f) => f.other), add.map((f) => f.weight - f.overlap)],
      );
    }
    return folded;
  }

  /** Undoes foldCoMentions: keep–x gives back what it gained (mentions since stay with keep), gone–x comes back. */
  private async unfoldCoMentions(tx: Transaction, keepId: number, goneId: number, folded: FoldedCoMention[]): Promise<void> {
    const gained = folded.filter((f) => f.other !== keepId && f.weight - f.overlap > 0);
    if (gained.length) {
      await tx.query(
        `UPDATE entity_edges e SET weight = greatest(e.weight - p.w, 0), updated_at = now()
         FROM unnest($2::bigint[], $3::real[]) AS p(o, w)
         WHERE e.relation = 'co_mention' AND e.source_id = least($1::bigint, p.o) AND e.target_id = greatest($1::bigint, p.o)`,
        [keepId, gained.map((f) => f.other), gained.map((f) => f.weight - f.overlap)],
      );
      await tx.query(
        `DELETE FROM entity_edges e WHERE e.relation = 'co_mention' AND e.weight <= 0 AND (e.source_id = $1 OR e.target_id = $1)`,
        [keepId],
      );
    }
    if (folded.length) {
      await tx.query(
        `INSERT INTO entity_edges (source_id, target_id, relation, weight)
         SELECT least($1::bigint, o), greatest($1::bigint, o), 'co_mention', w FROM unnest($2::bigint[], $3::real[]) AS p(o, w)
         ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
         DO UPDATE SET weight = entity_edges.weight + EXCLUDED.weight, updated_at = now()`,
        [goneId, folded.map((f) => f.other), folded.map((f) => f.weight)],
      );
    }
  }

  /**
   * Resolves keys: exact name or alias key first (one query for all keys), then trigram
   * similarity for the rest (one more, a probe per key inside it). Merged entities never match (their names are their
   * survivor's aliases). Hidden ones do: a hidden entity mentioned again stays one entity, still hidden.
   */
  private async resolveKeys(
    tx: Transaction,
    items: { key: string; kind?: EntityKind }[],
  ): Promise<Map<string, { entityId: number | null; via: Resolution['via']; similarity?: number; candidates: Resolution['candidates'] }>> {
    const out = new Map<string, { entityId: number | null; via: Resolution['via']; similarity?: number; candidates: Resolution['candidates'] }>();
    if (!items.length) return out;
    const keys = [...new Set(items.map((i) => i.key))];
    const exact = await tx.query<{ key: string; id: number; kind: EntityKind; name: string; mention_count: number; via: 'name' | 'alias' }>(
      `SELECT e.name_key AS key, e.id, e.kind, e.name, e.mention_count, 'name' AS via FROM entities e
       WHERE e.name_key = ANY($1::text[]) AND e.status <> 'merged'
       UNION ALL
       SELECT a.alias_key, e.id, e.kind, e.name, e.mention_count, 'alias' FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
       WHERE a.alias_key = ANY($1::text[]) AND e.status <> 'merged'`,
      [keys],
    );
    const byKey = new Map<string, Candidate[]>();
    for (const r of exact.rows) {
      const list = byKey.get(r.key) ?? [];
      if (!list.some((c) => c.id === Number(r.id))) {
        list.push({ id: Number(r.id), kind: r.kind, name: r.name, mentionCount: r.mention_count, similarity: 1, via: r.via });
      }
      byKey.set(r.key, list);
    }
    const rest: typeof items = [];
    for (const item of items) {
      if (out.has(item.key)) continue;
      const list = byKey.get(item.key);
      if (list?.length) {
        // Renames, aliases and merges refuse a key another entity holds, so two are a leftover of
        // kinds (a "Jordan" person and place): prefer the asked kind, then the most mentioned.
        const pool = item.kind ? list.filter((c) => kindsAgree(c.kind, item.kind!)) : list;
        const pick = (pool.length ? pool : list).sort((a, b) => b.mentionCount - a.mentionCount || a.id - b.id)[0]!;
        out.set(item.key, { entityId: pick.id, via: pick.via, similarity: 1, candidates: [] });
        continue;
      }
      rest.push(item);
    }
    if (rest.length) {
      const similar = await this.resolveSimilar(tx, rest.map((i) => i.key));
      for (const item of rest) {
        if (out.has(item.key)) continue;
        out.set(item.key, decideSimilar(similar.get(item.key) ?? [], item.kind));
      }
    }
    return out;
  }

  /** The ten most similar live names (or aliases) for each key, by trigram similarity, in one query. */
  private async resolveSimilar(tx: Transaction, keys: string[]): Promise<Map<string, Candidate[]>> {
    // Names of one or two characters have too few trigrams to compare ("jo", "王芳" are exact-only).
    const probed = [...new Set(keys)].filter((k) => [...k.replace(/\s/g, '')].length >= 3);
    const out = new Map<string, Candidate[]>();
    if (!probed.length) return out;
    // SET LOCAL: the connection is shared, and recall tunes the threshold for its own queries.
    await tx.query(`SET LOCAL pg_trgm.similarity_threshold = ${AMBIGUOUS_SIMILARITY}`);
    const rows = await tx.query<{ key: string; id: number; kind: EntityKind; name: string; mention_count: number; sim: number }>(
      `SELECT q.key, c.* FROM unnest($1::text[]) AS q(key)
       CROSS JOIN LATERAL (
         SELECT id, kind, name, mention_count, max(sim) AS sim FROM (
           SELECT e.id, e.kind, e.name, e.mention_count, similarity(e.name_key, q.key) AS sim FROM entities e
           WHERE e.name_key % q.key AND e.status <> 'merged' AND e.kind NOT IN ('self', 'user')
           UNION ALL
           SELECT e.id, e.kind, e.name, e.mention_count, similarity(a.alias_key, q.key) FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
           WHERE a.alias_key % q.key AND e.status <> 'merged' AND e.kind NOT IN ('self', 'user')
         ) c GROUP BY id, kind, name, mention_count ORDER BY max(sim) DESC, id LIMIT 10
       ) c`,
      [probed],
    );
    for (const r of rows.rows) {
      const list = out.get(r.key) ?? [];
      list.push({ id: Number(r.id), kind: r.kind, name: r.name, mentionCount: r.mention_count, similarity: Math.round(Number(r.sim) * 1000) / 1000, via: 'name' });
      out.set(r.key, list);
    }
    for (const list of out.values()) list.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
    return out;
  }

  // ---- the person's changes ----

  /** Renames an entity; the old name stays as an alias so mentions of it still find the entity. */
  async rename(id: number, newName: string, actor: MemoryActor = 'person'): Promise<EntityChangeResult> {
    checkId(id, 'id');
    const { name, key } = checkName(newName);
    return this.change(async (tx, journal) => {
      const current = await this.requireLive(tx, id, 'renamed');
      if (current.name === name) invalid('name', `Entity ${id} is already called “${name}”.`);
      await this.assertKeyFree(tx, key, id);
      const oldKey = (await tx.query<{ name_key: string }>('SELECT name_key FROM entities WHERE id = $1', [id])).rows[0]!.name_key;
      // Renaming to one of its own aliases turns that alias into the name.
      const ownAlias = (
        await tx.query<{ alias: string; alias_key: string }>('SELECT alias, alias_key FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key])
      ).rows[0];
      if (ownAlias) await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key]);
      let aliasAdded: { alias: string; key: string } | null = null;
      if (oldKey !== key) {
        const inserted = await tx.query(
          'INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [id, current.name, oldKey],
        );
        if (inserted.affectedRows) aliasAdded = { alias: current.name, key: oldKey };
      }
      await tx.query('UPDATE entities SET name = $2, name_key = $3, updated_at = now() WHERE id = $1', [id, name, key]);
      const change = await journal(tx, {
        entityId: id,
        action: 'rename',
        actor,
        before: { name: current.name, nameKey: oldKey, aliasRemoved: ownAlias ? { alias: ownAlias.alias, key: ownAlias.alias_key } : null },
        after: { name, nameKey: key, aliasAdded },
      });
      return { entity: await this.requireEntity(tx, id), changeId: change.id };
    });
  }

  /**
   * Another name for an entity. A name that already belongs to another entity is refused (merge them
   * instead): two entities answering to one name, or aliases pointing at each other in a cycle,
   * would make every later mention of it ambiguous.
   */
  async addAlias(id: number, alias: string, actor: MemoryActor = 'person'): Promise<EntityChangeResult> {
    checkId(id, 'id');
    const { name, key } = checkName(alias, 'alias');
    return this.change(async (tx, journal) => {
      await this.requireLive(tx, id, 'given an alias');
      const own = (await tx.query<{ name_key: string }>('SELECT name_key FROM entities WHERE id = $1', [id])).rows[0]!.name_key;
      if (own === key) invalid('alias', `“${name}” is already entity ${id}'s name.`);
      const dup = await tx.query('SELECT 1 FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key]);
      if (dup.rows.length) throw new ApiError('conflict', `“${name}” is already an alias of entity ${id}.`, 'alias');
      await this.assertKeyFree(tx, key, id, 'alias');
      await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3)', [id, name, key]);
      const change = await journal(tx, { entityId: id, action: 'alias', actor, before: null, after: { alias: name, key } });
      return { entity: await this.requireEntity(tx, id), changeId: change.id };
    });
  }

  /** Hides an entity from views (or shows it again). Its mentions and edges stay; undo reverses it. */
  async hide(id: number, hidden = true, actor: MemoryActor = 'person'): Promise<EntityChangeResult> {
    checkId(id, 'id');
    return this.change(async (tx, journal) => {
      const current = await this.requireLive(tx, id, hidden ? 'hidden' : 'shown');
      if (hidden && (current.kind === 'self' || current.kind === 'user')) {
        throw new ApiError('conflict', `Entity ${id} is ${current.kind === 'self' ? 'the companion' : 'the person'} and cannot be hidden.`);
      }
      if ((current.status === 'hidden') === hidden) throw new ApiError('conflict', `Entity ${id} is already ${hidden ? 'hidden' : 'shown'}.`);
      const status = hidden ? 'hidden' : 'active';
      await tx.query('UPDATE entities SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
      const change = await journal(tx, { entityId: id, action: hidden ? 'hide' : 'unhide', actor, before: { status: current.status }, after: { status } });
      return { entity: await this.requireEntity(tx, id), changeId: change.id };
    });
  }

  /**
   * "These are the same": `goneId` is merged into `keepId`. Its names become keep's aliases, its
   * mentions and typed edges move to keep, its co-mention edges fold into keep's; its row stays
   * (status merged, merged_into keep). The journal entry lists what moved, and undo moves it back.
   */
  async merge(keepId: number, goneId: number, actor: MemoryActor = 'person'): Promise<EntityChangeResult> {
    checkId(keepId, 'keepId');
    checkId(goneId, 'mergeId');
    if (keepId === goneId) invalid('mergeId', 'An entity cannot be merged with itself.');
    return this.change(async (tx, journal) => {
      const keep = await this.requireLive(tx, keepId, 'merged into', 'keepId');
      const gone = await this.requireLive(tx, goneId, 'merged', 'mergeId');
      if (gone.kind === 'self' || gone.kind === 'user') {
        throw new ApiError('conflict', `Entity ${goneId} is ${gone.kind === 'self' ? 'the companion' : 'the person'}; merge the other entity into it instead.`, 'mergeId');
      }
      const keepKeys = new Set(
        (
          await tx.query<{ k: string }>(
            'SELECT name_key AS k FROM entities WHERE id = $1 UNION SELECT alias_key FROM entity_aliases WHERE entity_id = $1',
            [keepId],
          )
        ).rows.map((r) => r.k),
      );
      const goneNames = (
        await tx.query<{ name: string; k: string }>(
          'SELECT name, name_key AS k FROM entities WHERE id = $1 UNION ALL SELECT alias, alias_key FROM entity_aliases WHERE entity_id = $1',
          [goneId],
        )
      ).rows;
      const aliasKeys: string[] = [];
      for (const n of goneNames) {
        if (keepKeys.has(n.k)) continue;
        keepKeys.add(n.k);
        await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3)', [keepId, n.name, n.k]);
        aliasKeys.push(n.k);
      }
      const mentionIds = (await tx.query<{ id: number }>('SELECT id FROM entity_mentions WHERE entity_id = $1', [goneId])).rows.map((r) => Number(r.id));
      // Typed edges move unless they would point at keep itself ("Ana Sousa sister_of Ana") or repeat
      // one keep already has (same relation, other end and valid time): those stay on the merged row,
      // which no view or walk reads, and come back with it on undo.
      const movable = `relation <> 'co_mention' AND NOT EXISTS (
           SELECT 1 FROM entity_edges k WHERE k.relation = x.relation
             AND k.source_id = CASE WHEN x.source_id = $2 THEN $1 ELSE x.source_id END
             AND k.target_id = CASE WHEN x.target_id = $2 THEN $1 ELSE x.target_id END
             AND k.valid_from IS NOT DISTINCT FROM x.valid_from AND k.valid_to IS NOT DISTINCT FROM x.valid_to)`;
      const sourceEdgeIds = (
        await tx.query<{ id: number }>(
          `UPDATE entity_edges x SET source_id = $1, updated_at = now() WHERE source_id = $2 AND target_id <> $1 AND ${movable} RETURNING id`,
          [keepId, goneId],
        )
      ).rows.map((r) => Number(r.id));
      const targetEdgeIds = (
        await tx.query<{ id: number }>(
          `UPDATE entity_edges x SET target_id = $1, updated_at = now() WHERE target_id = $2 AND source_id <> $1 AND ${movable} RETURNING id`,
          [keepId, goneId],
        )
      ).rows.map((r) => Number(r.id));
      const coMentions = await this.foldCoMentions(tx, keepId, goneId);
      await tx.query('UPDATE entity_mentions SET entity_id = $1 WHERE id = ANY($2::bigint[])', [keepId, mentionIds]);
      await tx.query(`UPDATE entities SET status = 'merged', merged_into = $2, updated_at = now() WHERE id = $1`, [goneId, keepId]);
      // Until deep sleep writes one for the merged whole, keep shows what was known as the other.
      const profileTaken = (
        await tx.query<{ p: number }>(
          `UPDATE entities k SET profile_memory_id = g.profile_memory_id FROM entities g
           WHERE k.id = $1 AND g.id = $2 AND k.profile_memory_id IS NULL AND g.profile_memory_id IS NOT NULL
           RETURNING k.profile_memory_id AS p`,
          [keepId, goneId],
        )
      ).rows[0]?.p;
      await this.refreshStats(tx, [keepId, goneId]);
      const change = await journal(tx, {
        entityId: keepId,
        otherId: goneId,
        action: 'merge',
        actor,
        before: { gone: { status: gone.status, mergedInto: null } },
        after: {
          gone: { status: 'merged', mergedInto: keepId },
          aliasKeys,
          mentionIds,
          sourceEdgeIds,
          targetEdgeIds,
          coMentions,
          profileTaken: profileTaken === undefined ? null : Number(profileTaken),
        },
      });
      return { entity: await this.requireEntity(tx, keepId), changeId: change.id };
    });
  }

  /**
   * A typed, directed relation between two entities ("works_at", "sister_of"), with valid time and
   * the memories it rests on. Filling these is the background model's job (a later part); the
   * checks live here so nothing can point at a missing or merged entity.
   */
  async relate(
    input: { sourceId: number; targetId: number; relation: string; weight?: number; validFrom?: string | null; validTo?: string | null; evidenceMemoryIds?: number[] },
    actor: MemoryActor = 'graph',
  ): Promise<EntityEdge> {
    const sourceId = checkId(input.sourceId, 'sourceId');
    const targetId = checkId(input.targetId, 'targetId');
    if (sourceId === targetId) invalid('targetId', 'A relation needs two different entities.');
    const relation = typeof input.relation === 'string' ? input.relation.trim() : '';
    if (!isRelationWord(relation)) invalid('relation', RELATION_WORD);
    if (relation === 'co_mention') invalid('relation', 'co_mention edges come from mentions; they cannot be added by hand.');
    const weight = input.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) invalid('weight', 'weight must be a number ≥ 0.');
    const validFrom = checkTime(input.validFrom, 'validFrom');
    const validTo = checkTime(input.validTo, 'validTo');
    if (validFrom && validTo && validTo < validFrom) invalid('validTo', 'validTo is before validFrom.');
    const evidence = [...new Set(input.evidenceMemoryIds ?? [])].map((m) => checkId(m, 'evidenceMemoryIds'));
    return this.change(async (tx, journal) => {
      await this.requireLive(tx, sourceId, 'related', 'sourceId');
      await this.requireLive(tx, targetId, 'related', 'targetId');
      if (evidence.length) {
        const found = new Set((await tx.query<{ id: number }>('SELECT id FROM memories WHERE id = ANY($1::bigint[])', [evidence])).rows.map((r) => Number(r.id)));
        const missing = evidence.find((m) => !found.has(m));
        if (missing !== undefined) throw new ApiError('not_found', `There is no memory ${missing}.`, 'evidenceMemoryIds');
      }
      const edge = toEdge(
        (
          await tx.query<EdgeRow>(
            `INSERT INTO entity_edges (source_id, target_id, relation, weight, valid_from, valid_to, evidence_memory_ids)
             VALUES ($1, $2, $3, $4, $5, $6, $7::bigint[]) RETURNING ${EDGE_COLUMNS}`,
            [sourceId, targetId, relation, weight, validFrom, validTo, evidence],
          )
        ).rows[0]!,
      );
      await journal(tx, { entityId: sourceId, otherId: targetId, action: 'relate', actor, before: null, after: { edge } });
      return edge;
    });
  }

  // ---- typed relations and profiles from the sleep cycle ----
  // Light sleep adds relations (relate) or says one again (strengthen); deep sleep closes them
  // (close) and keeps a profile memory per entity. Every change to an edge is journalled and undone
  // from the journal; nothing here deletes an edge.

  /**
   * The entities these names mean, made when unknown — resolved the way recordMentions resolves the
   * names given with a memory (key, alias, then trigram among kinds that agree; a close but uncertain
   * name gets a new entity and an entity_ambiguities row), so the graph indexer, reading the same
   * memory later, lands on the same entities. Returns name keys (names.ts nameKey) to entity ids;
   * strings that are not names are left out.
   */
  async ensureEntities(names: string[], at: Date | null = null): Promise<Map<string, number>> {
    const wanted = new Map<string, { name: string; key: string; kind: EntityKind }>();
    for (const raw of names) {
      const clean = typeof raw === 'string' ? cleanName(raw) : null;
      if (!clean || wanted.has(clean.key)) continue;
      // A name on its own: the kind detection gives it, else a thing (as for given names).
      wanted.set(clean.key, { ...clean, kind: (await kindOfName(clean.name)) ?? 'thing' });
    }
    const out = new Map<string, number>();
    if (!wanted.size) return out;
    const created: number[] = [];
    await this.db.transaction(async (tx) => {
      const resolved = await this.resolveKeys(tx, [...wanted.values()]);
      for (const w of wanted.values()) {
        const r = resolved.get(w.key)!;
        let id = r.entityId;
        if (id === null) {
          id = await this.createEntity(tx, w.name, w.key, w.kind, at);
          created.push(id);
          if (r.candidates.length) {
            await tx.query(
              'INSERT INTO entity_ambiguities (entity_id, surface, candidate_ids, similarities) VALUES ($1, $2, $3::bigint[], $4::real[])',
              [id, w.name, r.candidates.map((c) => c.id), r.candidates.map((c) => c.similarity)],
            );
          }
        }
        out.set(w.key, id);
      }
    });
    this.changed(created);
    return out;
  }

  /**
   * Says a relation again: the edge with the same source, relation and target whose valid time ends
   * the same way (still open, for an open one) gains weight 1 and the evidence memories, and starts
   * at the earlier of the two starts when both are known. Journalled ('strengthen'); undo takes back
   * exactly what it added. Null when there is no such edge — relate() adds it then.
   */
  async strengthen(
    input: { sourceId: number; targetId: number; relation: string; validFrom?: string | null; validTo?: string | null; evidenceMemoryIds?: number[] },
    actor: MemoryActor = 'graph',
  ): Promise<EntityEdge | null> {
    const sourceId = checkId(input.sourceId, 'sourceId');
    const targetId = checkId(input.targetId, 'targetId');
    const relation = typeof input.relation === 'string' ? input.relation.trim() : '';
    if (!isRelationWord(relation) || relation === 'co_mention') invalid('relation', RELATION_WORD);
    const validFrom = checkTime(input.validFrom, 'validFrom');
    const validTo = checkTime(input.validTo, 'validTo');
    const evidence = [...new Set(input.evidenceMemoryIds ?? [])].map((m) => checkId(m, 'evidenceMemoryIds'));
    return this.change(async (tx, journal) => {
      const row = (
        await tx.query<EdgeRow>(
          `SELECT ${EDGE_COLUMNS} FROM entity_edges
           WHERE source_id = $1 AND target_id = $2 AND relation = $3 AND valid_to IS NOT DISTINCT FROM $4::timestamptz
           ORDER BY id LIMIT 1`,
          [sourceId, targetId, relation, validTo],
        )
      ).rows[0];
      if (!row) return null;
      const before = toEdge(row);
      const known = new Set(before.evidenceMemoryIds);
      const start =
        before.validFrom && validFrom ? (Date.parse(validFrom) < Date.parse(before.validFrom) ? validFrom : before.validFrom) : before.validFrom ?? validFrom;
      // An unknown start stays unknown: the relation was known before this memory said when it began.
      const keepStart = before.validFrom === null ? null : start;
      const edge = toEdge(
        (
          await tx.query<EdgeRow>(
            `UPDATE entity_edges SET weight = weight + 1, valid_from = $2, evidence_memory_ids = $3::bigint[], updated_at = now()
             WHERE id = $1 RETURNING ${EDGE_COLUMNS}`,
            [before.id, keepStart, [...before.evidenceMemoryIds, ...evidence.filter((m) => !known.has(m))]],
          )
        ).rows[0]!,
      );
      await journal(tx, { entityId: sourceId, otherId: targetId, action: 'strengthen', actor, before: { edge: before }, after: { edge } });
      return edge;
    });
  }

  /**
   * Ends an open typed relation at `validTo` (never before it began). Journalled ('close', with
   * `cause` in its after); undo reopens it. The edge stays: on the time slider it is history.
   */
  async closeRelation(edgeId: number, validTo: string, actor: MemoryActor = 'graph', cause: Record<string, unknown> = {}): Promise<EntityEdge> {
    checkId(edgeId, 'edgeId');
    const end = checkTime(validTo, 'validTo')!;
    return this.change(async (tx, journal) => {
      const row = (await tx.query<EdgeRow>(`SELECT ${EDGE_COLUMNS} FROM entity_edges WHERE id = $1`, [edgeId])).rows[0];
      if (!row) throw new ApiError('not_found', `There is no relation ${edgeId}.`, 'edgeId');
      const before = toEdge(row);
      if (before.relation === 'co_mention') invalid('edgeId', 'Co-mention edges have no valid time to close.');
      if (before.validTo !== null) throw new ApiError('conflict', `Relation ${edgeId} already ended on ${before.validTo}.`, 'edgeId');
      const at = before.validFrom && Date.parse(before.validFrom) > Date.parse(end) ? before.validFrom : end;
      const edge = toEdge(
        (await tx.query<EdgeRow>(`UPDATE entity_edges SET valid_to = $2, updated_at = now() WHERE id = $1 RETURNING ${EDGE_COLUMNS}`, [edgeId, at])).rows[0]!,
      );
      await journal(tx, { entityId: edge.source, otherId: edge.target, action: 'close', actor, before: { edge: before }, after: { ...cause, edge } });
      return edge;
    });
  }

  /**
   * Closes the open typed relations that rested on these memories and now rest on no active memory
   * at all (deep sleep superseded or expired them): each ends when the latest of those memories
   * stopped being true (their valid_to: where the newer memory began, or the expiry), else at
   * `fallback`. A relation the person reopened (an undone close) is left open. Returns the closed edges.
   */
  async closeUnsupported(memoryIds: number[], fallback: string, actor: MemoryActor = 'deep-sleep'): Promise<EntityEdge[]> {
    if (!memoryIds.length) return [];
    const rows = (
      await this.db.query<EdgeRow & { ends: Date | null; gone: number[] }>(
        `SELECT ${EDGE_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')},
                (SELECT max(m.valid_to) FROM memories m WHERE m.id = ANY(e.evidence_memory_ids) AND m.id = ANY($1::bigint[])) AS ends,
                ARRAY(SELECT x FROM unnest(e.evidence_memory_ids) AS x WHERE x = ANY($1::bigint[])) AS gone
         FROM entity_edges e
         WHERE e.relation <> 'co_mention' AND e.valid_to IS NULL AND e.evidence_memory_ids && $1::bigint[]
           AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = ANY(e.evidence_memory_ids) AND m.status = 'active')
           AND ${NOT_REOPENED('e.id')}
         ORDER BY e.id`,
        [memoryIds],
      )
    ).rows;
    const closed: EntityEdge[] = [];
    for (const r of rows) {
      const ends = r.ends ? new Date(r.ends).toISOString() : fallback;
      closed.push(await this.closeRelation(Number(r.id), ends, actor, { cause: 'evidence', memoryIds: (r.gone ?? []).map(Number) }));
    }
    return closed;
  }

  /**
   * Relations that hold one partner at a time: when an entity has two open edges of one such relation
   * to different others (lives_in Lisbon and lives_in Porto), each older one (by valid_from, else
   * when it was learned) ends where the next newer one to another entity begins. `bySource` ones are
   * one per source (someone lives in one place; a city has many people); `symmetric` ones are one per
   * entity at either end (partner_of: whichever way it was said). Older open edges to the newest
   * one's other end are the same fact and stay; a relation the person reopened stays open.
   * Returns the closed edges.
   */
  async closeReplaced(bySource: readonly string[], symmetric: readonly string[] = [], actor: MemoryActor = 'deep-sleep'): Promise<EntityEdge[]> {
    const relations = [...new Set([...bySource, ...symmetric])];
    if (!relations.length) return [];
    const rows = (
      await this.db.query<EdgeRow & { created_at: Date }>(
        `SELECT ${EDGE_COLUMNS}, created_at FROM entity_edges
         WHERE relation = ANY($1::text[]) AND relation <> 'co_mention' AND valid_to IS NULL ORDER BY id`,
        [relations],
      )
    ).rows;
    if (rows.length < 2) return [];
    type Held = { edge: EntityEdge; since: string; other: number };
    const groups = new Map<string, Held[]>();
    const add = (holder: number, h: Held) => {
      const key = `${holder}:${h.edge.relation}`;
      groups.set(key, [...(groups.get(key) ?? []), h]);
    };
    for (const r of rows) {
      const edge = toEdge(r);
      const since = edge.validFrom ?? iso(r.created_at)!;
      if (bySource.includes(edge.relation)) add(edge.source, { edge, since, other: edge.target });
      if (symmetric.includes(edge.relation)) {
        add(edge.source, { edge, since, other: edge.target });
        add(edge.target, { edge, since, other: edge.source });
      }
    }
    const contested = [...groups.values()].filter((list) => new Set(list.map((h) => h.other)).size > 1);
    if (!contested.length) return [];
    const reopened = new Set(
      (
        await this.db.query<{ id: number }>(
          `SELECT DISTINCT (c.after->'edge'->>'id')::bigint AS id FROM entity_changes c
           WHERE c.action = 'close' AND c.undone_by IS NOT NULL AND (c.after->'edge'->>'id')::bigint = ANY($1::bigint[])`,
          [contested.flatMap((list) => list.map((h) => h.edge.id))],
        )
      ).rows.map((r) => Number(r.id)),
    );
    const closed = new Map<number, EntityEdge>();
    for (const list of contested) {
      list.sort((a, b) => Date.parse(a.since) - Date.parse(b.since) || a.edge.id - b.edge.id);
      const newest = list[list.length - 1]!;
      for (const [i, held] of list.slice(0, -1).entries()) {
        if (held.other === newest.other || reopened.has(held.edge.id) || closed.has(held.edge.id)) continue;
        const next = list.slice(i + 1).find((n) => n.other !== held.other)!;
        closed.set(held.edge.id, await this.closeRelation(held.edge.id, next.since, actor, { cause: 'replaced', by: next.edge.id }));
      }
    }
    return [...closed.values()];
  }

  /**
   * Memories that carry on what others said (a merge, a split) become evidence wherever those were,
   * so a relation is not left resting on superseded memories only. Bookkeeping, not journalled.
   */
  async carryEvidence(fromIds: number[], toIds: number[]): Promise<number> {
    if (!fromIds.length || !toIds.length) return 0;
    const r = await this.db.query(
      `UPDATE entity_edges SET evidence_memory_ids = evidence_memory_ids || ARRAY(SELECT unnest($2::bigint[]) EXCEPT SELECT unnest(evidence_memory_ids)), updated_at = now()
       WHERE relation <> 'co_mention' AND evidence_memory_ids && $1::bigint[] AND NOT (evidence_memory_ids @> $2::bigint[])`,
      [fromIds, toIds],
    );
    return r.affectedRows ?? 0;
  }

  /**
   * Points an entity at its profile, inside the caller's transaction: deep sleep writes the profile
   * memory and the link together. Not journalled here: the memory's own journal says what changed.
   */
  async setProfileIn(tx: Transaction, entityId: number, memoryId: number): Promise<void> {
    const r = await tx.query('UPDATE entities SET profile_memory_id = $2, updated_at = now() WHERE id = $1', [checkId(entityId, 'entityId'), checkId(memoryId, 'memoryId')]);
    if (!r.affectedRows) throw new ApiError('not_found', `There is no entity ${entityId}.`, 'entityId');
  }

  /**
   * The entity's profile as it stands: the linked memory while active; if something later superseded
   * it (a merge), the active end of its chain; if an undo took it back, the active profile it had
   * replaced. Null when there is none.
   */
  async profileOf(id: number): Promise<number | null> {
    const linked = (await this.db.query<{ p: number | null }>('SELECT profile_memory_id AS p FROM entities WHERE id = $1', [checkId(id, 'id')])).rows[0]?.p;
    if (linked === null || linked === undefined) return null;
    const forward = (
      await this.db.query<{ id: number }>(
        `WITH RECURSIVE chain (id, depth) AS (
           SELECT $1::bigint, 0
           UNION ALL SELECT m.superseded_by, c.depth + 1 FROM chain c JOIN memories m ON m.id = c.id WHERE m.superseded_by IS NOT NULL AND c.depth < 50)
         SELECT c.id FROM chain c JOIN memories m ON m.id = c.id AND m.status = 'active' ORDER BY c.depth LIMIT 1`,
        [linked],
      )
    ).rows[0];
    if (forward) return Number(forward.id);
    // Undone: the profile it superseded came back (its supersede change was undone with it).
    const back = (
      await this.db.query<{ id: number }>(
        `WITH RECURSIVE chain (id, depth) AS (
           SELECT $1::bigint, 0
           UNION ALL SELECT c.memory_id, chain.depth + 1 FROM chain JOIN memory_changes c
             ON c.action = 'supersede' AND (c.after->>'supersededBy')::bigint = chain.id WHERE chain.depth < 20)
         SELECT chain.id FROM chain JOIN memories m ON m.id = chain.id AND m.status = 'active' ORDER BY chain.depth LIMIT 1`,
        [linked],
      )
    ).rows[0];
    return back ? Number(back.id) : null;
  }

  /**
   * Reverses a change: a rename gets its old name back (and loses the alias it left), an alias goes,
   * a hide is shown again, a merge puts the merged entity's mentions, edges and status back, a
   * relation is removed (the journal keeps it). Changes are undone newest first: a later change to
   * either entity that is not undone is a conflict. Mentions recorded after a merge under the merged
   * entity's names stay with the kept one: nothing says which of the two they meant.
   */
  /**
   * Loads entities and relations (a fixture, another app's export) through the same name resolution
   * as mentions, in one transaction: a name that is already known joins that entity instead of
   * making a copy. Edges refer to entities by their index in the list. Nothing is journalled: this is
   * new knowledge, not a change to what the person curated.
   */
  async importGraph(input: {
    entities: { name: string; kind: EntityKind; aliases?: string[] }[];
    edges: { source: number; target: number; relation: string; weight?: number; validFrom?: string | null; validTo?: string | null }[];
  }): Promise<{ entities: number; edges: number }> {
    const items = input.entities.map((e, i) => {
      if (!ENTITY_KINDS.includes(e.kind)) invalid(`entities.${i}.kind`, `Unknown entity kind "${String(e.kind)}": use one of ${ENTITY_KINDS.join(', ')}.`);
      return { ...checkName(e.name, `entities.${i}.name`), kind: e.kind, aliases: (e.aliases ?? []).map((a, j) => checkName(a, `entities.${i}.aliases.${j}`)) };
    });
    const edges = input.edges.map((e, i) => {
      for (const end of ['source', 'target'] as const) {
        if (!Number.isInteger(e[end]) || e[end] < 0 || e[end] >= items.length) throw new ApiError('not_found', `edges.${i}.${end}: there is no entity ${e[end]} in this import.`, `edges.${i}.${end}`);
      }
      const relation = e.relation.trim();
      if (!isRelationWord(relation)) invalid(`edges.${i}.relation`, RELATION_WORD);
      const weight = e.weight ?? 1;
      if (!Number.isFinite(weight) || weight < 0) invalid(`edges.${i}.weight`, 'weight must be a number ≥ 0.');
      const validFrom = checkTime(e.validFrom, `edges.${i}.validFrom`);
      const validTo = checkTime(e.validTo, `edges.${i}.validTo`);
      if (validFrom && validTo && validTo < validFrom) invalid(`edges.${i}.validTo`, 'validTo is before validFrom.');
      return { ...e, relation, weight, validFrom, validTo };
    });
    return this.db.transaction(async (tx) => {
      const resolved = await this.resolveKeys(tx, items.filter((it) => it.kind !== 'self' && it.kind !== 'user').map((it) => ({ key: it.key, kind: it.kind })));
      // 'self' and 'user' are the two fixed nodes, whatever name the import gives them.
      const fixedId = (kind: EntityKind) => (kind === 'self' ? SELF_ENTITY_ID : kind === 'user' ? USER_ENTITY_ID : null);
      // New names go in with one statement (keys are unique among them, so RETURNING is matched by key).
      const fresh = new Map<string, (typeof items)[number]>();
      for (const it of items) {
        if (fixedId(it.kind) === null && (resolved.get(it.key)?.entityId ?? null) === null && !fresh.has(it.key)) fresh.set(it.key, it);
      }
      const made = new Map<string, number>();
      const list = [...fresh.values()];
      for (let i = 0; i < list.length; i += 5_000) {
        const chunk = list.slice(i, i + 5_000);
        const r = await tx.query<{ id: number; name_key: string }>(
          `INSERT INTO entities (kind, name, name_key) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) RETURNING id, name_key`,
          [chunk.map((it) => it.kind), chunk.map((it) => it.name), chunk.map((it) => it.key)],
        );
        for (const row of r.rows) made.set(row.name_key, Number(row.id));
      }
      const ids = items.map((it) => fixedId(it.kind) ?? resolved.get(it.key)?.entityId ?? made.get(it.key)!);
      const aliases = items.flatMap((it, i) => (fixedId(it.kind) === null ? it.aliases.filter((a) => a.key !== it.key).map((a) => ({ id: ids[i]!, ...a })) : []));
      if (aliases.length) {
        await tx.query(
          `INSERT INTO entity_aliases (entity_id, alias, alias_key) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
          [aliases.map((a) => a.id), aliases.map((a) => a.name), aliases.map((a) => a.key)],
        );
      }
      const created = made.size;
      // Co-mention edges are stored once, smaller id first; a self-loop (two names of one entity) is dropped.
      const rows = edges
        .map((e) => {
          let [a, b] = [ids[e.source]!, ids[e.target]!];
          if (e.relation === 'co_mention' && a > b) [a, b] = [b, a];
          return { ...e, a, b };
        })
        .filter((e) => e.a !== e.b);
      let inserted = 0;
      for (let i = 0; i < rows.length; i += 5_000) {
        const chunk = rows.slice(i, i + 5_000);
        const r = await tx.query(
          `INSERT INTO entity_edges (source_id, target_id, relation, weight, valid_from, valid_to)
           SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::real[], $5::timestamptz[], $6::timestamptz[])
           ON CONFLICT DO NOTHING`,
          [chunk.map((e) => e.a), chunk.map((e) => e.b), chunk.map((e) => e.relation), chunk.map((e) => e.weight), chunk.map((e) => e.validFrom), chunk.map((e) => e.validTo)],
        );
        inserted += r.affectedRows ?? 0;
      }
      // PGlite has no autovacuum: without statistics a big import leaves the planner guessing (seq scans for trigram probes).
      await tx.query('ANALYZE entities, entity_aliases, entity_edges');
      return { entities: created, edges: inserted };
    });
  }

  async undo(changeId: number, actor: MemoryActor = 'person'): Promise<Entity> {
    checkId(changeId, 'changeId');
    return this.change(async (tx, journal) => {
      const row = (await tx.query<ChangeRow>('SELECT * FROM entity_changes WHERE id = $1', [changeId])).rows[0];
      if (!row) throw new ApiError('not_found', `There is no change ${changeId} in the entity journal.`, 'changeId');
      const c = toChange(row);
      if (c.action === 'undo') invalid('changeId', 'An undo cannot itself be undone; make the change again instead.');
      if (c.undoneBy !== null) throw new ApiError('conflict', `Change ${changeId} was already undone.`);
      const involved = c.otherId === null ? [c.entityId] : [c.entityId, c.otherId];
      const later = (
        await tx.query<{ id: number; action: string }>(
          `SELECT id, action FROM entity_changes
           WHERE id > $1 AND undone_by IS NULL AND action <> 'undo' AND (entity_id = ANY($2::bigint[]) OR other_id = ANY($2::bigint[]))
           ORDER BY id DESC LIMIT 1`,
          [changeId, involved],
        )
      ).rows[0];
      if (later) throw new ApiError('conflict', `Entity ${involved.join(' or ')} changed again since (change ${later.id}, ${later.action}); undo that first.`);

      const before = c.before ?? {};
      const after = c.after ?? {};
      switch (c.action) {
        case 'rename': {
          const oldKey = String(before.nameKey);
          const added = after.aliasAdded as { alias: string; key: string } | null;
          if (added) await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [c.entityId, added.key]);
          await this.assertKeyFree(tx, oldKey, c.entityId);
          await tx.query('UPDATE entities SET name = $2, name_key = $3, updated_at = now() WHERE id = $1', [c.entityId, before.name, oldKey]);
          const removed = before.aliasRemoved as { alias: string; key: string } | null;
          if (removed) {
            await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
              c.entityId,
              removed.alias,
              removed.key,
            ]);
          }
          break;
        }
        case 'alias':
          await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [c.entityId, after.key]);
          break;
        case 'hide':
        case 'unhide':
          await tx.query('UPDATE entities SET status = $2, updated_at = now() WHERE id = $1', [c.entityId, (before as { status: string }).status]);
          break;
        case 'merge': {
          const goneId = c.otherId!;
          const restore = (before.gone as { status: EntityStatus }).status;
          await tx.query('UPDATE entities SET status = $2, merged_into = NULL, updated_at = now() WHERE id = $1', [goneId, restore]);
          const ids = (k: string) => ((after[k] as number[] | undefined) ?? []).map(Number);
          await tx.query('UPDATE entity_mentions SET entity_id = $1 WHERE id = ANY($2::bigint[]) AND entity_id = $3', [goneId, ids('mentionIds'), c.entityId]);
          await tx.query('UPDATE entity_edges SET source_id = $1, updated_at = now() WHERE id = ANY($2::bigint[]) AND source_id = $3', [
            goneId,
            ids('sourceEdgeIds'),
            c.entityId,
          ]);
          await tx.query('UPDATE entity_edges SET target_id = $1, updated_at = now() WHERE id = ANY($2::bigint[]) AND target_id = $3', [
            goneId,
            ids('targetEdgeIds'),
            c.entityId,
          ]);
          await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = ANY($2::text[])', [c.entityId, (after.aliasKeys as string[]) ?? []]);
          await this.unfoldCoMentions(tx, c.entityId, goneId, (after.coMentions as FoldedCoMention[] | undefined) ?? []);
          if (typeof after.profileTaken === 'number') {
            // Only while keep still shows the taken profile: a newer one written since stays.
            await tx.query('UPDATE entities SET profile_memory_id = NULL WHERE id = $1 AND profile_memory_id = $2', [c.entityId, after.profileTaken]);
          }
          await this.refreshStats(tx, [c.entityId, goneId]);
          break;
        }
        case 'relate': {
          const edge = after.edge as { id: number } | undefined;
          if (edge) await tx.query(`DELETE FROM entity_edges WHERE id = $1 AND relation <> 'co_mention'`, [edge.id]);
          break;
        }
        case 'strengthen': {
          // Takes back what it added (weight 1, its evidence, an earlier start), keeping evidence carried in since.
          const was = before.edge as EntityEdge;
          const now = after.edge as EntityEdge;
          const added = now.evidenceMemoryIds.filter((m) => !was.evidenceMemoryIds.includes(m));
          await tx.query(
            `UPDATE entity_edges SET weight = greatest(0, weight - $2), valid_from = $3,
               evidence_memory_ids = ARRAY(SELECT x FROM unnest(evidence_memory_ids) WITH ORDINALITY AS u (x, n) WHERE NOT (x = ANY($4::bigint[])) ORDER BY n),
               updated_at = now()
             WHERE id = $1`,
            [was.id, now.weight - was.weight, was.validFrom, added],
          );
          break;
        }
        case 'close': {
          const was = before.edge as EntityEdge;
          await tx.query('UPDATE entity_edges SET valid_to = $2, updated_at = now() WHERE id = $1', [was.id, was.validTo]);
          break;
        }
      }
      const undo = await journal(tx, {
        entityId: c.entityId,
        otherId: c.otherId,
        action: 'undo',
        actor,
        // The undo entry says what it undid: its before is what the change wrote, its after what came back.
        before: { undoes: c.id, action: c.action, ...(c.after ?? {}) },
        after: c.before,
      });
      await tx.query('UPDATE entity_changes SET undone_by = $2 WHERE id = $1', [c.id, undo.id]);
      return this.requireEntity(tx, c.entityId);
    });
  }

  // ---- internals ----

  private async change<T>(
    fn: (
      tx: Transaction,
      journal: (
        tx: Transaction,
        c: { entityId: number; otherId?: number | null; action: EntityChange['action']; actor: MemoryActor; before: unknown; after: unknown },
      ) => Promise<EntityChange>,
    ) => Promise<T>,
  ): Promise<T> {
    const touched: number[] = [];
    const result = await this.db.transaction((tx) =>
      fn(tx, async (t, c) => {
        touched.push(c.entityId, ...(c.otherId ? [c.otherId] : []));
        const after = c.after;
        const row = (
          await t.query<ChangeRow>(
            `INSERT INTO entity_changes (entity_id, other_id, action, actor, before, after) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb) RETURNING *`,
            [c.entityId, c.otherId ?? null, c.action, c.actor, c.before === null ? null : JSON.stringify(c.before), after === null ? null : JSON.stringify(after)],
          )
        ).rows[0]!;
        return toChange(row);
      }),
    );
    this.changed(touched);
    return result;
  }

  /** Refuses a key that already names (or is an alias of) another live entity. */
  private async assertKeyFree(tx: Transaction, key: string, selfId: number, field = 'name'): Promise<void> {
    const other = (
      await tx.query<{ id: number; name: string }>(
        `SELECT e.id, e.name FROM entities e WHERE e.name_key = $1 AND e.status <> 'merged' AND e.id <> $2
         UNION ALL
         SELECT e.id, e.name FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
         WHERE a.alias_key = $1 AND e.status <> 'merged' AND e.id <> $2
         LIMIT 1`,
        [key, selfId],
      )
    ).rows[0];
    if (other) {
      throw new ApiError(
        'conflict',
        `That name already belongs to entity ${other.id} (“${other.name}”). If they are the same, merge them instead.`,
        field,
      );
    }
  }

  private async findEntity(db: Queryable, id: number): Promise<Entity | null> {
    const row = (await db.query<EntityRow>(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.id = $1`, [id])).rows[0];
    return row ? toEntity(row) : null;
  }

  private async requireEntity(db: Queryable, id: number, field = 'id'): Promise<Entity> {
    const e = await this.findEntity(db, id);
    if (!e) throw new ApiError('not_found', `There is no entity ${id}.`, field);
    return e;
  }

  /** An entity that exists and is not merged away. */
  private async requireLive(db: Queryable, id: number, verb: string, field = 'id'): Promise<Entity> {
    const e = await this.requireEntity(db, id, field);
    if (e.status === 'merged') {
      throw new ApiError('conflict', `Entity ${id} was merged into entity ${e.mergedInto}; only entities that were not merged can be ${verb}.`, field);
    }
    return e;
  }
}

/** An edge holds at `$n` (a timestamptz parameter, or null for "now and always"). */
const VALID_AT = (p: string) => `(${p}::timestamptz IS NULL OR ((valid_from IS NULL OR valid_from <= ${p}::timestamptz) AND (valid_to IS NULL OR valid_to > ${p}::timestamptz)))`;

/** The edge `$col` was not reopened by the person: no undone close of it in the journal. */
const NOT_REOPENED = (col: string) =>
  `NOT EXISTS (SELECT 1 FROM entity_changes c WHERE c.action = 'close' AND c.undone_by IS NOT NULL AND (c.after->'edge'->>'id')::bigint = ${col})`;

/** An optional date (ISO 8601) as an ISO string, null when absent, ApiError when unreadable. */
function checkTime(v: string | null | undefined, field: string): string | null {
  if (v === undefined || v === null) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t)) invalid(field, `${field} must be a date (ISO 8601), not "${v}".`);
  return new Date(t).toISOString();
}

function checkAt(at: string | undefined): string | null {
  if (at === undefined) return null;
  const t = Date.parse(at);
  if (Number.isNaN(t)) invalid('at', `at must be a date (ISO 8601), not "${at}".`);
  return new Date(t).toISOString();
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(Number.isFinite(n) ? n : lo, lo), hi);
}

const RELATION_WORD = 'A relation is a short snake_case word, like works_at or sister_of.';
const isRelationWord = (relation: string) => /^[a-z][a-z0-9_]{0,79}$/.test(relation);

/** One entity at least SAME_ENTITY_SIMILARITY alike (of a compatible kind) is the same; any other close names are ambiguous. */
function decideSimilar(
  all: Candidate[],
  kind: EntityKind | undefined,
): { entityId: number | null; via: Resolution['via']; similarity?: number; candidates: Resolution['candidates'] } {
  if (!all.length) return { entityId: null, via: 'none', candidates: [] };
  const strong = all.filter((c) => c.similarity >= SAME_ENTITY_SIMILARITY && (!kind || kindsAgree(c.kind, kind)));
  if (strong.length === 1) return { entityId: strong[0]!.id, via: 'similar', similarity: strong[0]!.similarity, candidates: [] };
  return { entityId: null, via: 'ambiguous', candidates: all.map(({ id, name, similarity }) => ({ id, name, similarity })) };
}

/** The kind detection gives a name on its own ("Lisbon" → place), if it finds the whole name. */
async function kindOfName(name: string): Promise<EntityKind | null> {
  const found = await detectMentionsAsync(name);
  const whole = found.find((m) => m.start === 0 && m.end === name.length);
  return whole?.kind ?? (found.length === 1 ? found[0]!.kind : null);
}
