// light-sleep: the day's conversations become long-term memory — typed semantic memories, one
// emotional anchor per conversation per sleep day, imprints (moments that carried feeling, in the
// companion's words) and the day's narrative. Cost is the point of the design: conversations are
// packed into as few calls as the background model's context allows (several short ones, even several
// days, in one call; a long one split into chunks), so a day of chat costs one call, not one per message.
//
// Safety: each call's writes and the watermarks of the conversations it covered commit in one
// transaction — after a crash a chunk is either fully in or will be read again, never half-written
// and never extracted twice.
//
// A forgotten memory is not handed back to the model: the messages behind a forget that still stands
// are left out of the transcript (covered all the same), and a diary block the answer writes that says
// a forgotten fact anyway is hidden on behalf of that forget in the transaction that writes it.
import { ApiError } from '../../../shared/api.js';
import { sleepDay } from '../../../shared/sleep-day.js';
import type { TranscriptMessage } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import { estimateTokens } from '../../llm/context.js';
import { nameKey } from '../../graph/names.js';
import { SELF_ENTITY_ID, USER_ENTITY_ID } from '../../graph/store.js';
import { findSecret } from '../../memory/secret-filter.js';
import { segmentForIndex } from '../../memory/segment.js';
import { standingForgets } from '../../memory/standing-forgets.js';
import type { Transaction } from '../../db/database.js';
import { BudgetExhaustedError, type BackgroundModel } from '../background.js';
import { nappedFrom } from '../nap.js';
import { CycleStop, StepFailure, type SleepStep } from '../dag.js';
import { hideWrittenBlocksRestating } from '../forget.js';
import {
  conversationHeading,
  lightSleepAnswer,
  MEMORY_LANGUAGE_RULE,
  MEMORY_TYPE_GUIDE,
  RELATION_PERSON_WORDS,
  RELATION_SELF_WORDS,
  transcriptLine,
  type LightSleepAnswer,
} from '../schemas.js';
import { localStamp, modelForRun, type SleepStepDeps } from './deps.js';
import type { BackgroundPurpose } from '../../../shared/background-purposes.js';

export const LIGHT_SLEEP: BackgroundPurpose = 'light-sleep';
/** A message longer than this is cut in the transcript: the gist survives, the context does not overflow. */
const MAX_CHARS_PER_MESSAGE = 2_000;

const INSTRUCTIONS = `Below are my conversations since I last slept, grouped by conversation and sleep day. Lines are
"[ref] local time Speaker: text"; "Me" is me. From them, write JSON with four lists:
- "memories": facts worth keeping for a long time, each one atomic: {"type", "content", "entities", "sources", "validFrom", "validTo", "relations"}.
  type is one of ${MEMORY_TYPE_GUIDE}
  Opinions and preferences always say whose, by name or as "the person" ("Mara prefers …", "The person thinks …"); mine as "I …".
  content: one or two sentences that stand on their own (names, not pronouns).
  entities: the names of the people, places, organisations and things it mentions. sources: the [ref]s it comes from.
  validFrom / validTo: dates (YYYY-MM-DD) only when the text says when it became or stops being true, else null.
  relations: the links the memory states between two of its entities, read "subject relation object":
  {"subject", "relation", "object", "validFrom", "validTo"}. subject and object are names from its "entities", or
  "the person" for the person I talk with and "me" for myself. relation is a short snake_case verb: lives_in, works_at,
  studies_at, sister_of, brother_of, parent_of, child_of, partner_of, married_to, friend_of, manager_of, likes,
  dislikes, owns, member_of ("Mara's sister Lena" is Lena sister_of Mara). validFrom / validTo: when the relation
  began or ended, if said; otherwise they are the memory's. An empty list when it states none.
  Skip small talk, and anything already in my resident memory or under "Already noted" unless it changed. Never a
  password, key or card number. Most conversations hold nothing worth keeping for long: an empty "memories" list is
  usual and right. ${MEMORY_LANGUAGE_RULE}
- "anchors": exactly one per conversation and sleep day: {"conversation": "c1", "day", "valence" (-1 low … 1 bright),
  "arousal" (0 calm … 1 intense), "labels" (1–3 words for the mood), "text" (one or two sentences: how it felt)}.
- "imprints": the moments that carried feeling, kept in my own words, first person: {"conversation", "day", "text", "sources"}.
  Zero to three per conversation.
- "narratives": my own account of the day, first person, with a title: {"day", "title", "body"} — one for each day listed
  under "Narratives wanted" at the end, none for other days (their conversation continues in a later part).`;

/** One conversation's messages of one sleep day (or a chunk of them when they do not fit one call). */
interface Piece {
  conversationId: string;
  title: string;
  day: string;
  /** Messages whose text is shown; replaced and failed replies are passed over but still covered. */
  messages: TranscriptMessage[];
  /** Messages behind a forget that still stands: not shown, covered all the same. */
  passedOver: string[];
  /** The watermark this piece lets the conversation advance to. */
  lastSeq: number;
  tokens: number;
}

/** How far light sleep has read each chat conversation: conversation id → the seq of the last message it covered. */
export async function lightSleepWatermarks(db: Database): Promise<Map<string, number>> {
  const rows = (
    await db.query<{ conversation_id: string; last_seq: number }>(
      `SELECT conversation_id, last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = $1`,
      [LIGHT_SLEEP],
    )
  ).rows;
  return new Map(rows.map((r) => [r.conversation_id, Number(r.last_seq)]));
}

/**
 * Messages of chat conversations past the light-sleep watermark, oldest first, per conversation. The
 * watermarks are read first, apart from the messages: only light sleep moves them, under the night's lock.
 */
async function pendingMessages(deps: SleepStepDeps): Promise<Map<string, TranscriptMessage[]>> {
  const rows = await deps.conversations.chatMessagesAfter(await lightSleepWatermarks(deps.db));
  const byConversation = new Map<string, TranscriptMessage[]>();
  for (const r of rows) {
    const list = byConversation.get(r.conversationId) ?? [];
    list.push(r);
    byConversation.set(r.conversationId, list);
  }
  // A reply still being written ends what can be read now: the watermark must not pass it.
  for (const [id, list] of byConversation) {
    const streaming = list.findIndex((m) => m.status === 'streaming');
    if (streaming >= 0) byConversation.set(id, list.slice(0, streaming));
  }
  return byConversation;
}

function speakerOf(m: TranscriptMessage): string {
  if (m.speaker?.trim()) return m.speaker.trim().replace(/[:\n]/g, ' ').slice(0, 40);
  return m.role === 'user' ? 'Person' : 'Me';
}

function shownText(m: TranscriptMessage): string {
  return m.content.length > MAX_CHARS_PER_MESSAGE ? `${m.content.slice(0, MAX_CHARS_PER_MESSAGE)} […]` : m.content;
}

const hasText = (m: TranscriptMessage) => m.replacedBy === null && (m.status === 'complete' || m.status === 'partial') && m.content.trim() !== '';

/**
 * Splits each conversation by sleep day, and a day that is too long for one call into chunks; each
 * piece knows the seq its watermark may advance to (messages without text, and those `withheld`, ride
 * along).
 */
function toPieces(rows: TranscriptMessage[], budget: number, sleepTime: string, timeZone: string, withheld: Set<string>): Piece[] {
  const pieces: Piece[] = [];
  let current: Piece | null = null;
  const lineTokens = (m: TranscriptMessage) => estimateTokens(shownText(m)) + 12;
  for (const m of rows) {
    const day = sleepDay(m.createdAt, sleepTime, timeZone);
    const shown = hasText(m) && !withheld.has(m.id);
    const cost = shown ? lineTokens(m) : 0;
    if (!current || current.day !== day || (cost > 0 && current.tokens + cost > budget && current.messages.length > 0)) {
      current = { conversationId: m.conversationId, title: m.title, day, messages: [], passedOver: [], lastSeq: m.seq, tokens: 40 };
      pieces.push(current);
    }
    if (shown) {
      current.messages.push(m);
      current.tokens += cost;
    } else if (withheld.has(m.id)) {
      current.passedOver.push(m.id);
    }
    current.lastSeq = m.seq;
  }
  return pieces;
}

/** Packs pieces into calls in (day, conversation) order, each call within the material budget. */
function packCalls(pieces: Piece[], budget: number): Piece[][] {
  const firstSeq = (p: Piece) => p.messages[0]?.seq ?? p.lastSeq;
  const sorted = [...pieces].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : firstSeq(a) - firstSeq(b)));
  const calls: Piece[][] = [];
  let call: Piece[] = [];
  let used = 0;
  for (const piece of sorted) {
    if (call.length > 0 && used + piece.tokens > budget) {
      calls.push(call);
      call = [];
      used = 0;
    }
    call.push(piece);
    used += piece.tokens;
  }
  if (call.length) calls.push(call);
  return calls;
}

/** The transcript of one call, with short references the answer points back with. */
function renderCall(call: Piece[], timeZone: string): { text: string; messageRefs: Map<string, string>; pieceRefs: Map<string, Piece> } {
  const messageRefs = new Map<string, string>();
  const pieceRefs = new Map<string, Piece>();
  const conversationRefs = new Map<string, string>();
  const parts: string[] = [];
  for (const piece of call) {
    let ref = conversationRefs.get(piece.conversationId);
    if (!ref) {
      ref = `c${conversationRefs.size + 1}`;
      conversationRefs.set(piece.conversationId, ref);
    }
    pieceRefs.set(`${ref}|${piece.day}`, piece);
    const lines = [conversationHeading(ref, piece.title, piece.day)];
    for (const m of piece.messages) {
      const mref = `m${messageRefs.size + 1}`;
      messageRefs.set(mref, m.id);
      lines.push(transcriptLine(mref, localStamp(m.createdAt, timeZone), speakerOf(m), shownText(m)));
    }
    parts.push(lines.join('\n'));
  }
  return { text: parts.join('\n\n'), messageRefs, pieceRefs };
}

export interface LightSleepStats extends Record<string, number> {
  calls: number;
  messages: number;
  conversations: number;
  days: number;
  chunks_done: number;
  invalid_chunks: number;
}

/** A date from the model ("2026-05-01") as the start of that day in UTC; null when absent or unreadable. */
function toDate(value: string | null | undefined): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

interface BlockRow {
  day: string;
  kind: 'anchor' | 'imprint' | 'narrative';
  conversationId: string | null;
  title: string | null;
  body: string;
  mood: unknown;
  sources: string[];
}

/**
 * Writes one call's answer and moves the watermarks, in one transaction. Everything that can be done
 * ahead — the guards, the near-duplicate probes, word segmentation — is done before it, so the
 * transaction (during which a chat message waits to be stored) holds only the inserts.
 */
async function writeAnswer(
  deps: SleepStepDeps,
  ctx: ReadingOptions,
  call: Piece[],
  refs: ReturnType<typeof renderCall>,
  answer: LightSleepAnswer,
  stats: LightSleepStats,
  narrativeDays: Set<string>,
): Promise<void> {
  const ids = (sources: string[]) => [...new Set(sources.flatMap((s) => refs.messageRefs.get(s) ?? []))];
  const days = new Set(call.map((p) => p.day));
  // Imported history: a memory the answer gives no date is dated by the earliest day it was said on.
  const dayOf = new Map(call.flatMap((p) => p.messages.map((m) => [m.id, p.day] as const)));
  const saidOn = (sources: string[]) => {
    const said = ids(sources)
      .flatMap((id) => dayOf.get(id) ?? [])
      .sort()[0];
    return ctx.dateByDay && said ? `${said}T00:00:00.000Z` : null;
  };
  const bump = (key: string, n = 1) => (stats[key] = (stats[key] ?? 0) + n);
  const clean = (text: string) => {
    if (findSecret(text)) {
      bump('refused_secrets');
      return null;
    }
    return text.trim();
  };

  const prepared = await deps.store.prepareCreates(
    answer.memories.map((m) => ({
      type: m.type,
      content: m.content,
      source: 'light-sleep' as const,
      actor: 'light-sleep' as const,
      sourceMessageIds: ids(m.sources),
      entityNames: m.entities,
      validFrom: toDate(m.validFrom) ?? (toDate(m.validTo) ? null : saidOn(m.sources)),
      validTo: toDate(m.validTo),
      reason: `${ctx.reason ?? 'light sleep of'} ${[...days].join(', ')}`,
    })),
  );

  const blocks: BlockRow[] = [];
  const anchored = new Set<string>();
  for (const a of answer.anchors) {
    const piece = refs.pieceRefs.get(`${a.conversation}|${a.day}`);
    const key = `${piece?.conversationId}|${a.day}`;
    if (!piece || anchored.has(key)) {
      bump('dropped_items');
      continue;
    }
    const text = clean(a.text);
    if (!text) continue;
    anchored.add(key);
    const mood = {
      valence: a.valence,
      arousal: a.arousal,
      labels: a.labels
        .map((l) => l.trim())
        .filter((l) => l && !findSecret(l))
        .slice(0, 5),
    };
    blocks.push({ day: a.day, kind: 'anchor', conversationId: piece.conversationId, title: null, body: text, mood, sources: piece.messages.map((m) => m.id) });
  }
  for (const i of answer.imprints) {
    const piece = refs.pieceRefs.get(`${i.conversation}|${i.day}`);
    const text = piece ? clean(i.text) : null;
    if (!piece) bump('dropped_items');
    if (!piece || !text) continue;
    blocks.push({ day: i.day, kind: 'imprint', conversationId: piece.conversationId, title: null, body: text, mood: null, sources: ids(i.sources) });
  }
  const narrated = new Set<string>();
  for (const n of answer.narratives) {
    // One narrative per day, from the call that reads the day's last part.
    const wanted = narrativeDays.has(n.day) && !narrated.has(n.day);
    const body = wanted ? clean(n.body) : null;
    const title = body ? clean(n.title) : null;
    if (!wanted) bump('dropped_items');
    else narrated.add(n.day);
    if (!body || !title) continue;
    const sources = call.filter((p) => p.day === n.day).flatMap((p) => p.messages.map((m) => m.id));
    blocks.push({ day: n.day, kind: 'narrative', conversationId: null, title, body, mood: null, sources });
  }
  const segmented = blocks.map((b) => segmentForIndex(`${b.title ?? ''} ${b.body}`));

  // The memory each answer item became (a near-duplicate updated is that one), for its relations.
  const savedIds: (number | null)[] = answer.memories.map(() => null);
  await deps.store.batch(async (b) => {
    for (const [i, item] of prepared.items.entries()) {
      if (item instanceof ApiError) {
        // A guard refused this one memory (a secret, an opinion without an owner, bad dates): skip it.
        bump(/secret|password|key|card/i.test(item.message) ? 'refused_secrets' : 'refused_memories');
        continue;
      }
      const saved = await b.createPrepared(item);
      // A fact the person forgot is not written again, and is no evidence for a relation either.
      if (saved.outcome === 'skipped') {
        bump('memories_forgotten_skipped');
        continue;
      }
      savedIds[i] = saved.memory.id;
      bump(saved.outcome === 'created' ? 'memories_created' : 'memories_updated');
    }
    if (blocks.length) {
      // One statement for all the blocks; the unique index keeps one anchor per conversation and day
      // (an earlier "sleep now" may have written it: that one stays).
      const inserted = await b.tx.query<{ id: number; kind: string; day: string; conversation_id: string | null }>(
        `INSERT INTO diary_blocks (day, kind, conversation_id, title, body, mood, source_message_ids, run_id, fts_segmented)
         SELECT t.day, t.kind, t.conversation_id, t.title, t.body, t.mood::jsonb, ARRAY(SELECT jsonb_array_elements_text(t.sources::jsonb)), $8, t.seg
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $9::text[])
             AS t (day, kind, conversation_id, title, body, mood, sources, seg)
         ON CONFLICT DO NOTHING RETURNING id::float8 AS id, kind, day, conversation_id`,
        [
          blocks.map((x) => x.day),
          blocks.map((x) => x.kind),
          blocks.map((x) => x.conversationId),
          blocks.map((x) => x.title),
          blocks.map((x) => x.body),
          blocks.map((x) => (x.mood === null ? null : JSON.stringify(x.mood))),
          blocks.map((x) => JSON.stringify(x.sources)),
          ctx.runId,
          segmented,
        ],
      );
      for (const kind of ['anchor', 'imprint', 'narrative'] as const) {
        const n = inserted.rows.filter((r) => r.kind === kind).length;
        bump(`${kind}s`, n);
        if (kind === 'anchor') bump('anchors_kept', blocks.filter((x) => x.kind === 'anchor').length - n);
      }
      // Before anyone reads them: a block that says a forgotten fact anyway (the model made it up, or
      // read it in a message no forget hides) is hidden on behalf of that forget. A block is measured
      // as written from the messages passed over in its stretch: its conversation's day, or the day.
      const passedOverIn = (day: string, conversationId: string | null) =>
        call.filter((p) => p.day === day && (conversationId === null || p.conversationId === conversationId)).flatMap((p) => p.passedOver);
      const written = inserted.rows.map((r) => ({ id: Number(r.id), passedOver: passedOverIn(r.day, r.conversation_id) }));
      const hidden = await hideWrittenBlocksRestating(b.tx, written, await standingForgets(b.tx));
      if (hidden.length) {
        bump('diary_blocks_hidden', hidden.length);
        deps.log('warn', `light sleep: ${hidden.length} diary blocks said a forgotten memory again; they are hidden`);
      }
    }
    await ctx.advance(b.tx, lastSeqs(call));
  }, prepared);
  await recordRelations(deps, answer, savedIds, bump);
}

/** A relation word: a short snake_case verb (lives_in, sister_of). */
const RELATION_WORD = /^[a-z][a-z0-9_]{1,39}$/;
/** Relations kept per memory; more are a list pasted as relations, and are dropped. */
const MAX_RELATIONS_PER_MEMORY = 20;

type RelationEnd = { fixed: number } | { name: string; key: string };

/** "the person" and "me" are the fixed nodes (schemas.ts); any other end must be one of the memory's entities. */
function relationEnd(word: string, names: Map<string, string>): RelationEnd | null {
  const w = word.trim().toLowerCase().replace(/\s+/g, ' ');
  if ((RELATION_PERSON_WORDS as readonly string[]).includes(w)) return { fixed: USER_ENTITY_ID };
  if ((RELATION_SELF_WORDS as readonly string[]).includes(w)) return { fixed: SELF_ENTITY_ID };
  const key = nameKey(word);
  const name = key ? names.get(key) : undefined;
  return name ? { name, key } : null;
}

/**
 * The typed relations the answer's memories state, once those memories exist: each end resolved to
 * an entity (made when new, as the graph indexer would), then the same relation strengthened or a
 * new one added, with the memory as its evidence. A bad item (an end that is not one of the
 * memory's entities, a word that is not a relation, a relation of something with itself) is dropped
 * and counted; it never costs the memory or the night.
 */
async function recordRelations(
  deps: SleepStepDeps,
  answer: LightSleepAnswer,
  savedIds: (number | null)[],
  bump: (key: string, n?: number) => void,
): Promise<void> {
  const wanted: { memoryId: number; subject: RelationEnd; object: RelationEnd; relation: string; validFrom: string | null; validTo: string | null }[] = [];
  for (const [i, m] of answer.memories.entries()) {
    if (!m.relations.length) continue;
    const memoryId = savedIds[i];
    if (memoryId === null || memoryId === undefined) {
      // The memory was refused: nothing to rest the relations on.
      bump('relations_dropped', m.relations.length);
      continue;
    }
    const names = new Map<string, string>();
    for (const e of m.entities) if (nameKey(e) && !names.has(nameKey(e))) names.set(nameKey(e), e);
    for (const [j, r] of m.relations.entries()) {
      const relation =
        r?.relation
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_') ?? '';
      const subject = r ? relationEnd(r.subject, names) : null;
      const object = r ? relationEnd(r.object, names) : null;
      const validFrom = toDate(r?.validFrom ?? m.validFrom);
      const validTo = toDate(r?.validTo ?? m.validTo);
      const same =
        subject && object && ('fixed' in subject ? 'fixed' in object && subject.fixed === object.fixed : 'key' in object && subject.key === object.key);
      if (
        !r ||
        j >= MAX_RELATIONS_PER_MEMORY ||
        !RELATION_WORD.test(relation) ||
        relation === 'co_mention' ||
        !subject ||
        !object ||
        same ||
        (validFrom && validTo && validTo < validFrom)
      ) {
        bump('relations_dropped');
        continue;
      }
      wanted.push({ memoryId, subject, object, relation, validFrom, validTo });
    }
  }
  if (!wanted.length) return;
  const graph = deps.graph;
  const ids = await graph.ensureEntities(wanted.flatMap((w) => [w.subject, w.object]).flatMap((e) => ('name' in e ? [e.name] : [])));
  const idOf = (e: RelationEnd) => ('fixed' in e ? e.fixed : ids.get(e.key));
  for (const w of wanted) {
    const sourceId = idOf(w.subject);
    const targetId = idOf(w.object);
    // Two names of one entity ("Mel" and "Melanie") make no relation.
    if (sourceId === undefined || targetId === undefined || sourceId === targetId) {
      bump('relations_dropped');
      continue;
    }
    const input = { sourceId, targetId, relation: w.relation, validFrom: w.validFrom, validTo: w.validTo, evidenceMemoryIds: [w.memoryId] };
    try {
      if (await graph.strengthen(input, 'light-sleep')) bump('relations_strengthened');
      else {
        await graph.relate(input, 'light-sleep');
        bump('relations_created');
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      bump('relations_dropped');
      deps.log('info', `light sleep: a relation was refused: ${err.message}`);
    }
  }
}

/** The closing lines of a light-sleep prompt: which days want a narrative, and what is already written about them. */
async function narrativeNote(deps: SleepStepDeps, days: Set<string>): Promise<string> {
  if (days.size === 0) return '## Narratives wanted\nnone in this part';
  const written = (
    await deps.db.query<{ day: string; kind: string; title: string | null; body: string }>(
      `SELECT day, kind, title, body FROM diary_blocks
        WHERE day = ANY($1::text[]) AND kind IN ('anchor', 'imprint', 'narrative') AND hidden_at IS NULL ORDER BY id`,
      [[...days]],
    )
  ).rows;
  const lines = ['## Narratives wanted', ...[...days].sort()];
  if (written.length) {
    lines.push('', '## Already in my diary for these days (from earlier parts; continue, do not repeat)');
    for (const w of written.slice(-12)) lines.push(`- ${w.day} (${w.kind}) ${w.title ? `${w.title}: ` : ''}${w.body.replace(/\s+/g, ' ').slice(0, 300)}`);
  }
  return lines.join('\n');
}

/**
 * What a nap already kept from this call's messages, so the night does not write it again (the
 * store's same-fact rule is the second guard, for a restatement in other words it would still catch).
 */
async function alreadyNoted(deps: SleepStepDeps, messageIds: string[]): Promise<string> {
  const noted = await nappedFrom(deps.store, messageIds);
  if (!noted.length) return '';
  return `\n\n## Already noted (kept earlier today from these messages; do not write them again)\n${noted.map((m) => `- (${m.type}) ${m.content.replace(/\s+/g, ' ')}`).join('\n')}`;
}

/** How far pieces reach in each conversation: conversation id → the last seq they cover. */
function lastSeqs(pieces: Piece[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const p of pieces) last.set(p.conversationId, Math.max(last.get(p.conversationId) ?? 0, p.lastSeq));
  return last;
}

/** Light sleep's own marks: the night's watermarks. */
async function advanceWatermarks(tx: Transaction, last: Map<string, number>): Promise<void> {
  await tx.query(
    `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq)
     SELECT $1, c, s FROM unnest($2::text[], $3::bigint[]) AS t (c, s)
     ON CONFLICT (step_id, conversation_id) DO UPDATE
       SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
    [LIGHT_SLEEP, [...last.keys()], [...last.values()]],
  );
}

/**
 * Who reads and where it marks what it read: the night's light sleep (its watermarks, its run), or
 * the catch-up over imported history (sleep/history.ts: its own marks, no run, dated memories).
 */
export interface ReadingOptions {
  /** The sleep run the diary blocks and audit rows belong to; null outside one (the catch-up). */
  runId: number | null;
  /** The audit rows' step id. */
  stepId: string;
  /** Cancels the call in flight; once aborted, no call is started. */
  signal: AbortSignal;
  /** Checked before each call: true ends the reading there, letting the call in hand finish (the catch-up's pause). */
  stopBetween?(): boolean;
  /** After each call (the runner's heartbeat; the catch-up counts its calls here). */
  heartbeat(): Promise<void>;
  /** Moves the reader's marks past what a call covered (conversation id → last seq), in the transaction that writes the call's answer. */
  advance(tx: Transaction, last: Map<string, number>): Promise<void>;
  /** A memory whose answer gives no date is dated by the day it was said (imported history, read years later). */
  dateByDay?: boolean;
  /** The memory journal's reason, before the days ("light sleep of"). */
  reason?: string;
}

/**
 * Reads messages (per conversation, oldest first) into memories and the diary: split by sleep day,
 * packed into calls, each call's answer and marks committed together. Throws CycleStop when the
 * budget is spent, StepFailure when the connection fails (finished calls are kept).
 */
export async function readTranscripts(
  deps: SleepStepDeps,
  model: () => Promise<BackgroundModel>,
  pending: Map<string, TranscriptMessage[]>,
  ctx: ReadingOptions,
): Promise<LightSleepStats> {
  const stats: LightSleepStats = {
    calls: 0,
    messages: 0,
    conversations: 0,
    days: 0,
    chunks_done: 0,
    invalid_chunks: 0,
    memories_created: 0,
    anchors: 0,
    imprints: 0,
    narratives: 0,
  };
  if ([...pending.values()].every((list) => list.length === 0)) return stats;
  const s = await deps.settings.get();
  // Opened only when there is something to read: a night without a connection still does the rest.
  const bg = await model();
  const maxTokens = Math.max(512, Math.min(4096, Math.floor(bg.info.contextTokens / 4)));
  const budget = bg.materialBudget(INSTRUCTIONS, maxTokens);

  const pieces: Piece[] = [];
  // The messages behind a forget that still stands (its memory came from them, or they cited it) are
  // not shown: the model would write the forgotten fact again, into the diary every later reader sees.
  const withheld = new Set((await standingForgets(deps.db)).flatMap((f) => f.messageIds));
  for (const rows of pending.values()) pieces.push(...toPieces(rows, budget, s.sleepTime, s.timeZone, withheld));
  // Pieces with nothing to read (only replaced or failed replies, or messages withheld) just move their marks.
  const empty = pieces.filter((p) => p.messages.length === 0);
  if (empty.length) await deps.store.batch((b) => ctx.advance(b.tx, lastSeqs(empty)));
  const calls = packCalls(
    pieces.filter((p) => p.messages.length > 0),
    budget,
  );

  stats.messages = pieces.reduce((n, p) => n + p.messages.length, 0);
  stats.conversations = new Set(pieces.map((p) => p.conversationId)).size;
  stats.days = new Set(pieces.map((p) => p.day)).size;
  // Once a chunk of a conversation could not be read, its later chunks wait for the next run:
  // the watermark must never pass messages that were not extracted.
  const held = new Set<string>();
  let providerError: string | null = null;
  // A day's narrative is written by the call that reads the day's last part, which is told what
  // the earlier parts already noted — so a long day still gets one account, not one per chunk.
  const lastCallOfDay = new Map<string, number>();
  calls.forEach((call, i) => call.forEach((p) => lastCallOfDay.set(p.day, i)));
  for (const [index, call] of calls.entries()) {
    if (ctx.signal.aborted || ctx.stopBetween?.()) break;
    if (call.some((p) => held.has(p.conversationId))) {
      stats.deferred_chunks = (stats.deferred_chunks ?? 0) + 1;
      continue;
    }
    const refs = renderCall(call, s.timeZone);
    const narrativeDays = new Set(call.filter((p) => lastCallOfDay.get(p.day) === index).map((p) => p.day));
    const material = `${refs.text}\n\n${await narrativeNote(deps, narrativeDays)}${await alreadyNoted(deps, [...refs.messageRefs.values()])}`;
    let result;
    try {
      result = await bg.call({
        purpose: LIGHT_SLEEP,
        stepId: ctx.stepId,
        runId: ctx.runId,
        instructions: INSTRUCTIONS,
        material,
        schema: lightSleepAnswer,
        maxTokens,
        signal: ctx.signal,
      });
    } catch (err) {
      if (err instanceof BudgetExhaustedError) throw new CycleStop(err.message, stats);
      throw err;
    }
    stats.calls++;
    await ctx.heartbeat();
    if (!result.ok) {
      for (const p of call) held.add(p.conversationId);
      if (result.kind === 'error') {
        // The connection failed (after the client's own retries): the rest would fail too.
        providerError = result.error ?? 'the model connection failed';
        break;
      }
      stats.invalid_chunks++;
      continue;
    }
    await writeAnswer(deps, ctx, call, refs, result.value, stats, narrativeDays);
    stats.chunks_done++;
    deps.events.emit('diary.changed', { day: call[call.length - 1]!.day });
  }
  if (providerError) {
    throw new StepFailure(
      `The background model did not answer (${providerError}); ${stats.chunks_done} of ${calls.length} chunks were done, the rest waits for the next run.`,
      stats,
    );
  }
  return stats;
}

export function lightSleepStep(deps: SleepStepDeps, model: ReturnType<typeof modelForRun>): SleepStep {
  return {
    id: LIGHT_SLEEP,
    dependsOn: [],
    async run(ctx) {
      return readTranscripts(deps, () => model(ctx), await pendingMessages(deps), { ...ctx, advance: advanceWatermarks });
    },
  };
}
