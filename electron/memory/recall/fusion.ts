// Weighted reciprocal rank fusion: every branch of every source contributes weight / (k + rank) to
// the hits it ranked; one list comes out. Ranks, not raw scores, are fused, so BM25 and trigram
// similarity need no common scale.
//
// The contribution is also scaled by the hit's strength within its branch (its score over the
// branch's best, in (0, 1]). Within one branch this keeps the order (rank and strength fall
// together); across branches and sources it stops a branch's weak tail from standing level with
// another branch's strong head, and it gives the fused score a meaning the passive recall thresholds
// can use: with plain RRF (k 60) the 10th hit of a branch still scores 61/70 = 0.87 of the first, so
// `min_relative_score` 0.3 could never drop a memory that merely shares the word "like" with the
// message. On the LoCoMo dev half (session source) recall@10 was the same with and without it
// (cat 1–4 0.717 both; all categories 0.726 both).
import { RECALL_SOURCES, type RecallSource } from '../../../shared/api.js';

/**
 * 'graph': messages and memories that mention entities the entity-graph walk reached from the best
 * direct hits (graph-walk.ts). 'entity': the items that mention the entity a search is about
 * (recall's `entityIds`), newest first — the floor of "everything about Bob" when the words match
 * little of it. 'vector': nearest neighbours of the query's embedding (vector.ts).
 */
export type BranchName = 'fts' | 'trigram' | 'graph' | 'entity' | 'vector';

/**
 * Weight of the entity-graph branch (graph-walk.ts) when the walk is on. LoCoMo dev half, recall@10
 * cat 1–4 / all: 0.15 and 0.25 → 0.717 / 0.727 (walk off 0.717 / 0.726), 0.35 → 0.717 / 0.725,
 * 0.5 → 0.712 / 0.720 (recall/index.ts, GRAPH_WALK_DEFAULT, has the rest).
 */
export const GRAPH_WEIGHT = 0.25;
/**
 * Branch weights. Full text is the primary ranker. The trigram branch only runs for words the full
 * text index does not know (typos, partial words — a third of the dev questions have one); on the
 * LoCoMo dev half (cat 1–4, n 760, recall@10) it gives 0.717 against 0.716 without it, at weight
 * 0.25 or 0.5 (0.715 at 1). Earlier designs, measured before the speaker boost was settled
 * (baseline 0.724 then): pg_trgm word_similarity of the whole question against each turn lowered
 * recall@10 to 0.718 at weight 0.25 and 0.706 at 0.5, and cost 136 ms a query at 100k messages;
 * word_similarity of the rarest two words lowered it to 0.714 (0.25) and 0.682 (0.5). 0.5: helps
 * where it applies, never outvotes full text. The vector branch is off (0) unless recall is given a weight
 * (settings.memory.vectorWeight through the embedding service): it needs a real model to be measured.
 */
export const BRANCH_WEIGHTS: Record<BranchName, number> = { fts: 1, trigram: 0.5, graph: GRAPH_WEIGHT, entity: 0.5, vector: 0 };
/**
 * Branches that add to a hit's score without raising its source's ceiling (the best a hit could
 * score): a direct hit keeps the score it had without them, so passive recall's thresholds mean what
 * they meant, and a hit both direct and graph-reached can score above a direct-only one (clamped to 1
 * in the output; the order uses the unclamped value). A source where only these answered is scaled as
 * if full text had answered, so what they alone found never outranks a strong direct hit of another
 * source.
 */
export const BONUS_BRANCHES: ReadonlySet<BranchName> = new Set(['graph', 'entity']);
/** The four sources weigh the same: nothing on the dev data can measure one against another. */
export const SOURCE_WEIGHTS: Record<RecallSource, number> = { semantic: 1, session: 1, limbic: 1, autobiographical: 1 };
/** The usual RRF constant; k 10, 30, 60 and 100 all gave LoCoMo dev recall@10 0.717 (fusion there only meets trigram hits). */
export const RRF_K = 60;

export interface BranchList {
  source: RecallSource;
  branch: BranchName;
  /** Best first; score > 0. */
  items: { key: number; score: number }[];
  /**
   * The score that counts as full strength (default: the branch's best). A branch whose scores have
   * an absolute meaning sets it, so a list of weak items stays weak instead of its best counting as 1
   * (the graph walk: activation 1 = a rarely named entity the best direct hit names).
   */
  full?: number;
}

export interface FusedHit {
  source: RecallSource;
  key: number;
  /** In (0, 1]: 1 = ranked first, at full strength, by every branch of its source that found anything. */
  score: number;
}

export interface FuseOptions {
  k?: number;
  /** Scale contributions by strength within the branch (default true). */
  strength?: boolean;
  branchWeights?: Partial<Record<BranchName, number>>;
}

export function fuse(lists: BranchList[], o: FuseOptions = {}): FusedHit[] {
  const k = o.k ?? RRF_K;
  const strength = o.strength ?? true;
  const weights = { ...BRANCH_WEIGHTS, ...o.branchWeights };
  const scores = new Map<string, FusedHit>();
  // The best a hit of each source could score: first, at full strength, in every branch that answered
  // (bonus branches aside; full text's alone where only they answered).
  const ceiling = new Map<RecallSource, number>();
  for (const list of lists) {
    if (list.items.length === 0) continue;
    const w = weights[list.branch] * SOURCE_WEIGHTS[list.source];
    if (w <= 0) continue;
    if (!BONUS_BRANCHES.has(list.branch)) ceiling.set(list.source, (ceiling.get(list.source) ?? 0) + w / (k + 1));
    const best = list.full ?? list.items[0]!.score;
    list.items.forEach((item, i) => {
      const rel = strength && best > 0 ? Math.min(1, item.score / best) : 1;
      const id = `${list.source}:${item.key}`;
      const hit = scores.get(id) ?? { source: list.source, key: item.key, score: 0 };
      hit.score += (w * rel) / (k + i + 1);
      scores.set(id, hit);
    });
  }
  const out = [...scores.values()];
  const raw = new Map<FusedHit, number>();
  for (const hit of out) raw.set(hit, hit.score / (ceiling.get(hit.source) ?? (weights.fts * SOURCE_WEIGHTS[hit.source]) / (k + 1)));
  // Ties (each source's best scores 1): semantic, session, limbic, autobiographical; then the newer row.
  const order = (s: RecallSource) => RECALL_SOURCES.indexOf(s);
  // Differences below 1e-12 are rounding (two sums of the same terms), not rank.
  const byScore = (a: FusedHit, b: FusedHit) => {
    const d = raw.get(b)! - raw.get(a)!;
    return Math.abs(d) > 1e-12 ? d : 0;
  };
  out.sort((a, b) => byScore(a, b) || order(a.source) - order(b.source) || b.key - a.key);
  for (const hit of out) hit.score = Math.min(1, raw.get(hit)!);
  return out;
}
