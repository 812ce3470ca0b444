// Whole nights on real PGlite through the host API: a full night over three days and three
// conversations (what every step writes, the diary's hiding, progress events), and packing a long
// conversation into a small context. Harness: testing/cycle-harness.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import {
  SLEEP_STEP_IDS,
  type ApiEvents,
  type ConversationSummary,
  type DiaryBlock,
  type Memory,
  type SleepProgressEvent,
  type SleepRun,
} from '../../shared/api.js';
import { nextEvent } from '../testing/host.js';
import { rejection } from '../testing/rejection.js';
import {
  TODAY,
  day,
  responder,
  model,
  said,
  copyOf,
  seedDir,
  talk,
  appendLines,
  LONG_TEXTS,
  longDir,
  Opened,
  closeHost,
  openHost,
  connect,
  night,
  stepOf,
  auditOf,
  promptOf,
  allMemories,
  anchorsOf,
  messagesOf,
  say,
  DEPENDANTS,
  useCycleHarness,
} from './testing/cycle-harness.js';
import { PATIENCE_MS } from '../testing/patience.js';

useCycleHarness();

describe('a full night over three days and three conversations', () => {
  const IDENTITY = 'I am Wren, a quiet companion who keeps a diary of the days I share with Mara.';
  const [d1, d2, d3] = [day(-3), day(-2), day(-1)];
  let A: Opened;
  let convs: { lisbon: string; garden: string; museum: string };
  let pinned: Memory;
  let firstRun: SleepRun;
  let firstNight: { before: ConversationSummary[]; messageIds: Set<string>; calls: number; event: ApiEvents['sleep.finished'] };

  beforeAll(async () => {
    model.reset();
    const seeded = await seedDir(async ({ conversations }) => {
      const lisbon = await talk(conversations, 'Lisbon trip', d1, [
        { who: 'Mara', text: 'I just booked a trip to Lisbon with my brother Tomas for the spring.' },
        { who: 'Me', text: 'That sounds wonderful! What are you most excited about?' },
        { who: 'Mara', text: 'Honestly the pastries at the old bakery near the river, I am so happy about it!' },
        { who: 'Me', text: 'I hope the weather is kind to you both.' },
      ]);
      await appendLines(
        conversations,
        lisbon,
        d2,
        [
          { who: 'Mara', text: 'My brother Tomas cancelled the Lisbon trip, I feel sad, a bit lost too.' },
          { who: 'Me', text: 'I am sorry, that sounds hard.' },
        ],
        9,
      );
      const garden = await talk(
        conversations,
        'Balcony garden',
        d2,
        [
          { who: 'Mara', text: 'The tomato seedlings on my balcony finally sprouted this morning.' },
          { who: 'Me', text: 'Congratulations! How many did you plant?' },
          { who: 'Mara', text: 'Twelve of them, in old yoghurt pots my neighbour Ines gave me.' },
          { who: 'Me', text: 'That is a lovely way to reuse them.' },
        ],
        15,
      );
      const museum = await talk(conversations, 'Archive project', d3, [
        { who: 'Mara', text: 'My manager Petra asked me to lead the new archive project at the museum.' },
        { who: 'Me', text: 'That is great news — you have wanted this for a long time.' },
        { who: 'Mara', text: 'Proud, yes, but worried about the deadline in February.' },
        { who: 'Me', text: 'We can plan it together step by step.' },
      ]);
      return { lisbon, garden, museum };
    });
    convs = seeded.value;
    A = await openHost(seeded.dir);
    await A.host.api['self.update']({ key: 'identity', content: IDENTITY });
    await connect(A.host);
    pinned = (await A.host.api['memories.create']({ type: 'world', content: "Mara's birthday is on the fourteenth of July.", pinned: true })).memory;

    const before = await A.host.api['conversations.list']({});
    const messageIds = new Set<string>();
    for (const c of before) for (const m of await messagesOf(A.host, c.id)) messageIds.add(m.id);
    const asked = model.tasks.length;
    const { event, run } = await night(A.host);
    firstRun = run;
    firstNight = { before, messageIds, calls: model.tasks.length - asked, event };
  });

  afterAll(() => closeHost(A));

  it('does every step: one light-sleep call for three sleep days, memories with sources, anchors, imprints, narratives, a dream, the mood series and a digest, every call audited', async () => {
    const { before, messageIds, calls, event } = firstNight;
    const run = firstRun;
    expect(before).toHaveLength(3);
    expect(messageIds.size).toBe(14);
    expect(event).toMatchObject({ status: 'done', error: null, sleepDay: TODAY });
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual(SLEEP_STEP_IDS.map((id) => [id, 'done']));

    // Light sleep: the whole fixture fits the context, so one call covers three days.
    const light = stepOf(run, 'light-sleep').stats!;
    expect(light).toMatchObject({
      calls: 1,
      days: 3,
      conversations: 3,
      messages: 14,
      chunks_done: 1,
      invalid_chunks: 0,
      anchors: 4,
      imprints: 4,
      narratives: 3,
    });

    // Memories: written by light sleep, naming who they are about, pointing at real messages.
    const extracted = (await allMemories(A.host)).filter((m) => m.source === 'light-sleep');
    expect(extracted.length).toBe(light.memories_created);
    expect(extracted.length).toBeGreaterThanOrEqual(4);
    for (const m of extracted) {
      expect(m.entityNames.length).toBeGreaterThan(0);
      expect(m.sourceMessageIds.length).toBeGreaterThan(0);
      for (const id of m.sourceMessageIds) expect(messageIds.has(id)).toBe(true);
    }
    expect(extracted.some((m) => m.entityNames.includes('Mara'))).toBe(true);

    // The diary: one anchor per conversation and sleep day, with mood; imprints; one narrative a day.
    const days = await A.host.api['diary.days']({});
    expect(days.map((d) => d.day)).toEqual([d3, d2, d1]);
    const byDay = new Map(days.map((d) => [d.day, d]));
    expect(byDay.get(d1)!.anchors.map((a) => a.conversationId)).toEqual([convs.lisbon]);
    expect(
      byDay
        .get(d2)!
        .anchors.map((a) => a.conversationId)
        .sort(),
    ).toEqual([convs.lisbon, convs.garden].sort());
    expect(byDay.get(d3)!.anchors.map((a) => a.conversationId)).toEqual([convs.museum]);
    for (const d of days) {
      for (const a of d.anchors) {
        expect(a.mood!.valence).toBeGreaterThanOrEqual(-1);
        expect(a.mood!.valence).toBeLessThanOrEqual(1);
        expect(a.mood!.labels.length).toBeGreaterThan(0);
        expect(a.body.length).toBeGreaterThan(0);
      }
      expect(d.imprints.length).toBe(d.anchors.length);
      expect(d.narratives).toHaveLength(1);
      expect(d.narratives[0]!.title).toBeTruthy();
      expect(d.mood).not.toBeNull();
    }

    // The mood series: daily means of the anchors, with trends over the days before.
    const mood = await A.host.api['diary.mood']({});
    expect(mood.map((p) => [p.day, p.anchors])).toEqual([
      [d1, 1],
      [d2, 2],
      [d3, 1],
    ]);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const daily = [d1, d2, d3].map((d) => mean(byDay.get(d)!.anchors.map((a) => a.mood!.valence)));
    mood.forEach((p, i) => {
      expect(p.valence).toBeCloseTo(daily[i]!, 4);
      expect(p.valence7).toBeCloseTo(mean(daily.slice(0, i + 1)), 4);
      expect(p.valence30).toBeCloseTo(mean(daily.slice(0, i + 1)), 4);
    });

    // The dream: one, for the newest day the night wrote about.
    const dreams = await A.host.api['dreams.list']({});
    expect(dreams).toHaveLength(1);
    expect(dreams[0]).toMatchObject({ kind: 'dream', day: d3 });
    expect(dreams[0]!.body.length).toBeGreaterThan(50);

    // The digest lists exactly what light sleep added, and what the diary gained.
    const digest = (await A.host.api['sleep.digest']({}))!;
    expect(digest.runId).toBe(run.id);
    expect(
      digest.added
        .filter((c) => c.actor === 'light-sleep')
        .map((c) => c.memoryId)
        .sort(),
    ).toEqual(extracted.map((m) => m.id).sort());
    expect(digest.added.every((c) => c.action === 'create' && c.undoneBy === null)).toBe(true);
    expect(digest.diary).toEqual({ anchors: 4, imprints: 4, narratives: 3, dreams: 1 });
    expect(digest.summary).toMatch(/^While I slept I kept \d+ new memor/);

    // Every model call is one audit row, with its purpose, step, model, and the companion's identity.
    const audit = await auditOf(A.host, run.id);
    expect(audit.length).toBe(calls);
    expect(audit.filter((a) => a.purpose === 'light-sleep')).toHaveLength(1);
    expect(audit.filter((a) => a.purpose === 'dream')).toHaveLength(1);
    const deepCalls = audit.filter((a) => a.stepId === 'deep-sleep').length;
    expect(deepCalls).toBe(stepOf(run, 'deep-sleep').stats!.calls);
    expect(deepCalls).toBeLessThanOrEqual(6);
    for (const a of audit) {
      expect(a).toMatchObject({ status: 'ok', model: 'fake-model', error: null, runId: run.id });
      expect(a.stepId).toBe(a.purpose.split(':')[0]);
      const detail = await A.host.api['sleep.auditEntry']({ id: a.id });
      expect(detail.prompt).toContain(IDENTITY);
      expect(detail.prompt).toContain(pinned.content);
      expect(detail.prompt).toContain(`Task: ${a.purpose}`);
      expect(detail.response.length).toBe(a.responseChars);
    }

    // The cycle talked to the model outside every conversation: no message was added anywhere.
    const after = await A.host.api['conversations.list']({});
    expect(after.map((c) => [c.id, c.messageCount]).sort()).toEqual(before.map((c) => [c.id, c.messageCount]).sort());
  });

  it('writes a snapshot of the database before deep sleep', () => {
    const dir = path.join(A.dir, 'snapshots');
    const name = `${TODAY}-run${firstRun.id}.tar.gz`;
    expect(fs.readdirSync(dir)).toEqual([name]);
    const bytes = fs.readFileSync(path.join(dir, name));
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]); // gzip
    expect(bytes.length).toBe(stepOf(firstRun, 'snapshot').stats!.bytes);
    expect(bytes.length).toBeGreaterThan(100_000);
  });

  it('hides a diary block from the diary and from recall, and a hidden anchor leaves the mood series; showing it brings it back', async () => {
    const d2Anchors = (await A.host.api['diary.days']({})).find((d) => d.day === d2)!.anchors;
    expect(d2Anchors).toHaveLength(2);
    const [anchor, other] = d2Anchors as [DiaryBlock, DiaryBlock];
    const found = async () =>
      (await A.host.api['recall.search']({ query: anchor.body, sources: ['limbic'], limit: 50 })).some(
        (h) => h.link.kind === 'diary' && h.link.blockId === anchor.id,
      );
    const d2Mood = async () => (await A.host.api['diary.mood']({})).find((p) => p.day === d2)!;
    expect(await found()).toBe(true);
    expect((await d2Mood()).anchors).toBe(2);

    const hidden = await A.host.api['diary.hide']({ id: anchor.id, hidden: true });
    expect(hidden.hiddenAt).not.toBeNull();
    expect((await A.host.api['diary.days']({})).find((d) => d.day === d2)!.anchors.map((a) => a.id)).toEqual([other.id]);
    expect(await found()).toBe(false);
    const moodHidden = await d2Mood();
    expect(moodHidden.anchors).toBe(1);
    expect(moodHidden.valence).toBeCloseTo(other.mood!.valence, 4);

    const shown = await A.host.api['diary.hide']({ id: anchor.id, hidden: false });
    expect(shown.hiddenAt).toBeNull();
    expect(
      (await A.host.api['diary.days']({}))
        .find((d) => d.day === d2)!
        .anchors.map((a) => a.id)
        .sort(),
    ).toEqual([anchor.id, other.id].sort());
    expect(await found()).toBe(true);
    expect((await d2Mood()).anchors).toBe(2);
  });

  it('reports progress step by step, shows the running night, refuses a second one, stops at a boundary, and needs a model connection', async () => {
    A.disk.low = true;
    const conv = await A.host.api['conversations.create']({ title: 'Evening' });
    await say(A.host, conv.id, 'I repotted the lemon tree tonight, it finally has room for its roots.');
    // A slow model; light sleep's answer also waits for the checks below, so a loaded machine cannot
    // let the night finish before they look at it.
    const slow = sleepResponder({ delayMs: 300 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    model.answer = async (body) => {
      if (findTask(body)?.purpose === 'light-sleep') await released;
      return slow(body);
    };
    let asked = model.tasks.length;
    const lightSleepAsked = async () => {
      await expect.poll(() => model.tasks.slice(asked).some((t) => t.purpose === 'light-sleep'), { timeout: PATIENCE_MS, interval: 20 }).toBe(true);
    };

    const events: SleepProgressEvent[] = [];
    const off = A.host.on((event, payload) => {
      if (event === 'sleep.progress') events.push(payload);
    });
    const finished = nextEvent(A.host, 'sleep.finished', () => true) as Promise<ApiEvents['sleep.finished']>;
    const { runId } = await A.host.api['sleep.now']({});
    await lightSleepAsked();
    const status = await A.host.api['sleep.status']({});
    expect(status.running).toMatchObject({ runId, sleepDay: TODAY, stepId: 'light-sleep', status: 'running', total: 7 });
    expect((await rejection(A.host.api['sleep.now']({}))).code).toBe('conflict');
    release();
    expect(await finished).toMatchObject({ runId, status: 'done' });
    off();
    expect((await A.host.api['sleep.status']({})).running).toBeNull();

    const mine = events.filter((e) => e.runId === runId);
    for (const id of SLEEP_STEP_IDS) {
      expect(mine.filter((e) => e.stepId === id).map((e) => e.status)).toEqual(['running', 'done']);
    }
    const finals = mine.filter((e) => e.status !== 'running');
    expect(finals.map((e) => e.done)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(mine.every((e) => e.total === 7 && e.sleepDay === TODAY)).toBe(true);

    // Stop: the call in flight (one that would never answer) is cancelled, the step stops, nothing after it runs.
    await say(A.host, conv.id, 'Tomorrow I want to call my aunt in Coimbra about the harvest festival.');
    model.scripted.push({ purpose: 'light-sleep', reply: { kind: 'hang' } });
    asked = model.tasks.length;
    const stoppedEvent = nextEvent(A.host, 'sleep.finished', () => true) as Promise<ApiEvents['sleep.finished']>;
    const second = await A.host.api['sleep.now']({});
    await lightSleepAsked();
    expect(await A.host.api['sleep.stop']({})).toEqual({ stopped: true });
    expect(await stoppedEvent).toMatchObject({ runId: second.runId, status: 'stopped', error: 'stopped by you' });
    const [run] = await A.host.api['sleep.runs']({ limit: 1 });
    expect(run).toMatchObject({ id: second.runId, status: 'stopped', error: 'stopped by you' });
    expect(stepOf(run!, 'memory-ref-sync').status).toBe('done');
    // What the stopped step did before the stop is still reported: one call, cancelled, no chunk written.
    expect(stepOf(run!, 'light-sleep')).toMatchObject({
      status: 'stopped',
      error: 'stopped by you',
      stats: expect.objectContaining({ calls: 1, chunks_done: 0 }),
    });
    for (const id of DEPENDANTS) expect(stepOf(run!, id)).toMatchObject({ status: 'skipped', reason: 'not run: stopped by you' });
    expect(await A.host.api['sleep.stop']({})).toEqual({ stopped: false });

    // Without a model connection there is no night to start.
    model.answer = responder;
    for (const p of await A.host.api['providers.list']({})) await A.host.api['providers.delete']({ id: p.id });
    expect((await rejection(A.host.api['sleep.now']({}))).code).toBe('no_provider');
    expect((await A.host.api['sleep.status']({})).blocked).toMatch(/no model connection/i);
  });
});

// ---------------------------------------------------------------------------------------------

describe('packing a long conversation into a small context', () => {
  let B: Opened;

  beforeAll(async () => {
    model.reset();
    B = await openHost(copyOf(longDir), { lowDisk: true });
    await connect(B.host, { contextTokens: 1024 });
  });

  afterAll(() => closeHost(B));

  it('splits it into chunks read in order, one call each, and a second night reads nothing again', async () => {
    const { event, run } = await night(B.host);
    expect(event.status).toBe('done');
    const light = stepOf(run, 'light-sleep').stats!;
    const calls = light.calls!;
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(light).toMatchObject({ chunks_done: calls, invalid_chunks: 0, days: 1, conversations: 1, messages: 12, anchors: 1, anchors_kept: calls - 1 });

    // Each call shows the next messages, starting where the previous chunk ended: every message once.
    const audited = await auditOf(B.host, run.id, 'light-sleep');
    expect(audited).toHaveLength(calls);
    const chunks = await Promise.all(audited.map(async (c) => said(await promptOf(B.host, c))));
    for (const chunk of chunks) expect(chunk.length).toBeGreaterThan(0);
    expect(chunks.flat()).toEqual(LONG_TEXTS);

    const memories = (await allMemories(B.host)).filter((m) => m.source === 'light-sleep');
    expect(memories.length).toBe(light.memories_created);
    const anchors = await anchorsOf(B.host);
    expect(anchors).toHaveLength(1);
    const imprints = (await B.host.api['diary.days']({})).flatMap((d) => d.imprints).length;
    // One account of the day, written by the call that read its last part — told what came before.
    const narratives = (await B.host.api['diary.days']({})).flatMap((d) => d.narratives);
    expect(narratives).toHaveLength(1);
    expect(light.narratives).toBe(1);
    const lastPrompt = await promptOf(B.host, audited[audited.length - 1]!);
    expect(lastPrompt).toMatch(/## Narratives wanted\n\d{4}-\d{2}-\d{2}/);
    expect(lastPrompt).toContain('## Already in my diary for these days');
    expect(await promptOf(B.host, audited[0]!)).toContain('## Narratives wanted\nnone in this part');

    const second = await night(B.host);
    expect(second.event.status).toBe('done');
    expect(stepOf(second.run, 'light-sleep').stats).toMatchObject({ calls: 0, messages: 0 });
    expect(await auditOf(B.host, second.run.id, 'light-sleep')).toHaveLength(0);
    expect((await allMemories(B.host)).filter((m) => m.source === 'light-sleep').map((m) => m.id)).toEqual(memories.map((m) => m.id));
    expect((await anchorsOf(B.host)).map((a) => a.id)).toEqual(anchors.map((a) => a.id));
    expect((await B.host.api['diary.days']({})).flatMap((d) => d.imprints)).toHaveLength(imprints);
  });
});

// ---------------------------------------------------------------------------------------------
