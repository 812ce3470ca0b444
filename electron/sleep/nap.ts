// The nap: daytime memory. When a conversation goes quiet (or the person leaves it), one gated
// background call reads what was said since the last nap and may keep up to three memories, so a
// preference said at noon is known in the evening. Cheap by design: most stretches never reach the
// model (too short, nothing said to last and not much said — see nap-worth.ts —, the chat model
// already saved from it, the switch is off), and the prompt says
// an empty list is the usual answer. It never throws: a failure is audited and logged, and the chat
// never notices. Light sleep reads the same messages that night; it is shown what the nap kept
// ("Already noted") and the store's same-fact rule updates rather than copies a restatement.
// When a long conversation's oldest turns are about to leave the chat model's context window, the
// same call (reason 'overflow') also writes a rolling summary of them, which the turn then carries.
// A forgotten memory is not handed back to the model: the messages behind a forget that still stands
// are left out of what the call shows, and a summary that says a forgotten fact anyway does not go live.
import { ApiError } from '../../shared/api.js';
import { sleepDay } from '../../shared/sleep-day.js';
import type { Conversations, RollingSummary, TranscriptMessage } from '../conversations/conversations.js';
import { saveSummaryMindingForgets } from '../forgetting/summaries.js';
import { estimateTokens } from '../llm/context.js';
import { standingForgets } from '../memory/standing-forgets.js';
import type { MemoryStore } from '../memory/store.js';
import { BackgroundModel, napStepId, type BackgroundDeps } from './background.js';
import { worthANap } from './nap-worth.js';
import { MEMORY_LANGUAGE_RULE, MEMORY_TYPE_GUIDE, napAnswer, transcriptLine, type NapAnswer } from './schemas.js';
import { localStamp } from './steps/deps.js';
import type { BackgroundPurpose } from '../../shared/background-purposes.js';

export const NAP: BackgroundPurpose = 'nap';
/** Most memories one nap keeps; more in an answer are cut. */
export const MAX_NAP_MEMORIES = 3;
/** A stretch with fewer of the person's messages, or fewer of their characters, is not worth a call. */
export const MIN_NAP_USER_MESSAGES = 2;
export const MIN_NAP_USER_CHARS = 120;
const MAX_CHARS_PER_MESSAGE = 2_000;
/** Most words asked of a rolling summary (the schema caps its characters). */
export const SUMMARY_WORDS = 150;
/** A nap's answer: the memories, and a summary when asked for one. */
const ANSWER_TOKENS = 512;
const SUMMARY_TOKENS = 400;
const CALL_TIMEOUT_MS = 120_000;

const INSTRUCTIONS = `Below is part of a conversation I am having today (lines are "[ref] local time Speaker: text"; "Me" is
me). Note only what is worth remembering for a long time — who the person is, what they like, plan or care about — that
is not already in my resident memory. Answer {"memories": [...]}, at most ${MAX_NAP_MEMORIES}, each
{"type", "content", "entities", "sources"}: type is one of ${MEMORY_TYPE_GUIDE}
Opinions and preferences say whose ("The person prefers …"). content: one sentence that stands on its own. sources: the
[ref]s it comes from. ${MEMORY_LANGUAGE_RULE} Most of the time nothing needs keeping: {"memories": []} is the common,
correct answer — a weak memory is worse than none. Never a password, key or card number.`;

export type NapReason = 'quiet' | 'leave' | 'overflow';

export type NapOutcome =
  | { status: 'skipped'; why: 'off' | 'busy' | 'short' | 'ordinary' | 'remembered' | 'no-model' | 'budget' | 'covered' | 'closing' }
  | {
      status: 'done';
      saved: number[];
      summarised: boolean;
      /** The answer's summary was not saved: what it carried on from changed meanwhile. */ summaryDropped?: true;
      /** The answer's summary said a forgotten fact again: saved set aside, on behalf of the forget. */ summarySetAside?: true;
    }
  | { status: 'failed'; error: string };

export interface NapDeps extends BackgroundDeps {
  conversations: Conversations;
  store: MemoryStore;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Hears how each nap ended (the benchmark counts them). Must not throw. */
  onOutcome?: (conversationId: string, reason: NapReason, outcome: NapOutcome) => void;
}

const hasText = (m: TranscriptMessage) => m.replacedBy === null && (m.status === 'complete' || m.status === 'partial') && m.content.trim() !== '';

function summaryInstructions(earlier: RollingSummary | null): string {
  return `These lines are leaving my view of the conversation: when I answer next, I will no longer see them. So also answer
"summary": at most ${SUMMARY_WORDS} words, as my own note, of what they hold that I need to keep talking well — who the person is,
what they told me, what we settled or left open${earlier ? ', carrying on from "My summary so far" (keep what still matters in it)' : ''}.
Write it in the language of the conversation. The answer is {"memories": [...], "summary": "..."}.`;
}

/**
 * Naps conversations. `touched` is told of every turn; `checkQuiet` (a timer in the host, called
 * directly by tests) naps each conversation quiet for the setting's minutes; `leave` naps one the
 * person has just left; `overflow` notes and summarises the turns about to leave the chat's context
 * window; `nap` runs one now. None of them throws, and the chat turn awaits none of them.
 */
export class Napper {
  /** Conversation id → when it last had a turn (and has not napped since). */
  private readonly lastActivity = new Map<string, number>();
  private readonly running = new Map<string, Promise<NapOutcome>>();
  /** Conversation id → until when overflow naps wait after one that gave no summary (no call per turn). */
  private readonly overflowPause = new Map<string, number>();
  private readonly closing = new AbortController();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: NapDeps) {}

  touched(conversationId: string): void {
    if (this.closing.signal.aborted) return;
    this.lastActivity.set(conversationId, this.deps.now().getTime());
  }

  /** The person left a conversation they were chatting in (switched away, archived it). */
  leave(conversationId: string): void {
    if (!this.lastActivity.has(conversationId)) return;
    void this.nap(conversationId, 'leave');
  }

  /** The turns through `throughMessageId` are about to leave the chat's context window. */
  overflow(conversationId: string, throughMessageId: string): void {
    if ((this.overflowPause.get(conversationId) ?? 0) > this.deps.now().getTime()) return;
    void this.nap(conversationId, 'overflow', throughMessageId);
  }

  /** Naps every conversation that has been quiet long enough; resolves when they are done. */
  async checkQuiet(): Promise<void> {
    const s = await this.deps.settings.get();
    const quietMs = s.sleep.napQuietMinutes * 60_000;
    const now = this.deps.now().getTime();
    const due = [...this.lastActivity].filter(([, at]) => now - at >= quietMs).map(([id]) => id);
    await Promise.all(due.map((id) => this.nap(id, 'quiet')));
  }

  start(intervalMs = 60_000): void {
    this.timer ??= setInterval(() => void this.checkQuiet().catch((err: Error) => this.deps.log('error', `nap timer: ${err.message}`)), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * When the host closes: no new nap, the running ones cancelled (audited as such) and awaited. What
   * they would have read is left for light sleep.
   */
  async close(): Promise<void> {
    this.stop();
    this.closing.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  /** The nap running for a conversation, if any (tests wait on it). */
  current(conversationId: string): Promise<NapOutcome> | undefined {
    return this.running.get(conversationId);
  }

  /** One nap of one conversation; a second request while one runs joins it. Never throws. */
  nap(conversationId: string, reason: NapReason, throughMessageId?: string): Promise<NapOutcome> {
    const current = this.running.get(conversationId);
    if (current) return current;
    if (this.closing.signal.aborted) return Promise.resolve({ status: 'skipped', why: 'closing' });
    if (reason !== 'overflow') this.lastActivity.delete(conversationId);
    const run = this.napOnce(conversationId, reason, throughMessageId)
      .catch((err: unknown): NapOutcome => {
        const error = err instanceof Error ? err.message : String(err);
        this.deps.log('error', `nap of ${conversationId} failed: ${error}`);
        return { status: 'failed', error };
      })
      .then((outcome) => {
        this.deps.onOutcome?.(conversationId, reason, outcome);
        // A dropped summary is no fault of the model: the next overflow asks again at once.
        if (reason === 'overflow' && !(outcome.status === 'done' && (outcome.summarised || outcome.summaryDropped)) && outcome.status !== 'skipped') {
          this.pauseOverflow(conversationId);
        }
        return outcome;
      })
      .finally(() => this.running.delete(conversationId));
    this.running.set(conversationId, run);
    return run;
  }

  private pauseOverflow(conversationId: string): void {
    void this.deps.settings.get().then(
      (s) => this.overflowPause.set(conversationId, this.deps.now().getTime() + s.sleep.napQuietMinutes * 60_000),
      () => {},
    );
  }

  private async napOnce(conversationId: string, reason: NapReason, throughMessageId?: string): Promise<NapOutcome> {
    const { settings, store, conversations, log } = this.deps;
    const s = await settings.get();
    // The kill switch: no daytime call at all, rolling summaries included.
    if (!s.sleep.nap) return { status: 'skipped', why: 'off' };
    const napSeq = await this.watermark(conversationId);

    // What the call shows (`lines`), which of it is new to naps (`stretch`: memories come from it) and,
    // for an overflow, which of it the summary must cover (`leaving`).
    let shown: TranscriptMessage[];
    let stretch: TranscriptMessage[];
    let leaving: TranscriptMessage[] = [];
    let earlier: RollingSummary | null = null;
    if (reason === 'overflow' && throughMessageId) {
      const through = await conversations.seqOf(throughMessageId);
      earlier = await conversations.rollingSummary(conversationId);
      const summarised = earlier?.throughSeq ?? 0;
      if (through === null || through <= summarised) return { status: 'skipped', why: 'covered' };
      const all = (await this.messagesAfter(conversationId, Math.min(napSeq, summarised))).filter((m) => m.seq <= through);
      leaving = all.filter((m) => m.seq > summarised && hasText(m));
      if (!leaving.length) return { status: 'skipped', why: 'covered' };
      shown = all.filter(hasText);
      stretch = all.filter((m) => m.seq > napSeq);
    } else {
      stretch = await this.messagesAfter(conversationId, napSeq);
      if (stretch.some((m) => m.status === 'streaming')) return { status: 'skipped', why: 'busy' };
      shown = stretch.filter(hasText);
    }
    const lastSeq = stretch.at(-1)?.seq;
    // The messages behind a forget that still stands (its memory came from them, or they cited it) are
    // not shown: the model would say the forgotten fact again, in the summary every later request
    // carries. Passed over, they count as read and as summarised, so no nap asks for them again.
    const withheld = new Set((await standingForgets(this.deps.db)).flatMap((f) => f.messageIds));

    // The chat model already saved from this stretch with its remember tool: it judged what mattered.
    const ids = new Set(stretch.map((m) => m.id));
    const recent = ids.size ? await store.list({ limit: 100 }) : { items: [] };
    const remembered = recent.items.some((m) => m.source === 'tool' && m.sourceMessageIds.some((id) => ids.has(id)));
    if (!leaving.length) {
      const fromPerson = shown.filter((m) => m.role === 'user' && !withheld.has(m.id));
      if (lastSeq === undefined || fromPerson.length < MIN_NAP_USER_MESSAGES || fromPerson.reduce((n, m) => n + m.content.length, 0) < MIN_NAP_USER_CHARS) {
        return { status: 'skipped', why: 'short' };
      }
      // Nothing meant to last and not much said: the night reads it. Not marked read, so it counts
      // towards the next stretch.
      if (!worthANap(fromPerson.map((m) => m.content))) return { status: 'skipped', why: 'ordinary' };
      if (remembered) {
        await this.advance(conversationId, lastSeq);
        return { status: 'skipped', why: 'remembered' };
      }
    }

    const day = sleepDay(this.deps.now(), s.sleepTime, s.timeZone);
    let bg: BackgroundModel;
    try {
      bg = await BackgroundModel.open(this.deps, day, 'nap');
      await bg.checkBudget();
    } catch (err) {
      const why = err instanceof ApiError ? 'no-model' : 'budget';
      log('info', `nap of ${conversationId} skipped: ${(err as Error).message}`);
      return { status: 'skipped', why };
    }

    const instructions = leaving.length ? `${INSTRUCTIONS}\n\n${summaryInstructions(earlier)}` : INSTRUCTIONS;
    const maxTokens = ANSWER_TOKENS + (leaving.length ? SUMMARY_TOKENS : 0);
    // As much of the stretch as the background model's context holds, oldest first; the rest waits
    // for the next nap or tonight's light sleep.
    const heading = `## Conversation “${(shown[0] ?? stretch[0])?.title.replace(/\s+/g, ' ').slice(0, 80) ?? ''}” (${reason})`;
    const before = earlier ? `## My summary so far\n${earlier.text}\n\n` : '';
    let room = bg.materialBudget(instructions, maxTokens) - estimateTokens(before + heading) - 8;
    const refs = new Map<string, string>();
    const lines: string[] = [];
    let lastShown = -1;
    let cut = false;
    for (const m of shown) {
      if (withheld.has(m.id)) {
        lastShown = m.seq;
        continue;
      }
      const text = m.content.length > MAX_CHARS_PER_MESSAGE ? `${m.content.slice(0, MAX_CHARS_PER_MESSAGE)} […]` : m.content;
      const ref = `m${refs.size + 1}`;
      const line = transcriptLine(ref, localStamp(m.createdAt, s.timeZone), m.speaker?.trim() || (m.role === 'user' ? 'Person' : 'Me'), text);
      const cost = estimateTokens(line) + 2;
      if (lines.length && cost > room) {
        cut = true;
        break;
      }
      room -= cost;
      refs.set(ref, m.id);
      lines.push(line);
      lastShown = m.seq;
    }
    const result = await bg.call({
      purpose: NAP,
      stepId: napStepId(day),
      runId: null,
      instructions,
      material: `${before}${heading}\n${lines.join('\n')}`,
      schema: napAnswer,
      maxTokens,
      signal: AbortSignal.any([this.closing.signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]),
    });
    if (!result.ok) {
      // Audited as failed by the call itself; the stretch is left for light sleep tonight.
      log('warn', `nap of ${conversationId}: ${result.error}`);
      return { status: 'failed', error: result.error };
    }
    const fresh = new Set(stretch.map((m) => m.id));
    const saved = remembered ? [] : await this.keep(result.value, refs, fresh, day, conversationId, cut ? lastShown : lastSeq);
    let summarised = false;
    let summaryDropped = false;
    let summarySetAside = false;
    if (leaving.length && result.value.summary) {
      const through = Math.min(leaving.at(-1)!.seq, lastShown);
      // Saved only if the summary it carried on from is still the live one: a forget during the call
      // set it aside, and the answer may say the forgotten fact again. Dropped, the next overflow
      // summarises afresh. Saved, it goes live only if it says no forgotten fact; set aside, the
      // overflow naps pause as after an answer without a summary (asked again, the model may well
      // say it again).
      const carriedFrom = earlier?.throughSeq ?? 0;
      const kept = await saveSummaryMindingForgets(this.deps.db, conversations, {
        conversationId,
        text: result.value.summary,
        throughSeq: through,
        carriedFromSeq: carriedFrom,
      });
      summarised = kept === 'live';
      summarySetAside = kept === 'set-aside';
      summaryDropped = kept === 'dropped' && through > carriedFrom;
      if (summaryDropped)
        log('info', `nap of ${conversationId}: the conversation's summary changed during the call (set aside or replaced); the new one is dropped`);
      if (summarySetAside) log('warn', `nap of ${conversationId}: the new summary says a forgotten memory again; it is set aside`);
    } else if (leaving.length) {
      log('warn', `nap of ${conversationId}: the answer had no summary of the turns leaving the window`);
    }
    if (saved.length) log('info', `nap of ${conversationId} kept ${saved.length} memories`);
    if (summaryDropped) return { status: 'done', saved, summarised, summaryDropped };
    return summarySetAside ? { status: 'done', saved, summarised, summarySetAside } : { status: 'done', saved, summarised };
  }

  /**
   * Saves the answer's memories (at most MAX_NAP_MEMORIES, each from at least one message new to
   * naps) and moves the watermark to `throughSeq`, in one transaction.
   */
  private async keep(
    answer: NapAnswer,
    refs: Map<string, string>,
    fresh: Set<string>,
    day: string,
    conversationId: string,
    throughSeq: number | undefined,
  ): Promise<number[]> {
    const { store } = this.deps;
    const allFresh = [...refs.values()].every((id) => fresh.has(id));
    const wanted = answer.memories
      .map((m) => ({ m, sources: [...new Set(m.sources.flatMap((r) => refs.get(r) ?? []))] }))
      .filter(({ sources }) => (sources.length ? sources.some((id) => fresh.has(id)) : allFresh))
      .slice(0, MAX_NAP_MEMORIES);
    const prepared = await store.prepareCreates(
      wanted.map(({ m, sources }) => ({
        type: m.type,
        content: m.content,
        // The database knows light sleep, deep sleep, the tool and the person as sources: a nap is a
        // light sleep of part of the day, and its reason says so.
        source: 'light-sleep' as const,
        actor: 'light-sleep' as const,
        sourceMessageIds: sources,
        entityNames: m.entities,
        reason: `nap of ${day}`,
      })),
    );
    const saved: number[] = [];
    await store.batch(async (b) => {
      for (const item of prepared.items) {
        if (item instanceof ApiError) continue;
        const result = await b.createPrepared(item);
        // A fact the person forgot stays forgotten: not kept, not listed as noted.
        if (result.outcome !== 'skipped') saved.push(result.memory.id);
      }
      if (throughSeq !== undefined) {
        await b.tx.query(
          `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq) VALUES ($1, $2, $3)
           ON CONFLICT (step_id, conversation_id) DO UPDATE SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
          [NAP, conversationId, throughSeq],
        );
      }
    }, prepared);
    return saved;
  }

  /** The last message seq naps have read in a conversation (0: none). */
  private async watermark(conversationId: string): Promise<number> {
    const row = (
      await this.deps.db.query<{ last_seq: number }>(`SELECT last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = $1 AND conversation_id = $2`, [
        NAP,
        conversationId,
      ])
    ).rows[0];
    return Number(row?.last_seq ?? 0);
  }

  /** The conversation's messages after `seq`. */
  private async messagesAfter(conversationId: string, seq: number): Promise<TranscriptMessage[]> {
    return this.deps.conversations.chatMessagesOf(conversationId, seq);
  }

  private async advance(conversationId: string, lastSeq: number): Promise<void> {
    await this.deps.db.query(
      `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq) VALUES ($1, $2, $3)
       ON CONFLICT (step_id, conversation_id) DO UPDATE SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
      [NAP, conversationId, lastSeq],
    );
  }
}

/** Memories naps kept from these messages: light sleep lists them as already noted. */
export async function nappedFrom(store: MemoryStore, messageIds: readonly string[]): Promise<{ type: string; content: string }[]> {
  if (!messageIds.length) return [];
  const ids = new Set(messageIds);
  const recent = await store.list({ limit: 200 });
  return recent.items
    .filter((m) => m.source === 'light-sleep' && m.sourceMessageIds.some((id) => ids.has(id)))
    .map((m) => ({ type: m.type, content: m.content }));
}
