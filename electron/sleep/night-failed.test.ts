// A night that did not work says so, on real PGlite with the loopback model: a night of prose answers
// fails at light sleep in words and is not done (and a try with a sound model then finishes it); a
// night with some usable answers is done and counts its invalid chunk; a retry of the same sleep day
// reuses that day's safety copy while nothing changed, and failed retries never push out the good
// copies; deep sleep's contradiction round orders by time, comparing like with like; pin review
// proposes unpinning a pin carried for weeks and never cited. Harness: testing/cycle-harness.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTask } from '../../e2e/fake-llm/sleep-responder.js';
import type { FakeResponse } from '../../e2e/fake-llm/server.js';
import { openDatabase, type Database } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { runCycle, type SleepStep } from './dag.js';
import { decodeProposalReason } from './proposal-reasons.js';
import { deepSleepStep } from './steps/deep-sleep.js';
import { olderFirst } from './steps/deep-sleep/rounds.js';
import { reviewPins, CARRIED_PIN_DAYS, CARRIED_PIN_SHOWN } from './steps/deep-sleep/pins.js';
import { modelForRun } from './steps/deps.js';
import { snapshotStep } from './steps/simple.js';
import { listedId, stepDeps } from './testing/fixture.js';
import {
  TODAY,
  day,
  at,
  model,
  json,
  copyOf,
  seedDir,
  talk,
  longDir,
  closeHost,
  openHost,
  connect,
  night,
  stepOf,
  auditOf,
  anchorsOf,
  fake,
  useCycleHarness,
} from './testing/cycle-harness.js';
import { UNUSABLE_ANSWERS } from './usable.js';

useCycleHarness();

/** What a chatty model too small for the task answers: friendly prose, never the JSON asked for. */
const PROSE: FakeResponse = {
  kind: 'text',
  text: 'Sure! Here is a summary of the conversation: Mara talked about her cat Pixel and how she is settling in. Let me know if you need anything else!',
  chunks: 4,
};

describe('a night of prose answers', () => {
  it('fails at light sleep with words a person understands; the night is not done; tried again with a sound model it finishes', async () => {
    model.reset();
    const { dir } = await seedDir(({ conversations }) =>
      talk(conversations, 'Pixel', day(-1), [
        { who: 'Mara', text: 'I adopted a grey cat called Pixel from the shelter on Saturday.' },
        { who: 'Me', text: 'Welcome home, Pixel! How is she settling in?' },
        { who: 'Mara', text: 'She hides under the sofa, but she purred when I fed her.' },
      ]),
    );
    const o = await openHost(dir, { lowDisk: true });
    try {
      await connect(o.host);
      model.answer = (body) => (findTask(body) ? PROSE : undefined);
      const { event, run } = await night(o.host);
      expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
      expect(run.status).toBe('failed');
      const light = stepOf(run, 'light-sleep');
      expect(light).toMatchObject({ status: 'failed', error: UNUSABLE_ANSWERS });
      // The answer and its repair: two calls, both unusable, none failed on the wire.
      expect(light.stats).toMatchObject({ calls: 1, invalid_chunks: 1, memories_created: 0, unusable_answers: 2, failed_calls: 0 });
      for (const id of ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest']) {
        expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
      }
      expect((await auditOf(o.host, run.id)).map((a) => a.status)).toEqual(['invalid', 'invalid']);
      // What the Diary and Dreams read to say why they are empty.
      const status = await o.host.api['sleep.status']({});
      expect(status.lastRun).toMatchObject({ id: run.id, status: 'failed' });
      expect(await anchorsOf(o.host)).toEqual([]);

      // "Try again" once the model answers properly: the same day, finished, the diary written.
      model.reset();
      const again = await night(o.host);
      expect(again.event).toMatchObject({ status: 'done', error: null });
      expect(stepOf(again.run, 'light-sleep')).toMatchObject({ status: 'done', error: null });
      expect(stepOf(again.run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${run.id}` });
      expect((await anchorsOf(o.host)).length).toBe(1);
    } finally {
      await closeHost(o);
    }
  });

  it('a night with some usable answers is done and counts the invalid chunk', async () => {
    model.reset();
    // Two conversations of two ~250-character messages: at 1,024 tokens of context each is a call of its own.
    const { dir } = await seedDir(async ({ conversations }) => {
      await talk(conversations, 'Book club', day(-1), [
        {
          who: 'Mara',
          text: "I finally finished the long novel about the lighthouse keeper's daughter that Joana lent me last winter; the ending made me cry on the tram home, which was a little embarrassing with a whole school class watching me sniffle.",
        },
        {
          who: 'Me',
          text: "Books that move us in public are the ones we remember longest. What was it about the ending that hit you so hard — the father's letters, or the storm on the final night at the lighthouse, when nobody came?",
        },
      ]);
      await talk(
        conversations,
        'Cycling',
        day(-1),
        [
          {
            who: 'Mara',
            text: 'I cycled to the river market this morning before work and bought far too many apricots; the woman at the fruit stall remembered me from last week and gave me a small jar of her own apricot jam as a present.',
          },
          {
            who: 'Me',
            text: 'That is a lovely way to start a working day. Apricot jam from someone who grows the fruit herself is a real treasure — will you keep it for weekend breakfasts, or is it already half gone by now?',
          },
        ],
        14,
      );
    });
    const o = await openHost(dir, { lowDisk: true });
    try {
      await connect(o.host, { contextTokens: 1024 });
      // The first call's answer and its repair are prose; the other conversation's answer is sound.
      model.scripted.push({ purpose: 'light-sleep', reply: PROSE }, { purpose: 'light-sleep', reply: PROSE });
      const { event, run } = await night(o.host);
      expect(event).toMatchObject({ status: 'done', error: null });
      const light = stepOf(run, 'light-sleep');
      expect(light).toMatchObject({ status: 'done', error: null });
      expect(light.stats).toMatchObject({ calls: 2, invalid_chunks: 1, chunks_done: 1 });
      expect(light.stats).not.toHaveProperty('unusable_answers');
      expect((await auditOf(o.host, run.id, 'light-sleep')).map((a) => a.status)).toEqual(['invalid', 'invalid', 'ok']);
      expect((await anchorsOf(o.host)).length).toBe(1);
    } finally {
      await closeHost(o);
    }
  });
});

describe('safety copies on retries', () => {
  let dir: string;
  let db: Database;
  // The dump itself is PGlite's (cycle-night takes a real one); here only what is kept counts.
  const dumping = { dumpDataDir: async () => new Blob([Buffer.from([0x1f, 0x8b, 0x08, 0x00])]) } as unknown as Database;
  const files = () => fs.readdirSync(path.join(dir, 'snapshots')).sort();
  let snapshot: SleepStep;
  const boom: SleepStep = {
    id: 'after',
    dependsOn: ['snapshot'],
    async run() {
      throw new Error('deep sleep failed');
    },
  };
  let n = 0;
  /** A change to the data, so the next copy cannot be the last one again. */
  const change = async () => {
    await new MemoryStore(db).create({ type: 'world', content: `Mara planted tomato number ${++n} on the balcony.`, source: 'user', actor: 'person' });
  };

  beforeAll(async () => {
    dir = copyOf(longDir);
    db = await openDatabase(dir);
    snapshot = { ...snapshotStep(stepDeps(dumping, dir, { now: () => at(TODAY, 12), extra: { freeBytes: () => Number.MAX_SAFE_INTEGER } })), dependsOn: [] };
  });

  afterAll(async () => {
    if (!db.closed) await db.close();
  });

  it('a retry of the same sleep day reuses its copy while nothing changed, and takes a new one once something did', async () => {
    const first = await runCycle(db, [snapshot, boom], { sleepDay: day(-30), trigger: 'manual' });
    expect(first.status).toBe('failed');
    // The failed night is resumed: its copy was carried over with the step.
    const resumed = await runCycle(db, [snapshot, boom], { sleepDay: day(-30), trigger: 'manual' });
    expect(files()).toEqual([`${day(-30)}-run${first.runId}.tar.gz`]);
    // Run again in full (the steps before it finished), nothing changed: the day's copy is reused.
    const full = await runCycle(db, [snapshot], { sleepDay: day(-30), trigger: 'manual' });
    expect(full.status).toBe('done');
    const again = await runCycle(db, [snapshot], { sleepDay: day(-30), trigger: 'manual' });
    expect(again.status).toBe('done');
    const step = (await db.query<{ stats: Record<string, number> }>(`SELECT stats FROM sleep_steps WHERE run_id = $1 AND step_id = 'snapshot'`, [again.runId]))
      .rows[0]!;
    expect(step.stats).toEqual({ reused: 1, copy_of_run: first.runId });
    expect(resumed.status).toBe('failed');
    expect(files()).toEqual([`${day(-30)}-run${first.runId}.tar.gz`]);
    // Something changed: a new copy; the reused one, which finished nights stood on, is kept as good.
    await change();
    const changed = await runCycle(db, [snapshot], { sleepDay: day(-30), trigger: 'manual' });
    expect(files()).toEqual([`${day(-30)}-run${first.runId}.tar.gz`, `${day(-30)}-run${changed.runId}.tar.gz`].sort());
  });

  it('failed retries never push out the last good copies', async () => {
    for (const f of files()) fs.rmSync(path.join(dir, 'snapshots', f));
    const good: string[] = [];
    for (let i = 1; i <= 7; i++) {
      await change();
      const r = await runCycle(db, [snapshot], { sleepDay: day(i), trigger: 'schedule' });
      expect(r.status).toBe('done');
      good.push(`${day(i)}-run${r.runId}.tar.gz`);
    }
    expect(files()).toEqual([...good].sort());
    // The next night fails after its copy (a new night's copy takes the oldest good one's place, as any night's does)…
    await change();
    const failedFirst = await runCycle(db, [snapshot, boom], { sleepDay: day(8), trigger: 'schedule' });
    expect(failedFirst.status).toBe('failed');
    // …retried the same day, it carries its copy over: no second copy…
    const retried = await runCycle(db, [snapshot, boom], { sleepDay: day(8), trigger: 'manual' });
    expect(retried.status).toBe('failed');
    expect(files()).toEqual([...good.slice(1), `${day(8)}-run${failedFirst.runId}.tar.gz`].sort());
    // …and four more nights fail after it, each after a change (so each takes a copy of its own).
    let last = '';
    for (let i = 9; i <= 12; i++) {
      await change();
      const r = await runCycle(db, [snapshot, boom], { sleepDay: day(i), trigger: 'schedule' });
      expect(r.status).toBe('failed');
      last = `${day(i)}-run${r.runId}.tar.gz`;
    }
    // The six newest good copies are all there; of the failed ones only the latest.
    expect(files()).toEqual([...good.slice(1), last].sort());
  });
});

describe('deep sleep: order by time, and pins carried for weeks', () => {
  it('compares like with like: valid-from dates only when both have one, else when each was written', () => {
    const written = (d: string, validFrom: string | null = null) => ({ createdAt: `${d}T10:00:00.000Z`, validFrom });
    // Written first, but true from a later date than the other's *creation*: still the older one.
    expect(olderFirst(written('2026-01-01', '2026-06-01'), written('2026-03-01'))).toBeLessThan(0);
    expect(olderFirst(written('2026-03-01'), written('2026-01-01', '2026-06-01'))).toBeGreaterThan(0);
    // Both with a valid-from date: those decide, whatever the writing order.
    expect(olderFirst(written('2026-01-01', '2026-06-01'), written('2026-03-01', '2025-01-01'))).toBeGreaterThan(0);
    expect(olderFirst(written('2026-01-01', '2026-06-01'), written('2026-01-01', '2026-06-01'))).toBe(0);
  });

  it('tells the model the order by time and corrects a supersede that has it backwards', async () => {
    model.reset();
    const { dir, value } = await seedDir(async ({ db, store }) => {
      // Both are new in the journal (the yoga one saved first), but by the clock the nurse one was written first:
      // which one is older is a matter of time, not of the order they are listed or reviewed in.
      const save = async (content: string) => {
        const r = await store.create({ type: 'world', content, entityNames: ['Mara'], source: 'user', actor: 'person' });
        expect(r.outcome).toBe('created');
        return r.memory.id;
      };
      const yoga = await save('Mara quit the hospital in Berlin and now teaches yoga by the river.');
      const nurse = await save('Mara works as a nurse at the city hospital in Berlin.');
      // The yoga memory was written in March, the nurse one in January: the yoga one is newer by time.
      await db.query(`UPDATE memories SET created_at = $2 WHERE id = $1`, [yoga, '2026-03-01T10:00:00Z']);
      await db.query(`UPDATE memories SET created_at = $2 WHERE id = $1`, [nurse, '2026-01-01T10:00:00Z']);
      return { yoga, nurse };
    });
    const db = await openDatabase(dir);
    try {
      const deps = stepDeps(db, dir, { now: () => at(TODAY, 12) });
      const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
      await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
      await deps.selfLayer.ensureDefaults();
      let prompt = '';
      // A model that believes the first listed memory is the new one and the rest are older.
      model.scripted.push({
        purpose: 'deep-sleep:contradictions',
        reply: (p) => {
          prompt = p;
          const group = p.split('### Group 1')[1] ?? '';
          const ids = group.split('\n').flatMap((l) => (/^\[#(\d+)\]/.exec(l.trim()) ? [Number(/^\[#(\d+)\]/.exec(l.trim())![1])] : []));
          return json({ operations: [{ op: 'supersede', older: ids[1], newer: ids[0], reason: 'the first one is the new one' }] });
        },
      });
      const r = await runCycle(db, [{ ...deepSleepStep(deps, modelForRun(deps)), dependsOn: [] }], { sleepDay: day(-1), trigger: 'manual' });
      expect(r.status).toBe('done');
      expect(prompt).toContain('oldest first');
      expect(prompt).toContain('matter of time');
      // Listed oldest first by time: the nurse memory (January) before the yoga one (March).
      const group = prompt.split('### Group 1')[1]!;
      expect(group.indexOf(`[#${value.nurse}]`)).toBeLessThan(group.indexOf(`[#${value.yoga}]`));
      expect(listedId(prompt, 'Mara works as a nurse')).toBe(value.nurse);
      // The model got the order backwards (it took the first listed for the new one): the newer by time wins.
      const store = new MemoryStore(db);
      const nurse = (await store.get(value.nurse)).memory;
      const yoga = (await store.get(value.yoga)).memory;
      expect(nurse).toMatchObject({ status: 'superseded', supersededBy: value.yoga });
      expect(yoga.status).toBe('active');
      const stats = (await db.query<{ stats: Record<string, number> }>(`SELECT stats FROM sleep_steps WHERE run_id = $1`, [r.runId])).rows[0]!.stats;
      expect(stats).toMatchObject({ superseded: 1, reordered: 1 });
    } finally {
      await db.close();
    }
  });

  it('proposes unpinning a pin carried for weeks and shown many times but never cited; a recent or cited pin is left alone', async () => {
    const { dir, value } = await seedDir(async ({ db, store }) => {
      const save = async (content: string) => (await store.create({ type: 'world', content, pinned: true, source: 'user', actor: 'person' })).memory.id;
      const carried = await save('Mara prefers tea to coffee in the morning.');
      const fresh = await save('Mara is learning Portuguese verbs.');
      const cited = await save("Mara's cat is called Pixel.");
      const rarelyShown = await save('Mara grew up near the sea.');
      // Pinned 30 days ago (the journal says when), put before the model 50 times, never cited.
      await db.query(`UPDATE memory_changes SET created_at = now() - interval '30 days' WHERE memory_id = ANY($1::bigint[])`, [[carried, cited, rarelyShown]]);
      await db.query(`UPDATE memories SET injected_count = 50, updated_at = now() - interval '30 days' WHERE id = ANY($1::bigint[])`, [
        [carried, fresh, cited],
      ]);
      await db.query(`UPDATE memories SET injected_count = 3, updated_at = now() - interval '30 days' WHERE id = $1`, [rarelyShown]);
      await db.query(`UPDATE memories SET reference_count = 2 WHERE id = $1`, [cited]);
      return { carried, fresh, cited, rarelyShown };
    });
    const db = await openDatabase(dir);
    try {
      expect(CARRIED_PIN_DAYS).toBe(21);
      expect(CARRIED_PIN_SHOWN).toBeLessThanOrEqual(50);
      const deps = stepDeps(db, dir, { now: () => new Date() });
      const run = (
        await db.query<{ id: number }>(
          `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, status) VALUES ($1, 'manual', 1, 'x', 'done') RETURNING id::int AS id`,
          [day(-1)],
        )
      ).rows[0]!.id;
      const added = await reviewPins(deps, {
        db,
        runId: run,
        stepId: 'deep-sleep',
        sleepDay: day(-1),
        trigger: 'manual',
        signal: new AbortController().signal,
        heartbeat: async () => {},
      });
      expect(added).toBe(1);
      const proposals = (
        await db.query<{ memory_id: number; action: string; reason: string }>(`SELECT memory_id::int AS memory_id, action, reason FROM sleep_proposals`)
      ).rows;
      expect(proposals.map((p) => ({ ...p, ...decodeProposalReason(p.reason) }))).toEqual([
        {
          memory_id: value.carried,
          action: 'unpin',
          reason: 'carried for 30 days and shown 50 times, never cited',
          reasonCode: { code: 'carried_uncited', days: 30, shown: 50 },
        },
      ]);
    } finally {
      await db.close();
    }
  });
});
