// Passive recall: before a turn, the semantic memories that the person's latest message calls up,
// as a block for the model. It must never hold the turn up: past `timeoutMs` it returns nothing
// (the search finishes in the background and warms the index for the next turn).
import type { MemoryType } from '../../../shared/api.js';
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
  /** Share of the message a memory must answer (default PASSIVE_MIN_COVERAGE; 0 turns the rule off). */
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
 * How much of the person's message a memory must answer to be put before the model unasked
 * (coverage, lexical-index.ts: the idf of the message's words the memory holds over the idf of them
 * all). An irrelevant memory biases the answer without anyone seeing why, so small talk and unrelated
 * tasks must bring nothing. `npm run bench:memory` (LoCoMo dev observations, 631 questions; 64
 * off-topic messages × 5 stores), default settings otherwise:
 *   coverage  hit rate  precision  injected/question  off-topic any-rate
 *   none         0.715      0.177               4.41               0.359
 *   0.3          0.634      0.249               2.75               0.138
 *   0.4          0.559      0.309               1.94               0.084
 *   0.5          0.480      0.409               1.23               0.066
 *   0.55         0.409      0.425               1.01               0.041
 *   0.6          0.365      0.456               0.83               0.038
 * 0.55 is the lowest that keeps off-topic messages under one run in twenty; a question the block
 * misses is still one memory_recall away for the model. (Gating on the best hit's coverage instead
 * did worse at every level.)
 */
export const PASSIVE_MIN_COVERAGE = 0.55;

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

export async function passiveRecall(search: DetailedSearch, o: PassiveOptions): Promise<PassiveResult> {
  const limit = Math.max(0, Math.floor(o.limit));
  if (limit === 0 || !(o.maxChars > 0)) return EMPTY;
  const found = (async (): Promise<PassiveResult> => {
    const hits = await search({ query: o.query, sources: ['semantic'], limit, excludeMemoryIds: o.excludeIds, withCoverage: true });
    const best = hits[0]?.hit.score ?? 0;
    const chosen = hits
      .filter((d) => d.hit.link.kind === 'memory')
      .filter((d) => (d.coverage ?? 0) >= (o.minCoverage ?? PASSIVE_MIN_COVERAGE))
      .filter((d) => d.hit.score >= o.minScore && d.hit.score >= o.minRelativeScore * best)
      .map((d) => ({
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
