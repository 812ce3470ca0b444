// The on-device model as the sleep cycle's background model: whole nights through the real host, on
// real PGlite, with the real transformers.js worker running the generated tiny chat model (random
// weights: meaningless text that never ends by itself, so every reply runs to its token limit).
//
// Two set-ups of the same weights:
//  - as shipped (catalogue id, 2,048-token context): light sleep's prompt alone does not fit — the
//    tiny tokenizer spends about two characters a token — so the worker refuses it as too long; the
//    night fails at light sleep with that reason, in words, and nothing else runs;
//  - with room (the same files under an id the catalogue does not cap, config context 8,192; the
//    graph has no position table, so longer inputs run): the model answers, and its answers go
//    through the same JSON check as any provider's — invalid, one repair turn, invalid again,
//    nothing saved, the night failed in words, the chunk left for the next night (which the budget
//    then stops).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEvents, AuditEntry, AuditEntryDetail, Message, SleepRun } from '../../shared/api.js';
import { nextDay } from '../../shared/sleep-day.js';
import { openDatabase } from '../db/open.js';
import { TEST_CHAT_MODEL_ID } from '../models/catalog.js';
import { Conversations } from '../conversations/conversations.js';
import type { Host } from '../host/types.js';
import { unloadLocalModel } from '../llm/local.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { UNUSABLE_ANSWERS } from './usable.js';

const TINY_CHAT = fileURLToPath(new URL('../models/testing/models/anima-test/tiny-chat', import.meta.url));
/** The same weights, installed under an id the catalogue does not list, so only config.json sets the context. */
const ROOMY_MODEL_ID = 'anima-test/tiny-chat-8k';
const ROOMY_CONTEXT = 8_192;

const TODAY = new Date().toISOString().slice(0, 10);
const YESTERDAY = nextDay(TODAY, -1);

const LINES = [
  { role: 'user' as const, text: 'I adopted a grey cat called Pixel from the shelter on Saturday.' },
  { role: 'assistant' as const, text: 'Welcome home, Pixel! How is she settling in?' },
  { role: 'user' as const, text: 'She hides under the sofa, but she purred when I fed her.' },
  { role: 'assistant' as const, text: 'Purring is a good sign; give her a few quiet days.' },
];
const STEPS_AFTER_LIGHT_SLEEP = ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest'];

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

interface Scene {
  host: Host;
  closed: boolean;
  dir: string;
  conversationId: string;
  messagesBefore: Message[];
}

/**
 * A fresh data folder holding yesterday's short conversation (written before the host starts, as
 * cycle.test.ts seeds its nights), a host on it, the tiny model in its models/ folder under
 * `modelId`, and a local connection to it as the background model, with a small nightly budget.
 */
async function scene(modelId: string, config: Record<string, unknown> = {}): Promise<Scene> {
  const dir = tempDataDir('anima-local-bg-');
  let conversationId!: string;
  const db = await openDatabase(dir, { template: dbTemplate() });
  try {
    const conversations = new Conversations(db);
    ({ id: conversationId } = await conversations.create('Pixel'));
    for (const [i, line] of LINES.entries()) {
      await conversations.append({
        conversationId,
        role: line.role,
        content: line.text,
        status: 'complete',
        speaker: line.role === 'user' ? 'Mara' : null,
        createdAt: new Date(`${YESTERDAY}T10:0${i * 2}:00.000Z`),
      });
    }
  } finally {
    await db.close();
  }
  const host = await startTestHost({ dataDir: dir, now: () => new Date(`${TODAY}T12:00:00.000Z`), sleep: { tickMs: 0 } });
  const installed = path.join(host.dataDir, 'models', ...modelId.split('/'));
  fs.cpSync(TINY_CHAT, installed, { recursive: true });
  if (Object.keys(config).length) {
    const original = JSON.parse(fs.readFileSync(path.join(installed, 'config.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(installed, 'config.json'), JSON.stringify({ ...original, ...config }));
  }
  // A declared context of 2,048 keeps light sleep's answer limit at its floor of 512 tokens
  // (max(512, context / 4)): the shortest generation the code allows.
  const local = await host.api['providers.save']({ kind: 'local', name: 'Tiny', baseUrl: '', model: modelId, contextTokens: 2048 });
  await host.api['settings.update']({ timeZone: 'UTC', backgroundProviderId: local.id, sleep: { maxCallsPerNight: 2 } });
  const messagesBefore = (await host.api['conversations.get']({ id: conversationId })).messages;
  return { host, closed: false, dir, conversationId, messagesBefore };
}

/** "Sleep now", waited for: the finished event, the run as the Sleep view reads it, its audited calls (oldest first). */
async function night(host: Host): Promise<{ event: ApiEvents['sleep.finished']; run: SleepRun; audit: AuditEntryDetail[] }> {
  const finished = nextEvent(host, 'sleep.finished', () => true) as Promise<ApiEvents['sleep.finished']>;
  const started = await host.api['sleep.now']({});
  const event = await finished;
  expect(event.runId).toBe(started.runId);
  const [run] = await host.api['sleep.runs']({ limit: 1 });
  expect(run!.id).toBe(event.runId);
  const rows: AuditEntry[] = (await host.api['sleep.audit']({ limit: 50 })).items.filter((a) => a.runId === run!.id).reverse();
  const audit = await Promise.all(rows.map((a) => host.api['sleep.auditEntry']({ id: a.id })));
  return { event, run: run!, audit };
}

function stepOf(run: SleepRun, stepId: string) {
  const step = run.steps.find((s) => s.stepId === stepId);
  if (!step) throw new Error(`run ${run.id} has no step ${stepId}`);
  return step;
}

/** Nothing was made of the garbage: no memory of any status, no diary block, and the person's messages as they were. */
async function expectNothingSaved(s: Scene): Promise<void> {
  const memories = await s.host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 });
  expect(memories).toMatchObject({ items: [], total: 0 });
  expect(await s.host.api['diary.days']({})).toEqual([]);
  const after = (await s.host.api['conversations.get']({ id: s.conversationId })).messages;
  expect(after).toEqual(s.messagesBefore);
  expect(after.map((m) => m.content)).toEqual(LINES.map((l) => l.text));
}

/** The host closes within a bound (no step, worker or timer holding it open). */
async function closeHost(s: Scene): Promise<void> {
  s.closed = true;
  await within(s.host.close(), 15_000, 'closing the host');
}

/** After a scenario: the host if a failed test left it open, then the model thread, then the folder. */
async function cleanUp(s: Scene | undefined): Promise<void> {
  try {
    if (s && !s.closed) await s.host.close();
  } finally {
    await unloadLocalModel();
    if (s) fs.rmSync(s.dir, { recursive: true, force: true });
  }
}

describe('the tiny local model as shipped (2,048-token context) as the background model', () => {
  let s: Scene | undefined;
  let result: Awaited<ReturnType<typeof night>>;

  beforeAll(async () => {
    s = await scene(TEST_CHAT_MODEL_ID);
    result = await night(s.host);
  });

  afterAll(() => cleanUp(s));

  it('reaches the local model, which refuses the light-sleep prompt as too long: audited as an error naming the model and the numbers', () => {
    const { audit } = result;
    expect(audit).toHaveLength(1);
    const [call] = audit as [AuditEntryDetail];
    expect(call).toMatchObject({ purpose: 'light-sleep', stepId: 'light-sleep', model: TEST_CHAT_MODEL_ID, status: 'error', response: '', responseChars: 0 });
    const [, prompt, reply, context] =
      /^The conversation is too long for the local model "anima-test\/tiny-chat": the prompt is (\d+) tokens and the reply needs up to (\d+) more, but the model reads at most (\d+) tokens in all\./.exec(
        call.error ?? '',
      ) ?? [];
    expect([reply, context]).toEqual(['512', '2048']);
    // Over the context before a single word of answer: the prompt itself is too long for this tokenizer.
    expect(Number(prompt)).toBeGreaterThan(2048 - 512);
    // The transcript was in it: the model was asked about the person's conversation.
    for (const line of LINES) expect(call.prompt).toContain(line.text);
  });

  it('fails the night at light sleep with that reason; the steps that need it are skipped, in words', () => {
    const { event, run } = result;
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed', sleepDay: TODAY });
    expect(run).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    expect(stepOf(run, 'memory-ref-sync').status).toBe('done');
    const light = stepOf(run, 'light-sleep');
    expect(light.status).toBe('failed');
    expect(light.error).toMatch(
      /^The background model did not answer \(The conversation is too long for the local model "anima-test\/tiny-chat": .*\); 0 of 1 chunks were done, the rest waits for the next run\.$/,
    );
    expect(light.stats).toMatchObject({ calls: 1, messages: 4, conversations: 1, chunks_done: 0, invalid_chunks: 0, memories_created: 0 });
    for (const id of STEPS_AFTER_LIGHT_SLEEP) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
  });

  it('saves nothing, keeps every message, and the host closes cleanly', async () => {
    await expectNothingSaved(s!);
    const status = await s!.host.api['sleep.status']({});
    expect(status).toMatchObject({ running: null, blocked: null, budget: { calls: 1, maxCalls: 2 } });
    await closeHost(s!);
  });
});

describe('the same tiny model with room in its context (8,192 tokens) as the background model', () => {
  let s: Scene | undefined;
  let first: Awaited<ReturnType<typeof night>>;

  beforeAll(async () => {
    s = await scene(ROOMY_MODEL_ID, { max_position_embeddings: ROOMY_CONTEXT });
    first = await night(s.host);
  });

  afterAll(() => cleanUp(s));

  it('sends light sleep to the local model; its text is judged invalid JSON, repaired once, invalid again — both attempts audited', () => {
    const { audit } = first;
    expect(audit.map((a) => [a.purpose, a.model, a.status])).toEqual([
      ['light-sleep', ROOMY_MODEL_ID, 'invalid'],
      ['light-sleep', ROOMY_MODEL_ID, 'invalid'],
    ]);
    const [answer, repair] = audit as [AuditEntryDetail, AuditEntryDetail];
    for (const a of audit) {
      expect(a.error).toMatch(/^Invalid answer: it is not valid JSON \(/);
      // The model did write: meaningless text, cut at the answer limit (it never picks its end token).
      expect(a.response.trim()).not.toBe('');
      expect(a.responseChars).toBe(a.response.length);
      expect(a.completionTokens).toBe(512);
      expect(a.promptTokens).toBeGreaterThan(2048 - 512);
    }
    for (const line of LINES) expect(answer.prompt).toContain(line.text);
    // The repair turn asks for the JSON alone. The declared context (2,048) is already full with the
    // first prompt and its answer, so it names the problem without quoting the answer — quoting it
    // would make the local model refuse the repair as too long.
    expect(repair.prompt).not.toContain(answer.response.trim().slice(0, 200));
    expect(repair.prompt).toContain('Your previous answer could not be used: it is not valid JSON');
    expect(repair.promptTokens).toBeGreaterThan(answer.promptTokens!);
  });

  it('fails the night at light sleep in words: every answer was unusable; the invalid chunk is counted, nothing written, the steps that need it skipped', () => {
    // A night whose every call came back unusable did not work, and says so (a night with some usable
    // answers is done and counts its invalid chunks: night-failed.test.ts).
    const { event, run } = first;
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed', sleepDay: TODAY });
    expect(run).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    expect(stepOf(run, 'light-sleep')).toMatchObject({
      status: 'failed',
      error: UNUSABLE_ANSWERS,
      stats: expect.objectContaining({
        calls: 1,
        messages: 4,
        conversations: 1,
        chunks_done: 0,
        invalid_chunks: 1,
        memories_created: 0,
        anchors: 0,
        imprints: 0,
        narratives: 0,
        unusable_answers: 2,
        failed_calls: 0,
      }),
    });
    expect(stepOf(run, 'memory-ref-sync').status).toBe('done');
    for (const id of STEPS_AFTER_LIGHT_SLEEP) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
  });

  it('saves nothing from the garbage and keeps every message', async () => {
    await expectNothingSaved(s!);
    const status = await s!.host.api['sleep.status']({});
    expect(status).toMatchObject({ running: null, blocked: null, budget: { calls: 2, maxCalls: 2 } });
  });

  it('leaves the chunk unread: a second night wants it again, and stops on the spent budget without calling the model; the host then closes cleanly', async () => {
    const { event, run, audit } = await night(s!.host);
    expect(audit).toEqual([]);
    const budget = /^Over tonight's budget for background work \(2 of 2 calls, \d+ of \d+ tokens\); the rest waits for the next night\.$/;
    expect(event.status).toBe('stopped');
    expect(event.error).toMatch(budget);
    expect(run).toMatchObject({ status: 'stopped', error: event.error });
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'stopped', error: event.error });
    for (const id of STEPS_AFTER_LIGHT_SLEEP) expect(stepOf(run, id).status).toBe('skipped');
    await expectNothingSaved(s!);
    await closeHost(s!);
  });
});
