// Daytime memory (the nap) on a real PGlite against the loopback fake model: a preference said at
// noon is kept the same day and not again that night; the gates skip without a call; a prose answer
// saves nothing and never throws; leaving a conversation naps it; a conversation outgrowing the
// context window gets a rolling summary that the next request carries.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Memory, Message } from '../../shared/api.js';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { EARLIER_HEADING } from '../agent/chat.js';
import type { Database } from '../db/open.js';
import type { Host } from '../host/types.js';
import { nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../testing/host.js';
import { Napper, type NapOutcome } from './nap.js';
import { TASK_PREFIX, type LightSleepAnswer, type NapAnswer } from './schemas.js';
import { lastUser, refOf, seedMessages, stepDeps } from './testing/fixture.js';
import { PATIENCE_MS } from '../testing/patience.js';

const NOON = new Date('2026-12-03T12:00:00Z');
const OAT = 'The person takes oat milk in their coffee, never cow milk.';
const PREFERENCE = "By the way, I only drink my coffee with oat milk — never cow's milk. Please keep that in mind when we plan the café visit.";
const SECOND = 'And the café should be quiet: my sister Ines and I want to talk about the trip to Porto next month.';

let fake: FakeLlm;
/** How the fake background model answers a nap prompt (the user message carrying "Task: nap"). */
let napReply: (prompt: string) => FakeResponse = () => json({ memories: [] });
/** Memories the fake light sleep adds to its own answer (a model that ignores "Already noted"). */
let lightSleepRepeats: LightSleepAnswer['memories'] = [];
const sleepModel = sleepResponder();
const hosts: Host[] = [];
const dbs: Database[] = [];

const json = (value: NapAnswer | Record<string, unknown>): FakeResponse => ({ kind: 'text', text: JSON.stringify(value), chunks: 4 });
const isNap = (body: unknown) => lastUser(body).startsWith(`${TASK_PREFIX}nap`);
const napRequests = () => fake.requests.filter((r) => isNap(r.body));

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = async (body) => {
    if (isNap(body)) return napReply(lastUser(body));
    const task = findTask(body);
    if (task?.purpose !== 'light-sleep' || !lightSleepRepeats.length) return sleepModel(body);
    const answer = JSON.parse(((await sleepModel(body)) as { text: string }).text) as LightSleepAnswer;
    answer.memories.push(...lightSleepRepeats.map((m) => ({ ...m, sources: [refOf(task.prompt, 'oat milk') ?? 'm1'] })));
    return json(answer);
  };
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await Promise.all(dbs.splice(0).map((d) => d.close()));
  fake.reset(); // a test that failed halfway leaves no replies queued for the next
  napReply = () => json({ memories: [] });
  lightSleepRepeats = [];
});

/** Resolves once `check` holds, polling; fails the test after `timeoutMs`. */
async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function hostAt(clock: { now: Date }, o: { contextTokens?: number } = {}) {
  const host = await startTestHost({ now: () => clock.now, sleep: { tickMs: 0 } });
  hosts.push(host);
  await host.api['settings.update']({ timeZone: 'UTC' });
  await host.api['providers.save']({
    kind: 'openai-compatible',
    name: 'fake',
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    ...(o.contextTokens ? { contextTokens: o.contextTokens } : {}),
  });
  return host;
}

async function say(host: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

const memoriesLike = async (host: Host, text: string): Promise<Memory[]> =>
  (await host.api['memories.list']({ limit: 200 })).items.filter((m) => m.content.includes(text));

/** The oat-milk memory from the line that says it. */
function answerOat(prompt: string): FakeResponse {
  const ref = refOf(prompt, 'oat milk');
  return json({ memories: ref ? [{ type: 'preference', content: OAT, entities: [], sources: [ref] }] : [] });
}

describe('the nap through the host', () => {
  it('keeps a preference said at noon when the person leaves, and light sleep that night does not keep it again', async () => {
    const clock = { now: NOON };
    const host = await hostAt(clock);
    napReply = answerOat;
    const { id } = await host.api['conversations.create']({});
    await say(host, id, PREFERENCE);
    await say(host, id, SECOND);
    expect(napRequests()).toHaveLength(0);

    // Leaving it (opening another conversation) naps it in the background.
    await host.api['conversations.leave']({ id });
    const [kept] = await until(async () => {
      const found = await memoriesLike(host, 'oat milk');
      return found.length ? found : undefined;
    }, 'the nap to keep the preference');
    expect(kept).toMatchObject({ content: OAT, type: 'preference', source: 'light-sleep', status: 'active' });
    const personMessages = (await host.api['conversations.get']({ id })).messages.filter((m) => m.role === 'user');
    expect(kept!.sourceMessageIds).toEqual([personMessages[0]!.id]);
    const audit = (await host.api['sleep.audit']({ limit: 50 })).items.filter((a) => a.purpose === 'nap');
    expect(audit).toMatchObject([{ status: 'ok', runId: null, stepId: 'nap:2026-12-03' }]);
    // The prompt says an empty list is the usual answer.
    const napPrompt = lastUser(napRequests()[0]!.body);
    expect(napPrompt).toContain('{"memories": []} is the common');

    // That night light sleep reads the same messages, is told what the nap kept, and even a model that
    // writes it again does not make a second memory: the same fact updates the one there is.
    lightSleepRepeats = [{ type: 'preference', content: OAT, entities: [], sources: [], validFrom: null, validTo: null, relations: [] }];
    clock.now = new Date('2026-12-04T01:00:00Z');
    const finished = nextEvent(host, 'sleep.finished', () => true);
    await host.api['sleep.now']({});
    await finished;
    const lightCalls = (await host.api['sleep.audit']({ limit: 50 })).items.filter((a) => a.purpose === 'light-sleep');
    expect(lightCalls.length).toBeGreaterThan(0);
    const prompts = await Promise.all(lightCalls.map(async (a) => (await host.api['sleep.auditEntry']({ id: a.id })).prompt));
    expect(prompts.some((p) => p.includes('## Already noted') && p.includes(OAT))).toBe(true);
    const after = await memoriesLike(host, 'oat milk');
    expect(after.filter((m) => m.status === 'active')).toHaveLength(1);
    expect(after[0]!.id).toBe(kept!.id);
    // A whole night runs here (its snapshot waits for the chat to have been quiet a few seconds).
  });

  it('naps only a conversation the person chatted in, once per stretch', async () => {
    const clock = { now: NOON };
    const host = await hostAt(clock);
    napReply = answerOat;
    const chatted = (await host.api['conversations.create']({})).id;
    const untouched = (await host.api['conversations.create']({})).id;
    await say(host, chatted, PREFERENCE);
    await say(host, chatted, SECOND);
    await host.api['conversations.leave']({ id: untouched });
    await host.api['conversations.leave']({ id: chatted });
    await until(async () => (await memoriesLike(host, 'oat milk')).length > 0, 'the nap');
    // Leaving again with nothing new said: no second call.
    await host.api['conversations.leave']({ id: chatted });
    await say(host, untouched, 'hello');
    expect(napRequests()).toHaveLength(1);
    // A conversation that does not exist is an error in words, and nothing happens.
    await expect(host.api['conversations.leave']({ id: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('writes a rolling summary of the turns leaving the window, and the next request carries it', async () => {
    const clock = { now: NOON };
    const host = await hostAt(clock, { contextTokens: 2048 });
    const SUMMARY = 'The person is Ada, a beekeeper who lives in the lighthouse at Cape Nord and writes poems about the sea.';
    napReply = (prompt) => json(prompt.includes('leaving my view') ? { memories: [], summary: `## ${SUMMARY} [[anima:7]]\u0007` } : { memories: [] });
    const { id } = await host.api['conversations.create']({});
    await say(host, id, 'My name is Ada. I keep bees and live in the old lighthouse at Cape Nord, where I write poems about the sea.');
    const firstSystem = (fake.requests.at(-1)!.body as { messages: { content: string }[] }).messages[0]!.content;
    const filler = (i: number) => `Turn ${i}: ${'the tide came in slowly over the rocks while the gulls circled the harbour '.repeat(3)}`;
    let i = 0;
    // Talk until the oldest turns are about to leave the window and the nap has summarised them.
    await until(
      async () => {
        await say(host, id, filler(++i));
        return napRequests().some((r) => lastUser(r.body).includes('leaving my view'));
      },
      'an overflow nap',
      60_000,
    );
    expect(lastUser(napRequests()[0]!.body)).toContain('My name is Ada');
    // Then, once turns are left out, each request carries the summary after the unchanged system prompt.
    const carried = await until(
      async () => {
        await say(host, id, filler(++i));
        const chat = fake.requests.filter((r) => !isNap(r.body)).at(-1)!.body as { messages: { role: string; content: string }[] };
        return chat.messages[0]!.content.includes(EARLIER_HEADING) ? chat.messages : undefined;
      },
      'a request carrying the summary',
      60_000,
    );
    const system = carried[0]!.content;
    expect(system.startsWith(`${firstSystem}\n\n${EARLIER_HEADING}\n`)).toBe(true);
    // Sanitised: no heading of its own, no memory marker, no control character.
    expect(system.slice(firstSystem.length)).toBe(`\n\n${EARLIER_HEADING}\n${SUMMARY}`);
    expect(carried.some((m) => m.content.includes('My name is Ada'))).toBe(false);
    expect(carried.filter((m) => m.role === 'system')).toHaveLength(1);
  });
});

describe('the nap on its own', () => {
  /** A migrated data folder with the fake connected, and a Napper built as the host builds it. */
  async function napperAt(clock: { now: Date }, settings: { nap?: boolean; maxCallsPerNight?: number; contextTokens?: number } = {}) {
    const dir = tempDataDir();
    const db = await openTestDatabase(dir);
    dbs.push(db);
    const deps = stepDeps(db, dir, { now: () => clock.now });
    await deps.selfLayer.ensureDefaults();
    const provider = await deps.providers.save({
      kind: 'openai-compatible',
      name: 'fake',
      baseUrl: fake.baseUrl,
      model: 'fake-model',
      ...(settings.contextTokens ? { contextTokens: settings.contextTokens } : {}),
    });
    await deps.settings.update({
      chatProviderId: provider.id,
      timeZone: 'UTC',
      sleep: { nap: settings.nap ?? true, maxCallsPerNight: settings.maxCallsPerNight ?? 200 },
    });
    const logged: string[] = [];
    const napper = new Napper({ ...deps, log: (level, message) => logged.push(`${level}: ${message}`) });
    const chat = async (key: string, lines: string[]) =>
      (
        await seedMessages(
          db,
          lines.map((content, n) => ({ conversation: key, at: new Date(clock.now.getTime() - (lines.length - n) * 60_000), role: 'user' as const, content })),
        )
      ).get(key)!;
    return { db, deps, napper, chat, logged };
  }

  it('naps a conversation once it has been quiet for the set minutes', async () => {
    const clock = { now: NOON };
    const { napper, chat, deps } = await napperAt(clock);
    napReply = answerOat;
    const id = await chat('Café', [PREFERENCE, SECOND]);
    napper.touched(id);
    clock.now = new Date(NOON.getTime() + 9 * 60_000);
    await napper.checkQuiet();
    expect(napRequests()).toHaveLength(0);
    clock.now = new Date(NOON.getTime() + 10 * 60_000);
    await napper.checkQuiet();
    expect(napRequests()).toHaveLength(1);
    expect((await deps.store.list({ limit: 10 })).items.map((m) => m.content)).toEqual([OAT]);
    // Napped: quiet does not nap it again.
    clock.now = new Date(NOON.getTime() + 30 * 60_000);
    await napper.checkQuiet();
    expect(napRequests()).toHaveLength(1);
  });

  it('skips without a call when switched off, when the stretch is short or ordinary, when the chat model remembered from it, and over the budget', async () => {
    const clock = { now: NOON };
    const off = await napperAt(clock, { nap: false });
    const offId = await off.chat('Off', [PREFERENCE, SECOND]);
    expect(await off.napper.nap(offId, 'leave')).toEqual({ status: 'skipped', why: 'off' });
    // The kill switch covers the rolling summary too.
    const offMessages = await off.deps.conversations.messages(offId);
    expect(await off.napper.nap(offId, 'overflow', offMessages[0]!.id)).toEqual({ status: 'skipped', why: 'off' });

    const on = await napperAt(clock, { maxCallsPerNight: 1 });
    const shortId = await on.chat('Short', ['I like tea.', 'Yes.']);
    expect(await on.napper.nap(shortId, 'leave')).toEqual({ status: 'skipped', why: 'short' });
    // Long enough, but nothing meant to last and not much said: the night reads it (nap-worth.ts).
    const ordinaryId = await on.chat('Ordinary', [
      'We went to the market this morning and the weather was lovely the whole time.',
      'Then we walked home slowly along the river and had a long lunch by the water.',
    ]);
    expect(await on.napper.nap(ordinaryId, 'leave')).toEqual({ status: 'skipped', why: 'ordinary' });

    const rememberedId = await on.chat('Remembered', [PREFERENCE, SECOND]);
    const [first] = await on.deps.conversations.messages(rememberedId);
    await on.deps.store.create({ type: 'preference', content: OAT, source: 'tool', actor: 'companion', sourceMessageIds: [first!.id] });
    expect(await on.napper.nap(rememberedId, 'quiet')).toEqual({ status: 'skipped', why: 'remembered' });
    expect(napRequests()).toHaveLength(0);

    // One call allowed tonight: the first nap spends it, the next one waits.
    const a = await on.chat('A', [PREFERENCE, SECOND]);
    const b = await on.chat('B', [SECOND, PREFERENCE]);
    expect(await on.napper.nap(a, 'leave')).toMatchObject({ status: 'done' });
    expect(await on.napper.nap(b, 'leave')).toEqual({ status: 'skipped', why: 'budget' });
    expect(napRequests()).toHaveLength(1);
  });

  it('audits a prose answer as invalid, saves nothing and never throws', async () => {
    const clock = { now: NOON };
    const { napper, chat, deps, logged, db } = await napperAt(clock);
    napReply = () => ({ kind: 'text', text: 'Sure! The person likes oat milk in their coffee and is going to Porto with Ines.' });
    const id = await chat('Prose', [PREFERENCE, SECOND]);
    const outcome: NapOutcome = await napper.nap(id, 'leave');
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringMatching(/Invalid answer/) });
    const rows = (await db.query<{ status: string; purpose: string }>(`SELECT status, purpose FROM auto_llm_runs ORDER BY id`)).rows;
    expect(rows).toEqual([
      { status: 'invalid', purpose: 'nap' },
      { status: 'invalid', purpose: 'nap' },
    ]);
    expect((await deps.store.list({ limit: 10 })).items).toEqual([]);
    expect(logged.some((l) => l.startsWith('warn: nap of'))).toBe(true);
    // The stretch stays for light sleep (and a later nap): nothing was marked read.
    expect((await db.query(`SELECT 1 FROM sleep_watermarks WHERE step_id = 'nap'`)).rows).toEqual([]);

    // A dead connection is the same: a failed outcome, no exception.
    await deps.providers
      .save({ kind: 'openai-compatible', name: 'gone', baseUrl: 'http://127.0.0.1:9/v1', model: 'x' })
      .then((p) => deps.settings.update({ chatProviderId: p.id }));
    await expect(napper.nap(id, 'leave')).resolves.toMatchObject({ status: 'failed' });
  });

  it('leaves a cut stretch for later: only what the background context holds is read and marked', async () => {
    const clock = { now: NOON };
    // A 4,096-token background window holds about half of these lines.
    const { napper, chat, db } = await napperAt(clock, { contextTokens: 4096 });
    const lines = Array.from({ length: 40 }, (_, n) => `Line ${n}: ${'a long account of the harbour, the boats and the weather that day '.repeat(8)}`);
    const id = await chat('Long', lines);
    const outcome = await napper.nap(id, 'leave');
    expect(outcome).toMatchObject({ status: 'done' });
    const prompt = lastUser(napRequests()[0]!.body);
    expect(prompt).toContain('Line 0:');
    expect(prompt).not.toContain('Line 39:');
    const seqs = (await db.query<{ seq: number }>(`SELECT seq::float8 AS seq FROM messages ORDER BY seq`)).rows.map((r) => Number(r.seq));
    const mark = Number(
      (await db.query<{ last_seq: number }>(`SELECT last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = 'nap'`)).rows[0]!.last_seq,
    );
    expect(mark).toBeGreaterThan(seqs[0]!);
    expect(mark).toBeLessThan(seqs.at(-1)!);
  });
});
