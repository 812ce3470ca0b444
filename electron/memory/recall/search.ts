// Hybrid recall over the four memory sources — semantic memories, past conversations (session),
// limbic and autobiographical diary blocks — as one ranked list.
//
// One search:
// 1. buildQuery: the words (query.ts).
// 2. One query normalises the words to 'english' lexemes and reads four max() ids; the in-memory
//    indexes of the sources asked for pull what changed since the last search (sidecar.ts).
// 3. One parallel wave, every branch of every source at once:
//    - full text: BM25 over the lexemes, in memory (lexical-index.ts); for queries with AND / NOT /
//      "phrases" the matches come from the GIN tsvector index in SQL and BM25 orders them;
//    - trigram: for the words full text does not know in that source (typos, partial words), the
//      known words sharing most of their pg_trgm trigrams (word_similarity-style, vocabulary.ts),
//      searched instead, weighted by that similarity;
//    - vector (vector.ts; only with an embedding model and a weight above 0, settings.memory.vectorWeight):
//      the nearest neighbours of the query's embedding, started before the wave and left out of a
//      search it is not back in time for;
//    - graph (optional, RecallOptions.graphWalk; off by default, see GRAPH_WALK_DEFAULT): after the
//      wave, a walk over the entity graph from the best direct hits proposes the messages and
//      memories that mention what it reached (graph-walk.ts);
//    - entity (RecallOptions.entityIds, memory_recall's `entity`): every branch keeps to the items
//      that mention the entities, and those items, newest first, are one more branch.
// 4. Weighted reciprocal rank fusion (fusion.ts); the winners are read back from their tables —
//    re-checked (active memory, reply not replaced) — and returned with a link to their source.
//
// Session ranking, measured on the LoCoMo dev half with this code (bench/locomo.ts; categories 1–4,
// n 760, recall@10 — plain BM25 over turns, the README's baseline, is 0.576 here; "all" = cat 1–5,
// n 997):
// - BM25 statistics from the collection searched (the conversations asked for), not all messages:
//   0.576 vs 0.541 (plain BM25, before the two below);
// - neighbouring turns: each turn gains NEIGHBOUR_SHARE × the previous and the next turn's own
//   score (an answer is often the turn after the one that names the topic): 0 → 0.645, 0.3 → 0.709,
//   0.4 → 0.712, 0.5 → 0.717, 0.6 → 0.722, 0.7 → 0.717, 1 → 0.706 (with the speaker boost at 0.5);
// - the speaker: a turn whose speaker the query names scores × (1 + SPEAKER_BOOST) — questions name
//   the person they ask about: 0 → 0.676, 0.25 → 0.705, 0.5 → 0.717, 0.75 → 0.722, 1 → 0.721,
//   2 → 0.720. Adversarial questions (cat 5) name the wrong speaker on purpose and fall as the boost
//   grows (recall@10 0.821, 0.791, 0.757, 0.711, 0.627, 0.432), so over all categories 0.5 is best
//   (0.726; 1 gives 0.699): 0.5 gives up 0.004 on cat 1–4 for 0.027 on all.
// - trigram branch at TRIGRAM_THRESHOLD 0.7, weight 0.5: 0.717 vs 0.716 without it (it fires on
//   about a third of the questions; thresholds 0.5–0.8 gave 0.716–0.717, weights 0.25 / 0.5 / 1 gave
//   0.716 / 0.717 / 0.715).
// Result: 0.717 on cat 1–4 (target 0.63, plain BM25 0.577), 0.726 over all categories; ~2 ms a
// question. At 100k messages + 20k memories + 3k diary blocks, all four sources: p95 19 ms
// (bench/recall.ts).

import type { MemoryType, RecallHit, RecallSource } from '../../../shared/api.js';
import { MEMORY_TYPES, RECALL_SOURCES } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import { fuse, type BranchList, type FuseOptions } from './fusion.js';
import { entityItems, graphWalk, type EntityItems, type GraphWalkParams } from './graph-walk.js';
import { parseTsvector, type ScoredSlot } from './lexical-index.js';
import { buildQuery, type BuiltQuery } from './query.js';
import { MIN_FUZZY_CHARS, type Vocabulary } from './vocabulary.js';
import { usableVectorWeight, type ActiveVectors } from '../../embed/active.js';
import { VECTOR_BUDGET_MS, vectorBranches } from './vector.js';
import {
  AUTOBIOGRAPHICAL_KINDS,
  INDEXED_DIARY_KINDS,
  DiaryIndex,
  LIMBIC_KINDS,
  MemoryIndex,
  type IndexedDiaryKind,
  type Maxima,
  type Sidecar,
} from './sidecar.js';

/** What one search reads: the database, the in-memory indexes derived from it, the embedding model in use. */
export interface SearchContext {
  db: Database;
  sidecar: Sidecar;
  vectors: ActiveVectors | null;
}

/** Share of a neighbouring turn's own score a turn receives (see the measurements above). */
export const NEIGHBOUR_SHARE = 0.5;
/** A turn whose speaker the query names scores × (1 + this). */
export const SPEAKER_BOOST = 0.5;
/**
 * Share of an unknown word's trigrams a known word must have. Dev half, recall@10 cat 1–4:
 * 0.5 → 0.716, 0.6 → 0.716, 0.7 → 0.717, 0.8 → 0.717 (weight 0.5). 0.7 is the lowest at the top: it
 * still joins "educaton" to "education" (7 of its 9 trigrams, 0.78) and "suport" to "support" (0.86).
 */
export const TRIGRAM_THRESHOLD = 0.7;
/** The trigram branch looks at most at this many unknown words (the longest)… */
const TRIGRAM_WORDS = 3;
/** …and searches at most this many known words for each. */
const TRIGRAM_EXPANSIONS = 3;
/** A boolean query ranks at most this many of its matches (newest first). */
const BOOLEAN_CANDIDATES = 2000;
/** Longest text a hit carries (a window around the first matching word). */
export const HIT_TEXT_CHARS = 1200;
export const MAX_LIMIT = 200;
/**
 * Whether recall walks the entity graph from its best direct hits (graph-walk.ts) unless told
 * otherwise (RecallOptions.graphWalk). Off: it did not help where it could be measured, and it costs.
 * LoCoMo dev half (bench/locomo.ts, session source; the graph built by the GraphIndexer backfill:
 * 87 entities, 56 edges, 1,280 mentions — mostly the speakers' names). Recall@10 cat 1–4 / all /
 * cat 1 (multi-hop), and cat 1 all-evidence@10:
 * - walk off: 0.717 / 0.726 / 0.444, 0.211;
 * - on, as designed (only items no direct branch ranked), weight 0.15 or 0.25: 0.717 / 0.727 / 0.447,
 *   0.218 — one question of 997 gained, none lost; 0.35 → 0.717 / 0.725; 0.5 → 0.712 / 0.720. Hops
 *   0, 1 or 2, seeds 3, 5 or 10, spec² or spec³, 10 or 20 reached entities: the same at 0.25.
 * - on, re-ranking the direct hits too (GraphWalkParams.rerank): 0.25 → 0.716 / 0.725 / 0.432;
 *   0.5 → 0.706 / 0.714 / 0.405; 1 → 0.637 / 0.629; spec³ at weight 1 → 0.714 / 0.722.
 * What detection puts in the graph is names; the evidence of these questions is about topics
 * (pottery, an adoption, a camping trip) that are not entities, and what the walk proposes the
 * lexical branches had mostly ranked already. Cost: query p50 1.8 → 6.2 ms (walk p50 4.2, p95 6.7 ms:
 * three statements in one transaction); at 100k messages + 20k memories with a synthetic Zipf graph
 * (213k mentions, 60k edges, a hub named 36k times) walk p50 13 ms, p95 23 ms — on a shared two-core
 * machine under load. The option stays for data where the graph carries more than names (memories
 * with light sleep's entity names, typed relations).
 */
export const GRAPH_WALK_DEFAULT = false;

export interface RecallOptions {
  query: string;
  /** Default: all four. */
  sources?: RecallSource[];
  /** Default 10. */
  limit?: number;
  /** Semantic hits of these types only. */
  memoryTypes?: MemoryType[];
  /** Session hits from these conversations only; part of the search (statistics included), not a filter afterwards. */
  conversationIds?: string[];
  /**
   * Walk the entity graph from the best direct hits and fuse the items that mention what it reached
   * as one more branch (graph-walk.ts). Default GRAPH_WALK_DEFAULT.
   */
  graphWalk?: boolean;
  /** Weight of that branch in the fusion (default GRAPH_WEIGHT, fusion.ts); 0 turns it off too. */
  graphWeight?: number;
  /**
   * Only what is about these entities: messages and memories that mention one of them (an alias is
   * the same entity), diary blocks whose words name one. Each still ranks by the query; with no
   * searchable words (or to fill up), they come newest first. Resolve a name with resolveEntityName.
   */
  entityIds?: number[];
  /**
   * Weight of the vector branch (vector.ts) in the fusion. Default: the embedding service's
   * (settings.memory.vectorWeight; 0 = off). Without an embedding model it never runs.
   */
  vectorWeight?: number;
  signal?: AbortSignal;
}

/** Internal options the passive recall and the benchmarks use. */
export interface RecallInternals {
  /** Memories never to return (passive recall's resident exclusion): the ranking reaches deeper by their number, so excluding never shortens the list. */
  excludeMemoryIds?: number[];
  fuse?: FuseOptions;
  neighbourShare?: number;
  speakerBoost?: number;
  /** Fill in DetailedHit.coverage for semantic hits (passive recall's relevance rule). */
  withCoverage?: boolean;
  /** Skip the trigram branch (measurement only). */
  noTrigram?: boolean;
  trigramThreshold?: number;
  /** The graph walk's parameters (measurement). */
  graph?: Partial<GraphWalkParams>;
  /** Filled in when given: time spent in the graph walk (ms) and the number of walks, summed over calls. */
  timings?: { graphMs: number; walks: number };
  /** The model to embed the query with, instead of the one in use (null: none). */
  vectors?: ActiveVectors | null;
  /** How long the query's embedding may take from the start of the search (default VECTOR_BUDGET_MS). */
  vectorBudgetMs?: number;
  /** Cosine similarity a neighbour needs (default VECTOR_FLOOR). */
  vectorFloor?: number;
}

/** A hit with what the tools show beside it. */
export interface DetailedHit {
  hit: RecallHit;
  /** session hits */
  role?: 'user' | 'assistant';
  speaker?: string | null;
  conversationId?: string;
  /** diary hits */
  kind?: IndexedDiaryKind;
  /** semantic hits, with RecallInternals.withCoverage: how much of the query the memory answers (lexical-index.ts coverage, 0–1). */
  coverage?: number;
}

function abortIfNeeded(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('Recall was cancelled.');
}

/** A window of `text` around the first of `words` it contains, at most `max` characters. */
export function snippet(text: string, words: readonly string[], max = HIT_TEXT_CHARS): string {
  if (text.length <= max) return text;
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - Math.floor(max / 3), text.length - max));
  const end = Math.min(text.length, start + max);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

interface Prepared {
  q: BuiltQuery;
  /** word → its lexemes */
  lexemesOf: Map<string, string[]>;
  /** all positive lexemes, for ranking */
  lexemes: string[];
  maxima: Maxima;
}

/** Normalises the words and reads the tables' high-water marks in one round trip. */
async function prepare(db: Database, q: BuiltQuery): Promise<Prepared> {
  const words = q.positiveWords;
  const row = (
    await db.query<{ lex: string[] | null; seq: number | null; mem: number | null; chg: number | null; dia: number | null }>(
      `SELECT ARRAY(SELECT to_tsvector('english', w)::text FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i) AS lex,
              (SELECT max(seq) FROM messages)::float8 AS seq, (SELECT max(id) FROM memories)::float8 AS mem,
              (SELECT max(id) FROM memory_changes)::float8 AS chg, (SELECT max(id) FROM diary_blocks)::float8 AS dia`,
      [words],
    )
  ).rows[0]!;
  const lexemesOf = new Map<string, string[]>();
  const all = new Set<string>();
  words.forEach((w, i) => {
    const lex = [...parseTsvector(row.lex?.[i] ?? '').tf.keys()];
    lexemesOf.set(w, lex);
    for (const l of lex) all.add(l);
  });
  return {
    q,
    lexemesOf,
    lexemes: [...all],
    maxima: { seq: Number(row.seq ?? 0), memoryId: Number(row.mem ?? 0), changeId: Number(row.chg ?? 0), diaryId: Number(row.dia ?? 0) },
  };
}

type SourcePlan = {
  source: RecallSource;
  /** Rank in memory (plain OR) or from SQL matches (boolean). */
  fts: () => Promise<ScoredSlot[]>;
  /** Words full text does not know in this source's scope: the trigram branch's input. */
  unknown: string[];
  vocab: Vocabulary;
  /** Ranks the fuzzy matches' lexemes, each weighted by its similarity. */
  trigram: (lexemes: string[], weights: Map<string, number>) => ScoredSlot[];
};

/** Words full text cannot find in this scope: they go to the trigram branch. */
function unknownWords(p: Prepared, isKnown: (lexeme: string) => boolean): string[] {
  const words = p.q.trigramText ? p.q.trigramText.split(' ') : [];
  return words
    .filter((w) => [...w].length >= MIN_FUZZY_CHARS && !/[\u3400-\u9fff]/.test(w))
    .filter((w) => {
      const lex = p.lexemesOf.get(w) ?? [];
      return lex.length > 0 && lex.every((l) => !isKnown(l));
    })
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
    .slice(0, TRIGRAM_WORDS);
}

/** The slots of these keys in an index (keys it does not hold are left out). */
function slotsOf(index: { slotOf(k: number): number | undefined }, keys: Iterable<number>): Set<number> {
  const set = new Set<number>();
  for (const k of keys) {
    const s = index.slotOf(k);
    if (s !== undefined) set.add(s);
  }
  return set;
}

/** The entity restriction as slots of each in-memory index. */
interface Restriction {
  session: Set<number>;
  semantic: Set<number>;
  diary: Set<number>;
}

const intersect = (a: Set<number>, b: Set<number> | null | undefined): Set<number> => (b ? new Set([...a].filter((x) => b.has(x))) : a);

function plan(
  db: Database,
  side: Sidecar,
  p: Prepared,
  o: RecallOptions & RecallInternals,
  source: RecallSource,
  depth: number,
  restrict: Restriction | null = null,
): SourcePlan | null {
  const { q } = p;
  const tsquery = q.tsquery!;

  if (source === 'session') {
    const s = side.session;
    const restricted = o.conversationIds !== undefined;
    const scope = restricted ? s.scope(o.conversationIds!) : null;
    if (restricted && !scope) return null; // none of those conversations has anything to search
    const searchOpts = {
      scope,
      limit: depth,
      neighbour: o.neighbourShare ?? NEIGHBOUR_SHARE,
      fieldBoost: o.speakerBoost ?? SPEAKER_BOOST,
      only: restrict?.session ?? null,
    };
    const convFilter = restricted ? 'AND m.conversation_id = ANY($2::text[])' : '';
    return {
      source,
      fts: async () => {
        if (q.plainOr) return s.index.search(p.lexemes, searchOpts);
        const rows = await db.query<{ key: number }>(
          `SELECT m.seq::float8 AS key FROM messages m
           WHERE m.content_fts @@ to_tsquery('english', $1) AND m.replaced_by IS NULL AND m.status <> 'streaming' ${convFilter}
           ORDER BY m.seq DESC LIMIT ${BOOLEAN_CANDIDATES}`,
          restricted ? [tsquery, o.conversationIds] : [tsquery],
        );
        const only = intersect(
          slotsOf(
            s.index,
            rows.rows.map((r) => Number(r.key)),
          ),
          restrict?.session,
        );
        return only.size ? s.index.search(p.lexemes, { ...searchOpts, only }) : [];
      },
      unknown: unknownWords(p, (l) => s.index.df(l, scope, 1) > 0),
      vocab: s.vocab,
      trigram: (lexemes, weights) => s.index.search(lexemes, { ...searchOpts, weights }),
    };
  }

  if (source === 'semantic') {
    const m = side.memory;
    const types = o.memoryTypes?.length ? o.memoryTypes : null;
    const scope = MemoryIndex.scope(types);
    const exclude = o.excludeMemoryIds?.length ? new Set(o.excludeMemoryIds) : null;
    const typeFilter = types ? 'AND type = ANY($2::text[])' : '';
    const exclFilter = exclude ? `AND NOT (id = ANY($${types ? 3 : 2}::bigint[]))` : '';
    const params = (first: unknown) => [first, ...(types ? [types] : []), ...(exclude ? [[...exclude]] : [])];
    // The ranking reaches deeper by the number excluded, so excluding never shortens the list.
    const deeper = depth + (exclude ? exclude.size : 0);
    const dropExcluded = (hits: ScoredSlot[]) => (exclude ? hits.filter((h) => !exclude.has(h.key)).slice(0, depth) : hits);
    const only = restrict?.semantic ?? null;
    return {
      source,
      fts: async () => {
        if (q.plainOr) return dropExcluded(m.index.search(p.lexemes, { scope, limit: deeper, only }));
        const rows = await db.query<{ key: number }>(
          // No status condition here: with it the planner (no statistics in PGlite) walked the status
          // index instead of the GIN one — 13.6 ms vs 1–2 ms at 20k. Retired memories are not in the
          // in-memory index, so they cannot rank, and every hit is re-read with status = 'active'.
          `SELECT id::float8 AS key FROM memories WHERE search_fts @@ to_tsquery('english', $1) ${typeFilter} ${exclFilter}
           ORDER BY id DESC LIMIT ${BOOLEAN_CANDIDATES}`,
          params(tsquery),
        );
        const matched = intersect(
          slotsOf(
            m.index,
            rows.rows.map((r) => Number(r.key)),
          ),
          only,
        );
        return matched.size ? m.index.search(p.lexemes, { scope, only: matched, limit: depth }) : [];
      },
      unknown: unknownWords(p, (l) => m.index.df(l, scope, 1) > 0),
      vocab: m.vocab,
      trigram: (lexemes, weights) => dropExcluded(m.index.search(lexemes, { scope, limit: deeper, weights, only })),
    };
  }

  const d = side.diary;
  const kinds = source === 'limbic' ? LIMBIC_KINDS : AUTOBIOGRAPHICAL_KINDS;
  const scope = DiaryIndex.scope(kinds);
  const only = restrict?.diary ?? null;
  return {
    source,
    fts: async () => {
      if (q.plainOr) return d.index.search(p.lexemes, { scope, limit: depth, only });
      const rows = await db.query<{ key: number }>(
        `SELECT id::float8 AS key FROM diary_blocks WHERE search_fts @@ to_tsquery('english', $1) AND kind = ANY($2::text[]) AND hidden_at IS NULL
         ORDER BY id DESC LIMIT ${BOOLEAN_CANDIDATES}`,
        [tsquery, kinds],
      );
      const matched = intersect(
        slotsOf(
          d.index,
          rows.rows.map((r) => Number(r.key)),
        ),
        only,
      );
      return matched.size ? d.index.search(p.lexemes, { scope, only: matched, limit: depth }) : [];
    },
    unknown: unknownWords(p, (l) => d.index.df(l, scope, 1) > 0),
    vocab: d.vocab,
    trigram: (lexemes, weights) => d.index.search(lexemes, { scope, limit: depth, weights, only }),
  };
}

/** Lexemes of known words, by word: a word's lexemes never change. Bounded; cleared when full. */
const wordLexemes = new Map<string, string[]>();
const WORD_LEXEME_CACHE = 50_000;

async function lexemesOfWords(db: Database, words: string[]): Promise<Map<string, string[]>> {
  const missing = [...new Set(words)].filter((w) => !wordLexemes.has(w));
  if (missing.length) {
    const rows = (await db.query<{ w: string; v: string }>(`SELECT w, to_tsvector('english', w)::text AS v FROM unnest($1::text[]) AS w`, [missing])).rows;
    if (wordLexemes.size + rows.length > WORD_LEXEME_CACHE) wordLexemes.clear();
    for (const r of rows) wordLexemes.set(r.w, [...parseTsvector(r.v).tf.keys()]);
  }
  return new Map(words.map((w) => [w, wordLexemes.get(w) ?? []]));
}

/** The trigram branch of one source: unknown words → similar known words → their lexemes, ranked. */
async function trigramBranch(db: Database, pl: SourcePlan, threshold = TRIGRAM_THRESHOLD): Promise<ScoredSlot[]> {
  const matches = pl.unknown.flatMap((w) => pl.vocab.match(w, threshold, TRIGRAM_EXPANSIONS));
  if (!matches.length) return [];
  const lexemes = await lexemesOfWords(
    db,
    matches.map((m) => m.word),
  );
  const weights = new Map<string, number>();
  for (const m of matches) for (const l of lexemes.get(m.word) ?? []) weights.set(l, Math.max(weights.get(l) ?? 0, m.similarity));
  return weights.size ? pl.trigram([...weights.keys()], weights) : [];
}

function normaliseSources(sources: unknown): RecallSource[] {
  if (!Array.isArray(sources) || sources.length === 0) return [...RECALL_SOURCES];
  return RECALL_SOURCES.filter((s) => sources.includes(s));
}

function clampLimit(limit: unknown, fallback = 10): number {
  const n = typeof limit === 'number' && Number.isFinite(limit) ? Math.floor(limit) : fallback;
  return Math.max(1, Math.min(MAX_LIMIT, n));
}

/** One parallel wave over the sources asked for, weighted RRF, one ranked list, with the details the tools print (role, speaker, diary kind). Active memories only. */
export async function searchDetailed(ctx: SearchContext, o: RecallOptions & RecallInternals): Promise<DetailedHit[]> {
  const { db, sidecar: side } = ctx;
  abortIfNeeded(o.signal);
  const q = buildQuery(o.query);
  const entityIds = o.entityIds?.length ? [...new Set(o.entityIds.filter((id) => Number.isSafeInteger(id) && id > 0))] : null;
  if (o.entityIds?.length && !entityIds?.length) return [];
  if (!q.tsquery && !entityIds) return [];
  const sources = normaliseSources(o.sources);
  if (sources.length === 0) return [];
  const limit = clampLimit(o.limit);
  if (o.memoryTypes) o = { ...o, memoryTypes: o.memoryTypes.filter((t) => MEMORY_TYPES.includes(t)) };
  const graphWeight = typeof o.graphWeight === 'number' && Number.isFinite(o.graphWeight) ? Math.max(0, o.graphWeight) : undefined;
  const walk = (o.graphWalk ?? GRAPH_WALK_DEFAULT) && graphWeight !== 0 && (sources.includes('session') || sources.includes('semantic'));
  let fuseOptions: FuseOptions | undefined =
    graphWeight === undefined ? o.fuse : { ...o.fuse, branchWeights: { ...o.fuse?.branchWeights, graph: graphWeight } };
  const vectors = o.vectors !== undefined ? o.vectors : ctx.vectors;
  const vectorWeight = vectors ? usableVectorWeight(o.vectorWeight ?? vectors.weight) : 0;
  if (vectorWeight > 0) fuseOptions = { ...fuseOptions, branchWeights: { ...fuseOptions?.branchWeights, vector: vectorWeight } };
  // Embedded while the words are prepared and the indexes catch up; null when not back in time.
  const queryVector = vectors && vectorWeight > 0 && q.tsquery ? vectors.embedQuery(o.query, o.vectorBudgetMs ?? VECTOR_BUDGET_MS, o.signal) : null;

  const p = await prepare(db, q);
  abortIfNeeded(o.signal);
  const needs = new Set(sources.map((s) => (s === 'limbic' || s === 'autobiographical' ? 'diary' : s)));
  await Promise.all([...needs].map((n) => side.sync(n as 'session' | 'semantic' | 'diary', p.maxima)));
  abortIfNeeded(o.signal);
  const about = entityIds
    ? await entityItems(db, entityIds, {
        session: needs.has('session'),
        semantic: needs.has('semantic'),
        diary: needs.has('diary'),
        conversationIds: o.conversationIds,
      })
    : null;
  abortIfNeeded(o.signal);

  // Each branch ranks a little deeper than asked: fusion and the re-check may drop some.
  const depth = limit + 10;
  const vectorLists: Promise<BranchList[]> = queryVector
    ? queryVector
        .then((vector) =>
          vector && vectors
            ? vectorBranches(db, {
                vector,
                modelId: vectors.modelId,
                dimensions: vectors.dimensions,
                sources,
                depth,
                floor: o.vectorFloor,
                conversationIds: o.conversationIds,
                memoryTypes: o.memoryTypes,
                excludeMemoryIds: o.excludeMemoryIds,
                only: about,
              })
            : [],
        )
        // Derived data: a failed vector search leaves the lexical result as it would be without it.
        .catch(() => [])
    : Promise.resolve([]);
  for (let attempt = 0; ; attempt++) {
    const restrict: Restriction | null = about
      ? {
          session: slotsOf(side.session.index, about.session),
          semantic: slotsOf(side.memory.index, about.semantic),
          diary: slotsOf(side.diary.index, about.diary),
        }
      : null;
    const plans = q.tsquery ? sources.map((s) => plan(db, side, p, o, s, depth, restrict)).filter((x): x is SourcePlan => x !== null) : [];
    // The wave: every branch of every source at once (PGlite runs the SQL ones one after another,
    // but none waits on another's result).
    const lists: BranchList[] = (
      await Promise.all([
        Promise.all(
          plans.flatMap((pl) => {
            const out: Promise<BranchList>[] = [pl.fts().then((items) => ({ source: pl.source, branch: 'fts' as const, items }))];
            if (pl.unknown.length && !o.noTrigram)
              out.push(trigramBranch(db, pl, o.trigramThreshold).then((items) => ({ source: pl.source, branch: 'trigram' as const, items })));
            return out;
          }),
        ),
        vectorLists,
      ])
    ).flat();
    abortIfNeeded(o.signal);
    const extra: BranchList[] = about ? entityBranches(side, about, sources, o, depth) : [];
    if (walk && lists.some((l) => l.items.length)) {
      const started = performance.now();
      const walked = await graphWalk(
        db,
        side,
        {
          direct: fuse(lists, fuseOptions),
          sources,
          conversationIds: o.conversationIds,
          memoryTypes: o.memoryTypes,
          excludeMemoryIds: o.excludeMemoryIds,
          population: p.maxima.seq + p.maxima.memoryId,
          depth,
          only: about ? { session: new Set(about.session), semantic: new Set(about.semantic) } : undefined,
        },
        o.graph,
      );
      extra.push(...walked.lists);
      if (o.timings) {
        o.timings.graphMs += performance.now() - started;
        o.timings.walks++;
      }
      abortIfNeeded(o.signal);
    }
    const fused = fuse([...lists, ...extra], fuseOptions).slice(0, limit + 5);
    const { hits, stale } = await fetchHits(db, side, fused, p, o);
    // A row the index still held was replaced or retired (the pull cannot see that): it is out of the
    // index now, and so is the score it lent its neighbours — rank once more.
    if (stale && attempt === 0) continue;
    return hits.slice(0, limit);
  }
}

/**
 * The items about the entities asked for, newest first, as one 'entity' branch per source — with the
 * filters the other branches have (in the index = searchable; the conversations, types and
 * exclusions asked for; a diary block of the source's kinds).
 */
function entityBranches(side: Sidecar, about: EntityItems, sources: RecallSource[], o: RecallOptions & RecallInternals, depth: number): BranchList[] {
  const out: BranchList[] = [];
  const take = (
    source: RecallSource,
    keys: number[],
    ok: (slot: number, key: number) => boolean,
    index: { slotOf(k: number): number | undefined; hasLiveDoc(s: number): boolean },
  ) => {
    const items: { key: number; score: number }[] = [];
    for (const key of keys) {
      if (items.length >= depth) break;
      const slot = index.slotOf(key);
      if (slot === undefined || !index.hasLiveDoc(slot) || !ok(slot, key)) continue;
      items.push({ key, score: 1 });
    }
    if (items.length) out.push({ source, branch: 'entity', items });
  };
  for (const source of sources) {
    if (source === 'session') {
      const s = side.session;
      const scope = o.conversationIds !== undefined ? s.scope(o.conversationIds) : null;
      if (o.conversationIds !== undefined && !scope) continue;
      take(source, about.session, (slot) => !scope || scope[s.index.groupOf(slot)] === 1, s.index);
    } else if (source === 'semantic') {
      const m = side.memory;
      const scope = MemoryIndex.scope(o.memoryTypes?.length ? o.memoryTypes : null);
      const exclude = new Set(o.excludeMemoryIds ?? []);
      take(source, about.semantic, (slot, key) => !exclude.has(key) && (!scope || scope[m.index.groupOf(slot)] === 1), m.index);
    } else {
      const kinds = source === 'limbic' ? LIMBIC_KINDS : AUTOBIOGRAPHICAL_KINDS;
      const d = side.diary;
      take(source, about.diary, (slot) => kinds.includes(INDEXED_DIARY_KINDS[d.index.groupOf(slot)]!), d.index);
    }
  }
  return out;
}

async function fetchHits(
  db: Database,
  side: Sidecar,
  fused: ReturnType<typeof fuse>,
  p: Prepared,
  o: RecallOptions & RecallInternals,
): Promise<{ hits: DetailedHit[]; stale: boolean }> {
  let stale = false;
  const keys = (source: RecallSource) => fused.filter((f) => f.source === source).map((f) => f.key);
  const words = p.q.positiveWords;
  const found = new Map<string, DetailedHit>();
  const tasks: Promise<void>[] = [];

  const sessionKeys = keys('session');
  if (sessionKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{
            seq: number;
            id: string;
            conversation_id: string;
            role: 'user' | 'assistant';
            speaker: string | null;
            content: string;
            created_at: Date;
            replaced: boolean;
            status: string;
          }>(
            `SELECT seq::float8 AS seq, id, conversation_id, role, speaker, content, created_at, replaced_by IS NOT NULL AS replaced, status
             FROM messages WHERE seq = ANY($1::bigint[])`,
            [sessionKeys],
          )
        ).rows;
        for (const r of rows) {
          const key = Number(r.seq);
          if (r.replaced || r.status === 'streaming' || (o.conversationIds && !o.conversationIds.includes(r.conversation_id))) {
            if (r.replaced) {
              side.session.index.remove(key);
              stale = true;
            }
            continue;
          }
          const text = snippet(r.content, words);
          found.set(`session:${key}`, {
            hit: {
              source: 'session',
              memoryType: 'session',
              text: r.speaker ? `${r.speaker}: ${text}` : text,
              time: new Date(r.created_at).toISOString(),
              score: 0,
              link: { kind: 'message', conversationId: r.conversation_id, messageId: r.id },
            },
            role: r.role,
            speaker: r.speaker,
            conversationId: r.conversation_id,
          });
        }
      })(),
    );
  }

  // Only passive recall asks how much of the query a memory answers: other searches skip the work.
  const coverage = o.withCoverage ? side.memory.index.coverage(p.lexemes) : null;
  const semanticKeys = keys('semantic');
  if (semanticKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{ id: number; type: MemoryType; content: string; updated_at: Date }>(
            `SELECT id::float8 AS id, type, content, updated_at FROM memories WHERE id = ANY($1::bigint[]) AND status = 'active'`,
            [semanticKeys],
          )
        ).rows;
        for (const r of rows) {
          const id = Number(r.id);
          if (o.memoryTypes?.length && !o.memoryTypes.includes(r.type)) continue;
          if (o.excludeMemoryIds?.includes(id)) continue;
          found.set(`semantic:${id}`, {
            coverage: coverage?.(id),
            hit: {
              source: 'semantic',
              memoryType: r.type,
              text: r.content,
              time: new Date(r.updated_at).toISOString(),
              score: 0,
              link: { kind: 'memory', memoryId: id },
            },
          });
        }
        // Not active any more (a change the journal pull has not seen yet): out of the index too.
        for (const k of semanticKeys) {
          if (!rows.some((r) => Number(r.id) === k)) {
            side.memory.index.remove(k);
            stale = true;
          }
        }
      })(),
    );
  }

  const diaryKeys = [...keys('limbic'), ...keys('autobiographical')];
  if (diaryKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{ id: number; day: string; kind: IndexedDiaryKind; title: string | null; body: string; created_at: Date }>(
            // A block the person hid stays in the derived index until it is rebuilt; it is dropped here.
            `SELECT id::float8 AS id, day, kind, title, body, created_at FROM diary_blocks WHERE id = ANY($1::bigint[]) AND hidden_at IS NULL`,
            [diaryKeys],
          )
        ).rows;
        for (const r of rows) {
          const id = Number(r.id);
          const source: RecallSource | null = LIMBIC_KINDS.includes(r.kind) ? 'limbic' : AUTOBIOGRAPHICAL_KINDS.includes(r.kind) ? 'autobiographical' : null;
          if (!source) continue;
          const body = snippet(r.body, words);
          found.set(`${source}:${id}`, {
            hit: {
              source,
              memoryType: source,
              text: r.title ? `${r.title} — ${body}` : body,
              time: new Date(r.created_at).toISOString(),
              score: 0,
              link: { kind: 'diary', day: r.day, blockId: id },
            },
            kind: r.kind,
          });
        }
      })(),
    );
  }
  await Promise.all(tasks);

  const out: DetailedHit[] = [];
  for (const f of fused) {
    const d = found.get(`${f.source}:${f.key}`);
    if (!d) continue;
    d.hit.score = Math.round(f.score * 10_000) / 10_000;
    out.push(d);
  }
  return { hits: out, stale };
}

/**
 * Builds (or brings up to date) the in-memory indexes now, e.g. in the background at start, so the
 * first search does not pay for it (~1–2 s at 100k messages on a two-core machine).
 */
export async function warmIndexes(ctx: SearchContext, sources: readonly RecallSource[]): Promise<void> {
  const maxima = (await prepare(ctx.db, buildQuery(''))).maxima;
  const needs = new Set(sources.map((s) => (s === 'limbic' || s === 'autobiographical' ? 'diary' : s)));
  await Promise.all([...needs].map((n) => ctx.sidecar.sync(n as 'session' | 'semantic' | 'diary', maxima)));
}
