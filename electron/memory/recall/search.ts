// Hybrid recall over the four memory sources — semantic memories, past conversations (session),
// limbic and autobiographical diary blocks — as one ranked list.
//
// One search:
// 1. buildQuery: the words (query.ts); readTimeWindow: the time they name, read from `now` (the time
//    of the person's message; time-window.ts) — what lies in it ranks higher in every branch (candidates.ts
//    timeFactor; the table that chose the factors: docs/recall-tuning.md).
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
// - neighbouring turns: each turn gains NEIGHBOUR_SHARE × its better neighbour's own score, scaled
//   down for turns past NEIGHBOUR_FULL_LENGTH lexemes (an answer is often the turn after the one that
//   names the topic); chosen on LoCoMo and LongMemEval dev together: docs/recall-tuning.md;
// - a short question's answer: the turn after a short question takes its share × ANSWER_GAIN, and the
//   question scores × QUESTION_OWN, and the topic before the question reaches the answer × TOPIC_GAIN
//   (candidates.ts; docs/recall-tuning.md);
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

// The files: search-types.ts (the options and the hit), candidates.ts (preparing the words and each
// source's branches), hits.ts (reading the winners back); this file runs the wave and the fusion.

import type { RecallSource } from '../../../shared/api.js';
import { MEMORY_TYPES, RECALL_SOURCES } from '../../../shared/api.js';
import { usableVectorWeight } from '../../embed/active.js';
import { entityBranches, plan, prepare, slotsOf, TIME_STRIP, timeFactor, trigramBranch, type Restriction, type SourcePlan } from './candidates.js';
import { fuse, type BranchList, type FuseOptions } from './fusion.js';
import { entityItems, graphWalk } from './graph-walk.js';
import { fetchHits } from './hits.js';
import { buildQuery, type BuiltQuery } from './query.js';
import type { DetailedHit, RecallInternals, RecallOptions, SearchContext } from './search-types.js';
import { readTimeWindow, withoutSpans } from './time-window.js';
import { VECTOR_BUDGET_MS, vectorBranches } from './vector.js';

export { NEIGHBOUR_FULL_LENGTH, NEIGHBOUR_SHARE, SPEAKER_BOOST, TIME_GAIN, TIME_PENALTY, TIME_SLACK_DAYS, TRIGRAM_THRESHOLD } from './candidates.js';
export { HIT_TEXT_CHARS, snippet } from './hits.js';
export type { DetailedHit, RecallInternals, RecallOptions, SearchContext } from './search-types.js';

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

function abortIfNeeded(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('Recall was cancelled.');
}

function normaliseSources(sources: unknown): RecallSource[] {
  if (!Array.isArray(sources) || sources.length === 0) return [...RECALL_SOURCES];
  return RECALL_SOURCES.filter((s) => sources.includes(s));
}

function clampLimit(limit: unknown, fallback = 10): number {
  const n = typeof limit === 'number' && Number.isFinite(limit) ? Math.floor(limit) : fallback;
  return Math.max(1, Math.min(MAX_LIMIT, n));
}

function instant(now: RecallOptions['now']): number {
  const t = now instanceof Date ? now.getTime() : typeof now === 'string' ? Date.parse(now) : typeof now === 'number' ? now : NaN;
  return Number.isFinite(t) ? t : Date.now();
}

/**
 * The words to match and the time the query names: time expressions are read (time-window.ts) and
 * left out of the words, unless nothing else would be left or the query quotes a phrase.
 */
function readQuery(o: RecallOptions & RecallInternals): { q: BuiltQuery; time: ReturnType<typeof timeFactor> } {
  const text = typeof o.query === 'string' ? o.query : '';
  if (o.timeAware === false || !text || /["“”]/.test(text)) return { q: buildQuery(text), time: null };
  const reading = readTimeWindow(text, instant(o.now), o.timeOffsetMinutes);
  const stripped = reading.spans.length && (o.timeStrip ?? TIME_STRIP) ? buildQuery(withoutSpans(text, reading.spans)) : null;
  return { q: stripped?.tsquery ? stripped : buildQuery(text), time: timeFactor(reading.window, o, reading.named, reading.latest) };
}

/** One parallel wave over the sources asked for, weighted RRF, one ranked list, with the details the tools print (role, speaker, diary kind). Active memories only. */
export async function searchDetailed(ctx: SearchContext, o: RecallOptions & RecallInternals): Promise<DetailedHit[]> {
  const { db, sidecar: side } = ctx;
  abortIfNeeded(o.signal);
  const { q, time } = readQuery(o);
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
    const plans = q.tsquery ? sources.map((s) => plan(db, side, p, o, s, depth, restrict, time)).filter((x): x is SourcePlan => x !== null) : [];
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
 * Builds (or brings up to date) the in-memory indexes now, e.g. in the background at start, so the
 * first search does not pay for it (~1–2 s at 100k messages on a two-core machine).
 */
export async function warmIndexes(ctx: SearchContext, sources: readonly RecallSource[]): Promise<void> {
  const maxima = (await prepare(ctx.db, buildQuery(''))).maxima;
  const needs = new Set(sources.map((s) => (s === 'limbic' || s === 'autobiographical' ? 'diary' : s)));
  await Promise.all([...needs].map((n) => ctx.sidecar.sync(n as 'session' | 'semantic' | 'diary', maxima)));
}
