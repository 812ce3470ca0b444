// The query builder: a person's (or the model's) words → a Postgres tsquery that is always safe to
// pass to to_tsquery('english', …), plus the plain terms the in-memory BM25 index and the trigram
// branch work from.
//
// Rules (measured in the LoCoMo README: an AND of a question's words finds almost nothing, 0.044
// recall@10, while an OR of them is the 0.577 baseline):
// - lowercase; English stop words out (Postgres's own 'english' list, so the two agree), and the
//   words that only frame a question (how long, what kind of: FRAME_AFTER_HOW…); words are OR-ed;
// - explicit AND, OR, NOT (upper case, as words) are honoured: AND binds tighter than OR, NOT applies
//   to the next word or phrase and is AND-ed to what came before ("cats NOT dogs" = cat & !dog);
//   a clause with nothing positive ("NOT dogs" alone) is dropped, it cannot rank anything;
// - "quoted phrases" (straight or curly double quotes) keep adjacency; an unbalanced quote is
//   ordinary punctuation;
// - an unquoted CJK run longer than two characters becomes an OR of its bigrams, so 「你的邮箱是啥」
//   can hit 「邮箱」; jieba's words for the run are OR-ed in too, because the index holds jieba's
//   words and a 4-character word (复旦大学) is matched by none of its bigrams. Bigrams made only of
//   function characters (你的, 是啥) are dropped like stop words;
// - every term is made of letters, digits and marks only (emails and dotted names like node.js keep
//   their '.'/'@'), so no input can break the tsquery syntax; it is still quoted and escaped.
// Bad input never throws: empty, punctuation-only, emoji-only or operator-only text gives
// `tsquery: null` (nothing to search for); text past MAX_QUERY_CHARS and terms past MAX_TERMS are
// ignored (a 100 KB paste would otherwise OR thousands of words).
import { cutWords } from '../segment.js';

/** Only the start of a longer query is read. */
export const MAX_QUERY_CHARS = 4000;
/** At most this many distinct positive terms (an OR of more ranks no better and costs postings). */
export const MAX_TERMS = 64;
/** Longer "words" are noise (base64, hashes) and Postgres refuses lexemes past 2 KB. */
const MAX_TERM_CHARS = 100;

/** Postgres's english.stop (snowball), which to_tsvector('english') drops: the two lists must agree. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having ' +
    'do does did doing a an the and but if or because as until while of at by for with about against between into through during before ' +
    'after above below to from up down in out on off over under again further then once here there when where why how all any both each ' +
    'few more most other some such no nor not only own same so than too very s t can will just don should now'
  ).split(' '),
);

/** Function characters: a CJK bigram or word made only of these carries no topic. */
export const CJK_FUNCTION_CHARS: ReadonlySet<string> = new Set([
  ...'的了是在我你他她它们吗呢吧啊和也就都而与着或这那啥么什怎哪谁个一不有没要会能说到去给把被让很还又呀嘛哦吗',
]);

const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
const WORD = /[\p{L}\p{N}\p{M}]/u;

export type QueryUnit =
  | { kind: 'term'; text: string }
  /**
   * An unquoted CJK run: OR of its pieces (bigrams and jieba words, or the run itself when ≤ 2 chars);
   * `guesses` are the bigrams jieba did not give as words.
   */
  | { kind: 'cjk'; text: string; pieces: string[]; guesses: string[] }
  | { kind: 'phrase'; text: string; words: string[] };

export interface QueryItem {
  negated: boolean;
  unit: QueryUnit;
}

export interface BuiltQuery {
  /** For to_tsquery('english', …); null when there is nothing to search for. */
  tsquery: string | null;
  /** Positive single terms (words, CJK bigrams and jieba words), lowercased, stop words out, in order. */
  terms: string[];
  /** Quoted phrases as written (lowercased). */
  phrases: string[];
  /** The positive words for the trigram branch, space-separated. */
  trigramText: string;
  /** OR-ed clauses of AND-ed items: the structure the tsquery was built from. */
  clauses: QueryItem[][];
  /** True when every clause is one positive term or CJK run: an OR of words, ranked in memory. */
  plainOr: boolean;
  /** Every positive word the query holds (terms, CJK pieces and phrase words), for ranking. */
  positiveWords: string[];
  /**
   * Positive words that are not words of the message for coverage's sake (lexical-index.ts overlap):
   * a CJK bigram that guesses at a word boundary, and Chinese question words (哪里, 为什么) — the
   * English ones are stop words. They count only where the collection knows them.
   */
  optional: string[];
  /** Positive words that ask for a memory rather than say what it is about ("tell me about", 记得): coverage leaves them out. */
  asking: string[];
  /** True when the input was cut at MAX_QUERY_CHARS or MAX_TERMS. */
  truncated: boolean;
}

type Token = { type: 'word'; text: string; cjk: boolean } | { type: 'op'; op: 'AND' | 'OR' | 'NOT' } | { type: 'phrase'; text: string };

function isCjk(ch: string): boolean {
  return CJK.test(ch);
}

/** Splits text outside quotes into words (CJK runs separate from other letters) and operators. */
function wordsOf(text: string, out: Token[], operators: boolean): void {
  const chars = [...text];
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i]!;
    if (isCjk(ch)) {
      let j = i;
      while (j < chars.length && isCjk(chars[j]!)) j++;
      out.push({ type: 'word', text: chars.slice(i, j).join(''), cjk: true });
      i = j;
      continue;
    }
    if (!WORD.test(ch)) {
      i++;
      continue;
    }
    // A word: letters, digits and marks, joined by a single '.' or '@' between word characters
    // (node.js, 3.5, foo@bar.com stay one lexeme, as Postgres's parser keeps them).
    let j = i;
    while (j < chars.length) {
      const c = chars[j]!;
      if (WORD.test(c) && !isCjk(c)) j++;
      else if ((c === '.' || c === '@') && j + 1 < chars.length && WORD.test(chars[j + 1]!) && !isCjk(chars[j + 1]!) && j > i) j++;
      else break;
    }
    const raw = chars.slice(i, j).join('');
    if (operators && (raw === 'AND' || raw === 'OR' || raw === 'NOT')) out.push({ type: 'op', op: raw });
    else out.push({ type: 'word', text: raw.toLowerCase(), cjk: false });
    i = j;
  }
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  // Quotes pair up left to right; a last unmatched quote is plain punctuation.
  const parts = text.split(/["“”]/);
  const balanced = parts.length % 2 === 1;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    const quoted = p % 2 === 1 && (balanced || p < parts.length - 1);
    if (quoted) out.push({ type: 'phrase', text: part });
    else wordsOf(part, out, true);
  }
  return out;
}

function allFunctionChars(s: string): boolean {
  return [...s].every((c) => CJK_FUNCTION_CHARS.has(c));
}

/** Words that ask for a memory ("tell me about…", "what did I say about…", "do you remember…", 你记得…吗). */
const ASKING_WORDS: ReadonlySet<string> = new Set(
  'tell told know remember remind recall say said says mention mentioned 告诉 知道 记得 提到 提过 说过'.split(' '),
);

/**
 * Words that only frame an English question: how long / many / much / often / far / old / soon, what
 * (or which) kind / type / sort of, in what ways. They are not its topic — "How long has Nate had his
 * turtles?" is about turtles, not about a memory that says "after a long day" — so they are left out
 * like stop words. bench:memory (LoCoMo dev, passive recall, with lexemes.ts): hit rate 0.680 → 0.685,
 * precision 0.338 → 0.341; an evidence memory in the top 5 hits for 0.737 → 0.740 of the questions.
 */
const FRAME_AFTER_HOW: ReadonlySet<string> = new Set(['long', 'many', 'much', 'often', 'far', 'old', 'soon']);
const FRAME_BEFORE_OF: ReadonlySet<string> = new Set(['kind', 'kinds', 'type', 'types', 'sort', 'sorts']);
const FRAME_WAYS: ReadonlySet<string> = new Set(['way', 'ways']);

function isFrameWord(tokens: Token[], i: number): boolean {
  const t = tokens[i]!;
  const prev = tokens[i - 1];
  if (t.type !== 'word' || t.cjk || prev?.type !== 'word') return false;
  if (prev.text === 'how') return FRAME_AFTER_HOW.has(t.text);
  if (prev.text !== 'what' && prev.text !== 'which') return false;
  const next = tokens[i + 1];
  return FRAME_WAYS.has(t.text) || (FRAME_BEFORE_OF.has(t.text) && next?.type === 'word' && next.text === 'of');
}

/** Chinese question words: what English says with stop words (where, why, how many). */
const CJK_QUESTION_WORDS: ReadonlySet<string> = new Set([
  '哪里',
  '哪儿',
  '哪个',
  '哪些',
  '为什么',
  '多少',
  '多久',
  '什么样',
  '怎么样',
  '怎样',
  '如何',
  '何时',
  '几个',
]);

/** The searchable pieces of an unquoted CJK run, and which of them are bigrams jieba did not give as words. */
function cjkPieces(run: string): { pieces: string[]; guesses: string[] } {
  const chars = [...run];
  if (chars.length <= 2) return { pieces: allFunctionChars(run) ? [] : [run], guesses: [] };
  const pieces: string[] = [];
  for (const w of cutWords(run) ?? []) {
    if ([...w].length >= 2 && isCjk(w) && !allFunctionChars(w) && !pieces.includes(w)) pieces.push(w);
  }
  const words = pieces.length;
  for (let i = 0; i + 1 < chars.length; i++) {
    const bigram = chars[i]! + chars[i + 1]!;
    if (!allFunctionChars(bigram) && !pieces.includes(bigram)) pieces.push(bigram);
  }
  return { pieces, guesses: pieces.slice(words) };
}

/** The words of a quoted phrase, in order, for adjacency (CJK runs cut by jieba, as indexed). */
function phraseWords(text: string): string[] {
  const tokens: Token[] = [];
  wordsOf(text, tokens, false);
  const words: string[] = [];
  for (const t of tokens) {
    if (t.type !== 'word' || t.text.length > MAX_TERM_CHARS) continue;
    if (t.cjk) words.push(...(cutWords(t.text) ?? [t.text]).map((w) => w.trim()).filter(Boolean));
    else words.push(t.text);
  }
  return words;
}

/** A lexeme literal for to_tsquery: quoted, quotes and backslashes doubled. */
export function quoteLexeme(word: string): string {
  return `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

function unitTsquery(unit: QueryUnit): string {
  switch (unit.kind) {
    case 'term':
      return quoteLexeme(unit.text);
    case 'cjk':
      return unit.pieces.length === 1 ? quoteLexeme(unit.pieces[0]!) : `( ${unit.pieces.map(quoteLexeme).join(' | ')} )`;
    case 'phrase':
      return unit.words.length === 1 ? quoteLexeme(unit.words[0]!) : `( ${unit.words.map(quoteLexeme).join(' <-> ')} )`;
  }
}

/** Never throws; see the rules at the top of this file. */
export function buildQuery(input: unknown): BuiltQuery {
  const raw = typeof input === 'string' ? input : '';
  const truncated = raw.length > MAX_QUERY_CHARS;
  const text = truncated ? raw.slice(0, MAX_QUERY_CHARS) : raw;

  const clauses: QueryItem[][] = [];
  let current: QueryItem[] = [];
  let pendingAnd = false;
  let pendingNot = false;
  const close = () => {
    // A clause with nothing positive yet ("NOT dogs cats") carries its negations into the next one.
    if (current.some((item) => !item.negated)) {
      clauses.push(current);
      current = [];
    }
  };
  const add = (unit: QueryUnit) => {
    const item = { negated: pendingNot, unit };
    // NOT joins the clause before it ("cats NOT dogs"); otherwise words are OR-ed unless AND-ed.
    if (!pendingAnd && !pendingNot) close();
    current.push(item);
    pendingAnd = false;
    pendingNot = false;
  };

  const tokens = tokenize(text);
  for (const [i, token] of tokens.entries()) {
    if (isFrameWord(tokens, i)) continue;
    if (token.type === 'op') {
      if (token.op === 'AND') pendingAnd = current.length > 0;
      else if (token.op === 'OR') {
        pendingAnd = false;
        pendingNot = false;
      } else pendingNot = true;
      continue;
    }
    if (token.type === 'phrase') {
      const words = phraseWords(token.text);
      const meaningful = words.filter((w) => !ENGLISH_STOP_WORDS.has(w) && !(isCjk(w) && allFunctionChars(w)));
      if (meaningful.length === 0) continue;
      add({ kind: 'phrase', text: token.text.trim().toLowerCase(), words });
      continue;
    }
    if (token.text.length > MAX_TERM_CHARS) continue;
    if (token.cjk) {
      const { pieces, guesses } = cjkPieces(token.text);
      if (pieces.length) add({ kind: 'cjk', text: token.text, pieces, guesses });
      continue;
    }
    if (ENGLISH_STOP_WORDS.has(token.text)) continue;
    add({ kind: 'term', text: token.text });
  }
  close();

  // Cap the distinct positive terms, keeping the query's own order.
  const seen = new Set<string>();
  let cut = false;
  const capped: QueryItem[][] = [];
  for (const clause of clauses) {
    const kept: QueryItem[] = [];
    for (const item of clause) {
      const words = item.unit.kind === 'term' ? [item.unit.text] : item.unit.kind === 'cjk' ? item.unit.pieces : item.unit.words;
      const fresh = words.filter((w) => !seen.has(w));
      if (!item.negated && seen.size + fresh.length > MAX_TERMS) {
        cut = true;
        continue;
      }
      for (const w of fresh) if (!item.negated) seen.add(w);
      kept.push(item);
    }
    if (kept.some((i) => !i.negated)) capped.push(kept);
  }
  // Identical clauses (a word repeated) are one.
  const unique = new Map<string, QueryItem[]>();
  for (const clause of capped) {
    const key = clause.map((i) => `${i.negated ? '!' : ''}${unitTsquery(i.unit)}`).join(' & ');
    if (!unique.has(key)) unique.set(key, clause);
  }
  const finalClauses = [...unique.values()];

  const tsquery = finalClauses.length
    ? finalClauses
        .map((clause) => {
          const parts = clause.map((i) => `${i.negated ? '!' : ''}${unitTsquery(i.unit)}`);
          return parts.length === 1 ? parts[0]! : `( ${parts.join(' & ')} )`;
        })
        .join(' | ')
    : null;

  const terms: string[] = [];
  const phrases: string[] = [];
  const positiveWords: string[] = [];
  const push = (list: string[], w: string) => {
    if (!list.includes(w)) list.push(w);
  };
  for (const clause of finalClauses) {
    for (const item of clause) {
      if (item.negated) continue;
      const u = item.unit;
      if (u.kind === 'term') {
        push(terms, u.text);
        push(positiveWords, u.text);
      } else if (u.kind === 'cjk') {
        for (const p of u.pieces) {
          push(terms, p);
          push(positiveWords, p);
        }
      } else {
        push(phrases, u.text);
        for (const w of u.words) if (!ENGLISH_STOP_WORDS.has(w)) push(positiveWords, w);
      }
    }
  }
  // A bigram that is a word elsewhere in the message is a word.
  const guesses = new Set<string>();
  const cjkWords = new Set<string>();
  for (const clause of finalClauses) {
    for (const item of clause) {
      if (item.negated || item.unit.kind !== 'cjk') continue;
      for (const p of item.unit.pieces) (item.unit.guesses.includes(p) ? guesses : cjkWords).add(p);
    }
  }
  const optional = positiveWords.filter((w) => (guesses.has(w) && !cjkWords.has(w)) || CJK_QUESTION_WORDS.has(w));
  const asking = positiveWords.filter((w) => ASKING_WORDS.has(w));
  const plainOr = finalClauses.every((c) => c.length === 1 && !c[0]!.negated && c[0]!.unit.kind !== 'phrase');
  const trigramText = finalClauses
    .flatMap((c) => c.filter((i) => !i.negated && i.unit.kind === 'term').map((i) => (i.unit as { text: string }).text))
    .filter((w, i, all) => all.indexOf(w) === i)
    .join(' ');

  return { tsquery, terms, phrases, trigramText, clauses: finalClauses, plainOr, positiveWords, optional, asking, truncated: truncated || cut };
}
