// A deterministic stand-in for the background model the sleep cycle talks to: plug it into the fake
// server (`fake.respond = sleepResponder()`) and every sleep prompt gets a schema-valid JSON answer
// with real items taken from the prompt itself — memories from the transcript's lines, one anchor
// per conversation and day, imprints quoting a moment, a narrative per day, typed relations the
// lines state ("I live in Lisbon", "my sister Lena"), deep-sleep operations on the listed memories,
// a profile per listed entity from its facts, a dream woven from their words. It never cites a message ref or a memory id
// the prompt does not show. Requests that are not sleep prompts (no "Task: …" line) get undefined,
// so the server falls back to its echo: chat keeps working beside it.
//
// The contract (task names, answer schemas, transcript and memory line formats) is
// electron/sleep/schemas.ts.
import {
  CONVERSATION_HEADING,
  ENTITY_HEADING,
  MEMORY_LINE,
  TASK_PREFIX,
  TRANSCRIPT_LINE,
  type ContradictionAnswer,
  type DreamAnswer,
  type LightSleepAnswer,
  type MergeAnswer,
  type ProfileAnswer,
  type RelationItem,
  type SplitAnswer,
} from '../../electron/sleep/schemas.js';
import type { FakeResponse } from './server.js';

export type SleepPurpose = 'light-sleep' | 'deep-sleep:contradictions' | 'deep-sleep:split' | 'deep-sleep:merge' | 'deep-sleep:profiles' | 'dream';
const PURPOSES: readonly SleepPurpose[] = ['light-sleep', 'deep-sleep:contradictions', 'deep-sleep:split', 'deep-sleep:merge', 'deep-sleep:profiles', 'dream'];

export interface SleepResponderOptions {
  /** Wait this long before answering (lets a test see a run in progress). Default 0. */
  delayMs?: number;
  /** Pause between streamed chunks. Default 0. */
  chunkDelayMs?: number;
  /**
   * How it treats a request that asks for a structured answer (`response_format: json_schema`, or an
   * Anthropic `tool_choice` forcing one tool). 'ignore' (default): the JSON as text, as before.
   * 'honour': a server held to the schema — JSON text, or for Anthropic a call of the forced tool
   * whose input is the answer. 'prose-then-json': a small model on a server that honours schemas —
   * held to one, it answers as 'honour'; asked by prompt alone, it answers in prose (the JSON's words
   * in sentences), and only the repair turn gets the JSON.
   */
  schema?: 'ignore' | 'honour' | 'prose-then-json';
}

type MemoryType = LightSleepAnswer['memories'][number]['type'];

/** The fake server's `respond` hook: answers sleep prompts, leaves everything else to the echo. */
export function sleepResponder(options: SleepResponderOptions = {}): (body: unknown) => Promise<FakeResponse | undefined> {
  const delayMs = options.delayMs ?? 0;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  return async (body) => {
    const task = findTask(body);
    if (!task) return undefined;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const answer = fitAnswer(answerSleepTask(task.purpose, task.prompt), maxTokensOf(body));
    const mode = options.schema ?? 'ignore';
    const forced = forcedTool(body);
    if (mode !== 'ignore' && forced) return { kind: 'tool_call', name: forced, arguments: answer as unknown as Record<string, unknown> };
    if (mode === 'prose-then-json' && !asksForSchema(body) && !isRepair(body)) {
      const text = proseOf(answer);
      return { kind: 'text', text, chunks: tokensOf(text), chunkDelayMs };
    }
    const text = JSON.stringify(answer);
    return { kind: 'text', text, chunks: tokensOf(text), chunkDelayMs };
  };
}

/** True when the request carries a JSON Schema for the answer (OpenAI-style `response_format`, or an Anthropic forced tool). */
export function asksForSchema(body: unknown): boolean {
  if (!isRecord(body)) return false;
  const format = body.response_format;
  return (isRecord(format) && format.type === 'json_schema') || forcedTool(body) !== undefined;
}

/** The tool an Anthropic request forces (`tool_choice: {type: "tool", name}`), if any. */
export function forcedTool(body: unknown): string | undefined {
  const choice = isRecord(body) ? body.tool_choice : undefined;
  return isRecord(choice) && choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
}

/** A repair turn: the last user message is not the task's own (it says the answer could not be used). */
function isRepair(body: unknown): boolean {
  if (!isRecord(body) || !Array.isArray(body.messages)) return false;
  const last = [...body.messages].reverse().find((m) => isRecord(m) && m.role === 'user');
  return isRecord(last) && purposeOf(contentText(last.content)) === undefined;
}

/** What a small model says instead of JSON: the answer's words in a few sentences, with a friendly frame. */
export function proseOf(answer: unknown): string {
  const words: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string' && v.length > 12) words.push(v.replace(/\s+/g, ' ').trim());
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isRecord(v)) Object.values(v).forEach(walk);
  };
  walk(answer);
  const body = words.slice(0, 6).map((w) => (/[.!?…]$/.test(w) ? w : `${w}.`));
  return `Sure! Here is what I noticed.\n\n${body.map((w) => `- ${w}`).join('\n') || '- Nothing stood out tonight.'}\n\nLet me know if you want me to go into more detail.`;
}

/** The answer object for one task's prompt (the text of the user message carrying the task line). */
export function answerSleepTask(
  purpose: SleepPurpose,
  prompt: string,
): LightSleepAnswer | ContradictionAnswer | SplitAnswer | MergeAnswer | ProfileAnswer | DreamAnswer {
  switch (purpose) {
    case 'light-sleep':
      return lightSleep(prompt);
    case 'deep-sleep:contradictions':
      return contradictions(prompt);
    case 'deep-sleep:split':
      return split(prompt);
    case 'deep-sleep:merge':
      return merge(prompt);
    case 'deep-sleep:profiles':
      return profiles(prompt);
    case 'dream':
      return dream(prompt);
  }
}

// ---- Reading the request ----

/** About four characters a token: streamed in that many chunks, the usage the server reports looks like a real model's. */
const tokensOf = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function maxTokensOf(body: unknown): number | undefined {
  if (!isRecord(body)) return undefined;
  const n = body.max_tokens ?? body.max_completion_tokens;
  return typeof n === 'number' && n > 0 ? n : undefined;
}

/**
 * A real model stops at max_tokens; this one writes fewer items instead (a cut answer would only
 * test the repair path): the last memories and the second imprints go first.
 */
function fitAnswer<T>(answer: T, maxTokens: number | undefined): T {
  if (maxTokens === undefined || !isRecord(answer) || !Array.isArray(answer.memories) || !Array.isArray(answer.imprints)) return answer;
  const a = answer as unknown as LightSleepAnswer;
  const fits = () => tokensOf(JSON.stringify(a)) <= maxTokens;
  while (!fits() && a.memories.length > 1) a.memories.pop();
  const seen = new Set<string>();
  if (!fits()) a.imprints = a.imprints.filter((i) => !seen.has(`${i.conversation} ${i.day}`) && seen.add(`${i.conversation} ${i.day}`));
  return answer;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A message's text: a string, or OpenAI / Anthropic content parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

function purposeOf(text: string): SleepPurpose | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(TASK_PREFIX)) continue;
    // "Task: deep-sleep:split — …": the purpose is the first word.
    const first = /^[a-z][a-z:-]*[a-z]/.exec(line.slice(TASK_PREFIX.length).trim())?.[0];
    const found = PURPOSES.find((p) => p === first);
    if (found) return found;
  }
  return undefined;
}

/**
 * The latest user message that carries a task line. Normally the last one; after a repair turn
 * ("That answer could not be used …") the original task is the one before it, and gets the same answer.
 */
export function findTask(body: unknown): { purpose: SleepPurpose; prompt: string } | undefined {
  if (!isRecord(body) || !Array.isArray(body.messages)) return undefined;
  for (const message of [...body.messages].reverse()) {
    if (!isRecord(message) || message.role !== 'user') continue;
    const text = contentText(message.content);
    const purpose = purposeOf(text);
    if (purpose) return { purpose, prompt: text };
  }
  return undefined;
}

// ---- Words ----

const STOP = new Set(
  (
    'a about after again all also am an and any are as at be because been before being but by can could did do does doing ' +
    'done for from had has have having he her here hers him his how i if in into is it its just like me more most my no not ' +
    'now of off on once only or other our out over own really same she so some such than that the their them then there these ' +
    'they this those through to too under until up very was we were what when where which while who whom why will with would ' +
    'you your yours yeah yes oh wow hey hi thanks thank going got get gonna lot much many well sure know think thing things ' +
    'something anything everything definitely totally always great good glad awesome amazing today yesterday tomorrow time ' +
    'still even though been being were said says told tell make made feel felt want wanted need needed love loved see saw'
  ).split(' '),
);
const POSITIVE = [
  'love',
  'loved',
  'like',
  'enjoy',
  'enjoyed',
  'happy',
  'glad',
  'great',
  'amazing',
  'awesome',
  'proud',
  'excited',
  'fun',
  'wonderful',
  'thanks',
  'thank',
  'beautiful',
  'grateful',
  'nice',
  'good',
  'best',
  'support',
  'hope',
];
const NEGATIVE = [
  'sad',
  'hard',
  'tough',
  'angry',
  'upset',
  'worried',
  'worry',
  'stress',
  'stressed',
  'lost',
  'afraid',
  'scared',
  'sorry',
  'bad',
  'tired',
  'difficult',
  'lonely',
  'hurt',
  'miss',
  'cry',
  'struggle',
  'struggling',
  'anxious',
];
const LABELS: [string, string[]][] = [
  ['joy', ['happy', 'glad', 'fun', 'amazing', 'awesome', 'wonderful', 'great']],
  ['gratitude', ['thanks', 'thank', 'grateful', 'appreciate']],
  ['pride', ['proud', 'achievement', 'accomplished']],
  ['excitement', ['excited', "can't wait", 'thrilled']],
  ['warmth', ['love', 'support', 'friend', 'friends', 'family']],
  ['sadness', ['sad', 'lost', 'miss', 'cry', 'lonely', 'hurt']],
  ['worry', ['worried', 'worry', 'stress', 'stressed', 'anxious', 'afraid', 'scared']],
];

const words = (text: string) => text.toLowerCase().match(/[a-z']+/g) ?? [];
const countOf = (text: string, list: readonly string[]) => words(text).filter((w) => list.includes(w)).length;

/** Content words, most frequent first (ties: first seen), for topics and dreams; names are left out. */
function topWords(texts: string[], n: number): string[] {
  const names = new Set(texts.flatMap((t) => t.match(/\b[A-Z][A-Za-z']*/g) ?? []).map((w) => w.toLowerCase()));
  const counts = new Map<string, number>();
  for (const t of texts) {
    for (const w of words(t)) if (w.length >= 5 && !STOP.has(w) && !names.has(w) && !w.includes("'")) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([w]) => w);
}

/** Capitalised but no one and nowhere: a model lists no weekday or month as a name ("on Saturday", "in June"). */
const WEEKDAYS = 'monday tuesday wednesday thursday friday saturday sunday';
const MONTHS = 'january february march april may june july august september october november december';
const CALENDAR = new Set(`${WEEKDAYS} ${MONTHS}`.split(' '));

/** Capitalised names in a text that are not just the first word of a sentence (and not "I", a weekday or a month). */
function entitiesOf(text: string, speaker: string): string[] {
  const found: string[] = [speaker];
  const re = /(^|[.!?]\s+|\s)([A-Z][a-zA-Z'-]+(?:\s[A-Z][a-zA-Z'-]+)*)/g;
  for (const m of text.matchAll(re)) {
    const sentenceStart = m[1] === '' || /[.!?]/.test(m[1]!);
    const name = m[2]!.replace(/'s$/, '');
    if (sentenceStart || name === 'I' || /^I'/.test(name) || STOP.has(name.toLowerCase()) || CALENDAR.has(name.toLowerCase())) continue;
    if (!found.includes(name)) found.push(name);
  }
  return found
    .map((e) => e.slice(0, 120))
    .filter((e) => e.trim() !== '')
    .slice(0, 20);
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Who was talked with, as the companion would say it: in the app's own chats the transcript calls the
 * person "Person" and the companion "Me" — that is "you", and the companion is not its own company.
 */
function company(speakers: string[]): string[] {
  const others = speakers.filter((s) => s !== 'Me').map((s) => (s === 'Person' ? 'you' : s));
  return others.length ? others : ['you'];
}

function joinNames(names: string[]): string {
  if (names.length <= 1) return names[0] ?? 'someone';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

// ---- Light sleep ----

interface Line {
  ref: string;
  speaker: string;
  text: string;
}
interface Block {
  conversation: string;
  day: string;
  lines: Line[];
}

/** Conversation blocks in prompt order; lines of one conversation and day are kept together. */
function parseTranscript(prompt: string): Block[] {
  const blocks = new Map<string, Block>();
  let current: Block | undefined;
  for (const raw of prompt.split('\n')) {
    const line = raw.trimEnd();
    const heading = CONVERSATION_HEADING.exec(line);
    if (heading) {
      const key = `${heading[1]} ${heading[2]}`;
      current = blocks.get(key);
      if (!current) blocks.set(key, (current = { conversation: heading[1]!, day: heading[2]!, lines: [] }));
      continue;
    }
    const m = TRANSCRIPT_LINE.exec(line);
    if (m && current) current.lines.push({ ref: m[1]!, speaker: m[3]!.trim(), text: m[4]!.trim() });
  }
  return [...blocks.values()].filter((b) => b.lines.length > 0);
}

const FIRST_PERSON = /\b(I|I'm|I've|I'd|I'll|my|me|mine)\b/;

/** The sentence worth remembering in a line: in the first person, saying what someone likes or did, long. */
function keySentence(text: string): string {
  const sentences = text
    .split(/(?<=[.!?])\s+|\s+\/\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const worth = (s: string) => (FIRST_PERSON.test(s) ? 2 : 0) + (memoryType(s) === 'world' ? 0 : 1.5) + Math.min(s.length / 40, 2);
  return [...sentences].sort((a, b) => worth(b) - worth(a))[0] ?? text;
}

/** "I love painting with my kids" said by Mel → "Mel said they love painting with their kids". */
function thirdPerson(speaker: string, sentence: string): string {
  const s = sentence.replace(/\s+/g, ' ').trim();
  const m = /^(?:(?:Yeah|Yes|Oh|Wow|Hey|Hi|Well|So|And|Actually|Thanks|Haha)[,!.]?\s+)*(I|I'm|I've|I'd|I'll)\b\s*(.*)$/i.exec(s);
  if (!m) return `${speaker}: ${s}`;
  const lead = { i: 'they', "i'm": "they're", "i've": "they've", "i'd": "they'd", "i'll": "they'll" }[m[1]!.toLowerCase()] ?? 'they';
  const rest = m[2]!
    .replace(/^am\b/, 'are')
    .replace(/^was\b/, 'were')
    .replace(/\bI am\b/g, 'they are')
    .replace(/\bI was\b/g, 'they were')
    .replace(/\bI'm\b/g, "they're")
    .replace(/\bI've\b/g, "they've")
    .replace(/\bI\b/g, 'they')
    .replace(/\bmyself\b/gi, 'themselves')
    .replace(/\bmy\b/gi, 'their')
    .replace(/\bme\b/gi, 'them')
    .replace(/\bmine\b/gi, 'theirs');
  return `${speaker} said ${lead} ${rest}`.trim();
}

const OWNING_VERB = /^((?:really|also|still|just|truly|absolutely|totally)\s+)?(love|like|enjoy|prefer|think|believe|feel|find|want|hate|value)\b\s*(.*)$/i;

/**
 * The memory's text. Opinions and preferences say whose they are the way the memory store checks
 * it ("Mel loves …", "In Mel's words: …"); "Mel said they love …" would be refused as ownerless.
 */
function memoryContent(speaker: string, sentence: string, type: MemoryType): string {
  const third = thirdPerson(speaker === 'Person' ? 'The person' : speaker, sentence);
  if (type !== 'preference' && type !== 'opinion') return third;
  speaker = speaker === 'Person' ? 'The person' : speaker;
  const frame = `${speaker} said they `;
  const m = third.startsWith(frame) ? OWNING_VERB.exec(third.slice(frame.length)) : null;
  if (m) return `${speaker} ${m[1] ?? ''}${m[2]!.toLowerCase()}s${m[3] ? ` ${m[3]}` : ''}`;
  return `In ${speaker}'s words: “${sentence.replace(/\s+/g, ' ').trim()}”`;
}

function memoryType(text: string): MemoryType {
  const t = text.toLowerCase();
  if (/\b(i|we|they|really|also|just|still|truly)\s+(love|like|enjoy|prefer)\b|\b(loves|likes|enjoys|prefers)\b|\bfavou?rite\b|\bfan of\b/.test(t))
    return 'preference';
  if (/\b(think|thinks|believe|believes|feel that|in my opinion)\b/.test(t)) return 'opinion';
  if (/\b(went|was|were|did|had|visited|took|made|got|saw|started|finished|met)\b|\b\w{3,}ed\b/.test(t)) return 'experience';
  if (/\b(how to|always|every time|step)\b/.test(t)) return 'procedural';
  return 'world';
}

const NAME = "([A-Z][\\w'-]+(?: [A-Z][\\w'-]+)*)";
/** "I live in Lisbon": the speaker is the subject. */
const SAID_OF_ME: [RegExp, string][] = [
  [new RegExp(`\\bI(?:'m| am)? (?:now |just |finally )?(?:live|living|moved|moving|relocated) (?:in|to) ${NAME}`, 'g'), 'lives_in'],
  [new RegExp(`\\bI(?:'m| am)? (?:now |just |still )?(?:work|working|started working) (?:at|for) ${NAME}`, 'g'), 'works_at'],
  [new RegExp(`\\bI(?:'m| am)? (?:now |still )?(?:study|studying) at ${NAME}`, 'g'), 'studies_at'],
  [new RegExp(`\\bI (?:really |also )?(?:love|like|enjoy|adore) ${NAME}`, 'g'), 'likes'],
  [new RegExp(`\\bmy (?:home country|hometown),? ${NAME}`, 'g'), 'comes_from'],
  [new RegExp(`(?<!lost )\\bmy (?:new )?job at ${NAME}`, 'g'), 'works_at'],
];
/** "Thanks, Caroline!" — the one a line speaks to, by name. */
const ADDRESSED = new RegExp(`^(?:(?:Hey|Hi|Hello|Thanks|Thank you|Congrats|Congratulations|Sorry|Wow|Yeah|Yep|Oh)(?: so much)?[,!]?\\s+)+${NAME}\\b`);
/** "my sister Lena": the named one is the subject, the speaker the object. */
const KIN: Record<string, string> = {
  sister: 'sister_of',
  brother: 'brother_of',
  mother: 'parent_of',
  mom: 'parent_of',
  mum: 'parent_of',
  father: 'parent_of',
  dad: 'parent_of',
  daughter: 'child_of',
  son: 'child_of',
  partner: 'partner_of',
  boyfriend: 'partner_of',
  girlfriend: 'partner_of',
  husband: 'married_to',
  wife: 'married_to',
  friend: 'friend_of',
  manager: 'manager_of',
  boss: 'manager_of',
  neighbour: 'neighbour_of',
  neighbor: 'neighbour_of',
};
const KIN_RE = new RegExp(`\\b[Mm]y (${Object.keys(KIN).join('|')}) ${NAME}`, 'g');

/**
 * The typed relations a line states about its speaker, by a few plain patterns; only between names
 * the memory lists (the app's own "Person" is "the person", the fixed node).
 */
function relationsOf(text: string, speaker: string, entities: string[]): RelationItem[] {
  const me = speaker === 'Person' ? 'the person' : speaker;
  const known = (name: string) => entities.includes(name);
  const out: RelationItem[] = [];
  const add = (subject: string, relation: string, object: string) => {
    if (subject === object || out.some((r) => r.subject === subject && r.relation === relation && r.object === object)) return;
    out.push({ subject, relation, object });
  };
  if (me === 'the person' || known(me)) {
    for (const [re, relation] of SAID_OF_ME) for (const m of text.matchAll(re)) if (known(m[1]!)) add(me, relation, m[1]!);
    for (const m of text.matchAll(KIN_RE)) if (known(m[2]!)) add(m[2]!, KIN[m[1]!]!, me);
    const addressed = ADDRESSED.exec(text)?.[1];
    if (addressed && known(addressed)) add(me, 'talks_with', addressed);
  }
  return out.slice(0, 10);
}

/** Lines with the most feeling first (mood words, exclamations), then the longest. */
function bySalience(lines: Line[]): Line[] {
  const feeling = (l: Line) => countOf(l.text, POSITIVE) + countOf(l.text, NEGATIVE) + (l.text.match(/!/g) ?? []).length;
  return [...lines].sort((a, b) => feeling(b) - feeling(a) || b.text.length - a.text.length);
}

/** The days listed under "## Narratives wanted"; undefined when the prompt has no such section. */
function narrativesWanted(prompt: string): Set<string> | undefined {
  const at = prompt.indexOf('## Narratives wanted');
  if (at < 0) return undefined;
  const section = prompt.slice(at).split('\n').slice(1);
  const days = new Set<string>();
  for (const line of section) {
    if (line.startsWith('## ')) break;
    if (/^\d{4}-\d{2}-\d{2}$/.test(line.trim())) days.add(line.trim());
  }
  return days;
}

function lightSleep(prompt: string): LightSleepAnswer {
  const blocks = parseTranscript(prompt);
  const answer: LightSleepAnswer = { memories: [], anchors: [], imprints: [], narratives: [] };
  const days = new Map<string, Block[]>();
  for (const block of blocks) {
    // Memories: one per about eight lines, from the lines that say the most about someone (in the
    // first person, long, naming people and places), kept in the order they were said.
    const score = (l: Line) =>
      (FIRST_PERSON.test(l.text) ? 2 : 0) +
      Math.min(l.text.length / 40, 3) +
      entitiesOf(l.text, l.speaker).length -
      1 +
      (memoryType(keySentence(l.text)) === 'world' ? 0 : 1);
    const n = Math.max(1, Math.ceil(block.lines.length / 8));
    // The companion's own lines ("Me") are not facts about anyone.
    const chosen = new Set(
      block.lines
        .filter((l) => l.speaker !== 'Me')
        .sort((a, b) => score(b) - score(a))
        .slice(0, n),
    );
    for (const line of block.lines.filter((l) => chosen.has(l))) {
      if (answer.memories.length >= 200) break;
      const sentence = keySentence(line.text);
      const type = memoryType(sentence);
      const entities = entitiesOf(line.text, line.speaker);
      answer.memories.push({
        type,
        content: clip(memoryContent(line.speaker, sentence, type), 600),
        entities,
        sources: [line.ref],
        validFrom: block.day,
        relations: relationsOf(line.text, line.speaker, entities),
      });
    }

    // One anchor: how the conversation felt.
    const all = block.lines.map((l) => l.text).join(' ');
    const pos = countOf(all, POSITIVE);
    const neg = countOf(all, NEGATIVE);
    const valence = round2(clamp((pos - neg) / Math.max(4, pos + neg + 2), -1, 1));
    const exclamations = (all.match(/!/g) ?? []).length;
    const arousal = round2(clamp(0.2 + exclamations / Math.max(1, block.lines.length) / 2 + (pos + neg) / Math.max(20, block.lines.length * 4), 0, 1));
    const labels = LABELS.filter(([, cues]) => cues.some((c) => all.toLowerCase().includes(c)))
      .slice(0, 3)
      .map(([label]) => label);
    if (labels.length === 0) labels.push(valence >= 0 ? 'calm' : 'unease');
    const speakers = company([...new Set(block.lines.map((l) => l.speaker))]);
    const topics = topWords(
      block.lines.map((l) => l.text),
      2,
    );
    const tone = valence > 0.2 ? 'warm' : valence < -0.2 ? 'heavy' : 'quiet';
    answer.anchors.push({
      conversation: block.conversation,
      day: block.day,
      valence,
      arousal,
      labels,
      text: `A ${tone} conversation with ${joinNames(speakers)}${topics.length ? ` about ${topics.join(' and ')}` : ''}.`,
    });

    // One or two imprints: the moments the companion would keep, in its own words.
    const ranked = bySalience(block.lines);
    for (const line of ranked.slice(0, block.lines.length >= 10 ? 2 : 1)) {
      answer.imprints.push({
        conversation: block.conversation,
        day: block.day,
        text: `I keep coming back to the moment ${line.speaker} said “${clip(keySentence(line.text), 300)}”`,
        sources: [line.ref],
      });
    }
    days.set(block.day, [...(days.get(block.day) ?? []), block]);
  }

  // A narrative per day the prompt asks for (the call that reads a day's last part), first person.
  const wanted = narrativesWanted(prompt);
  for (const [day, dayBlocks] of days) {
    if (wanted && !wanted.has(day)) continue;
    const lines = dayBlocks.flatMap((b) => b.lines);
    const speakers = company([...new Set(lines.map((l) => l.speaker))]);
    const topics = topWords(
      lines.map((l) => l.text),
      4,
    );
    const about = topics.length ? `, mostly about ${joinNames(topics)}` : '';
    answer.narratives.push({
      day,
      title: clip(`The day with ${joinNames(speakers)}`, 120),
      body:
        `Today I listened to ${joinNames(speakers)} across ${dayBlocks.length} conversation${dayBlocks.length === 1 ? '' : 's'}${about}. ` +
        `What stayed with me most: ${bySalience(lines)[0]!.speaker} saying “${clip(keySentence(bySalience(lines)[0]!.text), 200)}” I want to remember how it felt.`,
    });
  }
  return answer;
}

// ---- Deep sleep ----

interface ListedMemory {
  id: number;
  type: MemoryType;
  content: string;
  written: string;
}

const TYPES: readonly MemoryType[] = ['world', 'experience', 'opinion', 'observation', 'preference', 'procedural'];

function parseMemories(prompt: string): ListedMemory[] {
  const out: ListedMemory[] = [];
  for (const raw of prompt.split('\n')) {
    const m = MEMORY_LINE.exec(raw.trim());
    if (!m) continue;
    const type = (TYPES as readonly string[]).includes(m[2]!) ? (m[2] as MemoryType) : 'world';
    const written = /written (\d{4}-\d{2}-\d{2})/.exec(raw)?.[1] ?? '';
    out.push({ id: Number(m[1]), type, content: m[3]!.trim(), written });
  }
  return out.filter((m) => Number.isInteger(m.id) && m.id > 0);
}

const normal = (text: string) => words(text).join(' ');

/**
 * What a memory is about: its first three words, the reporting frame light sleep writes left out
 * ("Mel said they …", "Mel: …") — so "Mel said they live in Boston" and "Mel said they live in
 * Seattle" share the subject "mel live in", while most unrelated things Mel said do not.
 */
function subjectOf(content: string): string | null {
  const framed = /^([A-Z][\w'-]*(?: [A-Z][\w'-]*)?)(?: said (?:they|she|he)(?:'re|'ve|'d|'ll)?|:)\s+(.*)$/.exec(content);
  const rest = words(framed ? framed[2]! : content);
  if (rest.length < 3) return null;
  return [...(framed ? [framed[1]!.toLowerCase()] : []), ...rest].slice(0, 3).join(' ');
}

function contradictions(prompt: string): ContradictionAnswer {
  const listed = parseMemories(prompt);
  const operations: ContradictionAnswer['operations'] = [];
  const used = new Set<number>();
  // Same subject, different text: the newer replaces the older.
  for (let i = 0; i < listed.length; i++) {
    for (let j = i + 1; j < listed.length; j++) {
      const a = listed[i]!;
      const b = listed[j]!;
      if (used.has(a.id) || used.has(b.id) || operations.length >= 50) continue;
      // Things that happened do not contradict each other: only facts, opinions and preferences change.
      if (a.type === 'experience' || b.type === 'experience') continue;
      const subject = subjectOf(a.content);
      if (subject === null || subject !== subjectOf(b.content) || normal(a.content) === normal(b.content)) continue;
      const [older, newer] = a.written < b.written || (a.written === b.written && a.id < b.id) ? [a, b] : [b, a];
      operations.push({
        op: 'supersede',
        older: older.id,
        newer: newer.id,
        reason: clip(`Both are about “${subject}”; the newer one replaces the older.`, 300),
      });
      used.add(a.id).add(b.id);
    }
  }
  return { operations };
}

function split(prompt: string): SplitAnswer {
  for (const m of parseMemories(prompt)) {
    const at = m.content.indexOf(' and ');
    // A quotation is kept whole.
    if (at < 0 || /[“”"]/.test(m.content)) continue;
    const first = m.content
      .slice(0, at)
      .replace(/[,;]\s*$/, '')
      .trim();
    let second = m.content.slice(at + 5).trim();
    if (words(first).length < 3 || words(second).length < 2) continue;
    // "Mel likes painting and goes hiking" → "Mel goes hiking": the second part keeps its subject.
    const subject = /^([A-Z][\w'-]*)\s/.exec(first)?.[1];
    if (subject && !/^[A-Z]/.test(second)) second = `${subject} ${second}`;
    const parts = [first, second].map((content) => ({ type: memoryType(content), content: clip(content, 4000) }));
    return { splits: [{ id: m.id, parts, reason: 'It holds two separate facts joined by “and”.' }] };
  }
  return { splits: [] };
}

function merge(prompt: string): MergeAnswer {
  const listed = parseMemories(prompt);
  for (let i = 0; i < listed.length; i++) {
    for (let j = i + 1; j < listed.length; j++) {
      const a = listed[i]!;
      const b = listed[j]!;
      const wa = new Set(words(a.content));
      const wb = new Set(words(b.content));
      const shared = [...wa].filter((w) => wb.has(w)).length;
      // Most words shared: at least 60% of all the words either uses.
      if (wa.size === 0 || wb.size === 0 || shared / (wa.size + wb.size - shared) < 0.6) continue;
      const keep = a.content.length >= b.content.length ? a : b;
      return { merges: [{ ids: [a.id, b.id], type: keep.type, content: keep.content, reason: 'They say nearly the same thing.' }] };
    }
  }
  return { merges: [] };
}

// ---- Profiles ----

/** A profile per listed entity, in the companion's voice, from the facts listed under it. */
function profiles(prompt: string): ProfileAnswer {
  const out: ProfileAnswer['profiles'] = [];
  let current: { ref: string; name: string; kind: string; facts: ListedMemory[] } | undefined;
  const finish = () => {
    if (!current || current.facts.length === 0 || out.length >= 30) return;
    const { name, kind, facts } = current;
    const who =
      kind === 'user'
        ? 'The person I talk with.'
        : kind === 'person'
          ? `${name} is someone I know through our conversations.`
          : kind === 'place'
            ? `${name} is a place that comes up when we talk.`
            : `${name} is something that comes up when we talk.`;
    const shown = facts.slice(0, 4);
    out.push({
      entity: current.ref,
      content: clip(`${who} What I remember: ${shown.map((f) => clip(f.content.replace(/[.!?]*$/, '.'), 200)).join(' ')}`, 1200),
      sources: shown.map((f) => f.id),
    });
  };
  for (const raw of prompt.split('\n')) {
    const line = raw.trim();
    const heading = ENTITY_HEADING.exec(line);
    if (heading) {
      finish();
      current = { ref: heading[1]!, name: heading[2]!, kind: heading[3]!, facts: [] };
      continue;
    }
    if (!current) continue;
    const fact = parseMemories(line)[0];
    if (fact) current.facts.push(fact);
  }
  finish();
  return { profiles: out };
}

// ---- Dream ----

function dream(prompt: string): DreamAnswer {
  // The material: listed memories, quoted or bulleted imprints, transcript lines — whatever the prompt shows.
  const texts: string[] = [];
  for (const raw of prompt.split('\n')) {
    const line = raw.trim();
    const memory = MEMORY_LINE.exec(line);
    const said = TRANSCRIPT_LINE.exec(line);
    if (memory) texts.push(memory[3]!);
    else if (said) texts.push(said[4]!);
    else if (/^([-*•]|\d+\.)\s+/.test(line) || /[“"].+[”"]/.test(line)) texts.push(line);
  }
  const material =
    texts.length > 0
      ? texts
      : [
          prompt
            .split('\n')
            .filter((l) => !l.startsWith(TASK_PREFIX))
            .join(' '),
        ];
  const picked = topWords(material, 6);
  const [a = 'river', b = 'lantern', c = 'door', d = 'song', e = 'garden', f = 'morning'] = picked;
  return {
    title: clip(`A dream of ${a} and ${b}`, 120),
    body:
      `I was walking through a house made of ${a}, and every room opened onto ${b}. ` +
      `Someone handed me a ${c} and told me it had always been mine. ` +
      `I followed the sound of ${d} down to a ${e} where the light kept changing, ` +
      `and when I woke the word “${f}” was still on my tongue.`,
  };
}
