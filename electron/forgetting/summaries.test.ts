// A forgotten memory is not sent to a model again through a conversation's rolling summary: the
// summaries that say the fact again are set aside by the forget (the conversation of its messages in
// the model's other words, any other nearly word for word), the next request carries no "earlier"
// part and the next overflow nap summarises afresh; the undo brings a summary back unless a newer one
// was written meanwhile. On a real on-disk PGlite; the last test through the host against the loopback
// model.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Memory } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { EARLIER_HEADING } from '../agent/chat.js';
import { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/open.js';
import type { Host } from '../host/types.js';
import { MemoryStore } from '../memory/store.js';
import { TASK_PREFIX } from '../sleep/schemas.js';
import { lastUser } from '../sleep/testing/fixture.js';
import { nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../testing/host.js';
import { waitUntil } from '../testing/patience.js';
import { summariesFollowForgets } from './summaries.js';

const FACT = 'Mara is allergic to peanuts.';
const DINNER = ['The doctor says I am allergic to peanuts, so no more satay for me.', 'That is a big change, I am glad you found out.'];
// The summary of the dinner tells the fact in its own words (word similarity 0.82 against FACT).
const DINNER_SUMMARY = 'She told me she is allergic to peanuts, and we planned Lisbon in May.';
const CELLO_SUMMARY = 'Her brother Tomas is learning the cello; she wants to hear him play in June.';
// Another conversation that says the fact word for word, without sharing a message with it…
const WORD_FOR_WORD = 'What I remember: Mara is allergic to peanuts, and she is moving to Porto.';
// …and one that says it only in other words: without the link of shared messages, no evidence.
const OTHER_WORDS = 'She told me she is allergic to peanuts, and we talked about the market.';

const dbs: Database[] = [];
afterEach(async () => {
  await Promise.all(dbs.splice(0).map((d) => d.close()));
});

/** A migrated database whose store takes the summaries along on every forget, as the host's does. */
async function open() {
  const db = await openTestDatabase(tempDataDir());
  dbs.push(db);
  const conversations = new Conversations(db);
  const store = new MemoryStore(db);
  store.followForgets(summariesFollowForgets);
  /** A conversation with these messages and this summary of them; its id and its messages' ids. */
  const talk = async (title: string, lines: string[], summary: string) => {
    const { id } = await conversations.create(title);
    const messageIds: string[] = [];
    for (const [i, content] of lines.entries()) {
      const m = await conversations.append({ conversationId: id, role: i % 2 ? 'assistant' : 'user', content, status: 'complete' });
      messageIds.push(m.id);
    }
    expect(await conversations.saveRollingSummary(id, summary, (await conversations.seqOf(messageIds.at(-1)!))!)).toBe(true);
    return { id, messageIds };
  };
  const remember = async (content: string, sourceMessageIds: string[]): Promise<Memory> =>
    (await store.create({ type: 'world', content, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds })).memory;
  const summaryOf = async (id: string) => (await conversations.rollingSummary(id))?.text ?? null;
  return { db, conversations, store, talk, remember, summaryOf };
}

describe('forgetting a memory and the rolling summaries', () => {
  it('sets aside the summaries that say it again, keeps the others, and the undo brings them back as they were', async () => {
    const { conversations, store, talk, remember, summaryOf } = await open();
    const dinner = await talk('Dinner', DINNER, DINNER_SUMMARY);
    const cello = await talk('Cello', ['My brother Tomas is learning the cello.', 'A cello in the house, how lovely.'], CELLO_SUMMARY);
    const wordForWord = await talk('Porto', ['We are moving to Porto in the autumn.', 'What a change.'], WORD_FOR_WORD);
    const otherWords = await talk('Market', ['The market had fresh figs today.', 'Figs! Lovely.'], OTHER_WORDS);
    const before = await conversations.rollingSummary(dinner.id);
    const memory = await remember(FACT, [dinner.messageIds[0]!]);

    const forgotten = await store.forget(memory.id, 'person');
    expect(await conversations.rollingSummary(dinner.id)).toBeNull();
    expect(await conversations.rollingSummary(wordForWord.id)).toBeNull();
    expect(await summaryOf(cello.id)).toBe(CELLO_SUMMARY);
    expect(await summaryOf(otherWords.id)).toBe(OTHER_WORDS);

    await store.undo(forgotten.changeId, 'person');
    expect(await conversations.rollingSummary(dinner.id)).toEqual(before);
    expect(await summaryOf(wordForWord.id)).toBe(WORD_FOR_WORD);
    expect(await summaryOf(cello.id)).toBe(CELLO_SUMMARY);
  });

  it('keeps a summary written after the forget when the forget is undone', async () => {
    const { conversations, store, talk, remember, summaryOf } = await open();
    const dinner = await talk('Dinner', DINNER, DINNER_SUMMARY);
    const memory = await remember(FACT, [dinner.messageIds[0]!]);
    const forgotten = await store.forget(memory.id, 'person');
    expect(await summaryOf(dinner.id)).toBeNull();
    // The next overflow nap finds no summary and writes one from the first message on.
    const later = await conversations.append({ conversationId: dinner.id, role: 'user', content: 'We booked the flight to Lisbon.', status: 'complete' });
    const fresh = 'We planned Lisbon in May and booked the flight.';
    expect(await conversations.saveRollingSummary(dinner.id, fresh, (await conversations.seqOf(later.id))!)).toBe(true);

    await store.undo(forgotten.changeId, 'person');
    expect(await summaryOf(dinner.id)).toBe(fresh);
  });

  it('brings a summary two forgotten facts set aside back only when both forgets are undone', async () => {
    const { store, talk, remember, summaryOf } = await open();
    const both = 'She told me she is allergic to peanuts. Her brother Tomas is learning the cello.';
    const dinner = await talk('Dinner', [...DINNER, 'My brother Tomas is learning the cello.', 'How lovely.'], both);
    const peanuts = await remember(FACT, [dinner.messageIds[0]!]);
    const cello = await remember('Mara’s brother Tomas is learning the cello.', [dinner.messageIds[2]!]);
    const first = await store.forget(peanuts.id, 'person');
    const second = await store.forget(cello.id, 'person');
    expect(await summaryOf(dinner.id)).toBeNull();

    await store.undo(first.changeId, 'person');
    expect(await summaryOf(dinner.id)).toBeNull();
    await store.undo(second.changeId, 'person');
    expect(await summaryOf(dinner.id)).toBe(both);
  });

  it('lets go of a set-aside summary once what it covers leaves the chosen line, or its conversation is purged', async () => {
    const { db, conversations, store, talk, remember, summaryOf } = await open();
    const dinner = await talk('Dinner', DINNER, DINNER_SUMMARY);
    const porto = await talk('Porto', ['We are moving to Porto in the autumn.', 'What a change.'], WORD_FOR_WORD);
    const memory = await remember(FACT, [dinner.messageIds[0]!]);
    const forgotten = await store.forget(memory.id, 'person');
    // The reply it summarised is removed: brought back, the summary would tell of words no longer there.
    await conversations.removeMessage(dinner.messageIds[1]!, new Date());
    const now = new Date();
    await conversations.trash(porto.id, now, {});
    await conversations.purge(db, porto.id, now);
    const kept = await db.query<{ text: string | null }>('SELECT rolling_summary_set_aside AS text FROM conversations WHERE id = $1', [porto.id]);
    expect(kept.rows).toEqual([{ text: null }]);

    await store.undo(forgotten.changeId, 'person');
    expect(await summaryOf(dinner.id)).toBeNull();
    expect(await summaryOf(porto.id)).toBeNull();
  });
});

describe('through the host', () => {
  let fake: FakeLlm;
  let host: Host | undefined;
  const FRESH = 'The person and I talked about the tide, the rocks and the gulls over the harbour.';
  const isNap = (body: unknown) => lastUser(body).startsWith(`${TASK_PREFIX}nap`);
  const lastChat = () =>
    (fake.requests.filter((r) => r.path.endsWith('/chat/completions') && !isNap(r.body)).at(-1)!.body as { messages: { role: string; content: string }[] })
      .messages;

  beforeAll(async () => {
    fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
    fake.respond = (body) =>
      isNap(body) ? ({ kind: 'text', text: JSON.stringify({ memories: [], summary: FRESH }), chunks: 2 } satisfies FakeResponse) : undefined;
  });
  afterAll(async () => {
    await host?.close();
    await fake.close();
  });

  async function say(conversationId: string, content: string): Promise<void> {
    const finished = nextEvent(host!, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
    await host!.api['chat.send']({ conversationId, content });
    await finished;
  }

  it('the next request carries no summary of a forgotten fact, the next overflow nap writes one afresh, and the undo keeps that one', async () => {
    // A long conversation whose older turns no longer fit a 2,048-token window, summarised through its last turn.
    const dir = tempDataDir();
    const seed = await openTestDatabase(dir);
    const conversations = new Conversations(seed);
    const { id } = await conversations.create('Coast');
    const first = await conversations.append({ conversationId: id, role: 'user', content: DINNER[0]!, status: 'complete' });
    let last = first;
    for (let i = 0; i < 24; i++) {
      const content = `Turn ${i}: ${'the tide came in slowly over the rocks while the gulls circled the harbour '.repeat(4)}`;
      last = await conversations.append({ conversationId: id, role: i % 2 ? 'user' : 'assistant', content, status: 'complete' });
    }
    await conversations.saveRollingSummary(id, DINNER_SUMMARY, (await conversations.seqOf(last.id))!);
    const memory = (
      await new MemoryStore(seed).create({ type: 'world', content: FACT, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [first.id] })
    ).memory;
    await seed.close();

    host = await startTestHost({ dataDir: dir });
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model', contextTokens: 2048 });
    await say(id, 'Shall we walk to the lighthouse tomorrow?');
    expect(lastChat()[0]!.content).toContain(`${EARLIER_HEADING}\n${DINNER_SUMMARY}`);
    expect(fake.requests.filter((r) => isNap(r.body))).toHaveLength(0);

    const forgotten = await host.api['memories.forget']({ id: memory.id });
    await say(id, 'And bring a thermos of tea?');
    const sent = JSON.stringify(lastChat());
    expect(sent).not.toContain(EARLIER_HEADING);
    expect(sent).not.toContain(DINNER_SUMMARY);
    // No summary covers the turns leaving the window any more: the nap summarises them from the start.
    await waitUntil(() => fake.requests.some((r) => isNap(r.body)), 'an overflow nap');
    const nap = fake.requests.find((r) => isNap(r.body))!;
    expect(lastUser(nap.body)).toContain('leaving my view');
    expect(lastUser(nap.body)).not.toContain('My summary so far');
    expect(lastUser(nap.body)).not.toContain(DINNER_SUMMARY);

    // Once the nap saved its summary, undoing the forget leaves that newer one in place.
    await waitUntil(async () => {
      await say(id, 'Is the wind still strong?');
      return lastChat()[0]!.content.includes(FRESH);
    }, 'a request carrying the fresh summary');
    await host.api['memories.undo']({ changeId: forgotten.changeId });
    await say(id, 'Then we go at nine.');
    expect(lastChat()[0]!.content).toContain(`${EARLIER_HEADING}\n${FRESH}`);
    expect(JSON.stringify(lastChat())).not.toContain(DINNER_SUMMARY);
  });
});
