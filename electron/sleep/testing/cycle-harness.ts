import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../../e2e/fake-llm/server.js';
import { answerSleepTask, findTask, sleepResponder, type SleepPurpose } from '../../../e2e/fake-llm/sleep-responder.js';
import { type ApiEvents, type AuditEntry, type DiaryBlock, type Memory, type Message, type SleepRun } from '../../../shared/api.js';
import { nextDay } from '../../../shared/sleep-day.js';
import { openDatabase, type Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import type { Host } from '../../host/types.js';
import { MemoryStore } from '../../memory/store.js';
import { stepDeps } from './fixture.js';
import { copiedTestData, dbTemplate, nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../../testing/host.js';
import { TRANSCRIPT_LINE, type LightSleepAnswer } from '../schemas.js';
import { type SleepStepDeps } from '../steps/deps.js';
import { freeBytes } from '../steps/simple.js';

// ---- Time: the host's clock sits at noon UTC of the real day, the chats on the days before ----

export const TODAY = new Date().toISOString().slice(0, 10);
export const day = (offset: number) => nextDay(TODAY, offset);
export const at = (d: string, hour: number, minute = 0) => new Date(`${d}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`);

// ---- The model: one loopback server, a per-task script in front of a default answer ----

export type Reply = FakeResponse | ((prompt: string) => FakeResponse);
export type Answer = (body: unknown) => FakeResponse | undefined | Promise<FakeResponse | undefined>;

export const responder = sleepResponder();
export const model = {
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

export const json = (value: unknown): FakeResponse => ({ kind: 'text', text: JSON.stringify(value), chunks: 6 });
/** The responder's own light-sleep answer for this prompt, edited. */
export const lightSleep =
  (edit: (a: LightSleepAnswer, prompt: string) => void = () => {}) =>
  (prompt: string): FakeResponse => {
    const a = answerSleepTask('light-sleep', prompt) as LightSleepAnswer;
    edit(a, prompt);
    return json(a);
  };
/** A server error the client retries at once (no backoff wait in tests). */
export const ERROR_500: FakeResponse = { kind: 'error', status: 500, headers: { 'retry-after-ms': '0' } };
export const sleepIsDown: Answer = (body) => (findTask(body) ? ERROR_500 : undefined);

export let fake: FakeLlm;

// ---- Reading prompts ----

/** The message texts a light-sleep prompt showed, in order. */
export function said(prompt: string): string[] {
  return prompt.split('\n').flatMap((line) => {
    const m = TRANSCRIPT_LINE.exec(line);
    return m ? [m[4]!] : [];
  });
}

// ---- Data folders: one migrated blank, copied and filled per scenario ----

export let blankDir: string;
export const dirs: string[] = [];

export function copyOf(src: string): string {
  const dir = tempDataDir('anima-cycle-');
  fs.cpSync(src, dir, { recursive: true });
  copiedTestData(src, dir);
  dirs.push(dir);
  return dir;
}

export async function seedDir<T>(
  fill: (s: { db: Database; conversations: Conversations; store: MemoryStore }) => Promise<T>,
): Promise<{ dir: string; value: T }> {
  const dir = copyOf(blankDir);
  const db = await openTestDatabase(dir);
  try {
    return { dir, value: await fill({ db, conversations: new Conversations(db), store: new MemoryStore(db) }) };
  } finally {
    await db.close();
  }
}

export interface Line {
  who: 'Mara' | 'Me';
  text: string;
}

/** A conversation with backdated messages, two minutes apart from `hour` on sleep day `d`. */
export async function talk(conversations: Conversations, title: string, d: string, lines: Line[], hour = 10): Promise<string> {
  const { id } = await conversations.create(title);
  await appendLines(conversations, id, d, lines, hour);
  return id;
}

export async function appendLines(conversations: Conversations, conversationId: string, d: string, lines: Line[], hour: number): Promise<void> {
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
export const LONG: Line[] = [
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
export const LONG_TEXTS = LONG.map((l) => l.text);

export let longDir: string;

// ---- Hosts ----

export interface Opened {
  host: Host;
  dir: string;
  /** The host's clock; tests move it a day at a time. */
  clock: { now: Date };
  /** When low, the disk looks full and the snapshot is skipped (also spares the tests the dump). */
  disk: { low: boolean };
}

export const hosts: Host[] = [];

/** Each scenario closes its host when done: several PGlite instances at once would crowd a small machine. */
export async function closeHost(o: Opened | undefined): Promise<void> {
  const at = o ? hosts.indexOf(o.host) : -1;
  if (at < 0) return;
  hosts.splice(at, 1);
  await o!.host.close();
}

export async function openHost(dir: string, { lowDisk = false } = {}): Promise<Opened> {
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

export async function connect(host: Host, o: { contextTokens?: number; name?: string } = {}) {
  return host.api['providers.save']({
    kind: 'openai-compatible',
    name: o.name ?? 'fake',
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    ...(o.contextTokens ? { contextTokens: o.contextTokens } : {}),
  });
}

/** "Sleep now", waited for: the finished event and the run as the Sleep view reads it. */
export async function night(host: Host): Promise<{ event: ApiEvents['sleep.finished']; run: SleepRun }> {
  const finished = nextEvent(host, 'sleep.finished', () => true, 60_000) as Promise<ApiEvents['sleep.finished']>;
  const started = await host.api['sleep.now']({});
  const event = await finished;
  expect(event.runId).toBe(started.runId);
  const [run] = await host.api['sleep.runs']({ limit: 1 });
  expect(run!.id).toBe(event.runId);
  return { event, run: run! };
}

export function stepOf(run: SleepRun, stepId: string) {
  const step = run.steps.find((s) => s.stepId === stepId);
  if (!step) throw new Error(`run ${run.id} has no step ${stepId}`);
  return step;
}

/** A run's background calls, oldest first. */
export async function auditOf(host: Host, runId: number, purpose?: string): Promise<AuditEntry[]> {
  const { items } = await host.api['sleep.audit']({ limit: 200 });
  return items.filter((a) => a.runId === runId && (purpose === undefined || a.purpose === purpose)).reverse();
}

export async function promptOf(host: Host, entry: AuditEntry): Promise<string> {
  return (await host.api['sleep.auditEntry']({ id: entry.id })).prompt;
}

export async function allMemories(host: Host): Promise<Memory[]> {
  return (await host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 })).items;
}

export async function anchorsOf(host: Host): Promise<DiaryBlock[]> {
  return (await host.api['diary.days']({ limit: 90 })).flatMap((d) => d.anchors);
}

export async function messagesOf(host: Host, conversationId: string): Promise<Message[]> {
  return (await host.api['conversations.get']({ id: conversationId })).messages;
}

/** Sends a chat message and waits for the (echoed) reply to be stored. */
export async function say(host: Host, conversationId: string, content: string): Promise<void> {
  const done = nextEvent(host, 'chat.finished', (p: ApiEvents['chat.finished']) => p.conversationId === conversationId, 20_000);
  await host.api['chat.send']({ conversationId, content });
  const { message } = (await done) as ApiEvents['chat.finished'];
  expect(message.status).toBe('complete');
}

export const DEPENDANTS = ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest'];

// ---- The runner without a host (crash simulation) ----

export function depsFor(db: Database, dir: string, extra: Partial<SleepStepDeps> = {}): SleepStepDeps {
  // A full disk: no snapshot dumps in the runner tests (the full-night test takes a real one).
  return stepDeps(db, dir, { now: () => at(TODAY, 12), extra: { freeBytes: () => 1, ...extra } });
}

/** A pid that is certainly not running: a child that has already exited. */
export function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

// ---------------------------------------------------------------------------------------------

/** The file's hooks: the loopback model (scripted per task in front of the sleep responder), a blank migrated folder, the long conversation's folder; all closed and removed after. */
export function useCycleHarness(): void {
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
}
