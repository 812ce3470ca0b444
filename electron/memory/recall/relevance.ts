// Passive recall's relevance rule: which of a search's hits are worth putting before the model unasked.
// An irrelevant memory biases the answer without anyone seeing why, so the rule would rather bring
// nothing than noise. It reads two things:
// - the message: small talk (greetings, thanks, "how's it going?") brings nothing at all; a message
//   about the person's own life (I, my, we, 我, 我的…) may be answered by a memory sharing one word;
//   a name the message gives (a capitalised word, not the first of a sentence) that a memory names
//   too makes that memory about the same someone;
// - each hit: its score against the best hit's (the gap: a memory far below the best rides along on
//   common words), how much of the message it answers (coverage, lexical-index.ts), how many of the
//   message's words it shares, and its coverage and order key against the best chosen one's;
// - the order the admitted hits are kept in: their score, their coverage, and whether the memory is
//   about someone the message names ("What did Nate win?" is about Nate's doings more than about
//   what Joanna said to Nate).
// The thresholds and what they gave are in passive.ts beside PASSIVE_RELEVANCE.
import { ENGLISH_STOP_WORDS, CJK_FUNCTION_CHARS } from './query.js';

/** What the rule needs to know of a message, read once per turn. */
export interface MessageReading {
  /** Nothing but greetings, thanks, farewells and how-are-yous (and stop words). */
  smallTalk: boolean;
  /** The person speaks of themselves (I, my, we, our; 我, 我的, 我们), not as in "how do I …". */
  aboutSelf: boolean;
  /** Capitalised words that do not open a sentence (names, mostly), as written. */
  names: string[];
}

/** A coverage threshold and the number of the message's words a memory must share with it. */
export interface Tier {
  coverage: number;
  shared: number;
}

/** Each tier admits a memory that meets any one of its alternatives. */
export interface RelevanceRule {
  /** The memory names a name the message gives. */
  named: Tier[];
  /** The message is about the person (MessageReading.aboutSelf) and no name joins it to the memory. */
  self: Tier[];
  /** Anything else. */
  other: Tier[];
  /** A chosen memory keeps only if its coverage is at least this share of the best chosen one's… */
  coverageGap: number;
  /**
   * …or its order key (below) is at least this share of the best chosen one's: a second memory that
   * ranks close to the first comes along even when it answers fewer of the message's words.
   */
  closeKey: number;
  /**
   * The order the admitted memories are taken in (the first `limit` are kept): score + coverageWeight ×
   * coverage + aboutWeight when the memory is about someone the message names (its first word is that
   * name: "Nate won…" for "What did Nate win?", not "Joanna thanked Nate…").
   */
  coverageWeight: number;
  aboutWeight: number;
}

/** One hit as the rule sees it. */
export interface Candidate {
  text: string;
  /** Fused score, 0–1. */
  score: number;
  coverage: number;
  shared: number;
}

/**
 * Words that carry no topic in a greeting, a thanks or a how-are-you. A message made only of these
 * and stop words is small talk. Curated, not measured: a closed class of phatic words.
 */
const SMALL_TALK_WORDS: ReadonlySet<string> = new Set(
  (
    'hi hello hey hiya howdy yo sup morning afternoon evening night good great nice fine ok okay cool awesome amazing perfect ' +
    'lovely thanks thank thx ty cheers appreciate appreciated help helped helpful much lot lots sorry bye goodbye later see soon ' +
    'talk chat tomorrow tonight today going doing up new news lol haha hahaha lmao wow yes yeah yep no nope sure please welcome ' +
    'well really pretty bored busy there back again day weekend nothing chill chilling'
  ).split(' '),
);

/** The same in Chinese, as phrases (longest are removed first). */
const SMALL_TALK_PHRASES_ZH: readonly string[] = [
  '你好',
  '您好',
  '早上好',
  '早安',
  '中午好',
  '下午好',
  '晚上好',
  '晚安',
  '哈喽',
  '谢谢',
  '多谢',
  '感谢',
  '非常',
  '好的',
  '好吧',
  '好呀',
  '好啊',
  '没问题',
  '不客气',
  '不好意思',
  '抱歉',
  '对不起',
  '再见',
  '拜拜',
  '明天聊',
  '在吗',
  '在不在',
  '怎么样',
  '最近',
  '忙什么',
  '在忙',
  '哈哈',
  '呵呵',
  '嘿嘿',
  '太好笑了',
  '好笑',
  '辛苦了',
  '今天',
  '你的帮助',
  '帮助',
].sort((a, b) => b.length - a.length);

const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
/** "how do I …" asks how one does something: the I there is anyone. */
const GENERIC_I = /\bhow (?:do|can|should|would|could|to) i\b/g;
const SELF_EN = /\b(?:i|i'm|i've|i'd|i'll|my|mine|myself|we|we're|we've|we'd|our|ours|ourselves)\b/;
/** 我 as the one speaking, not the object of a request (帮我, 给我, 告诉我: "help me", "give me", "tell me"). */
const SELF_ZH = /(?<![帮给让教告诉替为跟])我|我的|我们|咱/;
const WORD = /[\p{L}\p{N}']+/gu;
// Letters with case only: a CJK run (no case) is never a name here.
const NAME = /[\p{Lu}\p{Ll}\p{Lt}][\p{Lu}\p{Ll}\p{Lt}\p{M}\p{N}-]*/gu;
const SENTENCE_END = /[.?!。？！]$/;

const plain = (text: string) => text.toLowerCase().replace(/[\u2018\u2019]/g, "'");

function isSmallTalk(text: string): boolean {
  let rest = plain(text);
  for (const phrase of SMALL_TALK_PHRASES_ZH) rest = rest.split(phrase).join(' ');
  for (const ch of rest) if (CJK.test(ch) && !CJK_FUNCTION_CHARS.has(ch)) return false;
  for (const [word] of rest.matchAll(WORD)) {
    if (SMALL_TALK_WORDS.has(word) || ENGLISH_STOP_WORDS.has(word)) continue;
    // Contractions of stop words: what's, i'm, you're, it's.
    if (word.includes("'") && ENGLISH_STOP_WORDS.has(word.split("'")[0]!)) continue;
    return false;
  }
  return true;
}

function speaksOfSelf(text: string): boolean {
  return SELF_EN.test(plain(text).replace(GENERIC_I, ' ')) || SELF_ZH.test(text);
}

function namesIn(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(NAME)) {
    const word = m[0];
    if (word === 'I' || !/^\p{Lu}/u.test(word)) continue;
    const before = text.slice(0, m.index).trimEnd();
    if (before === '' || SENTENCE_END.test(before)) continue;
    names.add(word);
  }
  return [...names];
}

export function readMessage(text: string): MessageReading {
  return { smallTalk: isSmallTalk(text), aboutSelf: speaksOfSelf(text), names: namesIn(text) };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the memory names one of the names, written the same way (Mara, Mara's; not "mara" or "Maraca"). */
function namesOneOf(memory: string, names: readonly string[]): boolean {
  return names.some((name) => new RegExp(`(?<!\\p{L})${escape(name)}(?!\\p{Ll})`, 'u').test(memory));
}

const FIRST_WORD = /^[\s"'“‘(]*([\p{L}\p{M}\p{N}-]+)/u;

/** Whether the memory opens with one of the names (Mara …, Mara's …): it is about that someone. */
function isAbout(memory: string, names: readonly string[]): boolean {
  const first = FIRST_WORD.exec(memory)?.[1];
  return first !== undefined && names.includes(first);
}

/**
 * The hits worth injecting (at most `limit`), best first. `minScore` and `minRelativeScore` are the
 * person's settings (absolute, and as a share of the best hit's score); the rest is the rule.
 */
export function chooseRelevant<T extends Candidate>(
  hits: readonly T[],
  message: MessageReading,
  rule: RelevanceRule,
  o: { minScore: number; minRelativeScore: number; limit: number },
): T[] {
  if (message.smallTalk || hits.length === 0) return [];
  const best = Math.max(...hits.map((h) => h.score));
  const admitted = hits.filter((h) => {
    if (h.score < o.minScore || h.score < o.minRelativeScore * best) return false;
    const tier = message.names.length && namesOneOf(h.text, message.names) ? rule.named : message.aboutSelf ? rule.self : rule.other;
    return tier.some((t) => h.shared >= t.shared && h.coverage >= t.coverage);
  });
  const key = (h: T) => h.score + rule.coverageWeight * h.coverage + (message.names.length && isAbout(h.text, message.names) ? rule.aboutWeight : 0);
  const keys = new Map(admitted.map((h) => [h, key(h)]));
  // A stable sort: equal keys keep the search's order.
  const chosen = [...admitted].sort((a, b) => keys.get(b)! - keys.get(a)!).slice(0, Math.max(0, o.limit));
  const bestCoverage = Math.max(0, ...chosen.map((h) => h.coverage));
  const bestKey = chosen.length ? keys.get(chosen[0]!)! : 0;
  return chosen.filter((h) => h.coverage >= rule.coverageGap * bestCoverage || keys.get(h)! >= rule.closeKey * bestKey);
}
