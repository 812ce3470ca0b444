// Fitting a conversation into the model's context window. We cannot run every provider's tokenizer,
// so we estimate conservatively: ~4 characters per token for alphabetic text, one token per CJK
// character (real tokenizers give 0.6–1.5 for CJK), plus a per-message overhead for role framing.
// The characters per token are then corrected per connection from the prompt tokens its server
// reports back (`charsPerTokenSample`, `nextCharsPerToken`): never looser than the default rule.
import type { ChatTurn, ToolSpec } from './types.js';

const PER_MESSAGE_OVERHEAD = 4;
/** The default rule, and the loosest a calibrated estimate may be: a fit must not overflow the window. */
export const DEFAULT_CHARS_PER_TOKEN = 4;
/** The tightest: below this a server's count is more likely wrong than the text that dense. */
export const MIN_CHARS_PER_TOKEN = 1.5;
/** A looser sample's weight in the moving average. */
const SAMPLE_WEIGHT = 0.3;
/** Prompts shorter than this (non-CJK characters) say too little about a tokenizer to count. */
const MIN_SAMPLE_CHARS = 400;
// CJK ideographs, kana, hangul, and full-width forms: roughly one token each.
const WIDE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/g;

export function estimateTokens(text: string, charsPerToken = DEFAULT_CHARS_PER_TOKEN): number {
  const wide = text.match(WIDE)?.length ?? 0;
  return wide + Math.ceil((text.length - wide) / charsPerToken);
}

function turnCost(turn: ChatTurn, charsPerToken = DEFAULT_CHARS_PER_TOKEN): number {
  return PER_MESSAGE_OVERHEAD + estimateTokens(turn.content, charsPerToken);
}

/**
 * What one request says about the server's tokenizer: its non-CJK characters (tool declarations
 * included) per token, once the CJK characters and the framing are taken from the tokens it
 * reported. Null when the prompt is too short to judge or the count cannot be right.
 */
export function charsPerTokenSample(turns: readonly ChatTurn[], promptTokens: number, tools?: readonly ToolSpec[]): number | null {
  let wide = 0;
  let chars = tools?.length ? JSON.stringify(tools).length : 0;
  for (const turn of turns) {
    const w = turn.content.match(WIDE)?.length ?? 0;
    wide += w;
    chars += turn.content.length - w;
  }
  const tokens = promptTokens - wide - PER_MESSAGE_OVERHEAD * turns.length;
  if (!Number.isFinite(promptTokens) || chars < MIN_SAMPLE_CHARS || tokens <= 0) return null;
  return chars / tokens;
}

/**
 * The connection's ratio after a sample, kept within MIN_CHARS_PER_TOKEN…DEFAULT_CHARS_PER_TOKEN: a
 * denser count than believed is taken at once (the next fit must not overflow), a looser one only as
 * a moving average (one short or cached prompt does not loosen the fit much).
 */
export function nextCharsPerToken(previous: number | null, sample: number): number {
  const clamp = (x: number) => Math.min(DEFAULT_CHARS_PER_TOKEN, Math.max(MIN_CHARS_PER_TOKEN, x));
  const s = clamp(sample);
  return previous === null || s < previous ? s : clamp(previous * (1 - SAMPLE_WEIGHT) + s * SAMPLE_WEIGHT);
}

export interface FitOptions {
  /** Tokens kept free for the answer. Default: a quarter of the window, at most 1,024. */
  reserveForReply?: number;
  /** The connection's calibrated ratio; default four. */
  charsPerToken?: number;
  /**
   * The pictures the request carries, for a model that sees: each turn's images' tokens (shared/image-tokens.ts),
   * counted for the newest turns up to `max` images as the request reads them in (a turn whose
   * images would pass `max` is sent as words, and counted so).
   */
  images?: { max: number; tokens: (turn: ChatTurn) => readonly number[] | undefined };
}

/** Room kept for the reply when none is asked for: a quarter of the context, at most 1,024 tokens. */
export const defaultReserve = (contextTokens: number) => Math.min(1024, Math.floor(contextTokens / 4));

export interface FitResult {
  messages: ChatTurn[];
  /** How many of the oldest history turns were left out. */
  dropped: number;
  estimatedTokens: number;
}

export class ContextOverflowError extends Error {
  constructor(
    public needed: number,
    public available: number,
  ) {
    super(
      `Your message is too long for this model: it needs about ${needed} tokens, and the model's context window leaves room for about ${available}. ` +
        'Shorten it, or choose a model with a larger context window in Settings → Models.',
    );
  }
}

/**
 * Keeps the system prompt and the newest turns; drops the oldest history turns until the estimate fits
 * `contextTokens - reserveForReply`. The latest turn is always kept — if it alone does not fit, that is
 * an error the person must see, not a silent cut of their words.
 */
export function fitToContext(system: string, history: ChatTurn[], contextTokens: number, options: FitOptions = {}): FitResult {
  const { reserveForReply = defaultReserve(contextTokens), charsPerToken, images } = options;
  const turnTokens = (turn: ChatTurn) => turnCost(turn, charsPerToken);
  const systemTurn: ChatTurn = { role: 'system', content: system };
  const budget = contextTokens - reserveForReply - turnTokens(systemTurn);
  const kept: ChatTurn[] = [];
  const costs: number[] = [];
  let used = 0;
  let pictures = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    let cost = turnTokens(history[i]!);
    const shown = images && pictures < images.max ? images.tokens(history[i]!) : undefined;
    const counted = shown?.length && pictures + shown.length <= images!.max ? shown : undefined;
    if (counted) cost += counted.reduce((a, b) => a + b, 0);
    if (used + cost > budget) {
      if (kept.length === 0) throw new ContextOverflowError(cost, Math.max(0, budget));
      break;
    }
    kept.push(history[i]!);
    costs.push(cost);
    used += cost;
    pictures += counted?.length ?? 0;
  }
  kept.reverse();
  costs.reverse();
  // Providers expect the history to start with the person speaking; a reply cut loose from its
  // question only confuses the model.
  while (kept.length > 1 && kept[0]!.role !== 'user') {
    kept.shift();
    used -= costs.shift()!;
  }
  return {
    messages: [systemTurn, ...kept],
    dropped: history.length - kept.length,
    estimatedTokens: used + turnTokens(systemTurn),
  };
}

/**
 * What every server accepts: after the system turn, the person speaks first. Some servers refuse a
 * list that opens with an assistant turn (Anthropic; many chat templates behind llama.cpp, vLLM,
 * Ollama raise on it), so whatever comes before the first user turn is settled here, the one place
 * every chat and background request passes: a runtime note (an assistant turn with a name and no
 * tool calls, such as the passive memory block) is folded into the end of the system turn, so its
 * prefix stays byte for byte the same; a reply or tool result whose question was left out is
 * dropped. A list with no user turn at all, or one already in order, is returned as it is.
 */
export function userFirst(turns: readonly ChatTurn[]): ChatTurn[] {
  const firstUser = turns.findIndex((t) => t.role === 'user');
  if (firstUser < 0 || turns.slice(0, firstUser).every((t) => t.role === 'system')) return [...turns];
  const system: string[] = [];
  for (const turn of turns.slice(0, firstUser)) {
    if (turn.role === 'system') system.push(turn.content);
    else if (turn.role === 'assistant' && turn.name && !turn.toolCalls?.length && turn.content.trim()) system.push(turn.content);
  }
  const head: ChatTurn[] = system.length ? [{ role: 'system', content: system.join('\n\n') }] : [];
  return [...head, ...turns.slice(firstUser)];
}

/** Tokens the history may use beside the system prompt, as fitToContext counts them. */
export function historyBudget(system: string, contextTokens: number, options: FitOptions = {}): number {
  const { reserveForReply = defaultReserve(contextTokens), charsPerToken } = options;
  return contextTokens - reserveForReply - turnCost({ role: 'system', content: system }, charsPerToken);
}

/**
 * How many of the oldest history turns fall outside the newest `budget` tokens: with a budget below
 * the real one, the turns that are about to be dropped once the conversation grows a little more.
 */
export function turnsBeyond(history: readonly ChatTurn[], budget: number, charsPerToken?: number): number {
  let used = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    used += turnCost(history[i]!, charsPerToken);
    if (used > budget) return i + 1;
  }
  return 0;
}
