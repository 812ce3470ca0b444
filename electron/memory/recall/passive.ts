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
 * when its coverage is within `coverageGap` of the best chosen memory's, or its order key within
 * `closeKey` of the best one's (a second memory that ranks close comes along). An irrelevant memory
 * biases the answer without anyone seeing why.
 *
 * `npm run bench:memory` (LoCoMo dev observations, 631 questions; 161 off-topic messages × 5 stores),
 * limit 5; `-- --holdout 41.json,43.json` prints the two halves apart (the history of the rule, the
 * cross-validation and why 0.75 is out of reach by words: docs/recall-tuning.md, "Passive recall"):
 *   rule                                        files       hit rate  precision  injected/q  off-topic any-rate
 *   coverage ≥ 0.55 alone, gap 0.3 (first)      all            0.417      0.426        1.03               0.036
 *   no rule, gap 0.3                            all            0.715      0.177        4.41               0.435
 *   coverage gap 0.75, no close key (before)    26, 30, 42     0.692      0.341        2.14               0.008
 *                                               41, 43         0.676      0.340        2.07               0.016
 *                                               all            0.685      0.341        2.11               0.011
 *   this rule: coverage gap 0.7, close key 0.85 26, 30, 42     0.703      0.319        2.33               0.006
 *                                               41, 43         0.690      0.314        2.31               0.012
 *                                               all            0.697      0.316        2.32               0.009
 * Around it, on all (each change alone): coverage gap 0.65 0.704 / 0.300, 0.75 0.694 / 0.331; close
 * key 0.75 0.697 / 0.306, none 0.694 / 0.317; limit 4 0.689 / 0.336, 6 0.702 / 0.300.
 * The shared-word minimum (2, unless the message is about the person or the memory shares a name and
 * covers half of it) keeps "cheers", "what's new?" or a proper noun met by chance (Pride and Prejudice
 * / Pride Month) from bringing the memory that holds that one word.
 */
export const PASSIVE_RELEVANCE: RelevanceRule = {
  named: [
    { coverage: 0.1, shared: 2 },
    { coverage: 0.5, shared: 1 },
  ],
  self: [{ coverage: 0.3, shared: 1 }],
  other: [{ coverage: 0.5, shared: 2 }],
  coverageGap: 0.7,
  closeKey: 0.85,
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
