// The sleep service: the step graph, "sleep now", stop, and the scheduler. The schedule is a check,
// not an alarm: every minute (and at launch) it asks "has a sleep boundary passed since the last
// cycle, is there something to consolidate, and is the app idle?" — so a laptop that slept through
// 02:00, a clock that jumped, a changed time zone or a daylight-saving night all end in one cycle
// for the day that ended, run once the person is not chatting.
import { ApiError, type SleepProgressEvent, type SleepStatus } from '../../shared/api.js';
import { nextDay, sleepDay, sleepDayStart } from '../../shared/sleep-day.js';
import { budgetUse, resolveBackgroundModel } from './background.js';
import { releaseAbandoned, runCycle, SleepBusyError, type SleepStep, type SleepTrigger } from './dag.js';
import { sleepRuns } from './read.js';
import { deepSleepStep } from './steps/deep-sleep.js';
import { modelForRun, type SleepStepDeps } from './steps/deps.js';
import { digestStep } from './steps/digest.js';
import { dreamStep } from './steps/dream.js';
import { lightSleepStep, lightSleepWatermarks } from './steps/light-sleep.js';
import { moodTrendStep, refSyncStep, snapshotStep } from './steps/simple.js';
import { failWhenUnusable } from './usable.js';

/** Why a cycle stopped when the app closed: the next launch resumes such a night at once. */
export const CLOSING = 'the app was closing';

/** The whole night, in the order independent steps run (the digest last, to report on the rest). */
export function buildSteps(deps: SleepStepDeps): SleepStep[] {
  const model = modelForRun(deps);
  // A step that called the model and got nothing usable back failed, whatever it wrote (usable.ts).
  const calling = (step: SleepStep) => failWhenUnusable(deps.db, step);
  return [
    refSyncStep(deps),
    calling(lightSleepStep(deps, model)),
    snapshotStep(deps),
    calling(deepSleepStep(deps, model)),
    calling(dreamStep(deps, model)),
    moodTrendStep(deps),
    digestStep(deps),
  ];
}

export interface SleepServiceOptions {
  /** How long the app must have been quiet (no reply streaming, no message sent) before an automatic cycle. Default 2 min. */
  idleMs?: number;
  /** How often the scheduler checks. Default 60 s; 0 turns the timer off (tests call tick()). */
  tickMs?: number;
  /** A failed automatic cycle is retried after this long. Default 1 h. */
  retryMs?: number;
  /** Replaces the step graph (tests). */
  steps?: SleepStep[];
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
  progress: SleepProgressEvent | null;
}

export class SleepService {
  readonly steps: SleepStep[];
  private running: Running | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastActivity: number;
  private lastActivityMono = -Infinity;
  private closed = false;

  constructor(
    private readonly deps: SleepStepDeps,
    private readonly opts: SleepServiceOptions = {},
  ) {
    // The snapshot asks how long the person has been quiet; a monotonic clock, as it measures a wait.
    this.steps = opts.steps ?? buildSteps({ ...deps, quietForMs: deps.quietForMs ?? (() => performance.now() - this.lastActivityMono) });
    this.lastActivity = deps.now().getTime();
    // Chat activity keeps the companion awake.
    deps.events.on((...[event]) => {
      if (event === 'chat.delta' || event === 'chat.finished') this.touch();
    });
  }

  /** Starts the periodic check (and one soon after launch for the catch-up). */
  start(): void {
    const every = this.opts.tickMs ?? 60_000;
    if (every <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.tick().catch((err: Error) => this.deps.log('warn', `sleep scheduler: ${err.message}`)), every);
    this.timer.unref();
  }

  /** Marks chat activity (a message was sent), postponing an automatic cycle. */
  touch(): void {
    this.lastActivity = this.deps.now().getTime();
    this.lastActivityMono = performance.now();
  }

  private async boundaries(): Promise<{ day: string; lastBoundary: Date; nextBoundary: Date }> {
    const s = await this.deps.settings.get();
    const day = sleepDay(this.deps.now(), s.sleepTime, s.timeZone);
    return { day, lastBoundary: sleepDayStart(day, s.sleepTime, s.timeZone), nextBoundary: sleepDayStart(nextDay(day), s.sleepTime, s.timeZone) };
  }

  /** Chat messages waiting for light sleep that were written before `before`. */
  private async hasWorkBefore(before: Date): Promise<boolean> {
    return this.deps.conversations.hasChatMessageAfter(await lightSleepWatermarks(this.deps.db), before);
  }

  /**
   * The scheduler's check; returns the run it started, if any. A cycle is due when a sleep boundary
   * passed after the last finished cycle began and messages from before it wait, or when the night
   * begun since then was cut short (failed, or stopped by the app closing); it runs for the sleep day
   * that ended at that boundary.
   */
  async tick(): Promise<{ runId: number | null; sleepDay: string } | null> {
    if (this.closed || this.running) return null;
    const s = await this.deps.settings.get();
    if (!s.sleep.auto) return null;
    const { day, lastBoundary } = await this.boundaries();
    const now = this.deps.now().getTime();
    // A clock set back puts the last activity in the future: count the quiet from now instead of
    // waiting (possibly days) for the clock to catch up with it.
    if (this.lastActivity > now) this.lastActivity = now;
    if (now - this.lastActivity < (this.opts.idleMs ?? 120_000)) return null;
    const last = (
      await this.deps.db.query<{ status: string; started_at: Date; error: string | null }>(
        `SELECT status, started_at, error FROM sleep_runs WHERE trigger <> 'manual' OR status = 'done' ORDER BY id DESC LIMIT 1`,
      )
    ).rows[0];
    let resume = false;
    if (last && last.started_at.getTime() >= lastBoundary.getTime()) {
      // This boundary was already slept on. A night the closing app stopped is resumed at once; a
      // failed (or interrupted) one is retried, not too often; one stopped by the person or by the
      // budget waits for the next night.
      const closed = last.status === 'stopped' && last.error === CLOSING;
      const retry = last.status === 'failed' && now - last.started_at.getTime() >= (this.opts.retryMs ?? 3_600_000);
      if (!closed && !retry) return null;
      resume = true;
    }
    // A night being resumed has work left in its unfinished steps even when light sleep read all the chat.
    if (!resume && !(await this.hasWorkBefore(lastBoundary))) return null;
    const trigger: SleepTrigger = now - lastBoundary.getTime() < 3_600_000 ? 'schedule' : 'catch-up';
    return this.start_(trigger, nextDay(day, -1));
  }

  /** "Sleep now": a cycle for the current sleep day. */
  async now(): Promise<{ runId: number | null; sleepDay: string }> {
    if (this.running) throw new ApiError('conflict', 'I am already asleep — a sleep cycle is running.');
    await resolveBackgroundModel(this.deps);
    const { day } = await this.boundaries();
    const started = await this.start_('manual', day);
    // Another process's cycle holds the lock (a second window on the same data folder, say).
    if (started.runId === null && started.busy) throw new ApiError('conflict', started.busy);
    return { runId: started.runId, sleepDay: started.sleepDay };
  }

  /** Stops the running cycle at the next step boundary (a call in flight is cancelled). */
  stop(reason = 'stopped by you'): boolean {
    if (!this.running) return false;
    this.running.controller.abort(reason);
    return true;
  }

  private async start_(trigger: SleepTrigger, day: string): Promise<{ runId: number | null; sleepDay: string; busy?: string }> {
    const controller = new AbortController();
    let busy: string | undefined;
    let firstEvent: (runId: number | null) => void = () => {};
    const started = new Promise<number | null>((resolve) => (firstEvent = resolve));
    const running: Running = { controller, progress: null, done: Promise.resolve() };
    this.running = running;
    running.done = (async () => {
      try {
        const result = await runCycle(this.deps.db, this.steps, {
          sleepDay: day,
          trigger,
          signal: controller.signal,
          // Recorded by the clock the scheduler reads boundaries from (tests move it).
          startedAt: this.deps.now(),
          onProgress: (p) => {
            running.progress = { ...p, sleepDay: day };
            firstEvent(p.runId);
            this.deps.events.emit('sleep.progress', running.progress);
          },
        });
        firstEvent(result.runId);
        this.deps.log('info', `sleep: run ${result.runId} for ${day} ${result.status}${result.error ? ` (${result.error})` : ''}`);
        this.deps.events.emit('sleep.finished', { runId: result.runId, sleepDay: day, status: result.status, error: result.error });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof SleepBusyError) busy = message;
        firstEvent(null);
        if (!(err instanceof SleepBusyError)) this.deps.log('error', `sleep: the cycle broke: ${message}`);
        this.deps.events.emit('sleep.finished', { runId: running.progress?.runId ?? 0, sleepDay: day, status: 'failed', error: message });
      } finally {
        if (this.running === running) this.running = null;
      }
    })();
    const runId = await started;
    return { runId, sleepDay: day, ...(busy ? { busy } : {}) };
  }

  async status(): Promise<SleepStatus> {
    const { day, nextBoundary } = await this.boundaries();
    const s = await this.deps.settings.get();
    const cycleDay = this.running?.progress?.sleepDay ?? day;
    const used = await budgetUse(this.deps.db, cycleDay);
    let blocked: string | null = null;
    let blockedCode: SleepStatus['blockedCode'] = null;
    try {
      await resolveBackgroundModel(this.deps);
    } catch (err) {
      blocked = err instanceof Error ? err.message : String(err);
      blockedCode = err instanceof ApiError ? err.code : 'internal';
    }
    const [lastRun] = await sleepRuns(this.deps.db, 1, this.dependsOn());
    return {
      running: this.running?.progress ?? null,
      lastRun: lastRun ?? null,
      nextAt: nextBoundary.toISOString(),
      sleepDay: day,
      budget: { calls: used.calls, tokens: used.tokens, maxCalls: s.sleep.maxCallsPerNight, maxTokens: s.sleep.maxTokensPerNight },
      blocked,
      blockedCode,
    };
  }

  dependsOn(): Map<string, string[]> {
    return new Map(this.steps.map((s) => [s.id, s.dependsOn]));
  }

  /** Waits for the running cycle, if any (tests, benchmarks). */
  async idle(): Promise<void> {
    await this.running?.done;
  }

  /**
   * At launch: a night left 'running' by a process that died (kill -9, power loss) is marked
   * interrupted now, so the status does not show it running; the next cycle resumes its steps.
   */
  async recover(): Promise<number[]> {
    return releaseAbandoned(this.deps.db);
  }

  /** Stops the timer and the running cycle (at its next step boundary or sooner) and waits for it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stop(CLOSING);
    await this.running?.done;
  }
}
