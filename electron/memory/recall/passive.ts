// Passive recall: before a turn, the semantic memories that the person's latest message calls up,
// as a block for the model. It must never hold the turn up: past `timeoutMs` it returns nothing
// (the search finishes in the background and warms the index for the next turn).
import type { MemoryType } from '../../../shared/api.js';
import { chooseRelevant, readMessage, type RelevanceRule } from './relevance.js';
import type { DetailedHit, RecallInternals, RecallOptions } from './search.js';

/** The search passive recall runs (Recall.detailed). */
export type DetailedSearch = (o: RecallOptions & RecallInternals) => Promise<DetailedHit[]>;

export interface PassiveOptions {
  query: string;
  limit: number;
  /** Fused score (0–1) a memory needs. */
  minScore: number;
  /** Fraction of the best hit's score a memory needs. */
  minRelativeScore: number;
  /**
   * One share of the message every memory must answer, instead of the relevance rule
   * (PASSIVE_RELEVANCE); 0 turns every relevance check off (the score thresholds stay).
   */
  minCoverage?: number;
  /** Budget of the block; past it entries shrink to one line, then drop (last first). */
  maxChars: number;
  /** Memories not to inject (the resident block already carries them). */
  excludeIds?: number[];
  timeoutMs?: number;
}

export interface PassiveResult {
  memories: { id: number; type: MemoryType; content: string; score: number }[];
  /** `- (type) content [[anima:ID]]` lines, ≤ maxChars. */
  text: string;
}

/** An entry shrunk to one line keeps at most this many characters of its content. */
export const ONE_LINE_CHARS = 160;
export const DEFAULT_PASSIVE_TIMEOUT_MS = 250;
/**
 * The relevance rule (relevance.ts): small talk brings nothing; otherwise a memory must score within
 * the gap of the best hit (settings.memory.passiveMinRelativeScore, default 0.5), answer enough of
 * the message (coverage: the idf of the message's words the memory holds over the idf of them all)
 * and share enough of its words, by tier — the memory names a name the message gives, or the message
 * is about the person (I, my, 我的…), or neither. The memories admitted are taken in the order score
 * + coverage + 0.4 when the memory is about someone the message names (it opens with the name), from
 * the first limit + PASSIVE_CANDIDATES_EXTRA hits of the search, at most `limit` of them; each keeps
 * only within `coverageGap` of the best chosen memory's coverage. An irrelevant memory biases the
 * answer without anyone seeing why.
 *
 * `npm run bench:memory` (LoCoMo dev observations, 631 questions; 161 off-topic messages × 5 stores),
 * limit 5; `-- --holdout 41.json,43.json` prints the two halves apart:
 *   rule                                               hit rate  precision  injected/q  off-topic any-rate
 *   coverage ≥ 0.55 alone, gap 0.3 (first)                0.417      0.426        1.03               0.036
 *   no rule, gap 0.3                                      0.715      0.177        4.41               0.435
 *   tiers, gap 0.65, coverage gap 0.8, score order        0.659      0.351        1.97               0.009
 *   this rule, gap 0.5, coverage gap 0.75:  26, 30, 42    0.680      0.320        2.27               0.008
 *                                           41, 43        0.673      0.334        2.08               0.009
 *                                           all           0.677      0.326        2.19               0.009
 *   the same, with irregular forms joined (lexemes.ts) and question frames left out (query.ts):
 *                                           26, 30, 42    0.692      0.341        2.14               0.008
 *                                           41, 43        0.676      0.340        2.07               0.016
 *                                           all           0.685      0.341        2.11               0.011
 * Chosen by cross-validation: for each of the 10 ways to hold out two of the five files, the best of
 * 48 settings (coverage weight 0 / 1, about weight 0 / 0.4, gap 0.5 / 0.65, coverage gap 0.7 / 0.75 /
 * 0.8, an order gap 0 / 0.7) on the other three, the most hits at precision ≥ 0.32, checked on the two:
 * held-out hit rate rose in 9 of 10 splits (by 0.003–0.018 over the rule before on the same files;
 * one fell 0.015), precision fell 0.008–0.031 (lowest 0.288); about weight 0.4 was chosen in all 10.
 * Around it, on all (each change alone): score order only 0.670 / 0.321; coverage weight 0 0.674 /
 * 0.329; about weight 0 0.670 / 0.320; gap 0.65 0.670 / 0.328; coverage gap 0.7 0.680 / 0.305, 0.8
 * 0.670 / 0.343; candidates: the first 5 hits only 0.666 / 0.328, the first 15 0.677 / 0.325; limit
 * (settings.memory.passiveLimit) 4 0.667 / 0.346, 6 0.680 / 0.314, 8 0.680 / 0.295.
 * The shared-word minimum (2, unless the message is about the person or the memory shares a name and
 * covers half of it) keeps "cheers", "what's new?" or a proper noun met by chance (Pride and Prejudice
 * / Pride Month) from bringing the memory that holds that one word.
 * The ceiling is the ranking by words: a memory of the evidence is among the top 5 hits for 0.72 of
 * the questions, the top 10 for 0.79 and the top 20 for 0.85. BM25's k1 (0.6–2) and b (0.3–1),
 * leaving out question-frame words (kind, type, make, describe…) or the date words of a question,
 * and pseudo-relevance feedback (the best 2–5 hits' words, weight 0.1–0.4) all kept the top 5 within
 * 0.716–0.735. Over every rule of this family (orders, gaps 0.5–0.9, 3 / 5 / 8 candidates kept,
 * coverage gaps) the best hit rate at precision ≥ 0.30 is about 0.69, and a hit rate of 0.75 costs
 * precision 0.17 (the top 8 within half of the best): 0.75 at 0.30 needs a ranking that finds what the
 * words do not say ("martial arts" for taekwondo, "children" for LGBTQ youth) — the vector branch with
 * an embedding model, or memory_recall. The tier for a message about the person is measured on the
 * LoCoMo questions with the speaker's name taken out ("What did I research?"): coverage 0.3 gives hit
 * rate 0.61 / 0.58 (the two halves) at precision 0.39 / 0.39; 0.2 gives 0.64 / 0.64 at 0.35 / 0.35
 * (measured with the rule before).
 */
export const PASSIVE_RELEVANCE: RelevanceRule = {
  named: [
    { coverage: 0.1, shared: 2 },
    { coverage: 0.5, shared: 1 },
  ],
  self: [{ coverage: 0.3, shared: 1 }],
  other: [{ coverage: 0.5, shared: 2 }],
  coverageGap: 0.75,
  coverageWeight: 1,
  aboutWeight: 0.4,
};

/** The relevance rule looks at this many search hits beyond the `limit` it may keep. */
export const PASSIVE_CANDIDATES_EXTRA = 5;

const EMPTY: PassiveResult = { memories: [], text: '' };

function entry(m: { id: number; type: MemoryType; content: string }, oneLine: boolean): string {
  let content = m.content.trim();
  if (oneLine) {
    const flat = content.replace(/\s+/g, ' ');
    content = flat.length <= ONE_LINE_CHARS ? flat : `${flat.slice(0, ONE_LINE_CHARS - 1).trimEnd()}…`;
  }
  return `- (${m.type}) ${content} [[anima:${m.id}]]`;
}

/**
 * The injected block within `maxChars`: entries in rank order, in full while they fit; past the
 * budget the lowest-ranked entries shrink to one line first (moving up the list), and when every
 * entry is one line and the block is still too long, the lowest-ranked drop.
 */
export function formatPassive<T extends { id: number; type: MemoryType; content: string }>(memories: T[], maxChars: number): { kept: T[]; text: string } {
  const oneLine = memories.map(() => false);
  const size = (n: number) => {
    let total = 0;
    for (let i = 0; i < n; i++) total += entry(memories[i]!, oneLine[i]!).length + (i > 0 ? 1 : 0);
    return total;
  };
  let n = memories.length;
  for (let i = n - 1; i >= 0 && size(n) > maxChars; i--) oneLine[i] = true;
  while (n > 0 && size(n) > maxChars) n--;
  const kept = memories.slice(0, n);
  return { kept, text: kept.map((m, i) => entry(m, oneLine[i]!)).join('\n') };
}

/** The memory hits to inject (at most `limit`): the relevance rule, or one coverage threshold when the caller gives one. */
function choose(hits: DetailedHit[], o: PassiveOptions, limit: number): DetailedHit[] {
  const memories = hits.filter((d) => d.hit.link.kind === 'memory');
  const best = hits[0]?.hit.score ?? 0;
  if (o.minCoverage !== undefined) {
    return memories
      .filter((d) => (d.coverage ?? 0) >= o.minCoverage!)
      .filter((d) => d.hit.score >= o.minScore && d.hit.score >= o.minRelativeScore * best)
      .slice(0, limit);
  }
  const candidates = memories.map((d) => ({ d, text: d.hit.text, score: d.hit.score, coverage: d.coverage ?? 0, shared: d.shared ?? 0 }));
  return chooseRelevant(candidates, readMessage(o.query), PASSIVE_RELEVANCE, { ...o, limit }).map((c) => c.d);
}

export async function passiveRecall(search: DetailedSearch, o: PassiveOptions): Promise<PassiveResult> {
  const limit = Math.max(0, Math.floor(o.limit));
  if (limit === 0 || !(o.maxChars > 0)) return EMPTY;
  const found = (async (): Promise<PassiveResult> => {
    // The rule orders more than it keeps: a memory just below the first `limit` by score may be the one
    // about the person the message names.
    const depth = o.minCoverage === undefined ? limit + PASSIVE_CANDIDATES_EXTRA : limit;
    const hits = await search({ query: o.query, sources: ['semantic'], limit: depth, excludeMemoryIds: o.excludeIds, withCoverage: true });
    const chosen = choose(hits, o, limit).map((d) => ({
      id: (d.hit.link as { memoryId: number }).memoryId,
      type: d.hit.memoryType as MemoryType,
      content: d.hit.text,
      score: d.hit.score,
    }));
    const { kept, text } = formatPassive(chosen, o.maxChars);
    return { memories: kept, text };
  })();
  const timeoutMs = o.timeoutMs ?? DEFAULT_PASSIVE_TIMEOUT_MS;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return found;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<PassiveResult>((resolve) => {
    timer = setTimeout(() => resolve(EMPTY), timeoutMs);
  });
  // A search that loses the race may still fail later: that must not surface as an unhandled rejection.
  found.catch(() => {});
  try {
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
