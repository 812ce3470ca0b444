// What the sleep steps ask the background model for, as schemas the answer must match, and the
// text formats the prompts use to show it messages and memories. Kept in one place so the steps, the
// tests' loopback model and the benchmark agree on one contract.
import { z } from 'zod';
import { MAX_MEMORY_CHARS, MEMORY_TYPES } from '../../shared/api.js';
import { findSecret } from '../memory/secret-filter.js';

/** Every prompt's task line starts with this, so an audit row (and a test's fake model) can tell tasks apart. */
export const TASK_PREFIX = 'Task: ';

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a sleep day YYYY-MM-DD');
/** A message reference as printed in the transcript: "m12". */
const messageRef = z.string().regex(/^m\d+$/, 'expected a message reference like m12');
/** A conversation reference as printed in the transcript: "c2". */
const conversationRef = z.string().regex(/^c\d+$/, 'expected a conversation reference like c2');
const when = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'expected a date (YYYY-MM-DD or ISO 8601)')
  .nullable()
  .optional();
const shortText = (max: number) => z.string().trim().min(1).max(max);

/**
 * How a light-sleep relation names the two fixed nodes: "the person" is the one I talk with (the
 * graph's user node), "me" is the companion itself (the self node) — the transcript's "Me", the
 * prompt's first person. Any other subject or object must be one of its memory's `entities`.
 */
export const RELATION_PERSON_WORDS = ['the person', 'person', 'the user', 'user'] as const;
export const RELATION_SELF_WORDS = ['me', 'i', 'myself'] as const;

/**
 * A relation a memory states, "subject relation object" (Mara lives_in Lisbon). Checked leniently
 * here — an item that is not even this shape becomes null — and strictly by light sleep, which drops
 * (and counts) a bad one without losing the memory or the rest of the answer.
 */
export const relationItem = z
  .object({
    subject: z.string().trim().min(1).max(120),
    relation: z.string().trim().min(1).max(80),
    object: z.string().trim().min(1).max(120),
    validFrom: when,
    validTo: when,
  })
  .nullable()
  .catch(null);
export type RelationItem = NonNullable<z.infer<typeof relationItem>>;

/** A memory a background call read out of the chat: what the nap asks for, and light sleep builds on. */
const extractedMemory = z.object({
  type: z.enum(MEMORY_TYPES),
  content: shortText(MAX_MEMORY_CHARS),
  /** Names of the people, places and things the memory mentions. */
  entities: z.array(shortText(120)).max(20).default([]),
  sources: z.array(messageRef).max(50).default([]),
});

export const lightSleepAnswer = z.object({
  memories: z
    .array(
      extractedMemory.extend({
        validFrom: when,
        validTo: when,
        /** Typed relations between its entities; answers written before relations existed have none. */
        relations: z.array(relationItem).default([]),
      }),
    )
    .max(200),
  anchors: z
    .array(
      z.object({
        conversation: conversationRef,
        day,
        valence: z.number().min(-1).max(1),
        arousal: z.number().min(0).max(1),
        labels: z.array(shortText(40)).max(5).default([]),
        text: shortText(600),
      }),
    )
    .max(100),
  imprints: z
    .array(
      z.object({
        conversation: conversationRef,
        day,
        text: shortText(1000),
        sources: z.array(messageRef).max(20).default([]),
      }),
    )
    .max(200),
  narratives: z.array(z.object({ day, title: shortText(120), body: shortText(6000) })).max(31),
});
export type LightSleepAnswer = z.infer<typeof lightSleepAnswer>;

/** Longest rolling summary kept, in characters; a longer one is cut at a word. */
export const MAX_SUMMARY_CHARS = 1_500;

/**
 * A model's summary made fit to ride in a chat request: no control characters, no memory markers or
 * headings of its own, blank runs collapsed, at most MAX_SUMMARY_CHARS.
 */
export function cleanSummary(text: string): string {
  const lines = text
    .replace(/\[\[[^\]]*\]\]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f\u200b-\u200f\u2028-\u202e]/g, ' ')
    .split('\n')
    .map((l) =>
      l
        .replace(/^[\s#>]+/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    // A line holding a credential is dropped: the summary travels with every later request.
    .filter((l) => l && !findSecret(l));
  const joined = findSecret(lines.join('\n')) ? '' : lines.join('\n');
  if (joined.length <= MAX_SUMMARY_CHARS) return joined;
  const cut = joined.slice(0, MAX_SUMMARY_CHARS - 1);
  const space = cut.search(/\s\S*$/);
  return `${(space > MAX_SUMMARY_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * The nap: at most a few memories from one quiet stretch of one conversation (more are cut, not
 * refused); when turns are leaving the chat's context window, also a summary of them.
 */
export const napAnswer = z.object({
  memories: z.array(extractedMemory).max(20),
  /** null (or left out) when no summary was asked for: a model held to a schema says null. */
  summary: z
    .string()
    .max(MAX_SUMMARY_CHARS * 8)
    .nullish()
    .transform((v) => (v == null ? undefined : cleanSummary(v))),
});
export type NapAnswer = z.infer<typeof napAnswer>;

const memoryRef = z.number().int().positive();
/**
 * Why, in a sentence. Every judging answer (contradiction, split, merge) puts it FIRST, before the
 * verdict: a model that writes its reason before deciding judges better (a small judge found
 * contradictions 7 times in 15 with the verdict first, 14 with the reasoning first — graphiti#1666),
 * and a server held to the schema writes the properties in the schema's order.
 */
const reason = shortText(300);

/** Deep sleep, round 1: newer facts that contradict or end older ones. */
export const contradictionAnswer = z.object({
  operations: z
    .array(
      z.discriminatedUnion('op', [
        /** `newer` replaces `older`: both stay, linked; the older one's valid time closes. */
        z.object({ reason, op: z.literal('supersede'), older: memoryRef, newer: memoryRef }),
        /** The memory stopped being true at `validTo` (it stays, marked expired). */
        z.object({ reason, op: z.literal('expire'), id: memoryRef, validTo: z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'expected a date') }),
      ]),
    )
    .max(50),
});
export type ContradictionAnswer = z.infer<typeof contradictionAnswer>;

/** Deep sleep, round 2: compound memories split into atomic ones. */
export const splitAnswer = z.object({
  splits: z
    .array(
      z.object({
        reason,
        id: memoryRef,
        parts: z
          .array(z.object({ type: z.enum(MEMORY_TYPES), content: shortText(MAX_MEMORY_CHARS) }))
          .min(2)
          .max(6),
      }),
    )
    .max(30),
});
export type SplitAnswer = z.infer<typeof splitAnswer>;

/** Deep sleep, round 3: near-duplicates merged into one memory. */
export const mergeAnswer = z.object({
  merges: z.array(z.object({ reason, ids: z.array(memoryRef).min(2).max(6), type: z.enum(MEMORY_TYPES), content: shortText(MAX_MEMORY_CHARS) })).max(30),
});
export type MergeAnswer = z.infer<typeof mergeAnswer>;

/** Deep sleep: a short profile per entity ("e1" as the prompt lists them), from the memories shown. */
export const profileAnswer = z.object({
  profiles: z
    .array(
      z.object({
        entity: z.string().regex(/^e\d+$/, 'expected an entity reference like e1'),
        content: shortText(MAX_MEMORY_CHARS),
        /** The memories it rests on (ids as listed). */
        sources: z.array(memoryRef).max(50).default([]),
      }),
    )
    .max(30),
});
export type ProfileAnswer = z.infer<typeof profileAnswer>;

export const dreamAnswer = z.object({ title: shortText(120), body: shortText(6000) });
export type DreamAnswer = z.infer<typeof dreamAnswer>;

/**
 * What each memory type means, as every extraction prompt says it (the design's taxonomy): world is
 * about the world and other people, experience is what I myself did, observation is a summary of
 * what someone or something is like drawn from several moments.
 */
export const MEMORY_TYPE_GUIDE =
  'world (an objective fact about the world or a person: "Mara lives in Lisbon"), ' +
  'experience (something I myself did, first person: "I helped Mara plan her move"), ' +
  'opinion (a judgement, saying whose: "Mara thinks Lisbon is too hot in August"), ' +
  'preference (someone\'s leaning or choice, saying whose: "The person prefers short answers"), ' +
  'observation (a summary of what someone or something is like, from several moments: "Mara is someone who plans ahead"), ' +
  'procedural (how to do something: "To reach Mara, message her after 6 pm").';

/** Memories are found by the words the person uses: a Chinese chat must give Chinese memories. */
export const MEMORY_LANGUAGE_RULE =
  'Write each memory in the language the person used in those messages (a conversation in Chinese gives memories in Chinese).';

// ---- Text formats shown to the model ----

/** "## Conversation c2 — sleep day 2026-12-01" */
export function conversationHeading(ref: string, title: string, sleepDay: string): string {
  return `## Conversation ${ref} — sleep day ${sleepDay} — “${title.replace(/\s+/g, ' ').slice(0, 80)}”`;
}

/** "[m12] 2026-12-01 20:14 Person: text" — one line per message, newlines inside kept as " / ". */
export function transcriptLine(ref: string, localTime: string, speaker: string, content: string): string {
  return `[${ref}] ${localTime} ${speaker}: ${content.replace(/\s*\n+\s*/g, ' / ')}`;
}

/** "[#42] (world; true from 2026-05-01) text" — how memories are listed for deep sleep and dreams. */
export function memoryLine(m: { id: number; type: string; content: string; validFrom: string | null; validTo: string | null; createdAt: string }): string {
  const valid = [m.validFrom ? `true from ${m.validFrom.slice(0, 10)}` : '', m.validTo ? `until ${m.validTo.slice(0, 10)}` : ''].filter(Boolean).join(' ');
  return `[#${m.id}] (${m.type}; written ${m.createdAt.slice(0, 10)}${valid ? `; ${valid}` : ''}) ${m.content.replace(/\s*\n+\s*/g, ' / ')}`;
}

/** "## Entity e1 — Mara (person)": one entity of a profile prompt, its memory lines below it. */
export function entityHeading(ref: string, name: string, kind: string): string {
  return `## Entity ${ref} — ${name.replace(/\s+/g, ' ')} (${kind})`;
}

/** The line under an entity heading that shows the profile written before, when there is one. */
export const PROFILE_SO_FAR = 'My profile so far: ';

export const ENTITY_HEADING = /^## Entity (e\d+) — (.+) \(([a-z]+)\)$/;
export const TRANSCRIPT_LINE = /^\[(m\d+)\] (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) ([^:]{1,80}): (.*)$/;
export const CONVERSATION_HEADING = /^## Conversation (c\d+) — sleep day (\d{4}-\d{2}-\d{2})/;
export const MEMORY_LINE = /^\[#(\d+)\] \(([a-z]+);[^)]*\) (.*)$/;
