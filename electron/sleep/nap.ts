// The nap: daytime memory. When a conversation goes quiet (or the person leaves it), one gated
// background call reads what was said since the last nap and may keep up to three memories, so a
// preference said at noon is known in the evening. Cheap by design: most stretches never reach the
// model (too short, the chat model already saved from it, the switch is off), and the prompt says
// an empty list is the usual answer. It never throws: a failure is audited and logged, and the chat
// never notices. Light sleep reads the same messages that night; it is shown what the nap kept
// ("Already noted") and the store's same-fact rule updates rather than copies a restatement.
import { ApiError } from '../../shared/api.js';
import { sleepDay } from '../../shared/sleep-day.js';
import type { Conversations, TranscriptMessage } from '../conversations/conversations.js';
import type { MemoryStore } from '../memory/store.js';
import { BackgroundModel, napStepId, type BackgroundDeps } from './background.js';
import { MEMORY_LANGUAGE_RULE, MEMORY_TYPE_GUIDE, napAnswer, transcriptLine } from './schemas.js';
import { localStamp } from './steps/deps.js';

export const NAP = 'nap';
/** Most memories one nap keeps; more in an answer are cut. */
export const MAX_NAP_MEMORIES = 3;
/** A stretch with fewer of the person's messages, or fewer of their characters, is not worth a call. */
export const MIN_NAP_USER_MESSAGES = 2;
export const MIN_NAP_USER_CHARS = 120;
const MAX_CHARS_PER_MESSAGE = 2_000;

const INSTRUCTIONS = `Below is part of a conversation I am having today (lines are "[ref] local time Speaker: text"; "Me" is
me). Note only what is worth remembering for a long time — who the person is, what they like, plan or care about — that
is not already in my resident memory. Answer {"memories": [...]}, at most ${MAX_NAP_MEMORIES}, each
{"type", "content", "entities", "sources"}: type is one of ${MEMORY_TYPE_GUIDE}
Opinions and preferences say whose ("The person prefers …"). content: one sentence that stands on its own. sources: the
[ref]s it comes from. ${MEMORY_LANGUAGE_RULE} Most of the time nothing needs keeping: {"memories": []} is the common,
correct answer — a weak memory is worse than none. Never a password, key or card number.`;

export type NapReason = 'quiet' | 'leave' | 'overflow';

export type NapOutcome =
  | { status: 'skipped'; why: 'off' | 'busy' | 'short' | 'remembered' | 'no-model' | 'budget' }
  | { status: 'done'; saved: number[] }
  | { status: 'failed'; error: string };

export interface NapDeps extends BackgroundDeps {
  conversations: Conversations;
  store: MemoryStore;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

const hasText = (m: TranscriptMessage) => m.replacedBy === null && (m.status === 'complete' || m.status === 'partial') && m.content.trim() !== '';

/**
 * Naps conversations. `touched` is told of every turn; `checkQuiet` (a timer in the host, called
 * directly by tests) naps each conversation quiet for the setting's minutes; `nap` runs one now.
 */
export class Napper {
  /** Conversation id → when it last had a turn (and has not napped since). */
  private readonly lastActivity = new Map<string, number>();
  private readonly running = new Map<string, Promise<NapOutcome>>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: NapDeps) {}

  touched(conversationId: string): void {
    this.lastActivity.set(conversationId, this.deps.now().getTime());
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
    this.timer ??= setInterval(() => void this.checkQuiet(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One nap of one conversation; a second request while one runs joins it. Never throws. */
  nap(conversationId: string, reason: NapReason): Promise<NapOutcome> {
    const current = this.running.get(conversationId);
    if (current) return current;
    this.lastActivity.delete(conversationId);
    const run = this.napOnce(conversationId, reason)
      .catch((err: unknown): NapOutcome => {
        const error = err instanceof Error ? err.message : String(err);
        this.deps.log('error', `nap of ${conversationId} failed: ${error}`);
        return { status: 'failed', error };
      })
      .finally(() => this.running.delete(conversationId));
    this.running.set(conversationId, run);
    return run;
  }

  private async napOnce(conversationId: string, reason: NapReason): Promise<NapOutcome> {
    const { settings, store, log } = this.deps;
    const s = await settings.get();
    if (!s.sleep.nap) return { status: 'skipped', why: 'off' };
    const stretch = await this.stretch(conversationId);
    if (stretch.some((m) => m.status === 'streaming')) return { status: 'skipped', why: 'busy' };
    const shown = stretch.filter(hasText);
    const lastSeq = stretch.at(-1)?.seq;
    const fromPerson = shown.filter((m) => m.role === 'user');
    if (lastSeq === undefined || fromPerson.length < MIN_NAP_USER_MESSAGES || fromPerson.reduce((n, m) => n + m.content.length, 0) < MIN_NAP_USER_CHARS) {
      return { status: 'skipped', why: 'short' };
    }
    // The chat model already saved from this stretch with its remember tool: it judged what mattered.
    const ids = new Set(stretch.map((m) => m.id));
    const recent = await store.list({ limit: 100 });
    if (recent.items.some((m) => m.source === 'tool' && m.sourceMessageIds.some((id) => ids.has(id)))) {
      await this.advance(conversationId, lastSeq);
      return { status: 'skipped', why: 'remembered' };
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
    const refs = new Map<string, string>();
    const lines = shown.map((m) => {
      const ref = `m${refs.size + 1}`;
      refs.set(ref, m.id);
      const text = m.content.length > MAX_CHARS_PER_MESSAGE ? `${m.content.slice(0, MAX_CHARS_PER_MESSAGE)} […]` : m.content;
      return transcriptLine(ref, localStamp(m.createdAt, s.timeZone), m.speaker?.trim() || (m.role === 'user' ? 'Person' : 'Me'), text);
    });
    const result = await bg.call({
      purpose: NAP,
      stepId: napStepId(day),
      runId: null,
      instructions: INSTRUCTIONS,
      material: `## Conversation “${stretch[0]!.title.replace(/\s+/g, ' ').slice(0, 80)}” (${reason})\n${lines.join('\n')}`,
      schema: napAnswer,
      maxTokens: 512,
      signal: AbortSignal.timeout(120_000),
    });
    if (!result.ok) {
      // Audited as failed by the call itself; the stretch is left for light sleep tonight.
      log('warn', `nap of ${conversationId}: ${result.error}`);
      return { status: 'failed', error: result.error };
    }
    const wanted = result.value.memories.slice(0, MAX_NAP_MEMORIES);
    const prepared = await store.prepareCreates(
      wanted.map((m) => ({
        type: m.type,
        content: m.content,
        // The database knows light sleep, deep sleep, the tool and the person as sources: a nap is a
        // light sleep of part of the day, and its reason says so.
        source: 'light-sleep' as const,
        actor: 'light-sleep' as const,
        sourceMessageIds: [...new Set(m.sources.flatMap((r) => refs.get(r) ?? []))],
        entityNames: m.entities,
        reason: `nap of ${day}`,
      })),
    );
    const saved: number[] = [];
    await store.batch(async (b) => {
      for (const item of prepared.items) {
        if (item instanceof ApiError) continue;
        saved.push((await b.createPrepared(item)).memory.id);
      }
      await b.tx.query(
        `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq) VALUES ($1, $2, $3)
         ON CONFLICT (step_id, conversation_id) DO UPDATE SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
        [NAP, conversationId, lastSeq],
      );
    }, prepared);
    if (saved.length) log('info', `nap of ${conversationId} kept ${saved.length} memories`);
    return { status: 'done', saved };
  }

  /** The conversation's messages past its nap watermark. */
  private async stretch(conversationId: string): Promise<TranscriptMessage[]> {
    const row = (
      await this.deps.db.query<{ last_seq: number }>(`SELECT last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = $1 AND conversation_id = $2`, [
        NAP,
        conversationId,
      ])
    ).rows[0];
    const after = new Map([[conversationId, Number(row?.last_seq ?? 0)]]);
    return (await this.deps.conversations.chatMessagesAfter(after)).filter((m) => m.conversationId === conversationId);
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
