// A forget while an overflow nap's model call is out: the nap read the conversation's rolling summary
// before the call, the forget sets that summary aside, and the nap's answer (a summary carrying on
// from it, which may say the forgotten fact again) must not go live. Its memories are still kept, and
// the next overflow summarises afresh. On a real on-disk PGlite against the loopback fake model, which
// holds the nap's answer until the test has forgotten.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import type { Database } from '../db/open.js';
import { summariesFollowForgets } from '../forgetting/summaries.js';
import { openTestDatabase, tempDataDir } from '../testing/host.js';
import { waitUntil } from '../testing/patience.js';
import { Napper } from './nap.js';
import { TASK_PREFIX } from './schemas.js';
import { lastUser, refOf, stepDeps } from './testing/fixture.js';

const NOON = new Date('2026-12-03T12:00:00Z');
const FACT = 'Mara is allergic to peanuts.';
const DINNER = ['The doctor says I am allergic to peanuts, so no more satay for me.', 'That is a big change, I am glad you found out.'];
// The summary of the dinner tells the fact in its own words (the forget sets it aside).
const DINNER_SUMMARY = 'She told me she is allergic to peanuts, and we planned Lisbon in May.';
// What the held nap answers: carrying on from DINNER_SUMMARY, it says the fact again.
const CARRIED_SUMMARY = 'She is allergic to peanuts; we planned Lisbon in May and she takes oat milk in her coffee.';
const FRESH_SUMMARY = 'We planned Lisbon in May; she takes oat milk in her coffee.';
const OAT = 'The person takes oat milk in their coffee, never cow milk.';
const LATER = [
  "By the way, I only drink my coffee with oat milk — never cow's milk. Please keep that in mind when we plan the café visit.",
  'Noted: oat milk it is.',
];

let fake: FakeLlm;
const napPrompts: string[] = [];
/** Resolved by the test to let the held nap answer; null: naps answer at once. */
let held: { release: () => void; released: Promise<void> } | null = null;
const dbs: Database[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = async (body) => {
    const prompt = lastUser(body);
    if (!prompt.startsWith(`${TASK_PREFIX}nap`)) return undefined;
    napPrompts.push(prompt);
    const carrying = prompt.includes(DINNER_SUMMARY);
    if (held) await held.released;
    const ref = refOf(prompt, 'oat milk');
    const memories = ref ? [{ type: 'preference', content: OAT, entities: [], sources: [ref] }] : [];
    return { kind: 'text', text: JSON.stringify({ memories, summary: carrying ? CARRIED_SUMMARY : FRESH_SUMMARY }), chunks: 2 };
  };
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  held?.release();
  held = null;
  napPrompts.length = 0;
  fake.reset();
  await Promise.all(dbs.splice(0).map((d) => d.close()));
});

function hold() {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  held = { release, released };
  return held;
}

/** A migrated data folder with the fake connected, its store taking summaries along on every forget as the host's does. */
async function napperAt(clock: { now: Date }) {
  const dir = tempDataDir();
  const db = await openTestDatabase(dir);
  dbs.push(db);
  const deps = stepDeps(db, dir, { now: () => clock.now });
  deps.store.followForgets(summariesFollowForgets);
  await deps.selfLayer.ensureDefaults();
  const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC', sleep: { nap: true, maxCallsPerNight: 200 } });
  const logged: string[] = [];
  const napper = new Napper({ ...deps, log: (level, message) => logged.push(`${level}: ${message}`) });
  return { deps, napper, logged };
}

describe('a forget while an overflow nap is out', () => {
  it('drops the summary the nap carried on from a summary set aside meanwhile, keeps its memories, and the next overflow summarises afresh', async () => {
    const clock = { now: NOON };
    const { deps, napper, logged } = await napperAt(clock);
    const { conversations, store } = deps;
    const { id } = await conversations.create('Dinner');
    const append = (content: string, i: number) =>
      conversations.append({ conversationId: id, role: i % 2 ? 'assistant' : 'user', content, status: 'complete' });
    const dinner = [];
    for (const [i, line] of DINNER.entries()) dinner.push(await append(line, i));
    expect(await conversations.saveRollingSummary(id, DINNER_SUMMARY, (await conversations.seqOf(dinner.at(-1)!.id))!)).toBe(true);
    const later = [];
    for (const [i, line] of LATER.entries()) later.push(await append(line, i));
    const memory = (await store.create({ type: 'world', content: FACT, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [dinner[0]!.id] }))
      .memory;

    // The overflow nap reads the summary and calls the model; the model holds its answer.
    const gate = hold();
    const napping = napper.nap(id, 'overflow', later.at(-1)!.id);
    await waitUntil(() => napPrompts.length === 1, 'the nap to call the model');
    expect(napPrompts[0]).toContain(`## My summary so far\n${DINNER_SUMMARY}`);

    // The person forgets the fact while the call is out: the summary is set aside.
    await store.forget(memory.id, 'person');
    expect(await conversations.rollingSummary(id)).toBeNull();
    gate.release();

    const outcome = await napping;
    expect(outcome).toMatchObject({ status: 'done', summarised: false, summaryDropped: true });
    expect(outcome.status === 'done' && outcome.saved).toHaveLength(1);
    expect(await conversations.rollingSummary(id)).toBeNull();
    expect((await store.list({ limit: 10 })).items.map((m) => m.content)).toEqual([OAT]);
    expect(logged.some((l) => l.includes('the new one is dropped'))).toBe(true);

    // The next overflow is not paused, and summarises every turn from the first, without the set-aside
    // summary and without the message the forgotten fact came from.
    held = null;
    napper.overflow(id, later.at(-1)!.id);
    const next = napper.current(id);
    expect(next).toBeDefined();
    expect(await next).toMatchObject({ status: 'done', summarised: true });
    expect(napPrompts).toHaveLength(2);
    expect(napPrompts[1]).not.toContain(DINNER_SUMMARY);
    expect(napPrompts[1]).not.toContain(DINNER[0]);
    expect(napPrompts[1]).toContain(DINNER[1]);
    expect(await conversations.rollingSummary(id)).toEqual({ text: FRESH_SUMMARY, throughSeq: (await conversations.seqOf(later.at(-1)!.id))! });
  });

  it('saves the summary when nothing was set aside during the call', async () => {
    const clock = { now: NOON };
    const { deps, napper } = await napperAt(clock);
    const { conversations } = deps;
    const { id } = await conversations.create('Dinner');
    const messages = [];
    for (const [i, line] of [...DINNER, ...LATER].entries()) {
      messages.push(await conversations.append({ conversationId: id, role: i % 2 ? 'assistant' : 'user', content: line, status: 'complete' }));
    }
    expect(await conversations.saveRollingSummary(id, DINNER_SUMMARY, (await conversations.seqOf(messages[1]!.id))!)).toBe(true);
    expect(await napper.nap(id, 'overflow', messages.at(-1)!.id)).toMatchObject({ status: 'done', summarised: true });
    expect((await conversations.rollingSummary(id))?.text).toBe(CARRIED_SUMMARY);
  });
});
