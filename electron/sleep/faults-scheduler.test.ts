// The sleep scheduler on a clock the test moves (when a night is due, the app away, a clock that
// misbehaves, closing and stopping) and the cycle lock, on real PGlite on disk.
// Harness: testing/faults-harness.ts.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiEvents } from '../../shared/api.js';
import { openDatabase, type Database } from '../db/open.js';
import { INTERRUPTED, type SleepStep } from './dag.js';
import { CLOSING } from './service.js';
import { copyDataDir, seedMessages, sleepService, type ServiceHarness } from './testing/fixture.js';
import { WAIT_MS, fake, scratchDir, within, model, routes, fixture, useFaultsHarness } from './testing/faults-harness.js';

useFaultsHarness();

// ---- 2 & 3. The scheduler on a clock the test moves; the lock ----

describe('the scheduler and the lock', () => {
  let db: Database;
  let dir: string;
  let providerId: string;
  let clock = new Date('2026-01-15T12:00:00Z');
  const services: ServiceHarness[] = [];

  beforeAll(async () => {
    // A copy of the fixture opens faster than the template loads; each test truncates what it needs empty.
    dir = copyDataDir(fixture, scratchDir());
    db = await openDatabase(dir);
    const h = await sleepService(db, dir, { now: () => clock });
    providerId = (await h.deps.providers.save({ kind: 'openai-compatible', name: 'fake-scheduler', baseUrl: fake.baseUrl, model: 'fake-scheduler' })).id;
  });

  beforeEach(async () => {
    // Each service is built at a clock before any test's ticks (a clock that starts in the future is a test of its own).
    clock = new Date('2026-01-01T00:00:00Z');
    // TRUNCATE, not DELETE: diary blocks are append-only, and a truncate is not a row delete.
    await db.exec(`TRUNCATE conversations, sleep_runs, settings, memories CASCADE`);
  });

  afterEach(async () => {
    await Promise.all(services.splice(0).map((h) => h.service.close()));
  });

  afterAll(async () => {
    await db?.close();
  });

  /**
   * Two steps that do no real work, so whatever chat waits stays waiting: only the scheduler's memory of
   * what it ran stops it. With `readAll`, step a marks all chat read, as light sleep would.
   */
  function quietSteps(o: { failB?: () => boolean; gate?: Promise<void>; readAll?: boolean } = {}): SleepStep[] {
    return [
      {
        id: 'a',
        dependsOn: [],
        async run() {
          if (o.readAll) {
            await db.query(
              `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq)
               SELECT 'light-sleep', conversation_id, max(seq) FROM messages GROUP BY conversation_id
               ON CONFLICT (step_id, conversation_id) DO UPDATE SET last_seq = EXCLUDED.last_seq`,
            );
          }
          return { n: 1 };
        },
      },
      {
        id: 'b',
        dependsOn: ['a'],
        async run(ctx) {
          if (o.gate) {
            // Waits for the test, or for a stop (the app closing), whichever comes first.
            await new Promise<void>((resolve) => {
              void o.gate!.then(resolve);
              ctx.signal.addEventListener('abort', () => resolve(), { once: true });
            });
          }
          if (o.failB?.()) throw new Error('the model connection failed');
          return { n: 1 };
        },
      },
    ];
  }

  async function scheduler(o: { idleMs?: number; retryMs?: number; steps?: Parameters<typeof sleepService>[2]['steps'] | null } = {}): Promise<ServiceHarness> {
    // steps: null means the real night (light sleep and the rest, with the loopback model).
    const h = await sleepService(db, dir, {
      now: () => clock,
      steps: o.steps === null ? undefined : (o.steps ?? quietSteps()),
      idleMs: o.idleMs,
      retryMs: o.retryMs,
    });
    await h.settings.update({ timeZone: 'Europe/Berlin', chatProviderId: providerId });
    services.push(h);
    return h;
  }

  /** Moves the clock and runs one scheduler check, waiting for the cycle it started (if any). */
  async function tickAt(h: ServiceHarness, iso: string) {
    clock = new Date(iso);
    const started = await h.service.tick();
    await within(h.service.idle(), WAIT_MS, 'the cycle to finish');
    return started;
  }

  async function ticksBetween(h: ServiceHarness, fromIso: string, toIso: string, everyMin: number): Promise<void> {
    for (let t = Date.parse(fromIso); t <= Date.parse(toIso); t += everyMin * 60_000) await tickAt(h, new Date(t).toISOString());
  }

  async function runRows() {
    return (
      await db.query<{ id: number; sleep_day: string; trigger: string; status: string; started_at: Date; error: string | null }>(
        `SELECT id::int AS id, sleep_day, trigger, status, started_at, error FROM sleep_runs ORDER BY id`,
      )
    ).rows.map((r) => ({ ...r, started_at: r.started_at.toISOString() }));
  }

  /** Chat at these instants (UTC ISO), one short message each. */
  async function chatAt(...instants: string[]): Promise<void> {
    await seedMessages(
      db,
      instants.map((at, i) => ({
        conversation: `Chat ${at.slice(0, 10)}`,
        at: new Date(at),
        role: 'user' as const,
        content: `Message ${i + 1}: the garden is coming along.`,
      })),
    );
  }

  describe('when a night is due', () => {
    it('waits for the sleep time, then sleeps once on the day that ended — and says when the next is', async () => {
      await chatAt('2026-01-14T19:00:00Z'); // 20:00 in Berlin (CET, UTC+1)
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T00:30:00Z')).toBeNull(); // 01:30: the 14th has not ended
      expect(await tickAt(h, '2026-01-15T00:59:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:01:00Z')).toMatchObject({ sleepDay: '2026-01-14' }); // 02:01
      expect(await tickAt(h, '2026-01-15T01:02:00Z')).toBeNull(); // already slept (the quiet steps left the chat unread)
      expect(await tickAt(h, '2026-01-15T22:00:00Z')).toBeNull();
      expect(await runRows()).toEqual([
        expect.objectContaining({ sleep_day: '2026-01-14', trigger: 'schedule', status: 'done', started_at: '2026-01-15T01:01:00.000Z' }),
      ]);
      const status = await h.service.status();
      expect(status).toMatchObject({ running: null, sleepDay: '2026-01-15', nextAt: '2026-01-16T01:00:00.000Z', blocked: null });
      expect(status.lastRun).toMatchObject({ sleepDay: '2026-01-14', trigger: 'schedule', status: 'done' });
    });

    it('does not run with nothing to consolidate, nor with automatic sleep off', async () => {
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull(); // nothing said yet
      await chatAt('2026-01-14T19:00:00Z');
      await h.settings.update({ sleep: { auto: false } });
      expect(await tickAt(h, '2026-01-15T01:10:00Z')).toBeNull();
      // Chat after the boundary is tomorrow night's, not tonight's.
      await h.settings.update({ sleep: { auto: true } });
      await db.exec(`TRUNCATE conversations CASCADE`);
      await chatAt('2026-01-15T01:30:00Z');
      expect(await tickAt(h, '2026-01-15T01:40:00Z')).toBeNull();
      expect(await runRows()).toEqual([]);
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
    });

    it('waits while the person is chatting, then sleeps once they have been quiet for idleMs', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      clock = new Date('2026-01-15T01:00:00Z');
      const h = await scheduler({ idleMs: 10 * 60_000 }); // launched at 02:00: launching counts as activity
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull();
      clock = new Date('2026-01-15T01:08:00Z');
      h.service.touch(); // a message sent
      expect(await tickAt(h, '2026-01-15T01:15:00Z')).toBeNull();
      clock = new Date('2026-01-15T01:16:00Z');
      h.events.emit('chat.delta', { conversationId: 'c', messageId: 'm', text: '…' }); // a reply streaming
      expect(await tickAt(h, '2026-01-15T01:25:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:26:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect((await runRows()).map((r) => r.started_at)).toEqual(['2026-01-15T01:26:00.000Z']);
    });

    it('retries a failed automatic night only after retryMs, resuming the steps it finished', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let failing = true;
      // Step a reads all the chat: what is left to do is the failed step, not unread messages.
      const h = await scheduler({ retryMs: 60 * 60_000, steps: quietSteps({ failB: () => failing, readAll: true }) });
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T01:30:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T02:04:00Z')).toBeNull();
      failing = false;
      expect(await tickAt(h, '2026-01-15T02:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T03:30:00Z')).toBeNull(); // done now: nothing more tonight
      const [first, second] = await runRows();
      expect(first).toMatchObject({ status: 'failed', error: 'b failed' });
      expect(second).toMatchObject({ status: 'done', trigger: 'catch-up', sleep_day: '2026-01-14' });
      const carried = (await db.query<{ reason: string }>(`SELECT reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'a'`, [second!.id])).rows[0];
      expect(carried?.reason).toBe(`done in run ${first!.id}`);
    });
  });

  describe('when the app was away', () => {
    it('opened three days late: one catch-up run reads all three days, an anchor for each', async () => {
      routes.set('fake-scheduler', model);
      await chatAt('2026-01-14T19:00:00Z', '2026-01-15T19:00:00Z', '2026-01-16T19:00:00Z', '2026-01-16T20:00:00Z');
      // The real night this time: light sleep and the rest, with the loopback model.
      const h = await scheduler({ steps: null });
      expect(await tickAt(h, '2026-01-19T08:00:00Z')).toMatchObject({ sleepDay: '2026-01-18' });
      expect(await tickAt(h, '2026-01-19T08:10:00Z')).toBeNull();
      expect(await runRows()).toEqual([expect.objectContaining({ trigger: 'catch-up', status: 'done', sleep_day: '2026-01-18' })]);
      const anchors = (await db.query<{ day: string }>(`SELECT day FROM diary_blocks WHERE kind = 'anchor' ORDER BY day`)).rows.map((r) => r.day);
      expect(anchors).toEqual(['2026-01-14', '2026-01-15', '2026-01-16']);
      expect((await db.query(`SELECT 1 FROM sleep_watermarks`)).rows).toHaveLength(3);
    });

    it('a laptop asleep for a week: one catch-up when it wakes, then the nightly rhythm', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-14T22:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-21T07:00:00Z')).toMatchObject({ sleepDay: '2026-01-20' });
      expect(await tickAt(h, '2026-01-21T07:10:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-21T18:00:00Z')).toBeNull();
      await chatAt('2026-01-21T19:00:00Z');
      expect(await tickAt(h, '2026-01-22T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-21' });
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger])).toEqual([
        ['2026-01-20', 'catch-up'],
        ['2026-01-21', 'schedule'],
      ]);
    });
  });

  describe('when the clock misbehaves', () => {
    it('a time zone change moves the boundary (Berlin → Tokyo) without a second night for the same day', async () => {
      await chatAt('2026-01-14T15:00:00Z'); // 16:00 in Berlin
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-14T17:30:00Z')).toBeNull(); // 18:30 in Berlin: the 14th goes on
      // Flying east: in Tokyo it is 02:30 on the 15th, so the 14th has ended there.
      await h.settings.update({ timeZone: 'Asia/Tokyo' });
      expect(await tickAt(h, '2026-01-14T17:31:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      // Slept on: Berlin's 02:00 (01:00 UTC) means nothing in Tokyo, where it is 10:00 on the 15th.
      expect(await tickAt(h, '2026-01-14T20:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toBeNull();
      // The next boundary is Tokyo's 02:00 (17:00 UTC).
      await chatAt('2026-01-15T05:00:00Z');
      expect(await tickAt(h, '2026-01-15T16:55:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-15T17:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
      expect(await h.service.status()).toMatchObject({ nextAt: '2026-01-16T17:00:00.000Z' });
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([
        ['2026-01-14', 'schedule', '2026-01-14T17:31:00.000Z'],
        ['2026-01-15', 'schedule', '2026-01-15T17:05:00.000Z'],
      ]);
    });

    it('the spring-forward night (Berlin, 29 March, no 02:00): exactly one cycle, when the clocks jump', async () => {
      await chatAt('2026-03-28T20:00:00Z', '2026-03-29T00:30:00Z');
      const h = await scheduler();
      await ticksBetween(h, '2026-03-28T23:00:00Z', '2026-03-29T04:00:00Z', 10);
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([['2026-03-28', 'schedule', '2026-03-29T01:00:00.000Z']]);
    });

    it('the fall-back night (Berlin, 25 October, 02:00 twice): exactly one cycle, at the first 02:00', async () => {
      await chatAt('2026-10-24T18:00:00Z', '2026-10-24T23:30:00Z');
      const h = await scheduler();
      await ticksBetween(h, '2026-10-24T23:00:00Z', '2026-10-25T03:00:00Z', 10);
      // More chat between the two 02:00s does not make the second one a new boundary.
      await chatAt('2026-10-25T00:40:00Z');
      await ticksBetween(h, '2026-10-25T00:50:00Z', '2026-10-25T02:00:00Z', 10);
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger, r.started_at])).toEqual([['2026-10-24', 'schedule', '2026-10-25T00:00:00.000Z']]);
    });

    it('a clock that jumps back does not sleep the same day twice, nor break', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      const h = await scheduler();
      expect(await tickAt(h, '2026-01-15T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T00:30:00Z')).toBeNull(); // back before 02:00
      expect(await tickAt(h, '2026-01-14T21:00:00Z')).toBeNull(); // back to the evening before
      expect(await h.service.status()).toMatchObject({ running: null, sleepDay: '2026-01-14', nextAt: '2026-01-15T01:00:00.000Z' });
      expect(await tickAt(h, '2026-01-15T01:10:00Z')).toBeNull(); // past 02:00 again: already slept
      await chatAt('2026-01-15T19:00:00Z');
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
      expect((await runRows()).map((r) => r.sleep_day)).toEqual(['2026-01-14', '2026-01-15']);
    });

    it('a clock that was a week ahead at launch and is then corrected: the due night still runs', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      clock = new Date('2026-01-22T10:00:00Z'); // wrong at launch
      const h = await scheduler({ idleMs: 2 * 60_000 });
      expect(await tickAt(h, '2026-01-15T08:00:00Z')).toBeNull(); // corrected: quiet for idleMs from now on
      expect(await tickAt(h, '2026-01-15T08:03:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      expect(await tickAt(h, '2026-01-15T08:10:00Z')).toBeNull();
      expect((await runRows()).map((r) => [r.sleep_day, r.trigger])).toEqual([['2026-01-14', 'catch-up']]);
    });
  });

  describe('when the app closes, or the person stops the night', () => {
    it('a night stopped by closing the app is resumed by the next launch’s first check', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // Step a reads all the chat: what is left to do is step b, not unread messages.
      const first = await scheduler({ steps: quietSteps({ gate, readAll: true }) });
      const bRunning = new Promise<void>((resolve) =>
        first.events.on((event, p) => event === 'sleep.progress' && p.stepId === 'b' && p.status === 'running' && resolve()),
      );
      clock = new Date('2026-01-15T01:05:00Z');
      expect(await first.service.tick()).toMatchObject({ sleepDay: '2026-01-14' });
      await within(bRunning, WAIT_MS, 'step b to start');
      await within(first.service.close(), WAIT_MS, 'the service to close');
      release();
      const [stopped] = await runRows();
      expect(stopped).toMatchObject({ status: 'stopped', error: CLOSING });
      const stoppedSteps = (
        await db.query<{ step_id: string; status: string; reason: string | null }>(
          `SELECT step_id, status, reason FROM sleep_steps WHERE run_id = $1 ORDER BY step_id`,
          [stopped!.id],
        )
      ).rows;
      expect(stoppedSteps).toEqual([
        { step_id: 'a', status: 'done', reason: null },
        { step_id: 'b', status: 'stopped', reason: null },
      ]);

      const next = await scheduler({ steps: quietSteps({ readAll: true }) }); // the next launch, an hour later
      expect(await tickAt(next, '2026-01-15T02:05:00Z')).toMatchObject({ sleepDay: '2026-01-14' });
      const [, resumed] = await runRows();
      expect(resumed).toMatchObject({ status: 'done', sleep_day: '2026-01-14' });
      const carried = (await db.query<{ reason: string }>(`SELECT reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'a'`, [resumed!.id])).rows[0];
      expect(carried?.reason).toBe(`done in run ${stopped!.id}`);
      expect(await tickAt(next, '2026-01-15T02:10:00Z')).toBeNull();
    });

    it('a night the person stopped waits for the next night', async () => {
      await chatAt('2026-01-14T19:00:00Z');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const h = await scheduler({ steps: quietSteps({ gate }) });
      const bRunning = new Promise<void>((resolve) =>
        h.events.on((event, p) => event === 'sleep.progress' && p.stepId === 'b' && p.status === 'running' && resolve()),
      );
      clock = new Date('2026-01-15T01:05:00Z');
      await h.service.tick();
      await within(bRunning, WAIT_MS, 'step b to start');
      expect(h.service.stop()).toBe(true);
      release();
      await within(h.service.idle(), WAIT_MS, 'the stopped cycle');
      expect(await runRows()).toEqual([expect.objectContaining({ status: 'stopped', error: 'stopped by you' })]);
      expect(await tickAt(h, '2026-01-15T05:00:00Z')).toBeNull();
      expect(await tickAt(h, '2026-01-16T01:05:00Z')).toMatchObject({ sleepDay: '2026-01-15' });
    });
  });

  describe('the lock', () => {
    it('two services on one database: the second is refused while the first runs, then runs', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const a = await scheduler({ steps: quietSteps({ gate }) });
      const b = await scheduler();
      const refusals: ApiEvents['sleep.finished'][] = [];
      b.events.on((event, payload) => event === 'sleep.finished' && refusals.push(payload));

      const first = await a.service.now();
      expect(first.runId).not.toBeNull();
      // "Sleep now" says why it cannot: another cycle holds the lock.
      await expect(b.service.now()).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/already running .*held by this process/) });
      await within(b.service.idle(), WAIT_MS, 'the refused start');
      expect(refusals).toEqual([
        expect.objectContaining({
          status: 'failed',
          error: expect.stringMatching(new RegExp(`already running \\(run ${first.runId} .*held by this process\\)`)),
        }),
      ]);
      // The refusal touched nothing: one run, still running, and both services say so.
      expect((await runRows()).map((r) => [r.id, r.status])).toEqual([[first.runId, 'running']]);
      expect((await a.service.status()).running).toMatchObject({ runId: first.runId });
      expect(await b.service.status()).toMatchObject({ running: null, lastRun: { id: first.runId, status: 'running' } });
      // A launch-time sweep leaves a live holder alone.
      expect(await b.service.recover()).toEqual([]);

      release();
      await within(a.service.idle(), WAIT_MS, 'the first cycle');
      const second = await b.service.now();
      await within(b.service.idle(), WAIT_MS, 'the second cycle');
      expect((await runRows()).map((r) => [r.id, r.status])).toEqual([
        [first.runId, 'done'],
        [second.runId, 'done'],
      ]);
    });

    it('a run left by a dead process, or with a heartbeat long gone, is taken over and its steps resumed', async () => {
      const h = await scheduler();
      const day = (await h.service.status()).sleepDay;
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // a pid that certainly is not running now
      const holder = async (pid: number, heartbeatAgo: string) => {
        const id = (
          await db.query<{ id: number }>(
            `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, heartbeat_at)
             VALUES ($1, 'schedule', $2, $3, now() - $4::interval) RETURNING id::int AS id`,
            [day, pid, os.hostname(), heartbeatAgo],
          )
        ).rows[0]!.id;
        await db.query(`INSERT INTO sleep_steps (run_id, step_id, status, stats) VALUES ($1, 'a', 'done', '{"n": 7}'), ($1, 'b', 'running', NULL)`, [id]);
        return id;
      };

      // Alive and beating: refused.
      const live = await holder(process.pid, '1 second');
      await expect(h.service.now()).rejects.toMatchObject({ code: 'conflict' });
      await within(h.service.idle(), WAIT_MS, 'the refused start');
      // Alive, but silent for two hours: a reused pid, not a cycle. Taken over; step a is not redone.
      await db.query(`UPDATE sleep_runs SET heartbeat_at = now() - interval '2 hours' WHERE id = $1`, [live]);
      const takeover = await h.service.now();
      await within(h.service.idle(), WAIT_MS, 'the takeover');
      // Dead: marked interrupted at launch (recover), then resumed.
      const gone = await holder(dead, '1 second');
      expect(await h.service.recover()).toEqual([gone]);
      expect((await h.service.status()).lastRun).toMatchObject({ id: gone, status: 'failed', error: INTERRUPTED });
      const resumed = await h.service.now();
      await within(h.service.idle(), WAIT_MS, 'the resume');

      const rows = (
        await db.query<{ run_id: number; step_id: string; status: string; reason: string | null; error: string | null }>(
          `SELECT run_id::int AS run_id, step_id, status, reason, error FROM sleep_steps ORDER BY run_id, step_id`,
        )
      ).rows;
      expect(rows).toEqual([
        { run_id: live, step_id: 'a', status: 'done', reason: null, error: null },
        { run_id: live, step_id: 'b', status: 'failed', reason: null, error: INTERRUPTED },
        { run_id: takeover.runId, step_id: 'a', status: 'done', reason: `done in run ${live}`, error: null },
        { run_id: takeover.runId, step_id: 'b', status: 'done', reason: null, error: null },
        { run_id: gone, step_id: 'a', status: 'done', reason: null, error: null },
        { run_id: gone, step_id: 'b', status: 'failed', reason: null, error: INTERRUPTED },
        { run_id: resumed.runId, step_id: 'a', status: 'done', reason: `done in run ${gone}`, error: null },
        { run_id: resumed.runId, step_id: 'b', status: 'done', reason: null, error: null },
      ]);
      expect((await runRows()).map((r) => [r.id, r.status, r.error])).toEqual([
        [live, 'failed', INTERRUPTED],
        [takeover.runId, 'done', null],
        [gone, 'failed', INTERRUPTED],
        [resumed.runId, 'done', null],
      ]);
    });
  });
});
