// Names in Latin-script text without a tagger: runs of capitalised words, judged by rules and by
// compromise's lexicon (24,000 words with their tags, read as a dictionary — no tagging).
//   - A run is capitalised words ("Costa Rica", "Pepík Novák", "Łódź") joined by spaces, with the
//     connectors names carry inside ("University of Michigan", "Ludwig van Beethoven"); diacritics
//     of any Latin alphabet count as letters. Possessives, honorifics and kinship words in front
//     ("Aunt Maria", "Dr. Smith") are cut; a capitalised function word inside ("Tips For Your Trip")
//     or a line in Title Case makes it a heading, not a name.
//   - Sentence starts: every sentence's first word is capitalised, so a run there counts when it
//     is longer than one word or the lexicon knows the word as a name ("Vienna is…", "John said…");
//     a lone unknown word there ("Brno is lovely.") is a low-confidence mention, which the recorder
//     links only to an entity the name already has, or after it was seen in another text.
//   - Stop lists: pronouns, greetings, sentence starters, weekdays, months, holidays, languages and
//     nationalities, kinship words alone, common words the lexicon tags as anything but a name,
//     and unknown words with the endings of common English words (-tion, -ment, -ness, -ing…).
//   - Kinds: the lexicon (City/Country/Region → place, FirstName/LastName → person,
//     Organization → org), the run's own words (… Street, Lake …, … University, … Labs), then the
//     words around it ("in/to/from X" → place, "X said", "with/my friend X" → person, "at/for X" after
//     work → org). A name with no clue is a `thing`, which resolution lets match any kind.
// Cost: a few regular expressions and map lookups per capitalised word, ~0.05 ms for a
// 1,000-character turn (compromise's tagger took ~20 ms for the same).
/** What a name is; mentions.ts re-exports it. */
export type MentionKind = 'person' | 'place' | 'org' | 'thing' | 'topic';

export interface LatinMention {
  name: string;
  kind: MentionKind;
  start: number;
  end: number;
  /** 'low': a lone unknown word at a sentence start — recorded only for a name the graph already has. */
  confidence: 'high' | 'low';
}

export type Lexicon = Record<string, string | string[] | undefined>;

/** The lexicon, and a guess for a word it does not have: could it be a singular noun (a name)? */
export interface Dictionary {
  lex: Lexicon;
  mayBeName(lowerWord: string): boolean;
}

const set = (s: string) => new Set(s.trim().split(/\s+/));

/** Never a name on its own. */
const STOP = set(`
  i im ive id ill me my mine myself you your yours yourself he him his she her hers they them their theirs we us our ours it its
  this that these those who whom whose what which someone somebody everyone everybody anyone nobody there here
  hey hi hello hiya yo wow oh ah ooh aww yay yeah yes no nope ok okay thanks thank lol omg haha hmm please sorry
  mom mum dad mother father sister brother son daughter wife husband aunt uncle grandma grandpa granny cousin
  mr mrs ms miss dr sir madam god guys dear friend buddy bro sis babe honey
  monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight weekend
  january february march april june july august september october november december
  christmas easter thanksgiving halloween hanukkah ramadan diwali valentines
  english chinese french spanish german japanese italian korean russian portuguese arabic hindi czech polish dutch greek
  turkish swedish norwegian danish finnish hungarian hebrew thai vietnamese indonesian latin american british european
  african asian canadian mexican australian indian irish scottish welsh swiss austrian belgian ukrainian brazilian
  internet tv dvd pdf faq diy asap fyi btw tbh imo etc am pm ad bc ok usb wifi url html css api ai
  step tip note tips notes example summary conclusion overview introduction option options bonus update
  also however therefore finally first second third next then lastly additionally moreover furthermore overall
  remember consider make sure try keep use avoid check find look get take have do be let
`);

/** Whether a word is on the list of words that are never a name on their own (any case). */
export function isLatinStopWord(word: string): boolean {
  return STOP.has(word.trim().toLowerCase());
}

/** Capitalised at a sentence start and nothing more (also never the first word of a name there). */
const STARTERS = set(`
  the a an and but or so if when what why how where who which that this these those there here then now just
  i im ive id ill it its is are was were be do does did can could would should will have has had not no yes
  hey hi hello wow oh ah yeah ok okay thanks thank sorry well also maybe really great good nice cool awesome
  lol haha omg my your our their his her we you they he she me us them love glad happy sounds
  let lets sure absolutely definitely totally after before during while since until though although because
  as at by for from in into of on onto out over through to under up with without about above across along among
  around behind below beside between beyond near off past per toward towards upon within some many most much more
  any all each every both either neither few several such other another same one two three four five six seven
  eight nine ten last first next our speaking talking thinking looking going getting being having here's there's
  what's that's it's let's i'm i've i'd i'll you're we're they're he's she's don't can't won't didn't isn't
  wasn't aren't doesn't haven't hasn't couldn't wouldn't shouldn't however anyway actually honestly basically
  unfortunately fortunately luckily hopefully instead otherwise meanwhile still yet even only never always often
  sometimes usually today yesterday tomorrow tonight once again dear hope wish guess think know see look
  remember imagine check try make keep take get go come give tell ask find use consider start stop visit
`);

/** Lower-case words allowed inside a name between capitalised ones. */
const CONNECTORS = set('of de del della der den van von da di du la le y bin al');

/** Capitalised words that say "the next word is a person" and are not part of the name. */
const TITLES = set(`
  mr mrs ms miss dr prof professor sir madam dame lord lady saint aunt auntie uncle grandma grandpa granny nana
  cousin coach captain officer judge senator president father mother brother sister
`);

const ORG_WORDS = set(`
  inc corp corporation ltd llc gmbh co company labs lab university college school academy institute bank group
  foundation museum hospital clinic society association club studio studios records press cafe café restaurant
  bakery airlines airways systems technologies partners ministry committee council agency department team church
  library gallery theatre theater center centre store shop market bar pub hotel motors games insurance magazine
`);

const PLACE_WORDS = set(`
  street st avenue ave road rd boulevard lane park lake river mount mountain mountains island islands beach bay
  valley city county state square bridge falls canyon forest hill hills coast village town province republic
  kingdom station airport castle harbor harbour peninsula desert gardens national cliffs tower palace cathedral
`);

const PLACE_BEFORE = set(
  'in to from at near visit visited visiting around across toward towards into outside via through moved move moving live lives lived living born',
);
const PERSON_BEFORE = set(`
  with met meet meeting call called named told tell ask asked invited dating married by
  friend friends sister brother mom dad mother father wife husband boyfriend girlfriend son daughter cousin
  colleague coworker boss neighbor neighbour partner roommate niece nephew grandson granddaughter fiancé fiance fiancée
`);
const PERSON_AFTER = set(
  'said says told asks asked thinks thought wants wanted loves loved likes liked called texted sent gave came went laughed replied showed lent bought wrote',
);
const ORG_BEFORE_WORK = /\b(?:work|works|worked|working|job|intern|internship|interview|hired|employed|joined)\s+(?:at|for|with)\s+$/i;

/** Endings of common English words; an unknown capitalised word with one is a word, not a name. */
const COMMON_ENDING =
  /(?:tion|sion|ment|ness|ity|ing|ance|ence|ism|ist|ics|ful|ous|ive|able|ible|ally|ly|ies|ed|ship|hood|less|ward|wise|ize|ise|ate|ual|ial|ary|ery)$/;

/** What the lexicon says a word (lower case) is: a kind of name, a common word, or unknown. */
function lexiconKind(lex: Lexicon, word: string): MentionKind | 'common' | null {
  const raw = lex[word];
  if (raw === undefined) return null;
  const tags = Array.isArray(raw) ? raw : [raw];
  for (const t of tags) {
    if (t === 'City' || t === 'Country' || t === 'Region' || t === 'Place') return 'place';
    if (t === 'Organization' || t === 'Company' || t === 'SportsTeam') return 'org';
    if (t === 'MaleName' || t === 'FemaleName' || t === 'FirstName' || t === 'LastName' || t === 'Person') return 'person';
  }
  return 'common';
}

interface Token {
  text: string;
  lower: string;
  start: number;
  end: number;
  cap: boolean;
}

const WORD = /[\p{L}\p{M}][\p{L}\p{M}\p{N}'’.-]*[\p{L}\p{M}\p{N}.]|[\p{L}\p{M}]/gu;

/** A capitalised word: upper-case first letter, and not all capitals unless the lexicon knows it ("USA") or it is an initial. */
function isCap(word: string): boolean {
  return /^\p{Lu}/u.test(word);
}

/** Is this line a heading (Markdown #, a Title Case line without a sentence end, a label before a colon)? */
function isHeading(line: string): boolean {
  const t = line.trim();
  if (/^#{1,6}\s/.test(t)) return true;
  const words = t.replace(/[*_`#>|-]/g, ' ').match(/[\p{L}][\p{L}'’-]*/gu) ?? [];
  if (words.length < 3 || words.length > 14) return false;
  const caps = words.filter((w) => isCap(w)).length;
  return caps / words.length >= 0.7 && !/[.!?]["'”’)]?$/.test(t);
}

/** Sentence spans in one line: cut after . ! ? : (not after an initial or a short title). */
function clauses(line: string): { part: string; at: number }[] {
  const out: { part: string; at: number }[] = [];
  let from = 0;
  for (const m of line.matchAll(/([.!?:;]+)["')\]’”*]*\s+/g)) {
    if (m[1]!.startsWith('.') && !/[!?:;]/.test(m[1]!)) {
      const word = /([\p{L}\p{N}]+)$/u.exec(line.slice(from, m.index))?.[1] ?? '';
      if (word.length < 3 && /^\p{Lu}/u.test(word)) continue;
    }
    const end = m.index + m[0].length;
    out.push({ part: line.slice(from, end), at: from });
    from = end;
  }
  if (from < line.length) out.push({ part: line.slice(from), at: from });
  return out;
}

/** The names in Latin-script text. `lex` is compromise's lexicon (lower-case words to tags). */
export function latinMentions(text: string, dict: Dictionary): LatinMention[] {
  const out: LatinMention[] = [];
  let lineAt = 0;
  for (const line of text.split('\n')) {
    const at = lineAt;
    lineAt += line.length + 1;
    if (!/\p{Lu}/u.test(line) || isHeading(line)) continue;
    // A list item's bold label ("1. **Pack Light**: …") is a heading of its own.
    const label = /^\s*(?:[-*•]|\d+[.)])?\s*\*\*[^*]{1,80}\*\*\s*:?/.exec(line);
    const body = label ? ' '.repeat(label[0].length) + line.slice(label[0].length) : line;
    for (const { part, at: partAt } of clauses(body)) {
      for (const m of clauseMentions(part, dict)) out.push({ ...m, start: m.start + at + partAt, end: m.end + at + partAt });
    }
  }
  return out;
}

function clauseMentions(part: string, dict: Dictionary): LatinMention[] {
  const tokens: Token[] = [];
  for (const m of part.matchAll(WORD)) {
    let text = m[0];
    // A possessive is not part of the name; nor is a final dot (unless an initial: "J.").
    text = text.replace(/['’]s$/i, '');
    if (text.length > 1 && text.endsWith('.') && !/^(?:\p{Lu}\.)+$/u.test(text)) text = text.slice(0, -1);
    tokens.push({ text, lower: text.toLowerCase().replace(/’/g, "'"), start: m.index, end: m.index + text.length, cap: isCap(text) });
  }
  if (!tokens.length) return [];
  const out: LatinMention[] = [];
  const firstWord = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (!tokens[i]!.cap) continue;
    // The run: capitalised words next to each other (a space between, nothing else), connectors inside.
    let j = i;
    while (j + 1 < tokens.length) {
      const gap = part.slice(tokens[j]!.end, tokens[j + 1]!.start);
      const next = tokens[j + 1]!;
      if (next.cap && /^ $/.test(gap)) {
        j++;
        continue;
      }
      // "University of Michigan", "Johnson & Johnson": a connector between two capitalised words.
      if (/^ $/.test(gap) && CONNECTORS.has(next.lower) && !next.cap && j + 2 < tokens.length && tokens[j + 2]!.cap) {
        const gap2 = part.slice(next.end, tokens[j + 2]!.start);
        if (/^ $/.test(gap2)) {
          j += 2;
          continue;
        }
      }
      if (gap === ' & ' && next.cap) {
        j++;
        continue;
      }
      break;
    }
    const mention = judgeRun(part, tokens, i, j, i === firstWord, dict);
    if (mention) out.push(mention);
    i = j;
  }
  return out;
}

function judgeRun(part: string, tokens: Token[], i: number, j: number, atStart: boolean, dict: Dictionary): LatinMention | null {
  const lex = dict.lex;
  let run = tokens.slice(i, j + 1);
  const before = tokens[i - 1];
  let titled = false;
  // Sentence starters, honorifics and kinship words in front are not the name.
  while (run.length) {
    const w = run[0]!;
    const bare = w.lower.replace(/\.$/, '');
    if (TITLES.has(bare) && run.length > 1) {
      titled = true;
      run = run.slice(1);
      continue;
    }
    const stem = bare.replace(/'(?:ll|re|ve|d|m|s|t)$/, '');
    if ((atStart && run[0] === tokens[i] && STARTERS.has(bare)) || STOP.has(bare) || STOP.has(stem) || STARTERS.has(bare.replace(/'/g, ''))) {
      run = run.slice(1);
      atStart = false;
      continue;
    }
    break;
  }
  // Connectors or stop words at the end ("… of") go too.
  while (run.length && (!run[run.length - 1]!.cap || STOP.has(run[run.length - 1]!.lower))) run = run.slice(0, -1);
  if (!run.length) return null;
  const startsSentence = atStart && run[0] === tokens[i];
  // A capitalised function word inside is a title ("Tips For Your Trip"), not a name.
  if (run.length >= 2 && run.slice(1).some((t) => t.cap && (STARTERS.has(t.lower) || STOP.has(t.lower)) && !CONNECTORS.has(t.lower))) return null;

  const words = run.filter((t) => t.cap);
  const whole = lexiconKind(lex, run.map((t) => t.lower).join(' '));
  const kinds = words.map((t) => lexiconKind(lex, t.lower));
  const allCaps = words.map((t) => t.text.length > 1 && t.text === t.text.toUpperCase() && !/\./.test(t.text));
  // Unknown acronyms (XML, RTX, DIY) are terms, not names; known ones (USA, NASA) stay.
  if (words.length === 1 && allCaps[0] && (kinds[0] === null || kinds[0] === 'common')) return null;
  const unknownCommon = words.map((t, k) => kinds[k] === null && COMMON_ENDING.test(t.lower) && t.lower.length > 4);
  const nameLike = words.map((t, k) => kinds[k] === 'person' || kinds[k] === 'place' || kinds[k] === 'org' || (kinds[k] === null && !unknownCommon[k]));
  const last = words[words.length - 1]!.lower;
  const first = words[0]!.lower;
  const suffixKind: MentionKind | null =
    ORG_WORDS.has(last) || (words.length >= 2 && ORG_WORDS.has(first))
      ? 'org'
      : PLACE_WORDS.has(last) || (words.length >= 2 && PLACE_WORDS.has(first))
        ? 'place'
        : null;
  const isName =
    (whole !== null && whole !== 'common') ||
    nameLike.some(Boolean) ||
    // "Golden Gate Park", "Silver Lake Studio": common words made a name by a place or org word.
    (words.length >= 2 && suffixKind !== null);
  if (!isName) return null;
  if (words.length === 1 && kinds[0] === 'common') return null;

  const start = run[0]!.start;
  const end = run[run.length - 1]!.end;
  const name = part.slice(start, end).replace(/\s+/g, ' ');
  const known = (whole !== null && whole !== 'common') || kinds.some((k) => k !== null && k !== 'common');
  const confidence: LatinMention['confidence'] = startsSentence && words.length === 1 && !known ? 'low' : 'high';
  if (confidence === 'low') {
    // A lone unknown word at a sentence start is mostly a word: an adjective, a verb, a plural
    // ("Excellent choice", "Preheat the oven", "Websites like…"), or a label ("Dataset:").
    const rest = part.slice(end);
    if (
      !dict.mayBeName(words[0]!.lower) ||
      /^\s*[:(]/.test(rest) ||
      /^\s+(?:the|a|an|your|my|our|their|this|these|those|some|any|all|it|them|you|up|out|on|off|to|for|with)\b/i.test(rest)
    )
      return null;
  }
  return { name, kind: kindOf(part, tokens, i, before, run, whole, kinds, suffixKind, titled), start, end, confidence };
}

function kindOf(
  part: string,
  tokens: Token[],
  i: number,
  before: Token | undefined,
  run: Token[],
  whole: MentionKind | 'common' | null,
  kinds: (MentionKind | 'common' | null)[],
  suffixKind: MentionKind | null,
  titled: boolean,
): MentionKind {
  if (whole && whole !== 'common') return whole;
  if (titled) return 'person';
  if (suffixKind) return suffixKind;
  const named = kinds.filter((k): k is MentionKind => k !== null && k !== 'common');
  // "Ana Novák": a first name then anything is a person; one known word decides the rest.
  if (named.length && run.length >= 2 && kinds[0] === 'person') return 'person';
  if (named.length === 1 && run.length === 1) return named[0]!;
  if (named.length) {
    if (named.includes('org')) return 'org';
    if (named.every((k) => k === 'place')) return 'place';
    if (named.includes('person')) return 'person';
    return named[0]!;
  }
  // Unknown words: the words around the name.
  const prefix = part.slice(0, run[0]!.start);
  if (ORG_BEFORE_WORK.test(prefix)) return 'org';
  if (/\b(?:I'm|I’m|I am|name is|call me|named|called)\s+$/i.test(prefix)) return 'person';
  const prev = before?.lower;
  const afterIdx = tokens.indexOf(run[run.length - 1]!) + 1;
  const next = tokens[afterIdx]?.lower;
  const rest = part.slice(run[run.length - 1]!.end);
  if (/^['’]s\b/.test(rest) || (next && PERSON_AFTER.has(next) && !/^\s*[,;]/.test(rest))) return 'person';
  if (prev && PERSON_BEFORE.has(prev)) return 'person';
  if (prev && PLACE_BEFORE.has(prev)) return 'place';
  // Two or three unknown capitalised words, none a place's or an organisation's: a first and a last name.
  if (run.length >= 2 && run.length <= 3 && run.every((t) => t.cap)) return 'person';
  void i;
  return 'thing';
}

// ---- the person's own name ----

const SELF_EN =
  /(?:^|[\s.!?,;:"“(])(?:I am|I'm|I’m|my name is|My name is|call me|Call me|my name's|My name's|name's)\s+([\p{Lu}][\p{L}\p{M}'’-]+(?: [\p{Lu}][\p{L}\p{M}'’-]+)?)/gu;

/**
 * Names the writer gives themself in Latin script ("I'm Marek", "my name is Ana Novák", "call me
 * Pepík"): a capitalised word that the lexicon does not know as a common word and that is not a
 * stop word ("I'm Sorry", "I'm Happy" are not names).
 */
export function latinSelfNames(text: string, dict: Dictionary): string[] {
  const lex = dict.lex;
  const out: string[] = [];
  for (const m of text.matchAll(SELF_EN)) {
    const words = m[1]!.split(' ');
    const keep: string[] = [];
    for (const w of words) {
      const lower = w.toLowerCase();
      const kind = lexiconKind(lex, lower);
      if (STOP.has(lower) || STARTERS.has(lower) || kind === 'common' || (kind === null && COMMON_ENDING.test(lower) && lower.length > 4)) break;
      keep.push(w);
    }
    if (keep.length) out.push(keep.join(' '));
  }
  return out;
}
