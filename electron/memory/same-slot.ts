// Whether a save gives a new value to the same slot as an active memory ("The person lives in Brno" →
// "The person lives in Prague", "My sister Anna is 31" → "… is 32", "我住在布尔诺" → "我住在布拉格"):
// then the store supersedes the old memory with a link and a closed valid time instead of keeping two
// that cannot both be true. The rule is conservative — when unsure, keep both: the two texts must say
// the same words up to a slot marker (a few predicates that hold one value at a time: where someone
// lives or works, their job, their age, a favourite), and differ only in the value after it. A
// difference before the marker (another name — "Anna" / "Hanna" —, another owner, another verb or
// tense), a negation, an antonym, a value added to or dropped from a list, or a long rewrite is not a
// slot change. The same-fact rule (same-fact.ts) runs first: a restatement is an update, not this.
import { compareFacts, differInFact, foldFact, isCjkToken } from './same-fact.js';

interface Slot {
  /** Tokens (folded, fillers dropped) the common part must end with, right before the value. */
  marker: string[];
  /** A token (Latin) or string (CJK, joined) that must stand somewhere before the marker. */
  requires?: string;
  /** The value is one number (an age). */
  number?: boolean;
  /** The part after the value must start with one of these (the same on both sides by construction). */
  then?: string[][];
}

const SLOTS: Slot[] = [
  // Where someone lives.
  ...['lives', 'live', 'living', 'resides', 'reside', 'based'].map((verb) => ({ marker: [verb, 'in'] })),
  { marker: ['home', 'is', 'in'] },
  // Where or as what someone works.
  ...['works', 'work', 'working'].flatMap((verb) => ['at', 'for', 'as', 'in'].map((prep) => ({ marker: [verb, prep] }))),
  { marker: ['job', 'is'] },
  { marker: ['employed', 'at'] },
  { marker: ['employed', 'by'] },
  // A favourite: one at a time.
  { marker: ['is'], requires: 'favorite' },
  // An age: "is 31", "is 31 years old", "turned 32".
  { marker: ['is'], number: true },
  { marker: ['am'], number: true },
  { marker: ['turned'], number: true },
  { marker: ['aged'], number: true },
  { marker: [], number: true, then: [['years', 'old'], ['year', 'old'], ['岁'], ['周', '岁']] },
  // 住在 / 住于 / 家在 …; 在 … 工作 / 上班; 最喜欢的 … 是 …
  { marker: ['住', '在'] },
  { marker: ['住', '于'] },
  { marker: ['家', '在'] },
  {
    marker: ['在'],
    then: [
      ['工', '作'],
      ['上', '班'],
    ],
  },
  { marker: ['是'], requires: '最喜欢' },
];

/** Most tokens a value may have on either side (CJK counts characters). */
const MAX_VALUE_TOKENS = 4;
const MAX_CJK_VALUE_TOKENS = 8;
/** Tokens of a value both sides share at its start ("New York" / "New Jersey", "布尔诺" / "布拉格"). */
const MAX_SHARED_VALUE_START = 3;

const NUMBER = /^\d+(?:[.,]\d+)?$/;

function endsWith(tokens: string[], end: number, marker: string[]): boolean {
  if (end < marker.length) return false;
  return marker.every((t, i) => tokens[end - marker.length + i] === t);
}

function startsWith(tokens: string[], start: number, prefix: string[]): boolean {
  return prefix.every((t, i) => tokens[start + i] === t);
}

/**
 * The old memory and the save say the same subject and slot with different values: the save
 * supersedes. False whenever they might both be true, say the same (compareFacts), or differ in more
 * than the value.
 */
export function sameSlot(existing: string, incoming: string): boolean {
  const a = foldFact(existing).tokens;
  const b = foldFact(incoming).tokens;
  if (!a.length || !b.length) return false;
  const shortest = Math.min(a.length, b.length);
  let prefix = 0;
  while (prefix < shortest && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shortest - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  // Both sides must put something in the value's place: a value added or dropped is not a new value.
  if (prefix + suffix >= a.length || prefix + suffix >= b.length) return false;
  for (const slot of SLOTS) {
    // The marker ends inside the common part, at most a few value tokens before the difference.
    for (let end = prefix; end >= Math.max(slot.marker.length, prefix - MAX_SHARED_VALUE_START); end--) {
      if (!endsWith(a, end, slot.marker)) continue;
      if (
        slot.requires &&
        !a
          .slice(0, end - slot.marker.length)
          .join('')
          .includes(slot.requires)
      )
        continue;
      // The same fact said again is an update (same-fact.ts), never a new value.
      if (valueChanged(a, b, end, suffix, slot)) return compareFacts(existing, incoming) !== 'same';
    }
  }
  return false;
}

function valueChanged(a: string[], b: string[], start: number, suffix: number, slot: Slot): boolean {
  const va = a.slice(start, a.length - suffix);
  const vb = b.slice(start, b.length - suffix);
  if (slot.then) {
    const after = a.length - suffix;
    if (!slot.then.some((t) => startsWith(a, after, t))) return false;
  }
  if (slot.number) {
    if (va.length !== 1 || vb.length !== 1 || !NUMBER.test(va[0]!) || !NUMBER.test(vb[0]!)) return false;
    // "is 31" without "years old" is an age only at the end of the sentence.
    if (
      !slot.then &&
      suffix > 0 &&
      !slot.marker.includes('turned') &&
      !startsWith(a, a.length - suffix, ['years']) &&
      !startsWith(a, a.length - suffix, ['year'])
    )
      return false;
    return va[0] !== vb[0];
  }
  const cjk = [...va, ...vb].some(isCjkToken);
  const max = cjk ? MAX_CJK_VALUE_TOKENS : MAX_VALUE_TOKENS;
  if (!va.length || !vb.length || va.length > max || vb.length > max) return false;
  // One value holding the other ("Brno" / "Brno and Prague") adds or drops one: keep both.
  const sa = new Set(va);
  const sb = new Set(vb);
  if (va.every((t) => sb.has(t)) || vb.every((t) => sa.has(t))) return false;
  // A negation or an antonym is another claim, never a new value.
  return !isNegatedOrOpposite(va.join(' '), vb.join(' '));
}

/** The values differ by a negation or an antonym (differInFact's checks, numbers and names aside). */
function isNegatedOrOpposite(a: string, b: string): boolean {
  const plain = (s: string) => s.replace(/\d+/g, '').replace(/\b\p{L}/gu, (c) => c.toLowerCase());
  return differInFact(plain(a), plain(b));
}

function joinTokens(tokens: string[]): string {
  return tokens.reduce((out, t, i) => (i === 0 ? t : out + (isCjkToken(t) && isCjkToken(tokens[i - 1]!) ? '' : ' ') + t), '');
}

/** Shortest slot context worth a probe: "i am" would find half the store. */
const MIN_CONTEXT_CHARS = 6;

/**
 * The words before the value of the first slot the text names ("person lives in", "用户住在"), for
 * finding the memories that may hold the same slot; null when it names none.
 */
export function slotContext(text: string): string | null {
  const tokens = foldFact(text).tokens;
  for (let end = 0; end < tokens.length; end++) {
    for (const slot of SLOTS) {
      if (!endsWith(tokens, end, slot.marker)) continue;
      if (
        slot.requires &&
        !tokens
          .slice(0, end - slot.marker.length)
          .join('')
          .includes(slot.requires)
      )
        continue;
      if (slot.number && !NUMBER.test(tokens[end] ?? '')) continue;
      if (slot.number && slot.then && !slot.then.some((t) => startsWith(tokens, end + 1, t))) continue;
      const context = joinTokens(tokens.slice(0, end));
      // A CJK character says about as much as two Latin letters.
      if (context.length + (context.match(/\p{Script=Han}/gu)?.length ?? 0) >= MIN_CONTEXT_CHARS) return context;
    }
  }
  return null;
}
