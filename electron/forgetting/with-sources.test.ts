// Forgetting a memory "…and what it came from", through the host API on a real on-disk PGlite: the
// messages behind it leave recall (the search, the memory_recall tool in a real chat turn, the night's
// reading) while the conversation still shows them, and the forget's Undo brings them back — only
// what that forget hid.
import { describe, expect, it } from 'vitest';
import type { Host } from '../host/types.js';
import { recordCitations } from '../memory/citations.js';
import { allMemories, closeHost, connect, day, fake, model, night, openHost, say, seedDir, talk, useCycleHarness } from '../sleep/testing/cycle-harness.js';

useCycleHarness();

const FACT = 'My grandmother Ilse grows saffron crocuses on her balcony in Graz.';
const A_LINES = [
  { who: 'Mara' as const, text: FACT },
  { who: 'Me' as const, text: 'A balcony of purple flowers sounds like a painting.' },
  { who: 'Mara' as const, text: 'Ilse also keeps two beehives behind her house in Graz.' },
];
const CITING = 'You told me Ilse’s saffron crocuses flower every October [[anima:ID]]';
const SAFFRON = 'Mara’s grandmother Ilse grows saffron crocuses in Graz.';
const GRAZ = 'Mara’s grandmother Ilse lives in Graz.';

async function seed() {
  return seedDir(async ({ db, conversations, store }) => {
    const a = await talk(conversations, 'Grandmother', day(-1), A_LINES);
    const [fact, , bees] = (await conversations.messages(a)).map((m) => m.id);
    const saffron = (await store.create({ type: 'world', content: SAFFRON, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [fact!] })).memory.id;
    // The same message is behind a second memory, with the beehive one.
    const graz = (await store.create({ type: 'world', content: GRAZ, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [fact!, bees!] })).memory
      .id;
    // A reply that cited the saffron memory: it says the fact too.
    const citing = await conversations.append({ conversationId: a, role: 'assistant', content: CITING.replace('ID', String(saffron)), status: 'complete' });
    expect(await recordCitations(db, citing.id, citing.content)).toEqual([saffron]);
    const b = await talk(conversations, 'Weekend', day(-1), [{ who: 'Mara', text: 'We walked along the river on Sunday.' }], 15);
    return { a, b, fact: fact!, bees: bees!, citing: citing.id, saffron, graz };
  });
}

/** The messages recall finds for these words (every source, as the Memories view's search). */
const recalledMessages = async (host: Host, query: string) =>
  (await host.api['recall.search']({ query, limit: 50 })).flatMap((h) => (h.link.kind === 'message' ? [h.link.messageId] : []));

/** A chat turn in `conversationId` whose model calls memory_recall first: every request body it sent, as one text. */
async function askWithRecall(host: Host, conversationId: string, query: string): Promise<string> {
  fake.requests.length = 0;
  fake.script({ kind: 'tool_call', name: 'memory_recall', arguments: { query }, thenText: 'Let me think about that.' });
  await say(host, conversationId, 'What do you remember about my grandmother?');
  const bodies = fake.requests.map((r) => JSON.stringify(r.body));
  // The second request carries the tool's answer.
  expect(bodies.length).toBeGreaterThanOrEqual(2);
  return bodies.join('\n');
}

describe('forgetting a memory with what it came from', () => {
  it('hides its source messages and the replies that cited it from recall, the chat tools and the night; the conversation keeps them; undo brings back only what that forget hid', async () => {
    const { dir, value: s } = await seed();
    const o = await openHost(dir);
    const { host } = o;
    await connect(host);
    model.reset();

    // Before: recall finds the fact's message and the citing reply; the tool hands the fact to the model.
    expect(await recalledMessages(host, 'saffron crocuses balcony')).toContain(s.fact);
    expect(await recalledMessages(host, 'saffron crocuses October')).toContain(s.citing);
    expect(await askWithRecall(host, s.b, 'saffron crocuses Ilse')).toContain('on her balcony');
    // The Memories view's detail says how many messages would go: the source and the citing reply.
    expect((await host.api['memories.get']({ id: s.saffron })).sourceMessages).toBe(2);
    expect((await host.api['memories.get']({ id: s.graz })).sourceMessages).toBe(2);

    // Bad input changes nothing.
    await expect(host.api['memories.forget']({ id: 999_999, withSources: true })).rejects.toMatchObject({ code: 'not_found' });

    const forgot = await host.api['memories.forget']({ id: s.saffron, withSources: true });
    expect(forgot.memory.status).toBe('expired');
    expect(forgot.hiddenMessages).toBe(2);

    // Out of recall — the search, semantic memory, and the memory_recall tool in a real turn.
    expect(await recalledMessages(host, 'saffron crocuses balcony')).not.toContain(s.fact);
    expect(await recalledMessages(host, 'saffron crocuses October')).not.toContain(s.citing);
    expect(await recalledMessages(host, 'grandmother Ilse Graz')).not.toContain(s.fact);
    const semantic = await host.api['recall.search']({ query: 'Ilse saffron crocuses Graz', sources: ['semantic'] });
    expect(semantic.map((h) => h.text)).not.toContain(SAFFRON);
    const asked = await askWithRecall(host, s.b, 'saffron crocuses Ilse');
    expect(asked).not.toContain('on her balcony');
    expect(asked).not.toContain('flower every October');
    // The beehive message was behind the other memory only: still recalled.
    expect(await recalledMessages(host, 'beehives behind her house')).toContain(s.bees);

    // The conversation still shows them, as they were said.
    const shown = (await host.api['conversations.get']({ id: s.a })).messages;
    expect(shown.find((m) => m.id === s.fact)?.content).toBe(FACT);
    expect(shown.some((m) => m.id === s.citing)).toBe(true);

    // The night reads the conversation without them.
    model.tasks.length = 0;
    await night(host);
    const prompts = model.tasks.map((t) => t.prompt).join('\n');
    expect(prompts).toContain('purple flowers');
    expect(prompts).not.toContain('on her balcony');
    expect(prompts).not.toContain('flower every October');
    expect((await allMemories(host)).filter((m) => m.status === 'active').some((m) => m.content.includes('balcony'))).toBe(false);

    // The second memory from the same message, forgotten with its sources too: the beehive message goes.
    const forgotGraz = await host.api['memories.forget']({ id: s.graz, withSources: true });
    expect(forgotGraz.hiddenMessages).toBe(2);
    expect(await recalledMessages(host, 'beehives behind her house')).not.toContain(s.bees);
    // Undoing that one brings back what only it hid; the fact's message stays hidden by the first forget.
    expect((await host.api['memories.undo']({ changeId: forgotGraz.changeId })).status).toBe('active');
    expect(await recalledMessages(host, 'beehives behind her house')).toContain(s.bees);
    expect(await recalledMessages(host, 'saffron crocuses balcony')).not.toContain(s.fact);

    // Undo of the first forget: the memory and both messages are back in recall and in the tool's answer.
    const back = await host.api['memories.undo']({ changeId: forgot.changeId });
    expect(back.status).toBe('active');
    expect(await recalledMessages(host, 'saffron crocuses balcony')).toContain(s.fact);
    expect(await recalledMessages(host, 'saffron crocuses October')).toContain(s.citing);
    expect(await askWithRecall(host, s.b, 'saffron crocuses Ilse')).toContain('on her balcony');

    // A plain forget (no sources) leaves the messages in recall, as before.
    const plain = await host.api['memories.forget']({ id: s.saffron });
    expect(plain.hiddenMessages).toBeUndefined();
    expect(await recalledMessages(host, 'saffron crocuses balcony')).toContain(s.fact);
    await closeHost(o);
  }, 240_000);
});
