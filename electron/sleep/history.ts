// "Read my imported history": the catch-up that reads imported conversations the way the night reads
// a day's chat, oldest day first, a few days at a time, in the background.
//
// An import marks its conversations as read by the night (imported-history.ts), so a big import never
// sets off a month of sleep. When the person asks (Settings → Memory → Sleep), this reads that history
// with light sleep's own reading (steps/light-sleep.ts readTranscripts: the same prompt, guards, secret
// filter, audit rows, one transaction per call with its marks) into memories dated by the day they
// were said and diary blocks on their real days.
//
// - A pass reads the oldest `daysPerPass` unread days (all conversations of each), at most
//   `callsPerPass` calls; the next pass comes on the next check (every minute) while the app is quiet.
// - It stays out of the way: no pass while the person has chatted in the last 2 minutes (chat stops a
//   pass between calls; after a restart the timer's first check comes a minute after launch), while a sleep cycle runs, or once today's allowance is spent — half a night's
//   budget (settings.sleep) a sleep day, counted from its own audit rows (step id `history:<day>`),
//   apart from the night's. The night's own budget check still applies to each call.
// - State is in the database (migration 018): what each conversation has read (`read_seq`, moved in
//   the transaction that writes what was read) and whether the person asked (reading/paused). A
//   restart resumes; a day read is never read again; a kill mid-call leaves that day unread.
// - Pause lets the call in hand finish and stops before the next one.
import { ApiError, type ImportedHistoryStatus } from '../../shared/api.js';
import { sleepDay } from '../../shared/sleep-day.js';
import type { HistoryStamp, TranscriptImports } from '../conversations/import-transcript.js';
import type { TranscriptMessage } from '../conversations/conversations.js';
import { BackgroundModel, resolveBackgroundModel } from './background.js';
import { CycleStop, StepFailure } from './dag.js';
import { advanceHistory, allHistory, historyState, setHistoryError, setHistoryState, unreadHistory, type HistoryRange } from './imported-history.js';
import { readTranscripts, type LightSleepStats } from './steps/light-sleep.js';
import type { SleepStepDeps } from './steps/deps.js';

/** The audit rows' step id: the catch-up's calls of sleep day `day` (no run holds them). */
export const historyStepId = (day: string) => `history:${day}`;
/** Days one pass reads (all their conversations), oldest first. */
export const HISTORY_DAYS_PER_PASS = 7;
/** Calls one pass makes at most. */
export const HISTORY_CALLS_PER_PASS = 6;
/** Of a night's budget, what the catch-up may spend per sleep day besides it. */
export const HISTORY_SHARE = 0.5;
/** Characters a token, and the tokens a transcript line adds (as light sleep estimates). */
const CHARS_PER_TOKEN = 4;
const LINE_TOKENS = 12;
/** The answer and the prompt around the material, per call (for the estimate of nights). */
const CALL_OVERHEAD_TOKENS = 3_000;

export interface HistoryReaderDeps extends SleepStepDeps {
  transcripts: TranscriptImports;
}

export interface HistoryReaderOptions {
  /** How often it checks whether to read. Default 60 s; 0 turns the timer off (tests call tick()). */
  tickMs?: number;
  /** How long the person must have been quiet. Default 2 min (as the nightly scheduler). */
  idleMs?: number;
  daysPerPass?: number;
  callsPerPass?: number;
}

export type PassOutcome =
  | { status: 'read'; days: string[]; stats: LightSleepStats }
  | { status: 'finished' }
  | { status: 'waiting'; why: NonNullable<ImportedHistoryStatus['waiting']> | 'not-asked' | 'busy' }
  | { status: 'failed'; error: string; stats?: Record<string, number> };

interface Pass {
  /** Chat or a pause: stop before the next call. */
  stopBetween: boolean;
  /** Closing: cancel the call in flight. */
  controller: AbortController;
  done: Promise<PassOutcome>;
}

/** A message's sleep day, memoised by the minute (chat messages come in bunches; a day turns on a minute). */
function dayCounter(sleepTime: string, timeZone: string): (at: Date) => string {
  const memo = new Map<number, string>();
  return (at) => {
    const minute = Math.floor(at.getTime() / 60_000);
    let d = memo.get(minute);
    if (d === undefined) {
      d = sleepDay(at, sleepTime, timeZone);
      memo.set(minute, d);
    }
    return d;
  };
}

export class HistoryReader {
  private pass: Pass | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private lastChat: number;
  private waiting: ImportedHistoryStatus['waiting'] = null;
  /** The check begin() starts (idle() waits for it too). */
  private kicked: Promise<unknown> | null = null;

  constructor(
    private readonly deps: HistoryReaderDeps,
    private readonly opts: HistoryReaderOptions = {},
  ) {
    // Chat keeps the companion awake; until someone chats, the app is quiet (the person who just
    // pressed "Read my imported history" in Settings is not chatting).
    this.lastChat = -Infinity;
    deps.events.on((...[event]) => {
      if (event !== 'chat.delta' && event !== 'chat.finished') return;
      this.lastChat = performance.now();
      if (this.pass && !this.pass.stopBetween) {
        this.pass.stopBetween = true;
        this.waiting = 'chatting';
      }
    });
  }

  start(): void {
    const every = this.opts.tickMs ?? 60_000;
    if (every <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.tick().catch((err: Error) => this.deps.log('warn', `imported history: ${err.message}`)), every);
    this.timer.unref();
  }

  private today(s: { sleepTime: string; timeZone: string }): string {
    return sleepDay(this.deps.now(), s.sleepTime, s.timeZone);
  }

  /** What the catch-up spent on sleep day `day`, from its audit rows. */
  private async spent(day: string): Promise<{ calls: number; tokens: number }> {
    const row = (
      await this.deps.db.query<{ calls: number; tokens: number }>(
        `SELECT count(*)::int AS calls,
                coalesce(sum(coalesce(prompt_tokens, ceil(prompt_chars / 4.0)::int) + coalesce(completion_tokens, ceil(response_chars / 4.0)::int)), 0)::float8 AS tokens
           FROM auto_llm_runs WHERE run_id IS NULL AND step_id = $1`,
        [historyStepId(day)],
      )
    ).rows[0]!;
    return { calls: Number(row.calls), tokens: Number(row.tokens) };
  }

  private async allowance(): Promise<ImportedHistoryStatus['allowance']> {
    const s = await this.deps.settings.get();
    const used = await this.spent(this.today(s));
    return {
      ...used,
      maxCalls: Math.max(1, Math.floor(s.sleep.maxCallsPerNight * HISTORY_SHARE)),
      maxTokens: Math.max(1_000, Math.floor(s.sleep.maxTokensPerNight * HISTORY_SHARE)),
    };
  }

  private async sleepRunning(): Promise<boolean> {
    return (await this.deps.db.query(`SELECT 1 FROM sleep_runs WHERE status = 'running' LIMIT 1`)).rows.length > 0;
  }

  async status(): Promise<ImportedHistoryStatus> {
    const s = await this.deps.settings.get();
    const ranges = await allHistory(this.deps.db);
    const stamps = await this.deps.transcripts.historyStamps(new Map([...ranges].map(([id, r]) => [id, { read: 0, through: r.through }])));
    const dayOf = dayCounter(s.sleepTime, s.timeZone);
    const days = new Set<string>();
    const unreadDays = new Set<string>();
    let unreadTokens = 0;
    let from: number | null = null;
    let to: number | null = null;
    const conversations = new Set<string>();
    for (const st of stamps) {
      const d = dayOf(st.createdAt);
      days.add(d);
      conversations.add(st.conversationId);
      const t = st.createdAt.getTime();
      if (from === null || t < from) from = t;
      if (to === null || t > to) to = t;
      if (st.seq > (ranges.get(st.conversationId)?.read ?? 0)) {
        unreadDays.add(d);
        unreadTokens += Math.ceil(st.chars / CHARS_PER_TOKEN) + LINE_TOKENS;
      }
    }
    const asked = await historyState(this.deps.db);
    const allowance = await this.allowance();
    let context = 8_192;
    let noModel = false;
    try {
      context = (await resolveBackgroundModel(this.deps)).contextTokens;
    } catch {
      noModel = true;
    }
    // Light sleep's material per call: the context less the answer (a quarter, at most 4096) and the prompt around it.
    const material = Math.max(256, context - Math.max(512, Math.min(4096, Math.floor(context / 4))) - 2_000);
    const calls = unreadDays.size
      ? Math.max(Math.ceil(unreadTokens / material), Math.ceil(unreadDays.size / (this.opts.daysPerPass ?? HISTORY_DAYS_PER_PASS)))
      : 0;
    const nightsLeft = calls
      ? Math.max(Math.ceil(calls / allowance.maxCalls), Math.ceil((unreadTokens + calls * CALL_OVERHEAD_TOKENS) / allowance.maxTokens))
      : 0;
    const state: ImportedHistoryStatus['state'] = !stamps.length
      ? 'none'
      : !unreadDays.size
        ? 'done'
        : asked?.state === 'reading'
          ? 'reading'
          : asked?.state === 'paused'
            ? 'paused'
            : 'unread';
    return {
      state,
      conversations: conversations.size,
      messages: stamps.length,
      from: from === null ? null : new Date(from).toISOString(),
      to: to === null ? null : new Date(to).toISOString(),
      daysTotal: days.size,
      daysRead: days.size - unreadDays.size,
      nightsLeft,
      active: this.pass !== null,
      waiting: state === 'reading' ? (noModel ? 'no_model' : this.waiting) : null,
      error: asked?.error ?? null,
      allowance,
    };
  }

  private async announce(): Promise<ImportedHistoryStatus> {
    const status = await this.status();
    this.deps.events.emit('sleep.history', status);
    return status;
  }

  /** The person asks for the catch-up (or resumes it). Refused without a model connection, or with nothing to read. */
  async begin(): Promise<ImportedHistoryStatus> {
    if (this.closed) throw new ApiError('conflict', 'Anima is closing.');
    await resolveBackgroundModel(this.deps);
    if (!(await unreadHistory(this.deps.db)).size) throw new ApiError('conflict', 'There is no imported history left to read.');
    await setHistoryState(this.deps.db, 'reading');
    this.waiting = null;
    const status = await this.announce();
    // The first pass as soon as the app is quiet (now, if it is).
    this.kicked = this.tick().catch((err: Error) => this.deps.log('warn', `imported history: ${err.message}`));
    return status;
  }

  /** Pauses: the call in hand finishes (its day is kept), no other starts. */
  async pause(): Promise<ImportedHistoryStatus> {
    if ((await historyState(this.deps.db)) !== null) await setHistoryState(this.deps.db, 'paused');
    if (this.pass) this.pass.stopBetween = true;
    return this.announce();
  }

  /**
   * The check: a pass when the person asked, the app is quiet, no night runs and today's allowance
   * is left. Returns the pass's outcome, or why none ran.
   */
  async tick(): Promise<PassOutcome> {
    if (this.closed || this.pass) return { status: 'waiting', why: 'busy' };
    if ((await historyState(this.deps.db))?.state !== 'reading') return { status: 'waiting', why: 'not-asked' };
    if (performance.now() - this.lastChat < (this.opts.idleMs ?? 120_000)) return this.wait('chatting');
    if (await this.sleepRunning()) return this.wait('sleeping');
    return this.runPass();
  }

  private wait(why: NonNullable<ImportedHistoryStatus['waiting']>): PassOutcome {
    this.waiting = why;
    return { status: 'waiting', why };
  }

  /** One pass now, whatever the quiet (tests, and tick once it decided). */
  runPass(): Promise<PassOutcome> {
    if (this.pass) return this.pass.done;
    const pass: Pass = { stopBetween: false, controller: new AbortController(), done: Promise.resolve({ status: 'finished' }) };
    this.pass = pass;
    pass.done = this.read(pass)
      .catch((err: unknown): PassOutcome => {
        const error = err instanceof Error ? err.message : String(err);
        this.deps.log('error', `imported history: the pass broke: ${error}`);
        return { status: 'failed', error };
      })
      .finally(() => {
        if (this.pass === pass) this.pass = null;
      });
    // Told when it starts reading and when it ends (the days read, or why it stopped).
    void this.announce().catch(() => {});
    void pass.done.then(() => (this.closed ? undefined : this.announce().catch(() => {})));
    return pass.done;
  }

  private async read(pass: Pass): Promise<PassOutcome> {
    const db = this.deps.db;
    if ((await historyState(db))?.state !== 'reading') return { status: 'waiting', why: 'not-asked' };
    const s = await this.deps.settings.get();
    const allowance = await this.allowance();
    if (allowance.calls >= allowance.maxCalls || allowance.tokens >= allowance.maxTokens) return this.wait('allowance');
    const ranges = await unreadHistory(db);
    const stamps = await this.deps.transcripts.historyStamps(ranges);
    // A conversation whose history has nothing left to read (deleted, off the record) is done.
    const withStamps = new Set(stamps.map((st) => st.conversationId));
    const nothing = new Map([...ranges].filter(([id]) => !withStamps.has(id)).map(([id, r]) => [id, r.through]));
    if (nothing.size) await advanceHistory(db, nothing);
    if (!stamps.length) {
      await setHistoryState(db, null);
      this.waiting = null;
      this.deps.log('info', 'imported history: every imported day has been read');
      return { status: 'finished' };
    }
    const dayOf = dayCounter(s.sleepTime, s.timeZone);
    const days = [...new Set(stamps.map((st) => dayOf(st.createdAt)))].sort();
    const chosen = days.slice(0, this.opts.daysPerPass ?? HISTORY_DAYS_PER_PASS);
    const cutoff = chosen.at(-1)!;
    // Per conversation, its unread messages up to the last chosen day (in order: stop at the first later one).
    const upTo = new Map<string, HistoryStamp>();
    const past = new Set<string>();
    for (const st of stamps) {
      if (past.has(st.conversationId)) continue;
      if (dayOf(st.createdAt) > cutoff) past.add(st.conversationId);
      else upTo.set(st.conversationId, st);
    }
    const pending = new Map<string, TranscriptMessage[]>();
    for (const [id, last] of upTo) {
      const range = ranges.get(id) as HistoryRange;
      pending.set(id, await this.deps.transcripts.historyMessages(id, range.read, last.seq));
    }

    const today = this.today(s);
    const maxCalls = Math.min(this.opts.callsPerPass ?? HISTORY_CALLS_PER_PASS, allowance.maxCalls - allowance.calls);
    let calls = 0;
    this.waiting = null;
    try {
      const stats = await readTranscripts(this.deps, () => BackgroundModel.open(this.deps, today), pending, {
        runId: null,
        stepId: historyStepId(today),
        signal: pass.controller.signal,
        stopBetween: () => pass.stopBetween || calls >= maxCalls,
        heartbeat: async () => {
          calls++;
        },
        advance: advanceHistory,
        dateByDay: true,
        reason: 'reading imported history of',
      });
      if (stats.calls > 0 && stats.chunks_done === 0) {
        // Every answer was unusable: say so, as a night would, and leave the days for a later pass.
        const error = "The background model didn't answer in the form I need — it may be too small for this; see the calls.";
        await setHistoryError(db, error);
        return { status: 'failed', error, stats };
      }
      await setHistoryError(db, null);
      this.deps.log('info', `imported history: read ${chosen[0]}${chosen.length > 1 ? ` to ${cutoff}` : ''} (${stats.calls} calls)`);
      return { status: 'read', days: chosen, stats };
    } catch (err) {
      if (err instanceof CycleStop) return this.wait('allowance');
      if (err instanceof StepFailure) {
        if (!this.closed) await setHistoryError(db, err.message);
        return { status: 'failed', error: err.message, stats: err.stats };
      }
      if (err instanceof ApiError && err.code === 'no_provider') return this.wait('no_model');
      throw err;
    }
  }

  /** Waits for the pass in hand, if any, and for the one begin() asked for (tests). */
  async idle(): Promise<void> {
    await this.kicked;
    await this.pass?.done;
  }

  /** Stops the timer and cancels the call in flight (its day stays unread), and waits for the pass. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.pass) {
      this.pass.stopBetween = true;
      this.pass.controller.abort('the app was closing');
    }
    await this.kicked;
    await this.pass?.done;
  }
}
