// Whether a save says the same as an active memory of its type (update that one) or another fact
// (keep both). The database finds the candidates (same normalised key, or words that look alike);
// this decides. A wrong merge loses a fact and a missed one costs a line, so the rule is strict:
// two texts are the same fact when, once the ways of writing one thing are folded — case,
// punctuation, digits for number words, contractions, British and American spelling, a few light
// synonyms, articles and fillers, "has adopted" for "adopted" — they hold the same words, in any
// order, with every name in the same order. Anything else (another name, number, date, time, a
// negation, an antonym, another owner, a tense, an added word that changes the claim) keeps them apart.

/** The two texts are the same fact said again (update), or different facts (keep both). */
export type Twin = 'same' | 'distinct';

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const TENS = new Set(['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety']);

const CHINESE_DIGITS: Record<string, number> = { 零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 兩: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };

/** British spellings and the American ones they are the same word as. */
const SPELLINGS: Record<string, string> = {
  favourite: 'favorite',
  favourites: 'favorites',
  colour: 'color',
  colours: 'colors',
  flavour: 'flavor',
  flavours: 'flavors',
  honour: 'honor',
  neighbour: 'neighbor',
  neighbours: 'neighbors',
  behaviour: 'behavior',
  humour: 'humor',
  labour: 'labor',
  centre: 'center',
  theatre: 'theater',
  metre: 'meter',
  metres: 'meters',
  litre: 'liter',
  kilometre: 'kilometer',
  kilometres: 'kilometers',
  grey: 'gray',
  programme: 'program',
  jewellery: 'jewelry',
  defence: 'defense',
  licence: 'license',
  catalogue: 'catalog',
  travelled: 'traveled',
  travelling: 'traveling',
  cancelled: 'canceled',
  cancelling: 'canceling',
  practise: 'practice',
  practising: 'practicing',
  organise: 'organize',
  organised: 'organized',
  organising: 'organizing',
  realise: 'realize',
  realised: 'realized',
  recognise: 'recognize',
  recognised: 'recognized',
  apologise: 'apologize',
  apologised: 'apologized',
  prioritise: 'prioritize',
  specialise: 'specialize',
  specialises: 'specializes',
  specialised: 'specialized',
  mum: 'mom',
  aeroplane: 'airplane',
  pyjamas: 'pajamas',
};

/**
 * The regular British endings beyond the list above: -our → -or (colour, harbour), -ise → -ize
 * (organisation, apologising). Both texts are folded the same way, so a word that merely looks like
 * one (promise → promize) changes nothing.
 */
function britishToAmerican(word: string): string {
  if (word.length < 5) return word;
  return word.replace(/^(\p{L}{2,})our(s|ed|ing|ite|ites|able)?$/u, '$1or$2').replace(/^(\p{L}{3,})is(e|es|ed|ing|ation|ations)$/u, '$1iz$2');
}

/** Light synonyms: each folds to the first word of its group. Only words that never change the claim. */
const SYNONYM_GROUPS: string[][] = [
  ['named', 'called'],
  ['name', 'call'],
  ['be', 'become'],
  ['film', 'movie'],
  ['films', 'movies'],
  ['children', 'kids'],
  ['child', 'kid'],
  ['photo', 'picture', 'photograph'],
  ['photos', 'pictures', 'photographs'],
  ['start', 'begin'],
  ['started', 'began', 'begun'],
  ['starts', 'begins'],
  ['mother', 'mom'],
  ['father', 'dad'],
  ['couch', 'sofa'],
  ['enjoys', 'loves'],
];
const SYNONYMS = new Map(SYNONYM_GROUPS.flatMap((group) => group.map((word) => [word, group[0]!] as const)));

/** Words whose presence or absence never changes a claim. */
const FILLERS = new Set(['a', 'an', 'the', 'and', 'really', 'very', 'just', 'also', 'too', 'quite', 'actually', 'indeed']);

/** Capitalised at the start of a sentence without being a name. */
const NOT_NAMES = new Set([
  'a',
  'an',
  'the',
  'in',
  'on',
  'at',
  'last',
  'next',
  'this',
  'that',
  'every',
  'each',
  'my',
  'our',
  'his',
  'her',
  'their',
  'its',
  'your',
  'yesterday',
  'today',
  'tomorrow',
  'when',
  'after',
  'before',
  'since',
  'during',
  'for',
  'from',
  'with',
  'i',
  'we',
  'he',
  'she',
  'they',
  'it',
  'there',
  'some',
  'most',
  'all',
  'both',
  'once',
  'now',
  'sometimes',
  'usually',
  'often',
  'always',
  'never',
]);

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** A token of foldFact that is a CJK character. */
export function isCjkToken(token: string): boolean {
  return CJK.test(token);
}

interface Folded {
  /** The words and CJK characters that carry the claim, folded. */
  tokens: string[];
  /** Every folded word in order, fillers and connectors included: where the names stand. */
  sequence: string[];
  /** Tokens written with a capital in the original that are not sentence starters: the names. */
  names: Set<string>;
}

function chineseNumbers(text: string): string {
  // 三 → 3, 十 → 10, 十二 → 12, 二十 → 20, 二十三 → 23 (runs up to 99; larger ones stay as written).
  return text.replace(
    /[零〇一二两兩三四五六七八九]?十[一二三四五六七八九]?|[零〇一二两兩三四五六七八九](?=[个個岁歲年月日号號点點次天只隻位本件])/gu,
    (run) => {
      if (!run.includes('十')) return String(CHINESE_DIGITS[run]!);
      const [tens, ones] = run.split('十') as [string, string];
      return String((tens ? CHINESE_DIGITS[tens]! : 1) * 10 + (ones ? CHINESE_DIGITS[ones]! : 0));
    },
  );
}

function expandContractions(text: string): string {
  return (
    text
      .replace(/\bwon't\b/g, 'will not')
      .replace(/\bcan't\b/g, 'can not')
      .replace(/\bcannot\b/g, 'can not')
      .replace(/\bshan't\b/g, 'shall not')
      .replace(/n't\b/g, ' not')
      .replace(/'re\b/g, ' are')
      .replace(/'m\b/g, ' am')
      .replace(/'ve\b/g, ' have')
      .replace(/'ll\b/g, ' will')
      .replace(/'d\b/g, ' would')
      // "it's" is "it is"; the possessive 's of a name ("Caroline's dog") stays.
      .replace(/\b(it|he|she|that|there|what|who|where|here)'s\b/g, '$1 is')
  );
}

/** Number words as digits: "three" → 3, "twenty-one" / "twenty one" → 21. */
function numberWords(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const value = NUMBER_WORDS[w];
    if (value === undefined) {
      out.push(w);
      continue;
    }
    const next = words[i + 1];
    const ones = next === undefined ? undefined : NUMBER_WORDS[next];
    if (TENS.has(w) && ones !== undefined && ones > 0 && ones < 10) {
      out.push(String(value + ones));
      i++;
    } else out.push(String(value));
  }
  return out;
}

/** "has adopted" says what "adopted" says; "works" and "worked" are not folded (another tense, another claim). */
function dropPerfectAuxiliary(words: string[]): string[] {
  return words.filter((w, i) => !((w === 'has' || w === 'have' || w === 'had') && /(?:ed|en|wn|ne|un)$/.test(words[i + 1] ?? '')));
}

/** The last texts folded: a save is compared with up to 30 look-alikes, and each comparison folds both sides. */
const folded = new Map<string, Folded>();
const FOLD_CACHE = 256;

export function foldFact(text: string): Folded {
  const hit = folded.get(text);
  if (hit) return hit;
  const f = foldUncached(text);
  if (folded.size >= FOLD_CACHE) folded.delete(folded.keys().next().value!);
  folded.set(text, f);
  return f;
}

function foldUncached(text: string): Folded {
  const normal = chineseNumbers(text.normalize('NFKC').replace(/[‘’ʼ`´]/g, "'"));
  const names = new Set<string>();
  // Split into Latin words (keeping inner apostrophes and hyphens for now) and single CJK characters.
  const raw = normal.match(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu) ?? [];
  const pieces: string[] = [];
  for (const word of raw) {
    if (CJK.test(word)) {
      // One token per CJK character; a run of digits or Latin letters inside stays one token ("31岁": 31, 岁).
      for (const piece of word.match(
        /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu,
      ) ?? [])
        pieces.push(piece);
      continue;
    }
    if (/^\p{Lu}/u.test(word) && !NOT_NAMES.has(word.toLowerCase())) {
      names.add(word.toLowerCase());
      names.add(word.toLowerCase().replace(/'s$/, ''));
    }
    pieces.push(word);
  }
  const expanded = expandContractions(pieces.join(' ').toLowerCase());
  let words = expanded
    .replace(/\ba lot\b/g, ' ')
    .split(/[\s-]+/)
    .filter(Boolean);
  words = numberWords(words);
  words = dropPerfectAuxiliary(words);
  const sequence = words.map((w) => SPELLINGS[w] ?? britishToAmerican(w)).map((w) => SYNONYMS.get(w) ?? w);
  // "prefers tea to coffee" and "prefers tea over coffee" are one preference.
  if (sequence.some((w) => w.startsWith('prefer'))) for (let i = 0; i < sequence.length; i++) if (sequence[i] === 'over') sequence[i] = 'to';
  return { tokens: sequence.filter((w) => !FILLERS.has(w)), sequence, names };
}

function sameMultiset(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const counts = new Map<string, number>();
  for (const t of a) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const t of b) {
    const n = counts.get(t);
    if (!n) return false;
    counts.set(t, n - 1);
  }
  return true;
}

/** Whether an incoming text says the same fact as an existing memory's text. */
export function compareFacts(existing: string, incoming: string): Twin {
  const a = foldFact(existing);
  const b = foldFact(incoming);
  if (!a.tokens.length || !sameMultiset(a.tokens, b.tokens)) return 'distinct';
  // The same words with the names in another order are another claim ("Anna called Bob" / "Bob called
  // Anna") — except inside a list, where order says nothing ("Spanish and French").
  const names = new Set([...a.names, ...b.names].map((n) => SPELLINGS[n] ?? n));
  return nameOrder(a.sequence, names) === nameOrder(b.sequence, names) ? 'same' : 'distinct';
}

const LIST_CONNECTORS = new Set(['and', 'or']);

/** The names in the order they stand, each run of names joined only by "and" / "or" sorted as one list. */
function nameOrder(sequence: string[], names: Set<string>): string {
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    out.push(...run.sort());
    run = [];
  };
  for (const word of sequence) {
    if (names.has(word)) run.push(word);
    else if (!LIST_CONNECTORS.has(word)) flush();
  }
  flush();
  return out.join(' ');
}

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without']);
const CJK_NEGATIONS = /[不没沒未别別无無非]/gu;
/** Opposites that sound alike to a similarity measure: one on each side means two different claims. */
const ANTONYMS: [string, string][] = [
  ['like', 'dislike'],
  ['likes', 'dislikes'],
  ['liked', 'disliked'],
  ['love', 'hate'],
  ['loves', 'hates'],
  ['loved', 'hated'],
  ['accepted', 'rejected'],
  ['accept', 'reject'],
  ['won', 'lost'],
  ['win', 'lose'],
  ['passed', 'failed'],
  ['pass', 'fail'],
  ['agree', 'disagree'],
  ['agrees', 'disagrees'],
  ['always', 'never'],
  ['before', 'after'],
  ['open', 'closed'],
  ['opened', 'closed'],
  ['started', 'stopped'],
  ['start', 'stop'],
  ['started', 'finished'],
  ['bought', 'sold'],
  ['buy', 'sell'],
  ['more', 'less'],
  ['older', 'younger'],
  ['early', 'late'],
  ['happy', 'unhappy'],
  ['happy', 'sad'],
  ['arrived', 'left'],
  ['allowed', 'forbidden'],
  ['喜欢', '讨厌'],
  ['接受', '拒绝'],
  ['赢', '输'],
];

/**
 * Differences that make two texts different facts however alike they sound — for matches by meaning,
 * where the words are allowed to differ: other numbers (digits and number words alike), a negation on
 * one side only, an antonym, other names.
 */
export function differInFact(a: string, b: string): boolean {
  const fa = foldFact(a);
  const fb = foldFact(b);
  const numbers = (f: Folded) =>
    f.tokens
      .filter((t) => /^\d+(?:[.,]\d+)*$/.test(t))
      .sort()
      .join(' ');
  if (numbers(fa) !== numbers(fb)) return true;
  const negations = (text: string, f: Folded) => f.tokens.filter((t) => NEGATIONS.has(t)).length + (text.match(CJK_NEGATIONS)?.length ?? 0);
  if (negations(a, fa) % 2 !== negations(b, fb) % 2) return true;
  const wa = new Set(fa.tokens);
  const wb = new Set(fb.tokens);
  for (const [x, y] of ANTONYMS) {
    const inA = (w: string) => wa.has(w) || (CJK.test(w) && a.includes(w));
    const inB = (w: string) => wb.has(w) || (CJK.test(w) && b.includes(w));
    if ((inA(x) && inB(y) && !inA(y)) || (inA(y) && inB(x) && !inA(x))) return true;
  }
  const named = (f: Folded) => [...f.names].sort().join(' ');
  return named(fa) !== named(fb) && fa.names.size > 0 && fb.names.size > 0;
}
