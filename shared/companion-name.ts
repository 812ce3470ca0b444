// The companion's name lives in its identity block ("I am Anima, a companion who…"), the one place
// the model reads it: the app reads it back from there, and renaming rewrites that sentence, so the
// prompt and the UI can never disagree. No second copy is kept.
import { ApiError } from './api/errors.js';

export const DEFAULT_COMPANION_NAME = 'Anima';
export const MAX_NAME_LENGTH = 40;

/** Where a name is said, and how: `en-i-am` only reads a capitalised name ("I am Mira,"), the others take it as written. */
export interface NameSpan {
  name: string;
  /** Offsets of the name itself in the text. */
  start: number;
  end: number;
  /** Offsets of the whole phrase ("I am Mira"), for a rewrite that needs another wording. */
  phraseStart: number;
  way: 'en-i-am' | 'en-my-name' | 'zh';
}

// A sentence start: the text's start, a line break, or after end punctuation.
const START = String.raw`(?:^|\n|(?<=[.!?。！？]\s*))\s*`;
// "I am Mira," / "I'm Mira Chen." / "I am 小米," — up to three words, each starting with a capital or a CJK character.
const WORD = String.raw`[\p{Lu}\p{Lo}][\p{L}\p{M}\p{N}'’-]*`;
const EN_I_AM = new RegExp(String.raw`${START}(I am|I'm|I’m)\s+(${WORD}(?:[ ]${WORD}){0,2})(?=[\s,.;:!?—–)]|$)`, 'u');
// "My name is mira." / "Call me Mira" — whatever stands before the punctuation.
const EN_MY_NAME = new RegExp(
  String.raw`${START}(My name is|my name is|Call me|call me)\s+([^\s,.;:!?—–()"“”][^,.;:!?—–()"“”\n]{0,${MAX_NAME_LENGTH - 1}}?)\s*(?=[,.;:!?—–)]|\n|$)`,
  'u',
);
// 我叫小米。 / 我的名字是小米， / 我是Anima，一个… (我是 only with a short name right before a comma: "我是一个…" is no name).
const ZH = new RegExp(
  String.raw`(?:^|\n|(?<=[。！？.!?]\s*))\s*(?:(我叫|我的名字是)\s*([^\s，,。.！!？?、；;：:“”"]{1,${MAX_NAME_LENGTH}})|(我是)\s*((?![一这那你他她它])[^\s，,。.！!？?、；;：:“”"]{1,12})(?=[，,]))`,
  'u',
);

/** The first place the text says the companion's name, or null. */
export function findName(text: string): NameSpan | null {
  const found: NameSpan[] = [];
  for (const [re, way] of [
    [EN_I_AM, 'en-i-am'],
    [EN_MY_NAME, 'en-my-name'],
    [ZH, 'zh'],
  ] as const) {
    const m = re.exec(text);
    if (!m) continue;
    const lead = m[1] ?? m[3]!;
    const name = m[2] ?? m[4]!;
    const phraseStart = m.index + m[0].indexOf(lead);
    const start = phraseStart + m[0].slice(m[0].indexOf(lead)).indexOf(name, lead.length);
    found.push({ name, start, end: start + name.length, phraseStart, way });
  }
  found.sort((a, b) => a.phraseStart - b.phraseStart);
  return found[0] ?? null;
}

/** The companion's name as its identity block says it (the default name when it says none). */
export function nameOf(identity: string): string {
  return findName(identity)?.name.trim() || DEFAULT_COMPANION_NAME;
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

/** A name fit to be said in the identity block and shown: one line, not empty, not too long. */
export function checkName(raw: string): string {
  const name = raw.replace(/\s+/g, ' ').trim();
  if (!name) throw new ApiError('invalid_input', 'A name cannot be empty.', 'name');
  if ([...name].length > MAX_NAME_LENGTH) throw new ApiError('invalid_input', `A name is at most ${MAX_NAME_LENGTH} characters.`, 'name');
  if (/[,.;:!?。，；：！？()"“”\n]/u.test(name))
    throw new ApiError('invalid_input', 'A name cannot hold punctuation (commas, full stops, brackets, quotes).', 'name');
  return name;
}

/**
 * The identity block with the companion called `name`: the name where the block says it, in the
 * block's own wording when the new name reads back the same way; else a short sentence in front
 * ("My name is mira." / "我叫小米。", in the block's language).
 */
export function withName(identity: string, rawName: string): string {
  const name = checkName(rawName);
  const span = findName(identity);
  if (span) {
    const candidate = identity.slice(0, span.start) + name + identity.slice(span.end);
    if (findName(candidate)?.name === name) return candidate;
    if (span.way === 'en-i-am') {
      // "I am mira," would not read back as a name: the sentence says it plainly instead.
      const plain = identity.slice(0, span.phraseStart) + `My name is ${name}` + identity.slice(span.end);
      if (findName(plain)?.name === name) return plain;
    }
  }
  const chinese = (identity.match(CJK)?.length ?? 0) > identity.length / 4;
  const lead = chinese ? `我叫${name}。` : `My name is ${name}.`;
  return identity.trim() ? `${lead}${chinese ? '' : ' '}${identity.trimStart()}` : lead;
}
