// Whole nights on real PGlite, through the host API (and through the runner directly where a crash
// has to be simulated or a rule is about the runner alone): what light sleep writes and how it packs
// calls, resuming without duplicates, malformed answers, a provider that is down, the nightly budget,
// deep sleep's linked changes and pin review, the append-only diary, snapshots, and the events the
// Sleep view reads. One loopback model serves every night: by default the deterministic sleep
// responder, with replies scripted per task where a rule needs a particular answer.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { answerSleepTask, findTask, sleepResponder, type SleepPurpose } from '../../e2e/fake-llm/sleep-responder.js';
import {
  SLEEP_STEP_IDS,
  type ApiEvents,
  type AuditEntry,
  type ConversationSummary,
  type DiaryBlock,
  type Memory,
  type Message,
  type SleepProgressEvent,
  type SleepRun,
} from '../../shared/api.js';
import { nextDay } from '../../shared/sleep-day.js';
import { SelfLayer } from '../companion/self-layer.js';
import { openDatabase, type Database } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import type { Host } from '../host/types.js';
import { MemoryStore } from '../memory/store.js';
import { listedId, stepDeps } from './testing/fixture.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { runCycle, type SleepStep } from './dag.js';
import { MEMORY_LINE, TRANSCRIPT_LINE, type LightSleepAnswer } from './schemas.js';
import { buildSteps } from './service.js';
import { deepSleepStep } from './steps/deep-sleep.js';
import { modelForRun, type SleepStepDeps } from './steps/deps.js';
import { freeBytes, snapshotStep } from './steps/simple.js';
import { rejection } from '../testing/rejection.js';

// ---- Time: the host's clock sits at noon UTC of the real day, the chats on the days before ----

const TODAY = new Date().toISOString().slice(0, 10);
const day = (offset: number) => nextDay(TODAY, offset);
const at = (d: string, hour: number, minute = 0) => new Date(`${d}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`);

// ---- The model: one loopback server, a per-task script in front of a default answer ----

type Reply = FakeResponse | ((prompt: string) => FakeResponse);
type Answer = (body: unknown) => FakeResponse | undefined | Promise<FakeResponse | undefined>;

const responder = sleepResponder();
const model = {
  /** Consumed in order, each by the next request of its task (repairs included). */
  scripted: [] as { purpose: SleepPurpose; reply: Reply }[],
  /** Everything not scripted; for chat requests (no task line) undefined means the server's echo. */
  answer: responder as Answer,
  /** Every sleep request the server saw, retries included. */
  tasks: [] as { purpose: SleepPurpose; prompt: string }[],
  reset() {
    this.scripted.length = 0;
    this.answer = responder;
  },
};

const json = (value: unknown): FakeResponse => ({ kind: 'text', text: JSON.stringify(value), chunks: 6 });
/** The responder's own light-sleep answer for this prompt, edited. */
const lightSleep =
  (edit: (a: LightSleepAnswer, prompt: string) => void = () => {}) =>
  (prompt: string): FakeResponse => {
    const a = answerSleepTask('light-sleep', prompt) as LightSleepAnswer;
    edit(a, prompt);
    return json(a);
  };
/** A server error the client retries at once (no backoff wait in tests). */
const ERROR_500: FakeResponse = { kind: 'error', status: 500, headers: { 'retry-after-ms': '0' } };
const sleepIsDown: Answer = (body) => (findTask(body) ? ERROR_500 : undefined);

let fake: FakeLlm;

// ---- Reading prompts ----

/** The message texts a light-sleep prompt showed, in order. */
function said(prompt: string): string[] {
  return prompt.split('\n').flatMap((line) => {
    const m = TRANSCRIPT_LINE.exec(line);
    return m ? [m[4]!] : [];
  });
}

// ---- Data folders: one migrated blank, copied and filled per scenario ----

let blankDir: string;
const dirs: string[] = [];

function copyOf(src: string): string {
  const dir = tempDataDir('anima-cycle-');
  fs.cpSync(src, dir, { recursive: true });
  dirs.push(dir);
  return dir;
}

async function seedDir<T>(fill: (s: { db: Database; conversations: Conversations; store: MemoryStore }) => Promise<T>): Promise<{ dir: string; value: T }> {
  const dir = copyOf(blankDir);
  const db = await openDatabase(dir);
  try {
    return { dir, value: await fill({ db, conversations: new Conversations(db), store: new MemoryStore(db) }) };
  } finally {
    await db.close();
  }
}

interface Line {
  who: 'Mara' | 'Me';
  text: string;
}

/** A conversation with backdated messages, two minutes apart from `hour` on sleep day `d`. */
async function talk(conversations: Conversations, title: string, d: string, lines: Line[], hour = 10): Promise<string> {
  const { id } = await conversations.create(title);
  await appendLines(conversations, id, d, lines, hour);
  return id;
}

async function appendLines(conversations: Conversations, conversationId: string, d: string, lines: Line[], hour: number): Promise<void> {
  for (const [i, line] of lines.entries()) {
    await conversations.append({
      conversationId,
      role: line.who === 'Mara' ? 'user' : 'assistant',
      content: line.text,
      status: 'complete',
      speaker: line.who === 'Mara' ? 'Mara' : null,
      createdAt: at(d, hour, i * 2),
    });
  }
}

// One long conversation, ~200 characters a message: at 1024 tokens of context, three messages a chunk.
const LONG: Line[] = [
  {
    who: 'Mara',
    text: 'Yesterday I walked the whole coastal path from Cascais to the old lighthouse, almost fourteen kilometres, so my legs are still complaining about every single hill along the way.',
  },
  {
    who: 'Me',
    text: 'Fourteen kilometres is a serious walk! Did you stop anywhere for lunch, or did you push straight through to the lighthouse before the afternoon wind picked up over the cliffs?',
  },
  {
    who: 'Mara',
    text: 'We stopped at a tiny fish restaurant where the owner grilled sardines on the pavement outside; my friend Joana insisted we order a second plate because they were so good.',
  },
  {
    who: 'Me',
    text: 'That sounds like the kind of lunch people remember for years. Is Joana the friend from your pottery class, the one who makes those blue glazed bowls you showed me?',
  },
  {
    who: 'Mara',
    text: 'Yes, Joana from pottery. She is moving to Porto next month for a job at a design studio, which makes me happy for her, but I will honestly miss our Thursday evenings a lot.',
  },
  {
    who: 'Me',
    text: 'Change like that is bittersweet. Maybe the two of you could plan a regular weekend visit, since the train between Lisbon to Porto takes less than three hours these days.',
  },
  {
    who: 'Mara',
    text: 'Good idea. Also, my landlord finally agreed to fix the leaking kitchen window before winter, after I sent him photos of the puddle on the floor three mornings in a row.',
  },
  {
    who: 'Me',
    text: 'Persistence pays off. Photos were smart; it is hard to argue with a puddle. Did he give you a date, or is it one of those vague promises that drifts for weeks?',
  },
  {
    who: 'Mara',
    text: 'He promised the glazier would come on the twentieth. Meanwhile I started learning Portuguese verbs with an app; the irregular past tense is slowly breaking my brain.',
  },
  {
    who: 'Me',
    text: 'The preterite is notoriously stubborn. Would it help to practise a few sentences with me each evening, maybe describing your day in Portuguese before you go to sleep?',
  },
  {
    who: 'Mara',
    text: 'I would love that. Tonight I will try to describe the coastal walk in Portuguese, although I already know I will mix up fui with foi at least five times.',
  },
  {
    who: 'Me',
    text: 'Mixing them up is part of learning. I will gently correct you, so by the end of the month you will probably be telling Joana stories in Portuguese over video calls.',
  },
];
const LONG_TEXTS = LONG.map((l) => l.text);

let longDir: string;

// ---- Hosts ----

interface Opened {
  host: Host;
  dir: string;
  /** The host's clock; tests move it a day at a time. */
  clock: { now: Date };
  /** When low, the disk looks full and the snapshot is skipped (also spares the tests the dump). */
  disk: { low: boolean };
}

const hosts: Host[] = [];

/** Each scenario closes its host when done: several PGlite instances at once would crowd a small machine. */
async function closeHost(o: Opened | undefined): Promise<void> {
  const at = o ? hosts.indexOf(o.host) : -1;
  if (at < 0) return;
  hosts.splice(at, 1);
  await o!.host.close();
}

async function openHost(dir: string, { lowDisk = false } = {}): Promise<Opened> {
  const clock = { now: at(TODAY, 12) };
  const disk = { low: lowDisk };
  const host = await startTestHost({
    dataDir: dir,
    now: () => clock.now,
    sleep: { tickMs: 0 },
    freeBytes: (d) => (disk.low ? 1 : freeBytes(d)),
  });
  hosts.push(host);
  await host.api['settings.update']({ timeZone: 'UTC' });
  return { host, dir, clock, disk };
}

async function connect(host: Host, o: { contextTokens?: number; name?: string } = {}) {
  return host.api['providers.save']({
    kind: 'openai-compatible',
    name: o.name ?? 'fake',
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    ...(o.contextTokens ? { contextTokens: o.contextTokens } : {}),
  });
}

/** "Sleep now", waited for: the finished event and the run as the Sleep view reads it. */
async function night(host: Host): Promise<{ event: ApiEvents['sleep.finished']; run: SleepRun }> {
  const finished = nextEvent(host, 'sleep.finished', () => true, 60_000) as Promise<ApiEvents['sleep.finished']>;
  const started = await host.api['sleep.now']({});
  const event = await finished;
  expect(event.runId).toBe(started.runId);
  const [run] = await host.api['sleep.runs']({ limit: 1 });
  expect(run!.id).toBe(event.runId);
  return { event, run: run! };
}

function stepOf(run: SleepRun, stepId: string) {
  const step = run.steps.find((s) => s.stepId === stepId);
  if (!step) throw new Error(`run ${run.id} has no step ${stepId}`);
  return step;
}

/** A run's background calls, oldest first. */
async function auditOf(host: Host, runId: number, purpose?: string): Promise<AuditEntry[]> {
  const { items } = await host.api['sleep.audit']({ limit: 200 });
  return items.filter((a) => a.runId === runId && (purpose === undefined || a.purpose === purpose)).reverse();
}

async function promptOf(host: Host, entry: AuditEntry): Promise<string> {
  return (await host.api['sleep.auditEntry']({ id: entry.id })).prompt;
}

async function allMemories(host: Host): Promise<Memory[]> {
  return (await host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 })).items;
}

async function anchorsOf(host: Host): Promise<DiaryBlock[]> {
  return (await host.api['diary.days']({ limit: 90 })).flatMap((d) => d.anchors);
}

async function messagesOf(host: Host, conversationId: string): Promise<Message[]> {
  return (await host.api['conversations.get']({ id: conversationId })).messages;
}

/** Sends a chat message and waits for the (echoed) reply to be stored. */
async function say(host: Host, conversationId: string, content: string): Promise<void> {
  const done = nextEvent(host, 'chat.finished', (p: ApiEvents['chat.finished']) => p.conversationId === conversationId, 20_000);
  await host.api['chat.send']({ conversationId, content });
  const { message } = (await done) as ApiEvents['chat.finished'];
  expect(message.status).toBe('complete');
}

const DEPENDANTS = ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest'];

// ---- The runner without a host (crash simulation) ----

function depsFor(db: Database, dir: string, extra: Partial<SleepStepDeps> = {}): SleepStepDeps {
  // A full disk: no snapshot dumps in the runner tests (the full-night test takes a real one).
  return stepDeps(db, dir, { now: () => at(TODAY, 12), extra: { freeBytes: () => 1, ...extra } });
}

/** A pid that is certainly not running: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = async (body) => {
    const task = findTask(body);
    if (task) {
      model.tasks.push(task);
      const i = model.scripted.findIndex((s) => s.purpose === task.purpose);
      if (i >= 0) {
        const { reply } = model.scripted.splice(i, 1)[0]!;
        return typeof reply === 'function' ? reply(task.prompt) : reply;
      }
    }
    return model.answer(body);
  };
  blankDir = tempDataDir('anima-cycle-blank-');
  dirs.push(blankDir);
  await (await openDatabase(blankDir, { template: dbTemplate() })).close();
  longDir = (await seedDir(({ conversations }) => talk(conversations, 'Coastal walk', day(-1), LONG))).dir;
});

afterAll(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await fake?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------

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
  }, 60_000);

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
  }, 60_000);

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
      await expect.poll(() => model.tasks.slice(asked).some((t) => t.purpose === 'light-sleep'), { timeout: 10_000, interval: 20 }).toBe(true);
    };

    const events: SleepProgressEvent[] = [];
    const off = A.host.on((event, payload) => {
      if (event === 'sleep.progress') events.push(payload);
    });
    const finished = nextEvent(A.host, 'sleep.finished', () => true, 60_000) as Promise<ApiEvents['sleep.finished']>;
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
    const stoppedEvent = nextEvent(A.host, 'sleep.finished', () => true, 60_000) as Promise<ApiEvents['sleep.finished']>;
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
  }, 60_000);
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
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

describe('malformed answers', () => {
  // Four conversations of two ~250-character messages: at 1024 tokens each is a call of its own.
  const TALKS: Record<'prose' | 'unknownType' | 'huge' | 'secret', [string, Line[]]> = {
    prose: [
      'Book club',
      [
        {
          who: 'Mara',
          text: "I finally finished the long novel about the lighthouse keeper's daughter that Joana lent me last winter; the ending made me cry on the tram home, which was a little embarrassing with a whole school class watching me sniffle.",
        },
        {
          who: 'Me',
          text: "Books that move us in public are the ones we remember longest. What was it about the ending that hit you so hard — the father's letters, or the storm on the final night at the lighthouse, when nobody came?",
        },
      ],
    ],
    unknownType: [
      'Cycling',
      [
        {
          who: 'Mara',
          text: 'My new bicycle arrived today, a second-hand steel frame in a faded green, with a basket big enough for groceries; I rode it along the river to the market just to feel the wind, grinning like a child the whole way.',
        },
        {
          who: 'Me',
          text: 'A green steel bicycle with a basket sounds perfect for your neighbourhood. Did the brakes feel safe on the cobblestones near the market, or will you take it to the repair shop on Rua Nova first?',
        },
      ],
    ],
    huge: [
      'Recipes',
      [
        {
          who: 'Mara',
          text: "I tried my grandmother's orange cake recipe from the stained index card, the one with olive oil instead of butter; it came out dense in the middle, so I think my oven runs colder than hers did back in the village.",
        },
        {
          who: 'Me',
          text: 'Old ovens often ran hotter than their dials claimed. Next time you could bake it ten degrees higher, or a little longer, and check the middle with a skewer before taking it out of the oven to cool.',
        },
      ],
    ],
    secret: [
      'Work news',
      [
        {
          who: 'Mara',
          text: 'The museum finally gave me access to the digital archive system today; I spent the afternoon scanning fragile postcards from the nineteen-twenties, the handwriting on some of them is beautiful beyond words.',
        },
        {
          who: 'Me',
          text: 'Scanning those postcards must feel like reading over the shoulders of people a century ago. Which one stayed with you most — a love letter, a holiday greeting, or something stranger from the archive?',
        },
      ],
    ],
  };
  const PROSE = 'Sure! Here is what I remember about the day: Mara finished a novel and cried on the tram.';
  const TRUNCATED = '{"memories": [{"type": "experience", "content": "Mara finished the novel Joana lent';
  const HUGE = `{"memories": [${'x'.repeat(210_000)}`;
  const KEY = 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34';
  let D: Opened;
  let ids: Record<keyof typeof TALKS, string>;
  let first: SleepRun;
  let rows: Map<string, AuditEntry[]>;

  /** The conversation a light-sleep prompt is about (its transcript, not the diary notes after it). */
  const talkOf = (prompt: string) => {
    const transcript = prompt.slice(0, prompt.indexOf('## Narratives wanted'));
    return (Object.keys(TALKS) as (keyof typeof TALKS)[]).find((k) => transcript.includes(TALKS[k][1][0]!.text))!;
  };
  const savedFor = async (key: keyof typeof TALKS) => {
    const messageIds = new Set((await messagesOf(D.host, ids[key])).map((m) => m.id));
    return {
      anchors: (await anchorsOf(D.host)).filter((a) => a.conversationId === ids[key]),
      memories: (await allMemories(D.host)).filter((m) => m.sourceMessageIds.some((id) => messageIds.has(id))),
    };
  };

  beforeAll(async () => {
    model.reset();
    const seeded = await seedDir(async ({ conversations }) => {
      const out = {} as Record<keyof typeof TALKS, string>;
      for (const [key, [title, lines]] of Object.entries(TALKS) as [keyof typeof TALKS, [string, Line[]]][]) {
        out[key] = await talk(conversations, title, day(-1), lines);
      }
      return out;
    });
    ids = seeded.value;
    D = await openHost(seeded.dir, { lowDisk: true });
    await connect(D.host, { contextTokens: 1024 });
    // The chunks come in the order the conversations were written: prose, unknownType, huge, secret.
    model.scripted.push(
      { purpose: 'light-sleep', reply: { kind: 'text', text: PROSE } },
      { purpose: 'light-sleep', reply: { kind: 'text', text: TRUNCATED } },
      { purpose: 'light-sleep', reply: lightSleep((a) => a.memories.forEach((m) => ((m as { type: string }).type = 'feeling'))) },
      { purpose: 'light-sleep', reply: lightSleep((a) => a.memories.forEach((m) => ((m as { type: string }).type = 'feeling'))) },
      { purpose: 'light-sleep', reply: { kind: 'text', text: HUGE, chunks: 40 } },
      { purpose: 'light-sleep', reply: lightSleep() },
      {
        purpose: 'light-sleep',
        reply: lightSleep((a, prompt) => {
          const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
          a.memories.push(
            { type: 'world', content: `Mara's work API key is ${KEY}, kept in her notes app.`, entities: ['Mara'], sources: [ref], relations: [] },
            {
              type: 'world',
              content: 'The museum wifi password=Tr0ub4dor3xQ9 is taped under the front desk.',
              entities: ['museum'],
              sources: [ref],
              relations: [],
            },
          );
        }),
      },
    );
    ({ run: first } = await night(D.host));
    expect(model.scripted).toHaveLength(0);
    rows = new Map();
    for (const row of await auditOf(D.host, first.id, 'light-sleep')) {
      const key = talkOf(await promptOf(D.host, row));
      rows.set(key, [...(rows.get(key) ?? []), row]);
    }
  }, 60_000);

  afterAll(() => closeHost(D));

  it('prose, then truncated JSON on the repair: two invalid rows, nothing saved for the chunk', async () => {
    expect(first.status).toBe('done');
    expect(stepOf(first, 'light-sleep').stats).toMatchObject({ calls: 4, invalid_chunks: 2, chunks_done: 2 });
    const [prose, repair] = rows.get('prose')! as [AuditEntry, AuditEntry];
    expect(rows.get('prose')).toHaveLength(2);
    expect(prose).toMatchObject({ status: 'invalid', error: expect.stringMatching(/^Invalid answer: it is not valid JSON/) });
    expect(repair).toMatchObject({ status: 'invalid', error: expect.stringMatching(/^Invalid answer: it is not valid JSON/) });
    expect((await D.host.api['sleep.auditEntry']({ id: prose.id })).response).toBe(PROSE);
    const second = await D.host.api['sleep.auditEntry']({ id: repair.id });
    expect(second.response).toBe(TRUNCATED);
    // The chunk filled the context, so the repair names the problem without quoting the answer.
    expect(second.prompt).toContain('Your previous answer could not be used: it is not valid JSON');
    expect(second.prompt).not.toContain(PROSE);
    expect(await savedFor('prose')).toEqual({ anchors: [], memories: [] });
  });

  it('an unknown memory type is invalid too', async () => {
    const attempts = rows.get('unknownType')!;
    expect(attempts.map((r) => r.status)).toEqual(['invalid', 'invalid']);
    for (const r of attempts) expect(r.error).toMatch(/does not match the expected shape \(memories\.0\.type: /);
    expect(await savedFor('unknownType')).toEqual({ anchors: [], memories: [] });
  });

  it('a 200 KB answer is cut off and invalid (the repair then succeeds)', async () => {
    const [huge, repair] = rows.get('huge')! as [AuditEntry, AuditEntry];
    expect(huge).toMatchObject({ status: 'invalid', responseChars: 200 * 1024 });
    expect(huge.error).toMatch(/longer than 204800 characters and was cut off/);
    expect(repair.status).toBe('ok');
    expect((await savedFor('huge')).anchors).toHaveLength(1);
  });

  it('a memory holding a secret is refused; the rest of its chunk is saved', async () => {
    expect(rows.get('secret')!.map((r) => r.status)).toEqual(['ok']);
    expect(stepOf(first, 'light-sleep').stats!.refused_secrets).toBe(2);
    const saved = await savedFor('secret');
    expect(saved.anchors).toHaveLength(1);
    expect(saved.memories.length).toBeGreaterThan(0);
    const everything = (await allMemories(D.host)).map((m) => m.content).join('\n');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain('Tr0ub4dor3xQ9');
  });

  it('the invalid chunks were not passed: a later night with a sound model extracts exactly those', async () => {
    const { run } = await night(D.host);
    expect(run.status).toBe('done');
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ calls: 2, chunks_done: 2, invalid_chunks: 0 });
    const read = await Promise.all((await auditOf(D.host, run.id, 'light-sleep')).map(async (r) => talkOf(await promptOf(D.host, r))));
    expect(read).toEqual(['prose', 'unknownType']);
    for (const key of Object.keys(TALKS) as (keyof typeof TALKS)[]) expect((await savedFor(key)).anchors).toHaveLength(1);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

describe('a provider that fails, and the nightly budget', () => {
  let E: Opened;
  const chunkOne: string[] = [];

  beforeAll(async () => {
    model.reset();
    E = await openHost(copyOf(longDir), { lowDisk: true });
    await connect(E.host, { name: 'chat' });
    const background = await connect(E.host, { name: 'background', contextTokens: 1024 });
    await E.host.api['settings.update']({ backgroundProviderId: background.id });
  });

  afterAll(() => closeHost(E));

  it('a provider that fails in the middle keeps the chunks before the failure', async () => {
    let lightCalls = 0;
    model.answer = (body) => {
      const task = findTask(body);
      if (!task) return undefined;
      return task.purpose === 'light-sleep' && lightCalls++ === 0 ? responder(body) : ERROR_500;
    };
    const { event, run } = await night(E.host);
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    const light = stepOf(run, 'light-sleep');
    expect(light).toMatchObject({ status: 'failed', stats: expect.objectContaining({ calls: 2, chunks_done: 1 }) });
    expect(light.error).toMatch(/^The background model did not answer .*; 1 of \d chunks were done/);
    expect((await auditOf(E.host, run.id, 'light-sleep')).map((a) => a.status)).toEqual(['ok', 'error']);
    for (const id of DEPENDANTS) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });

    // The first chunk's writes stay: its anchor and memories, citing only its messages.
    const [ok] = await auditOf(E.host, run.id, 'light-sleep');
    chunkOne.push(...said(await promptOf(E.host, ok!)));
    expect(chunkOne).toEqual(LONG_TEXTS.slice(0, chunkOne.length));
    const conversationId = (await E.host.api['conversations.list']({}))[0]!.id;
    const firstIds = new Set((await messagesOf(E.host, conversationId)).filter((m) => chunkOne.includes(m.content)).map((m) => m.id));
    expect(await anchorsOf(E.host)).toHaveLength(1);
    const memories = (await allMemories(E.host)).filter((m) => m.source === 'light-sleep');
    expect(memories.length).toBeGreaterThan(0);
    for (const m of memories) for (const id of m.sourceMessageIds) expect(firstIds.has(id)).toBe(true);
  }, 60_000);

  it('a provider down for the whole night fails light sleep and skips what needs it, visibly; once it is back the next night finishes', async () => {
    model.answer = sleepIsDown;
    const [earlier] = await E.host.api['sleep.runs']({ limit: 1 });
    const { event, run } = await night(E.host);
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    expect(stepOf(run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${earlier!.id}` });
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'failed', stats: expect.objectContaining({ calls: 1, chunks_done: 0 }) });
    expect(stepOf(run, 'light-sleep').error).toMatch(/^The background model did not answer/);
    for (const id of DEPENDANTS) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
    expect((await auditOf(E.host, run.id)).map((a) => [a.purpose, a.status])).toEqual([['light-sleep', 'error']]);

    const status = await E.host.api['sleep.status']({});
    expect(status.running).toBeNull();
    expect(status.lastRun).toMatchObject({ id: run.id, status: 'failed', error: 'light-sleep failed' });
    expect((await E.host.api['sleep.runs']({ limit: 5 })).map((r) => r.status)).toEqual(['failed', 'failed']);

    model.answer = responder;
    const back = await night(E.host);
    expect(back.event).toMatchObject({ status: 'done', error: null });
    expect(back.run.steps.every((s) => s.status === 'done')).toBe(true);
    expect(stepOf(back.run, 'light-sleep').stats).toMatchObject({ anchors: 0, anchors_kept: stepOf(back.run, 'light-sleep').stats!.chunks_done });
    const rest = (await Promise.all((await auditOf(E.host, back.run.id, 'light-sleep')).map(async (a) => said(await promptOf(E.host, a))))).flat();
    expect([...chunkOne, ...rest]).toEqual(LONG_TEXTS);
    expect(await anchorsOf(E.host)).toHaveLength(1);
  }, 60_000);

  it('over the budget the night stops with partial stats and skips the rest; the next night finishes it', async () => {
    const conv = await E.host.api['conversations.create']({ title: 'Night thoughts' });
    // ~700 characters: the message and its echoed reply are a chunk each at 1024 tokens.
    const long =
      'I keep thinking about the old tram depot near the river that they are turning into a library; ' +
      'my grandfather drove the number twenty-eight for thirty years, starting from that very depot every morning at five. ' +
      'He used to say the trams had personalities, that number five hundred and twelve always sulked on cold mornings, ' +
      'while the little yellow one with the cracked bell was the bravest on the steep hill up to the castle. ' +
      'I wonder whether the library will keep the tracks in the floor, or the big clock above the gate that never worked. ' +
      'I would like to sit there someday with a book, right where he clocked in, hearing the echo of those bells.';
    await say(E.host, conv.id, long);
    const convMessages = await messagesOf(E.host, conv.id);
    expect(convMessages.map((m) => m.role)).toEqual(['user', 'assistant']);

    E.clock.now = at(day(1), 12);
    await E.host.api['settings.update']({ sleep: { maxCallsPerNight: 1 } });
    const stopped = await night(E.host);
    expect(stopped.event.status).toBe('stopped');
    expect(stopped.event.error).toMatch(/^Over tonight's budget for background work \(1 of 1 calls/);
    expect(stepOf(stopped.run, 'memory-ref-sync').status).toBe('done');
    expect(stepOf(stopped.run, 'light-sleep')).toMatchObject({
      status: 'stopped',
      error: stopped.event.error,
      stats: expect.objectContaining({ calls: 1, chunks_done: 1, messages: 2 }),
    });
    for (const id of DEPENDANTS) expect(stepOf(stopped.run, id)).toMatchObject({ status: 'skipped', reason: `not run: ${stopped.event.error}` });
    expect((await E.host.api['sleep.status']({})).budget).toMatchObject({ calls: 1, maxCalls: 1 });

    // The same night again spends nothing more.
    const again = await night(E.host);
    expect(again.event.status).toBe('stopped');
    expect(stepOf(again.run, 'light-sleep').stats).toMatchObject({ calls: 0, chunks_done: 0 });
    expect(await auditOf(E.host, again.run.id)).toHaveLength(0);

    // The next night has its own budget and reads on from where the stopped one ended.
    E.clock.now = at(day(2), 12);
    await E.host.api['settings.update']({ sleep: { maxCallsPerNight: 60 } });
    expect((await E.host.api['sleep.status']({})).budget.calls).toBe(0);
    const next = await night(E.host);
    expect(next.event.status).toBe('done');
    expect(next.run.steps.every((s) => s.status === 'done')).toBe(true);
    expect(stepOf(next.run, 'light-sleep').stats).toMatchObject({ calls: 1, chunks_done: 1, messages: 1 });
    const [call] = await auditOf(E.host, next.run.id, 'light-sleep');
    expect(said(await promptOf(E.host, call!))).toEqual([convMessages[1]!.content]);
    expect((await anchorsOf(E.host)).filter((a) => a.conversationId === conv.id)).toHaveLength(1);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

describe('deep sleep', () => {
  const LISBON = 'Mara moved to Lisbon last month.';
  const MERGED = "Mara's sister Lena is a cellist with the city orchestra.";
  const PARTS = ['Mara runs a small bakery in Lisbon.', 'Mara teaches pottery on Sunday mornings.'];
  let C: Opened;
  let seeded: Record<'berlin' | 'cello1' | 'cello2' | 'compound' | 'cat', number>;
  let first: SleepRun;
  let digest: NonNullable<Awaited<ReturnType<Host['api']['sleep.digest']>>>;
  const memory = async (id: number) => (await C.host.api['memories.get']({ id })).memory;
  const byContent = async (content: string) => (await allMemories(C.host)).find((m) => m.content === content)!;

  beforeAll(async () => {
    model.reset();
    const s = await seedDir(async ({ conversations, store }) => {
      const save = async (content: string, entityNames: string[] = []) => {
        const r = await store.create({ type: 'world', content, entityNames, source: 'user', actor: 'person' });
        expect(r.outcome).toBe('created');
        return r.memory.id;
      };
      const ids = {
        berlin: await save('Mara lives in Berlin.', ['Mara', 'Berlin']),
        cello1: await save('Lena plays the cello in the city orchestra.', ['Lena']),
        cello2: await save('Every Friday Lena plays cello for the city orchestra.', ['Lena']),
        compound: await save('Mara runs a small bakery in Lisbon; Mara teaches pottery on Sunday mornings.', ['Mara', 'Lisbon']),
        cat: await save("Mara's cat is called Pixel.", ['Mara', 'Pixel']),
      };
      const cat = `[[anima:${ids.cat}]]`;
      const cello = `[[anima:${ids.cello1}]]`;
      await talk(conversations, 'Catching up', day(-1), [
        { who: 'Mara', text: `We finally moved! I live in Lisbon now. Pixel ${cat} loves the new balcony.` },
        { who: 'Me', text: `Pixel ${cat} must be thrilled with all that sun. How is Lena ${cello} doing?` },
        { who: 'Mara', text: `Lena ${cello} still plays in the orchestra. Pixel ${cat} sleeps on her cello case.` },
        { who: 'Me', text: `Pixel ${cat} clearly has good taste in furniture.` },
        { who: 'Mara', text: `Ha, yes. Pixel ${cat} also ate my basil this morning.` },
      ]);
      return ids;
    });
    seeded = s.value;
    C = await openHost(s.dir, { lowDisk: true });
    await connect(C.host);

    // Deep sleep answers only what each rule needs; any further round gets an empty answer.
    const empty: Partial<Record<SleepPurpose, unknown>> = {
      'deep-sleep:contradictions': { operations: [] },
      'deep-sleep:split': { splits: [] },
      'deep-sleep:merge': { merges: [] },
    };
    model.answer = (body) => {
      const task = findTask(body);
      return task && empty[task.purpose] ? json(empty[task.purpose]) : responder(body);
    };
    const validFrom = day(-30);
    model.scripted.push(
      {
        purpose: 'light-sleep',
        reply: lightSleep((a, prompt) => {
          const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
          a.memories = [{ type: 'world', content: LISBON, entities: ['Mara', 'Lisbon'], sources: [ref], validFrom, relations: [] }];
        }),
      },
      {
        purpose: 'deep-sleep:contradictions',
        reply: (prompt) => {
          const newer = listedId(prompt, LISBON);
          return json({ operations: newer ? [{ op: 'supersede', older: seeded.berlin, newer, reason: 'Mara moved from Berlin to Lisbon.' }] : [] });
        },
      },
      {
        purpose: 'deep-sleep:split',
        reply: () => json({ splits: [{ id: seeded.compound, parts: PARTS.map((content) => ({ type: 'world', content })), reason: 'Two separate facts.' }] }),
      },
      {
        purpose: 'deep-sleep:merge',
        reply: () => json({ merges: [{ ids: [seeded.cello1, seeded.cello2], type: 'world', content: MERGED, reason: 'The same fact twice.' }] }),
      },
    );
    ({ run: first } = await night(C.host));
    digest = (await C.host.api['sleep.digest']({}))!;
  }, 60_000);

  afterAll(() => closeHost(C));

  it('with the disk nearly full the snapshot is skipped, and deep sleep still runs', () => {
    expect(first.status).toBe('done');
    expect(stepOf(first, 'snapshot')).toMatchObject({ status: 'done', stats: expect.objectContaining({ skipped_low_disk: 1 }) });
    expect(fs.readdirSync(path.join(C.dir, 'snapshots'))).toEqual([]);
    const deep = stepOf(first, 'deep-sleep');
    expect(deep).toMatchObject({ status: 'done', stats: expect.objectContaining({ superseded: 1, split: 1, merged: 1, refused: 0 }) });
    expect(deep.stats!.calls).toBeLessThanOrEqual(6);
  });

  it('supersedes an older memory by a newer one, linked and journalled, and undo restores it', async () => {
    const lisbon = await byContent(LISBON);
    expect(lisbon).toMatchObject({ source: 'light-sleep', status: 'active', validFrom: new Date(`${day(-30)}T00:00:00Z`).toISOString() });
    const { memory: berlin, history, chain } = await C.host.api['memories.get']({ id: seeded.berlin });
    expect(berlin).toMatchObject({ status: 'superseded', supersededBy: lisbon.id, validTo: lisbon.validFrom });
    const change = history.find((c) => c.action === 'supersede')!;
    expect(change).toMatchObject({ actor: 'deep-sleep', reason: 'Mara moved from Berlin to Lisbon.', undoneBy: null });
    expect(chain.map((m) => m.id)).toEqual([seeded.berlin, lisbon.id]);
    expect(digest.superseded.map((c) => [c.memoryId, c.changeId])).toContainEqual([seeded.berlin, change.id]);

    const restored = await C.host.api['memories.undo']({ changeId: change.id });
    expect(restored).toMatchObject({ id: seeded.berlin, status: 'active', supersededBy: null, validTo: null });
    expect((await memory(lisbon.id)).status).toBe('active');
    const live = (await C.host.api['sleep.digest']({ day: TODAY }))!;
    expect(live.superseded.find((c) => c.changeId === change.id)!.undoneBy).not.toBeNull();
  });

  it('splits a compound memory into atomic ones that inherit its entities', async () => {
    const old = await memory(seeded.compound);
    const parts = await Promise.all(PARTS.map(byContent));
    expect(old).toMatchObject({ status: 'superseded', supersededBy: parts[0]!.id });
    for (const p of parts) expect(p).toMatchObject({ source: 'deep-sleep', status: 'active', type: 'world', entityNames: ['Mara', 'Lisbon'] });
  });

  it('proposes pinning a memory cited five times; accepting pins it, once', async () => {
    expect(stepOf(first, 'deep-sleep').stats!.proposals).toBe(1);
    expect(digest.proposals).toEqual([expect.objectContaining({ memoryId: seeded.cat, action: 'pin', reason: 'used in 5 replies', status: 'open' })]);
    const proposal = digest.proposals[0]!;
    expect(await C.host.api['sleep.resolveProposal']({ id: proposal.id, accept: true })).toMatchObject({ status: 'accepted' });
    expect(await memory(seeded.cat)).toMatchObject({ pinned: true });
    expect((await rejection(C.host.api['sleep.resolveProposal']({ id: proposal.id, accept: true }))).code).toBe('conflict');
  });

  it('merges near-duplicates into one memory both point at, and the next night credits their citations to it', async () => {
    const merged = await byContent(MERGED);
    expect(merged).toMatchObject({ source: 'deep-sleep', status: 'active', entityNames: ['Lena'] });
    for (const id of [seeded.cello1, seeded.cello2]) expect(await memory(id)).toMatchObject({ status: 'superseded', supersededBy: merged.id });
    expect((await memory(seeded.cello1)).referenceCount).toBe(2); // counted before the merge

    const { run } = await night(C.host);
    expect(run.status).toBe('done');
    expect((await memory(merged.id)).referenceCount).toBe(2);
    expect((await memory(seeded.cello1)).referenceCount).toBe(0);
    expect((await memory(seeded.cat)).referenceCount).toBe(5);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

describe('the runner on its own: crashes, the append-only diary, snapshots kept, the size of deep sleep', () => {
  let dir: string;
  let db: Database;
  let deps: SleepStepDeps;

  const reopen = async () => {
    db = await openDatabase(dir);
    deps = depsFor(db, dir);
    // A new process: the one that held the night is gone.
    await db.query(`UPDATE sleep_runs SET holder_pid = $1 WHERE status = 'running'`, [deadPid()]);
  };
  const count = async (sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;

  beforeAll(async () => {
    model.reset();
    dir = copyOf(longDir);
    db = await openDatabase(dir);
    deps = depsFor(db, dir);
    await new SelfLayer(db).ensureDefaults();
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model', contextTokens: 1024 });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
  });

  afterAll(async () => {
    if (!db.closed) await db.close();
  });

  it('resumes a night that crashed mid light sleep and again between steps: nothing extracted twice, one anchor per conversation and day', async () => {
    const messages = `SELECT count(*)::int AS n FROM messages`;
    const totals = [await count(messages), await count(`SELECT count(*)::int AS n FROM conversations`)];
    const seqOf = new Map(
      (await db.query<{ content: string; seq: number }>(`SELECT content, seq::float8 AS seq FROM messages`)).rows.map((r) => [r.content, Number(r.seq)]),
    );

    // Attempt 1: the process dies while the model is writing the second chunk.
    let reached!: () => void;
    const inSecondChunk = new Promise<void>((resolve) => (reached = resolve));
    model.scripted.push(
      { purpose: 'light-sleep', reply: lightSleep() },
      {
        purpose: 'light-sleep',
        reply: () => {
          reached();
          return { kind: 'hang' };
        },
      },
    );
    const asked1 = model.tasks.length;
    const controller = new AbortController();
    const attempt1 = runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual', signal: controller.signal }).catch((err: unknown) => err);
    await inSecondChunk;
    const chunkOne = said(model.tasks[asked1]!.prompt);
    expect(chunkOne.length).toBeGreaterThan(0);
    // The first chunk is committed with its watermark, before the second is asked for.
    expect((await db.query<{ last_seq: number }>(`SELECT last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = 'light-sleep'`)).rows).toEqual([
      { last_seq: seqOf.get(chunkOne.at(-1)!) },
    ]);
    const run1 = await count(`SELECT max(id)::int AS n FROM sleep_runs`);
    await db.close();
    // What the dead process would still have done meets a closed database.
    controller.abort();
    await attempt1;

    // Attempt 2: the interrupted run is taken over; light sleep reads on; then a crash inside the snapshot step.
    await reopen();
    let inSnapshot!: () => void;
    const snapshotting = new Promise<void>((resolve) => (inSnapshot = resolve));
    const hangingSnapshot: SleepStep[] = buildSteps(deps).map((s) =>
      s.id === 'snapshot'
        ? {
            ...s,
            run: () => {
              inSnapshot();
              return new Promise<Record<string, number>>(() => {});
            },
          }
        : s,
    );
    const asked2 = model.tasks.length;
    void runCycle(db, hangingSnapshot, { sleepDay: TODAY, trigger: 'manual' }).catch(() => {});
    await snapshotting;
    const run2 = run1 + 1;
    expect((await db.query(`SELECT status, error FROM sleep_runs WHERE id = $1`, [run1])).rows).toEqual([{ status: 'failed', error: 'interrupted' }]);
    expect((await db.query(`SELECT status, error FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [run1])).rows).toEqual([
      { status: 'failed', error: 'interrupted' },
    ]);
    expect((await db.query(`SELECT status FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [run2])).rows).toEqual([{ status: 'done' }]);
    const rest = model.tasks
      .slice(asked2)
      .filter((t) => t.purpose === 'light-sleep')
      .flatMap((t) => said(t.prompt));
    expect([...chunkOne, ...rest]).toEqual(LONG_TEXTS);
    await db.close();

    // Attempt 3 finishes the night: light sleep is carried over, not repeated.
    await reopen();
    const asked3 = model.tasks.length;
    const result = await runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual' });
    expect(result).toMatchObject({ status: 'done', error: null });
    expect(result.steps).toEqual(Object.fromEntries(SLEEP_STEP_IDS.map((id) => [id, 'done'])));
    expect((await db.query(`SELECT status, reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [result.runId])).rows).toEqual([
      { status: 'done', reason: `done in run ${run2}` },
    ]);
    expect(model.tasks.slice(asked3).filter((t) => t.purpose === 'light-sleep')).toHaveLength(0);

    const anchors = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'anchor' GROUP BY day, conversation_id`)).rows;
    expect(anchors).toEqual([{ n: 1 }]);
    const sources = (await db.query<{ ids: string[] }>(`SELECT source_message_ids AS ids FROM memories WHERE source = 'light-sleep'`)).rows.flatMap(
      (r) => r.ids,
    );
    expect(sources.length).toBeGreaterThan(0);
    expect(new Set(sources).size).toBe(sources.length);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'dream'`)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'digest'`)).toBe(1);

    // Running the finished night once more reads nothing twice and dreams nothing twice.
    const blocks = await count(`SELECT count(*)::int AS n FROM diary_blocks`);
    const memories = await count(`SELECT count(*)::int AS n FROM memories`);
    const again = await runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual' });
    expect(again.status).toBe('done');
    expect(await count(`SELECT count(*)::int AS n FROM auto_llm_runs WHERE run_id = $1 AND purpose IN ('light-sleep', 'dream')`, [again.runId])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks`)).toBe(blocks);
    expect(await count(`SELECT count(*)::int AS n FROM memories`)).toBe(memories);

    // None of it wrote a message or a conversation.
    expect([await count(messages), await count(`SELECT count(*)::int AS n FROM conversations`)]).toEqual(totals);
  }, 60_000);

  it('refuses to rewrite or delete a diary block (only hiding is allowed)', async () => {
    const anchor = (await db.query<{ id: number; body: string }>(`SELECT id::int AS id, body FROM diary_blocks WHERE kind = 'anchor' LIMIT 1`)).rows[0]!;
    await expect(db.query(`UPDATE diary_blocks SET body = 'rewritten' WHERE id = $1`, [anchor.id])).rejects.toThrow(
      /append-only: block \d+ cannot be rewritten/,
    );
    await expect(db.query(`UPDATE diary_blocks SET mood = '{"valence": 1, "arousal": 1, "labels": []}' WHERE id = $1`, [anchor.id])).rejects.toThrow(
      /append-only/,
    );
    await expect(db.query(`DELETE FROM diary_blocks WHERE id = $1`, [anchor.id])).rejects.toThrow(/append-only: set hidden_at instead of deleting/);
    await db.query(`UPDATE diary_blocks SET hidden_at = now() WHERE id = $1`, [anchor.id]);
    await db.query(`UPDATE diary_blocks SET hidden_at = NULL WHERE id = $1`, [anchor.id]);
    expect((await db.query(`SELECT body FROM diary_blocks WHERE id = $1`, [anchor.id])).rows).toEqual([{ body: anchor.body }]);
  });

  it('keeps the last seven snapshots', async () => {
    // The dump itself is PGlite's (a real one is checked in the full night); here only the keeping counts.
    const dumping = { dumpDataDir: async () => new Blob([Buffer.from([0x1f, 0x8b, 0x08, 0x00])]) } as unknown as Database;
    const snapshot = { ...snapshotStep(depsFor(dumping, dir, { freeBytes: () => Number.MAX_SAFE_INTEGER })), dependsOn: [] };
    const written: string[] = [];
    for (let i = 1; i <= 9; i++) {
      const r = await runCycle(db, [snapshot], { sleepDay: day(i), trigger: 'schedule' });
      expect(r.status).toBe('done');
      written.push(`${day(i)}-run${r.runId}.tar.gz`);
    }
    expect(fs.readdirSync(path.join(dir, 'snapshots')).sort()).toEqual(written.slice(2).sort());
  });

  it('waits for a quiet moment before the snapshot, and while the person keeps chatting leaves it and deep sleep to the next night', async () => {
    // The dump pauses the database for a second or two: it never happens mid-conversation.
    const dumps: number[] = [];
    const dumping = { dumpDataDir: async () => (dumps.push(Date.now()), new Blob([Buffer.from([0x1f, 0x8b, 0x08, 0x00])])) } as unknown as Database;
    const deep: SleepStep = { id: 'deep-sleep', dependsOn: ['snapshot'], run: async () => ({ ran: 1 }) };
    const chatting = {
      ...snapshotStep(depsFor(dumping, dir, { freeBytes: () => Number.MAX_SAFE_INTEGER, quietForMs: () => 0, snapshotWaitMs: 300 })),
      dependsOn: [],
    };
    const busy = await runCycle(db, [chatting, deep], { sleepDay: day(20), trigger: 'manual' });
    expect(busy).toMatchObject({ status: 'done', steps: { snapshot: 'skipped', 'deep-sleep': 'skipped' }, error: null });
    expect(dumps).toHaveLength(0);
    const reasons = (
      await db.query<{ step_id: string; reason: string }>(`SELECT step_id, reason FROM sleep_steps WHERE run_id = $1 ORDER BY step_id`, [busy.runId])
    ).rows;
    expect(reasons).toEqual([
      { step_id: 'deep-sleep', reason: 'needs snapshot, which was skipped' },
      { step_id: 'snapshot', reason: expect.stringMatching(/^you were chatting/) },
    ]);

    // The person stops typing during the wait: the copy is taken once they have been quiet long enough.
    const quietFrom = performance.now() + 200;
    const pausing = {
      ...snapshotStep(
        depsFor(dumping, dir, {
          freeBytes: () => Number.MAX_SAFE_INTEGER,
          quietForMs: () => (performance.now() < quietFrom ? 0 : 10_000),
          snapshotWaitMs: 5_000,
        }),
      ),
      dependsOn: [],
    };
    const quiet = await runCycle(db, [pausing, deep], { sleepDay: day(21), trigger: 'manual' });
    expect(quiet).toMatchObject({ status: 'done', steps: { snapshot: 'done', 'deep-sleep': 'done' } });
    expect(dumps).toHaveLength(1);
  });

  it('deep sleep makes at most six calls a night however large the store, and never proposes pins past 40', async () => {
    // 300 compound, overlapping memories: at 1024 tokens of context each round would need dozens of calls.
    const names = Array.from(
      { length: 300 },
      (_, i) => 'Ka Lo Mi Nu Pe Ri So Tu Va Ze'.split(' ')[i % 10]! + 'bcdfghjklm'[Math.floor(i / 10) % 10]! + 'aeiou'[Math.floor(i / 100)]! + 'n',
    );
    const contents = names.map((n) => `${n} from Oslo keeps bees on the roof; ${n} also sells honey at the harbour market on Saturdays.`);
    await db.query(
      `WITH m AS (INSERT INTO memories (type, content, source) SELECT 'world', c, 'user' FROM unnest($1::text[]) AS c RETURNING id)
       INSERT INTO memory_changes (memory_id, action, actor, after) SELECT id, 'create', 'person', '{}'::jsonb FROM m`,
      [contents],
    );
    // Beside them, not reviewed tonight (no journal entry) and about something else: 39 pinned
    // memories and three much-cited ones, so there is room for exactly one more pin.
    const others = names.slice(0, 42).map((n) => `${n}x painted the garden shed a bright ${['red', 'blue', 'green'][n.length % 3]} colour.`);
    await db.query(`INSERT INTO memories (type, content, source) SELECT 'world', c, 'user' FROM unnest($1::text[]) AS c`, [others]);
    await db.query(`UPDATE memories SET pinned = true, pin_order = id WHERE content = ANY($1::text[])`, [others.slice(0, 39)]);
    const cited = (
      await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE content = ANY($1::text[]) ORDER BY id`, [others.slice(39)])
    ).rows.map((r) => r.id);
    await db.query(`UPDATE memories SET reference_count = CASE id WHEN $1 THEN 9 WHEN $2 THEN 7 ELSE 6 END WHERE id = ANY($3::bigint[])`, [
      cited[0],
      cited[1],
      cited,
    ]);

    const deepOnly = () => [{ ...deepSleepStep(deps, modelForRun(deps)), dependsOn: [] }];
    const bulk = (await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE content = ANY($1::text[]) ORDER BY id`, [contents])).rows.map(
      (r) => r.id,
    );
    const callsOf = async (runId: number) =>
      (await db.query<{ purpose: string; n: number }>(`SELECT purpose, count(*)::int AS n FROM auto_llm_runs WHERE run_id = $1 GROUP BY purpose`, [runId]))
        .rows;
    const statsOf = async (runId: number) =>
      (await db.query<{ stats: Record<string, number> }>(`SELECT stats FROM sleep_steps WHERE run_id = $1`, [runId])).rows[0]!.stats;
    /** The new memory each contradiction group of a run starts with, in order. */
    const heads = async (runId: number) => {
      const prompts = (
        await db.query<{ prompt: string }>(`SELECT prompt FROM auto_llm_runs WHERE run_id = $1 AND purpose = 'deep-sleep:contradictions' ORDER BY id`, [runId])
      ).rows;
      return prompts.flatMap(({ prompt }) => {
        const lines = prompt.split('\n');
        return lines.flatMap((l, i) => (/^### Group \d+$/.test(l) ? [Number(MEMORY_LINE.exec(lines[i + 1]!.trim())![1])] : []));
      });
    };

    const r = await runCycle(db, deepOnly(), { sleepDay: day(20), trigger: 'manual' });
    expect(r.status).toBe('done');
    const calls = await callsOf(r.runId);
    expect(calls.reduce((n, c) => n + c.n, 0)).toBeLessThanOrEqual(6);
    expect(calls.find((c) => c.purpose === 'deep-sleep:contradictions')!.n).toBe(2);
    const stats = await statsOf(r.runId);
    expect(stats.calls).toBe(calls.reduce((n, c) => n + c.n, 0));
    // The cap held the night to what two calls a round can show; the other new memories wait.
    expect(stats.deferred_memories).toBeGreaterThan(0);
    expect(stats.reviewed! + stats.deferred_memories!).toBe(60);
    const shownFirst = await heads(r.runId);
    expect(shownFirst).toEqual(bulk.slice(0, shownFirst.length));

    const pins = async (runId: number) =>
      (await db.query<{ memory_id: number }>(`SELECT memory_id::int AS memory_id FROM sleep_proposals WHERE run_id = $1 AND action = 'pin'`, [runId])).rows.map(
        (p) => p.memory_id,
      );
    expect(await pins(r.runId)).toEqual([cited[0]]);
    await deps.store.pin(cited[0]!, true, 'person');
    expect(await count(`SELECT count(*)::int AS n FROM memories WHERE pinned AND status = 'active'`)).toBe(40);

    // The next night goes on with the first memory the last one could not show (none is skipped),
    // and with 40 pinned there is no room for another pin proposal.
    const active = new Set((await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE status = 'active'`)).rows.map((m) => m.id));
    const next = await runCycle(db, deepOnly(), { sleepDay: day(21), trigger: 'manual' });
    expect(next.status).toBe('done');
    expect((await callsOf(next.runId)).reduce((n, c) => n + c.n, 0)).toBeLessThanOrEqual(6);
    expect((await heads(next.runId))[0]).toBe(bulk.find((id) => id > shownFirst.at(-1)! && active.has(id)));
    expect(await pins(next.runId)).toEqual([]);
  }, 60_000);
});
