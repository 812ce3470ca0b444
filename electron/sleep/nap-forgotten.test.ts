// A rolling summary written after a forget does not bring the forgotten fact back: the overflow nap
// shows the background model none of the messages behind a forget that still stands (those the memory
// came from and the replies that cited it), and a summary that says the fact anyway — the fake model
// here always does — is saved set aside on behalf of that forget, so no request carries it; undoing
// the forget brings it back. On a real on-disk PGlite against the loopback fake model: through the
// host (the chat requests), and the nap on its own (what it covers, and which forgets hold the summary).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { EARLIER_HEADING } from '../agent/chat.js';
import { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/open.js';
import { summariesFollowForgets } from '../forgetting/summaries.js';
import type { Host } from '../host/types.js';
import { recordCitations } from '../memory/citations.js';
import { MemoryStore } from '../memory/store.js';
import { nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../testing/host.js';
import { waitUntil } from '../testing/patience.js';
import { Napper } from './nap.js';
import { TASK_PREFIX } from './schemas.js';
import { lastUser, refOf, stepDeps } from './testing/fixture.js';

const FACT = 'Mara is allergic to peanuts.';
const TOLD = 'The doctor says I am allergic to peanuts, so no more satay for me.';
// What the fake nap answers as its summary, whatever it was shown: it says the fact again (word
// similarity 0.82 against FACT, in the conversation the fact came from).
const RESTATED = 'She told me she is allergic to peanuts, and we planned Lisbon in May.';
const OAT = 'The person takes oat milk in their coffee, never cow milk.';
const COFFEE = "By the way, I only drink my coffee with oat milk — never cow's milk. Please keep that in mind when we plan the café visit.";

let fake: FakeLlm;
const napPrompts: string[] = [];
const isNap = (body: unknown) => lastUser(body).startsWith(`${TASK_PREFIX}nap`);

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = (body) => {
    if (!isNap(body)) return undefined;
    const prompt = lastUser(body);
    napPrompts.push(prompt);
    const ref = refOf(prompt, 'oat milk');
    const memories = ref ? [{ type: 'preference', content: OAT, entities: [], sources: [ref] }] : [];
    return { kind: 'text', text: JSON.stringify({ memories, summary: RESTATED }), chunks: 2 } satisfies FakeResponse;
  };
});
afterAll(async () => {
  await fake.close();
});
const dbs: Database[] = [];
const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await Promise.all(dbs.splice(0).map((d) => d.close()));
  napPrompts.length = 0;
  fake.reset();
});

describe('the overflow nap after a forget, through the host', () => {
  it('shows the model no message of the forgotten fact, keeps a summary that says it anyway out of every request, and the undo brings it back', async () => {
    // A conversation that opens with the fact, then outgrows a 2,048-token window; a nap kept the fact.
    const dir = tempDataDir();
    const seed = await openTestDatabase(dir);
    const conversations = new Conversations(seed);
    const { id } = await conversations.create('Coast');
    const told = await conversations.append({ conversationId: id, role: 'user', content: TOLD, status: 'complete' });
    for (let i = 0; i < 24; i++) {
      const content = `Turn ${i}: ${'the tide came in slowly over the rocks while the gulls circled the harbour '.repeat(4)}`;
      await conversations.append({ conversationId: id, role: i % 2 ? 'user' : 'assistant', content, status: 'complete' });
    }
    const memory = (
      await new MemoryStore(seed).create({ type: 'world', content: FACT, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [told.id] })
    ).memory;
    await seed.close();

    const logged: string[] = [];
    const host = await startTestHost({ dataDir: dir, log: (_level, message) => logged.push(message) });
    hosts.push(host);
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model', contextTokens: 2048 });
    const lastChat = () =>
      (fake.requests.filter((r) => r.path.endsWith('/chat/completions') && !isNap(r.body)).at(-1)!.body as { messages: { role: string; content: string }[] })
        .messages;
    const say = async (content: string) => {
      const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === id);
      await host.api['chat.send']({ conversationId: id, content });
      await finished;
    };

    // Forgotten without its sources: the message that told it stays in the conversation.
    const forgotten = await host.api['memories.forget']({ id: memory.id });
    await say('Shall we walk to the lighthouse tomorrow?');
    await waitUntil(() => napPrompts.length > 0, 'an overflow nap');
    expect(napPrompts[0]).toContain('leaving my view');
    expect(napPrompts[0]).toContain('Turn 0:');
    expect(napPrompts[0]).not.toContain('allergic to peanuts');

    // Talk on until the nap's summary is either carried or known to be set aside.
    await waitUntil(async () => {
      await say('Is the wind still strong?');
      return logged.some((l) => l.includes('says a forgotten memory again')) || JSON.stringify(lastChat()).includes(RESTATED);
    }, 'the nap to save its summary');
    await say('And bring a thermos of tea?');
    expect(JSON.stringify(lastChat())).not.toContain('allergic to peanuts');
    expect(lastChat()[0]!.content).not.toContain(EARLIER_HEADING);

    await host.api['memories.undo']({ changeId: forgotten.changeId });
    await say('Then we go at nine.');
    expect(lastChat()[0]!.content).toContain(`${EARLIER_HEADING}\n${RESTATED}`);
  });
});

describe('the overflow nap after a forget, on its own', () => {
  it('passes over the messages behind a standing forget but covers them, and holds the summary for the forget it restates only', async () => {
    const dir = tempDataDir();
    const db = await openTestDatabase(dir);
    dbs.push(db);
    const deps = stepDeps(db, dir, { now: () => new Date() });
    deps.store.followForgets(summariesFollowForgets);
    await deps.selfLayer.ensureDefaults();
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC', sleep: { nap: true, maxCallsPerNight: 200 } });
    const napper = new Napper({ ...deps, log: () => {} });
    const { conversations, store } = deps;
    const remember = async (content: string, sourceMessageIds: string[]) =>
      (await store.create({ type: 'world', content, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds })).memory;

    // Another conversation's fact, forgotten too: nothing in this one says it.
    const { id: other } = await conversations.create('Cello');
    const cello = await conversations.append({ conversationId: other, role: 'user', content: 'My brother Tomas is learning the cello.', status: 'complete' });
    const celloForget = await store.forget((await remember('Mara’s brother Tomas is learning the cello.', [cello.id])).id, 'person');

    // The fact is told last, and the reply that cites it ends the turns leaving the window.
    const { id } = await conversations.create('Dinner');
    const say = (role: 'user' | 'assistant', content: string) => conversations.append({ conversationId: id, role, content, status: 'complete' });
    await say('user', COFFEE);
    await say('assistant', 'Noted: oat milk it is.');
    const told = await say('user', TOLD);
    const fact = await remember(FACT, [told.id]);
    const cite = await say('assistant', `So no satay on the Lisbon trip [[anima:${fact.id}]].`);
    expect(await recordCitations(db, cite.id, cite.content)).toEqual([fact.id]);
    const factForget = await store.forget(fact.id, 'person');

    const outcome = await napper.nap(id, 'overflow', cite.id);
    expect(outcome).toEqual({ status: 'done', saved: [expect.any(Number)], summarised: false, summarySetAside: true });
    expect(napPrompts).toHaveLength(1);
    expect(napPrompts[0]).toContain('oat milk it is');
    expect(napPrompts[0]).not.toContain('peanuts');
    expect(napPrompts[0]).not.toContain('satay');

    // Set aside through the cited reply (covered: the next turn does not ask for it again), on behalf of the fact's forget alone.
    expect(await conversations.rollingSummary(id)).toBeNull();
    const aside = await db.query<{ seq: number; by: string[] }>(
      'SELECT rolling_summary_set_aside_seq::float8 AS seq, rolling_summary_forgotten_by::text[] AS by FROM conversations WHERE id = $1',
      [id],
    );
    expect(aside.rows).toEqual([{ seq: await conversations.seqOf(cite.id), by: [String(factForget.changeId)] }]);
    await store.undo(celloForget.changeId, 'person');
    expect(await conversations.rollingSummary(id)).toBeNull();
    await store.undo(factForget.changeId, 'person');
    expect(await conversations.rollingSummary(id)).toEqual({ text: RESTATED, throughSeq: await conversations.seqOf(cite.id) });
  });
});
