// Graph-aware recall: from the best direct hits of a search, the entities they mention, a short walk
// over the entity graph (electron/graph/, migration 006), and a ranked list of the messages and
// memories that mention what the walk reached — one more weighted RRF branch ('graph', fusion.ts).
// SQL reads only; the graph itself is written by electron/graph/store.ts alone, and what the walk reads
// of it comes through electron/graph/walk-reads.ts (this file keeps the scoring).
//
// The walk (spreading activation, at most GRAPH_HOPS hops):
// - seeds: the top GRAPH_SEEDS hits of the lexical fusion. A seed message or memory lends its fused
//   score (0–1) to every live entity it mentions (entity_mentions; diary blocks have none):
//   a(e) = spec(e) × Σ seed scores (hop 0).
// - a hop: each frontier node u reads only its GRAPH_FANOUT heaviest edges (either direction, valid
//   now — valid_from not in the future, valid_to unset or in the future —, other end active and not
//   merged or hidden; one index range each way cut by LIMIT, as EntityStore.ego reads them), and each
//   neighbour v not reached at an earlier hop gains a(u) × GRAPH_DECAY × w(u,v) / w_max(u); a(v) is
//   that sum × spec(v). Only the GRAPH_FRONTIER strongest nodes of a hop go on to the next.
//   Why w / w_max(u), the node's own heaviest edge, and not the raw or a globally log-scaled weight:
//   co-mention weights grow with how often a node is mentioned, so on a global scale every edge of a
//   hub looks strong and every edge of a rarely named entity looks weak — activation would flow
//   through the hubs, the opposite of what a walk needs. Relative to the node's heaviest edge, the
//   weight says what share of that node's company the neighbour is (typed relations and co-mentions
//   compare on one scale per node), and because the heaviest edge passes exactly GRAPH_DECAY, the
//   decay order holds along any path: one hop ≤ 0.7 a, two hops ≤ 0.49 a.
// - spec(e), the IDF-like damping of frequent entities: log(1 + N / mention_count) / log(1 + N), in
//   (0, 1], N = messages + memories (the high-water marks recall already reads, no extra query). A
//   name said once keeps its whole activation; the two speakers of a LoCoMo conversation (130–250
//   mentions of 2,760 turns) keep 0.3–0.4 of it, and pass that damped activation on.
// - hubs, besides spec: a node costs its GRAPH_FANOUT heaviest edges, never its degree; an entity
//   reads items in proportion to its activation (GRAPH_ITEMS_PER_ENTITY for the strongest, a few for
//   the weakest), looking at no more than SCAN_FACTOR × that many of its newest mentions; and the
//   companion ('self', 1) and the person ('user', 2) are never walked: every chat message is between
//   the two, mostly as "I" and "you", which detection does not record, so their mention_count says
//   nothing about how central they are, and a path through them joins anything to anything.
// - items: the GRAPH_REACHED strongest entities lend their activation to the messages and memories
//   that mention them; an item scores the sum. Only items no direct branch ranked are scored (the
//   graph proposes what the words did not find; re-ranking the direct hits measured worse, see
//   GRAPH_WALK_DEFAULT in index.ts), so an item reached only through the graph ranks below the
//   strong direct hits. The filters are recall's own: a session item must be in the in-memory index
//   (chat, not replaced, finished) and in the conversations asked for; a semantic one active, of the
//   types asked for, not excluded. Every item is re-read by fetchHits like any other hit.
// Strength in the fusion is absolute (BranchList.full = 1): activation 1 is a rarely named entity the
// best direct hit names, so a list of items reached only through hubs stays weak.
import type { Transaction } from '../../db/database.js';
import { ApiError, type MemoryType, type RecallSource } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import { SELF_ENTITY_ID, USER_ENTITY_ID, type StoredEntity } from '../../graph/store.js';
import { heaviestEdges, mentionsOf, namesOf, newestMemoryMentions, resolveName, searchEntities, seedMentions, type WalkEdge } from '../../graph/walk-reads.js';
import type { BranchList, FusedHit } from './fusion.js';
import { MemoryIndex, type Sidecar } from './sidecar.js';

/** Seeds: the top direct hits of the lexical fusion. */
export const GRAPH_SEEDS = 5;
/** Hops from the seeds' entities. */
export const GRAPH_HOPS = 2;
/** Activation kept per hop along a node's heaviest edge. */
export const GRAPH_DECAY = 0.7;
/** Edges read per node (its heaviest): a hub costs this many, not its degree. */
export const GRAPH_FANOUT = 10;
/** Nodes of one hop that go on to the next (the strongest). */
export const GRAPH_FRONTIER = 10;
/** Reached entities whose items are scored (the strongest). */
export const GRAPH_REACHED = 20;
/** Items read per reached entity (its newest mentions). */
export const GRAPH_ITEMS_PER_ENTITY = 20;
/** Items the weakest reached entity still reads. */
const ITEMS_FLOOR = 3;
/** An entity's newest mentions looked at per item it may read. */
const SCAN_FACTOR = 10;
/** Never walked (see above). */
export const NEVER_WALKED: readonly number[] = [SELF_ENTITY_ID, USER_ENTITY_ID];

export interface GraphWalkParams {
  seeds: number;
  hops: number;
  decay: number;
  fanout: number;
  frontier: number;
  reached: number;
  itemsPerEntity: number;
  /** spec(e) is raised to this power (1 = as defined above). */
  specPower: number;
  /** Also score items a direct branch already ranked (re-ranking them); default: only new ones. */
  rerank: boolean;
}

export const DEFAULT_WALK: GraphWalkParams = {
  seeds: GRAPH_SEEDS,
  hops: GRAPH_HOPS,
  decay: GRAPH_DECAY,
  fanout: GRAPH_FANOUT,
  frontier: GRAPH_FRONTIER,
  reached: GRAPH_REACHED,
  itemsPerEntity: GRAPH_ITEMS_PER_ENTITY,
  specPower: 1,
  rerank: false,
};

export interface WalkInput {
  /** The lexical fusion, best first: the seeds are its head. */
  direct: FusedHit[];
  /** Sources searched: only 'session' and 'semantic' items carry mentions. */
  sources: RecallSource[];
  conversationIds?: string[];
  memoryTypes?: MemoryType[];
  excludeMemoryIds?: number[];
  /** messages + memories (the specificity's N). */
  population: number;
  /** How deep each list goes. */
  depth: number;
  /** Only these keys may be scored (the entity restriction), per source. */
  only?: { session?: ReadonlySet<number>; semantic?: ReadonlySet<number> };
}

export interface WalkResult {
  /** One list per source that has items: branch 'graph'. */
  lists: BranchList[];
  /** Entity id → activation and the hop it was reached at (0 = a seed's own entity). */
  activation: Map<number, { value: number; hop: number }>;
}

/** IDF-like specificity of an entity mentioned `mentions` times among `population` items, in (0, 1]. */
export function specificity(mentions: number, population: number): number {
  const n = Math.max(population, 1);
  const df = Math.min(Math.max(mentions, 1), n);
  return n <= 1 ? 1 : Math.log(1 + n / df) / Math.log(1 + n);
}

/**
 * The walk reads inside one transaction with bitmap scans off. Every read it makes is "a key's top
 * N by an indexed order" (a node's heaviest edges, an entity's newest mentions); without statistics
 * (PGlite has none) the planner reads those through a bitmap scan plus a sort — every edge of a hub,
 * every mention of the person's partner — instead of walking the index in order and stopping at the
 * LIMIT: 400 ms a walk at 100k messages (a hub with 36k mentions and 600 edges) against a few ms.
 * SET LOCAL ends with the transaction; nothing is written.
 */
export async function graphWalk(db: Database, side: Sidecar, input: WalkInput, tuning: Partial<GraphWalkParams> = {}): Promise<WalkResult> {
  return db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_bitmapscan = off');
    return walk(tx, side, input, { ...DEFAULT_WALK, ...tuning });
  });
}

async function walk(db: Transaction, side: Sidecar, input: WalkInput, P: GraphWalkParams): Promise<WalkResult> {
  const activation = new Map<number, { value: number; hop: number }>();
  const wantSession = input.sources.includes('session');
  const wantSemantic = input.sources.includes('semantic');
  const empty: WalkResult = { lists: [], activation };
  if (!wantSession && !wantSemantic) return empty;
  const fanout = Math.max(1, Math.trunc(P.fanout));

  // 1. Seeds → the live entities they mention, and (hop 1) those entities' heaviest edges, in one
  // statement, after the seed messages' ids. (Four short statements in all, not one: the single
  // statement this was first written as took 11 ms to plan; these take ~0.3–0.6 ms each.)
  const seeds = input.direct.slice(0, Math.max(0, Math.trunc(P.seeds))).filter((s) => s.source === 'session' || s.source === 'semantic');
  if (!seeds.length) return empty;
  const seedWeight = new Map(seeds.map((s) => [`${s.source}:${s.key}`, s.score]));
  const seedSeqs = seeds.filter((s) => s.source === 'session').map((s) => s.key);
  const seedMems = seeds.filter((s) => s.source === 'semantic').map((s) => s.key);
  const hops = Math.max(0, Math.min(2, Math.trunc(P.hops)));
  // Mentions name messages by id; recall knows them by seq.
  const seqOf = new Map<string, number>();
  if (seedSeqs.length) {
    const found = await db.query<{ id: string; seq: number }>('SELECT m.id, m.seq::float8 AS seq FROM messages m WHERE m.seq = ANY($1::bigint[])', [seedSeqs]);
    for (const r of found.rows) seqOf.set(r.id, Number(r.seq));
  }
  const bySeq = new Map([...seqOf].map(([id, seq]) => [seq, id]));
  const first = await seedMentions(db, {
    messageIds: seedSeqs.flatMap((seq) => bySeq.get(seq) ?? []),
    memoryIds: seedMems,
    never: NEVER_WALKED,
    fanout,
    edges: hops >= 1,
  });
  const seedSum = new Map<number, { w: number; mc: number }>();
  for (const r of first.mentions) {
    if (r.mentionCount === null) continue; // a hidden or merged entity
    const key = r.messageId !== null ? `session:${seqOf.get(r.messageId)}` : `semantic:${r.memoryId}`;
    const cur = seedSum.get(r.entity) ?? { w: 0, mc: r.mentionCount };
    cur.w += seedWeight.get(key) ?? 0;
    seedSum.set(r.entity, cur);
  }
  for (const [id, { w, mc }] of seedSum) if (w > 0) activation.set(id, { value: w * specificity(mc, input.population) ** P.specPower, hop: 0 });
  if (!activation.size) return empty;

  /** Spreads the frontier's activation over its edges to nodes not reached before; returns the new nodes. */
  const spread = (rows: WalkEdge[], hop: number): number[] => {
    // w / w_max(u): the node's heaviest edge read passes the whole decay. Two nodes joined by more
    // than one edge (a co-mention and a typed relation) are one neighbour, by the heaviest of them.
    const heaviest = new Map<number, number>();
    const pair = new Map<string, WalkEdge>();
    for (const r of rows) {
      heaviest.set(r.src, Math.max(heaviest.get(r.src) ?? 0, r.weight));
      const k = `${r.src}:${r.other}`;
      if ((pair.get(k)?.weight ?? -1) < r.weight) pair.set(k, r);
    }
    const gained = new Map<number, { sum: number; mc: number }>();
    for (const r of pair.values()) {
      if (activation.has(r.other) || !activation.has(r.src)) continue; // reached at an earlier hop; or not a live node
      const g = gained.get(r.other) ?? { sum: 0, mc: r.mc };
      g.sum += activation.get(r.src)!.value * P.decay * (r.weight / heaviest.get(r.src)!);
      gained.set(r.other, g);
    }
    const added: number[] = [];
    for (const [id, g] of gained) {
      const value = g.sum * specificity(g.mc, input.population) ** P.specPower;
      if (!(value > 0)) continue;
      activation.set(id, { value, hop });
      added.push(id);
    }
    return added;
  };
  // 2. The walk: hop 1 from what came with the seeds, hop 2 from the strongest of hop 1.
  let frontier = hops >= 1 ? spread(first.edges, 1) : [];
  for (let hop = 2; hop <= hops && frontier.length; hop++) {
    frontier = frontier.sort((a, b) => activation.get(b)!.value - activation.get(a)!.value || a - b).slice(0, Math.max(1, Math.trunc(P.frontier)));
    frontier = spread(await heaviestEdges(db, frontier, fanout, NEVER_WALKED), hop);
  }

  // 3. The items that mention the strongest reached entities, each entity's newest first.
  const ranked = [...activation.entries()].sort((a, b) => b[1].value - a[1].value || a[0] - b[0]).slice(0, Math.max(1, Math.trunc(P.reached)));
  const reached = ranked.map(([id]) => id);
  // Each entity reads items in proportion to its activation (the strongest `itemsPerEntity`, the
  // weakest a few): a weak entity's items can only rank through other entities' shares.
  const strongest = ranked[0]![1].value;
  const itemsPer = Math.max(1, Math.trunc(P.itemsPerEntity));
  const limits = ranked.map(([, a]) => Math.max(Math.min(itemsPer, ITEMS_FLOOR), Math.ceil((itemsPer * a.value) / strongest)));
  // …and looks at no more than SCAN_FACTOR × that many of its newest mentions: when most of a hub's
  // mentions are outside the conversations asked for, its older ones there are not looked for.
  const scans = limits.map((l) => l * SCAN_FACTOR);
  // Left out in SQL, before each entity's limit: the seeds, and (unless re-ranking) every direct hit.
  const skip = { session: new Set(seedSeqs), semantic: new Set(seedMems) };
  if (!P.rerank) for (const d of input.direct) if (d.source === 'session' || d.source === 'semantic') skip[d.source].add(d.key);
  for (const id of input.excludeMemoryIds ?? []) skip.semantic.add(id);
  const restricted = input.conversationIds !== undefined;
  const types = input.memoryTypes?.length ? input.memoryTypes : null;
  const parts: string[] = [];
  const params: unknown[] = [reached, limits, scans];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (wantSession && (!restricted || input.conversationIds!.length)) {
    parts.push(`SELECT 'session' AS source, f.id::float8 AS entity, i.key FROM unnest($1::bigint[], $2::int[], $3::int[]) AS f(id, lim, scan) CROSS JOIN LATERAL (
      SELECT m.seq::float8 AS key
      FROM ${mentionsOf('f.id', 'message', 'f.scan')} x
      JOIN messages m ON m.id = x.item
      WHERE m.replaced_by IS NULL AND m.status <> 'streaming'
        AND NOT (m.seq = ANY(${param([...skip.session])}::bigint[]))
        ${restricted ? `AND m.conversation_id = ANY(${param(input.conversationIds)}::text[])` : ''}
      ORDER BY x.seen_at DESC LIMIT f.lim) i`);
  }
  if (wantSemantic) {
    parts.push(`SELECT 'semantic', f.id::float8, i.key FROM unnest($1::bigint[], $2::int[], $3::int[]) AS f(id, lim, scan) CROSS JOIN LATERAL (
      SELECT mm.id::float8 AS key
      FROM ${mentionsOf('f.id', 'memory', 'f.scan')} x
      JOIN memories mm ON mm.id = x.item
      WHERE mm.status = 'active'
        AND NOT (mm.id = ANY(${param([...skip.semantic])}::bigint[]))
        ${types ? `AND mm.type = ANY(${param(types)}::text[])` : ''}
      ORDER BY x.seen_at DESC LIMIT f.lim) i`);
  }
  if (!parts.length) return empty;
  const rows = (await db.query<{ source: 'session' | 'semantic'; entity: number; key: number }>(parts.join('\nUNION ALL\n'), params)).rows;

  const exclude = input.excludeMemoryIds?.length ? new Set(input.excludeMemoryIds) : null;
  const sessionScope = restricted ? side.session.scope(input.conversationIds!) : null;
  const memoryScope = MemoryIndex.scope(types);
  const scores = { session: new Map<number, number>(), semantic: new Map<number, number>() };
  for (const r of rows) {
    const key = Number(r.key);
    const source = r.source;
    // The seeds are already at the top; an item outside the entity restriction is not asked for.
    if (skip[source].has(key) || (input.only?.[source] && !input.only[source]!.has(key))) continue;
    if (source === 'session') {
      // In the index with text = a finished chat message recall can return; in the conversations asked for.
      const index = side.session.index;
      const slot = index.slotOf(key);
      if (slot === undefined || !index.hasLiveDoc(slot)) continue;
      if (restricted && (!sessionScope || !sessionScope[index.groupOf(slot)])) continue;
    } else {
      const index = side.memory.index;
      const slot = index.slotOf(key);
      if (slot === undefined || !index.hasLiveDoc(slot) || exclude?.has(key) || (memoryScope && !memoryScope[index.groupOf(slot)])) continue;
    }
    scores[source].set(key, (scores[source].get(key) ?? 0) + activation.get(Number(r.entity))!.value);
  }
  const lists: BranchList[] = [];
  for (const source of ['session', 'semantic'] as const) {
    const items = [...scores[source].entries()]
      .map(([key, score]) => ({ key, score }))
      .sort((a, b) => b.score - a.score || b.key - a.key)
      .slice(0, input.depth);
    // Strength is absolute: activation 1 (a rarely named entity the best hit names) is full strength.
    if (items.length) lists.push({ source, branch: 'graph', items, full: 1 });
  }
  return { lists, activation };
}

// ---- one entity: "everything about Bob" ----

/** What the items of the entities asked about are, per source (keys as recall uses them). */
export interface EntityItems {
  /** message seqs, newest first */
  session: number[];
  /** memory ids, newest first */
  semantic: number[];
  /** diary block ids (newest first) whose text names one of the entities */
  diary: number[];
}

/** Items read per entity and source: "everything" about the person's partner can be tens of thousands of messages; the newest are kept. */
export const ENTITY_ITEMS_MAX = 5000;

/**
 * The messages and memories that mention these entities, newest first (aliases resolve to the same
 * entity, and a merge moved the merged one's mentions, so both are included), and the diary blocks
 * whose words name them (diary blocks carry no mentions: their text is matched against the entities'
 * names and aliases — as a phrase in the full-text column, or as a substring for CJK names). Read in
 * one transaction with bitmap scans off, for the reason graphWalk gives.
 */
export async function entityItems(
  db: Database,
  entityIds: number[],
  o: { session: boolean; semantic: boolean; diary: boolean; conversationIds?: string[] },
): Promise<EntityItems> {
  return db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_bitmapscan = off');
    const restricted = o.conversationIds !== undefined;
    const newestFirst = (rows: { key: number; at: Date }[]) =>
      [...new Map(rows.map((r) => [Number(r.key), new Date(r.at).getTime()])).entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([key]) => key);
    const session =
      o.session && (!restricted || o.conversationIds!.length)
        ? newestFirst(
            (
              await tx.query<{ key: number; at: Date }>(
                `SELECT i.key, i.at FROM unnest($1::bigint[]) AS f(id) CROSS JOIN LATERAL (
                   SELECT m.seq::float8 AS key, x.seen_at AS at FROM ${mentionsOf('f.id', 'message')} x JOIN messages m ON m.id = x.item
                   WHERE m.replaced_by IS NULL ${restricted ? 'AND m.conversation_id = ANY($2::text[])' : ''}
                   ORDER BY x.seen_at DESC LIMIT ${ENTITY_ITEMS_MAX}) i`,
                restricted ? [entityIds, o.conversationIds] : [entityIds],
              )
            ).rows,
          )
        : [];
    const semantic = o.semantic ? newestFirst((await newestMemoryMentions(tx, entityIds, ENTITY_ITEMS_MAX)).map((r) => ({ key: r.id, at: r.at }))) : [];
    let diary: number[] = [];
    if (o.diary) {
      const names = await namesOf(tx, entityIds);
      const isCjk = (n: string) => /[\u3400-\u9fff]/.test(n);
      if (names.length) {
        diary = (
          await tx.query<{ key: number }>(
            `SELECT id::float8 AS key FROM diary_blocks
             WHERE hidden_at IS NULL AND (
               EXISTS (SELECT 1 FROM unnest($1::text[]) AS n WHERE numnode(phraseto_tsquery('english', n)) > 0 AND search_fts @@ phraseto_tsquery('english', n))
               OR EXISTS (SELECT 1 FROM unnest($2::text[]) AS n WHERE strpos(coalesce(title, '') || ' ' || body, n) > 0))
             ORDER BY id DESC LIMIT ${ENTITY_ITEMS_MAX}`,
            [names.filter((n) => !isCjk(n)), names.filter(isCjk)],
          )
        ).rows.map((r) => Number(r.key));
      }
    }
    return { session, semantic, diary };
  });
}

export type EntityLookup =
  | { ok: true; entity: StoredEntity }
  | { ok: false; reason: 'unknown' | 'ambiguous' | 'invalid' | 'hidden'; message: string; candidates: { id: number; name: string }[] };

/**
 * The entity a name means, read-only: resolveName, what EntityStore.resolve runs (name, alias, then
 * trigram ≥ 0.6 of a compatible kind), then searchEntities, what EntityStore.search runs (names that
 * start with it: "Bob" → "Bob Smith") when exactly one live entity matches. Hidden entities are not
 * offered; a merged one never resolves.
 */
export async function resolveEntityName(db: Database, name: string): Promise<EntityLookup> {
  let resolved;
  try {
    resolved = await resolveName(db, name);
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, reason: 'invalid', message: err.message, candidates: [] };
    throw err;
  }
  if (resolved.entity && resolved.entity.status === 'active') return { ok: true, entity: resolved.entity };
  if (resolved.entity?.status === 'hidden') {
    return { ok: false, reason: 'hidden', message: `the person hid "${resolved.entity.name}" from the graph; do not look it up by name.`, candidates: [] };
  }
  const found = (await searchEntities(db, name, 5)).filter((e) => e.status === 'active');
  if (found.length === 1) return { ok: true, entity: found[0]! };
  const candidates = [...resolved.candidates.map((c) => ({ id: c.id, name: c.name })), ...found.map((e) => ({ id: e.id, name: e.name }))].filter(
    (c, i, all) => all.findIndex((d) => d.id === c.id) === i,
  );
  if (candidates.length) return { ok: false, reason: 'ambiguous', message: `"${name}" could be more than one entity`, candidates };
  return { ok: false, reason: 'unknown', message: `No entity called "${name}" is known`, candidates: [] };
}
