// Versions and branches through the real host, real PGlite on disk and the loopback fake model: what
// the model is sent is read at the fake server, so "the model sees the chosen line" is checked on the
// wire. Also: recall and the sleep cycle's reads see the chosen line only; delete + undo; continue; branch.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';
import { openDatabase } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import fs from 'node:fs';

let fake: FakeLlm;
const hosts: Host[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  fake.reset();
});

async function connected() {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const host = await startTestHost({ dataDir, providerTimeoutMs: PATIENCE_MS });
  hosts.push(host);
  await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model', apiKey: 'k' });
  const { id } = await host.api['conversations.create']({});
  return { host, conversationId: id, dataDir };
}

/** Runs a call that starts a reply and waits for that reply to finish. */
async function replied(host: Host, conversationId: string, start: () => Promise<unknown>): Promise<Message> {
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await start();
  return ((await finished) as { message: Message }).message;
}

async function say(host: Host, conversationId: string, content: string, reply: string): Promise<Message> {
  fake.script({ kind: 'text', text: reply });
  return replied(host, conversationId, () => host.api['chat.send']({ conversationId, content }));
}

const line = async (host: Host, id: string) => (await host.api['conversations.get']({ id })).messages;
const texts = (messages: Message[]) => messages.map((m) => m.content);
/** The person's and the companion's turns of the last request the fake server got (system prompt left out). */
function lastSent(): string[] {
  const body = fake.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as {
    messages: { role: string; content: string; name?: string }[];
  };
  // (Passive recall, when it finds anything, is a named turn of its own.)
  return body.messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && !m.name).map((m) => m.content);
}

describe('versions and branches', () => {
  it('flips between replies and continues from the chosen one: the next request carries the chosen line', async () => {
    const { host, conversationId } = await connected();
    await say(host, conversationId, 'Tell me about owls', 'Owls hunt at night.');
    fake.script({ kind: 'text', text: 'Owls can turn their heads far.' });
    const second = await replied(host, conversationId, () => host.api['chat.regenerate']({ conversationId }));
    let shown = await line(host, conversationId);
    expect(texts(shown)).toEqual(['Tell me about owls', 'Owls can turn their heads far.']);
    const first = shown[1]!.versionIds![0]!;
    expect(shown[1]!.versionIds).toEqual([first, second.id]);

    await host.api['chat.choose']({ messageId: first });
    shown = await line(host, conversationId);
    expect(texts(shown)).toEqual(['Tell me about owls', 'Owls hunt at night.']);
    expect(shown[1]!.versionIds).toEqual([first, second.id]);

    await say(host, conversationId, 'Why at night?', 'Less competition.');
    expect(lastSent()).toEqual(['Tell me about owls', 'Owls hunt at night.', 'Why at night?']);
    // Flipping back to the second reply: the line below it is its own (nothing yet).
    await host.api['chat.choose']({ messageId: second.id });
    expect(texts(await line(host, conversationId))).toEqual(['Tell me about owls', 'Owls can turn their heads far.']);
    // And back again: the branch below the first reply is still there.
    await host.api['chat.choose']({ messageId: first });
    expect(texts(await line(host, conversationId))).toEqual(['Tell me about owls', 'Owls hunt at night.', 'Why at night?', 'Less competition.']);
  });

  it('edits an earlier message: the replies after it become an earlier branch, kept', async () => {
    const { host, conversationId } = await connected();
    await say(host, conversationId, 'I live in Lisbon', 'Lovely city.');
    await say(host, conversationId, 'I have a cat', 'What is its name?');
    const original = (await line(host, conversationId))[0]!;
    fake.script({ kind: 'text', text: 'Porto is beautiful.' });
    await replied(host, conversationId, () => host.api['chat.edit']({ messageId: original.id, content: 'I live in Porto' }));
    expect(lastSent()).toEqual(['I live in Porto']);
    const shown = await line(host, conversationId);
    expect(texts(shown)).toEqual(['I live in Porto', 'Porto is beautiful.']);
    expect(shown[0]!.versionIds).toEqual([original.id, shown[0]!.id]);
    // The original and everything after it is one choice away.
    await host.api['chat.choose']({ messageId: original.id });
    expect(texts(await line(host, conversationId))).toEqual(['I live in Lisbon', 'Lovely city.', 'I have a cat', 'What is its name?']);
    // The edit of a message that is not the person's, or not on the line, is refused in words.
    await expect(host.api['chat.edit']({ messageId: shown[1]!.id, content: 'x' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(host.api['chat.edit']({ messageId: shown[0]!.id, content: 'x' })).rejects.toMatchObject({ code: 'conflict' });
  });

  it('deletes a message and takes the delete back; the model never sees a deleted one', async () => {
    const { host, conversationId } = await connected();
    await say(host, conversationId, 'My sister is Ana', 'Nice to hear about Ana.');
    await say(host, conversationId, 'She likes chess', 'Chess is a great game.');
    const [, reply] = await line(host, conversationId);
    await host.api['chat.deleteMessage']({ messageId: reply!.id });
    expect(texts(await line(host, conversationId))).toEqual(['My sister is Ana', 'She likes chess', 'Chess is a great game.']);
    await say(host, conversationId, 'Any tips?', 'Practise endgames.');
    expect(lastSent()).toEqual(['My sister is Ana', 'She likes chess', 'Chess is a great game.', 'Any tips?']);
    await host.api['chat.restoreMessage']({ messageId: reply!.id });
    expect(texts(await line(host, conversationId))).toEqual([
      'My sister is Ana',
      'Nice to hear about Ana.',
      'She likes chess',
      'Chess is a great game.',
      'Any tips?',
      'Practise endgames.',
    ]);
    // Deleting the last reply shows nothing in its place; the undo brings it back as the last.
    const last = (await line(host, conversationId)).at(-1)!;
    await host.api['chat.deleteMessage']({ messageId: last.id });
    expect(texts(await line(host, conversationId)).at(-1)).toBe('Any tips?');
    await host.api['chat.restoreMessage']({ messageId: last.id });
    expect(texts(await line(host, conversationId)).at(-1)).toBe('Practise endgames.');
    // Deleting the chosen one of two versions shows the other.
    fake.script({ kind: 'text', text: 'Study openings.' });
    const again = await replied(host, conversationId, () => host.api['chat.regenerate']({ conversationId }));
    await host.api['chat.deleteMessage']({ messageId: again.id });
    const after = await line(host, conversationId);
    expect(after.at(-1)!.content).toBe('Practise endgames.');
    expect(after.at(-1)!.versionIds).toBeUndefined();
    await host.api['chat.restoreMessage']({ messageId: again.id });
    expect((await line(host, conversationId)).at(-1)!.content).toBe('Study openings.');
  });

  it('continues a cut-off reply: the model gets it as its own unfinished turn, and the rest is appended', async () => {
    const { host, conversationId } = await connected();
    fake.script({ kind: 'cut', text: 'The three rules are: first,' });
    const cut = await replied(host, conversationId, () => host.api['chat.send']({ conversationId, content: 'What are the rules?' }));
    expect(cut.status).toBe('partial');
    fake.script({ kind: 'text', text: ' be kind; second, be brief.' });
    const done = await replied(host, conversationId, () => host.api['chat.continue']({ conversationId }));
    expect(done.id).toBe(cut.id);
    expect(done).toMatchObject({ status: 'complete', content: 'The three rules are: first, be kind; second, be brief.' });
    expect(lastSent()).toEqual(['What are the rules?', 'The three rules are: first,']);
    expect(texts(await line(host, conversationId))).toEqual(['What are the rules?', 'The three rules are: first, be kind; second, be brief.']);
    // Only the last reply with words can be continued.
    await say(host, conversationId, 'Thanks', 'You are welcome.');
    await host.api['chat.deleteMessage']({ messageId: (await line(host, conversationId)).at(-1)!.id });
    await expect(host.api['chat.continue']({ conversationId })).rejects.toMatchObject({ code: 'conflict' });
  });

  it('branches from a message into a new conversation sharing the history up to it', async () => {
    const { host, conversationId } = await connected();
    await say(host, conversationId, 'Plan a trip', 'Where to?');
    await say(host, conversationId, 'Japan', 'Spring is best for Japan.');
    const [, whereTo] = await line(host, conversationId);
    const branch = await host.api['conversations.branch']({ messageId: whereTo!.id, title: 'Trip, another way' });
    expect(branch.title).toBe('Trip, another way');
    expect(texts(await line(host, branch.id))).toEqual(['Plan a trip', 'Where to?']);
    await say(host, branch.id, 'Iceland', 'Summer is best for Iceland.');
    expect(lastSent()).toEqual(['Plan a trip', 'Where to?', 'Iceland']);
    // The original is untouched.
    expect(texts(await line(host, conversationId))).toEqual(['Plan a trip', 'Where to?', 'Japan', 'Spring is best for Japan.']);
  });

  it('citations count on the chosen line only: a reply written again, and flipped back to', async () => {
    const { host, conversationId } = await connected();
    // Pinned: the system prompt carries it, so a reply citing it counts.
    const { memory } = await host.api['memories.create']({ type: 'preference', content: 'The person loves green tea', pinned: true });
    await say(host, conversationId, 'What do I drink?', `Green tea, as you told me [[anima:${memory.id}]].`);
    const count = async () => (await host.api['memories.get']({ id: memory.id })).memory.referenceCount;
    expect(await count()).toBe(1);
    fake.script({ kind: 'text', text: 'Something warm, I think.' });
    await replied(host, conversationId, () => host.api['chat.regenerate']({ conversationId }));
    await expect.poll(count, { timeout: PATIENCE_MS }).toBe(0);
    const first = (await line(host, conversationId))[1]!.versionIds![0]!;
    await host.api['chat.choose']({ messageId: first });
    await expect.poll(count, { timeout: PATIENCE_MS }).toBe(1);
    await host.api['chat.deleteMessage']({ messageId: first });
    await expect.poll(count, { timeout: PATIENCE_MS }).toBe(0);
  });

  it('recall and the sleep cycle read the chosen line only; a copy in a branch is never read twice', async () => {
    const { host, conversationId, dataDir } = await connected();
    await say(host, conversationId, 'My favourite colour?', 'Perhaps vermilionish.');
    fake.script({ kind: 'text', text: 'Perhaps turquoisey.' });
    const second = await replied(host, conversationId, () => host.api['chat.regenerate']({ conversationId }));
    const hits = async (word: string) => (await host.api['recall.search']({ query: word, sources: ['session'] })).map((h) => h.text);
    expect((await hits('vermilionish')).join()).not.toContain('vermilionish');
    expect((await hits('turquoisey')).join()).toContain('turquoisey');
    const first = (await line(host, conversationId))[1]!.versionIds![0]!;
    await host.api['chat.choose']({ messageId: first });
    expect((await hits('vermilionish')).join()).toContain('vermilionish');
    expect((await hits('turquoisey')).join()).not.toContain('turquoisey');
    await host.api['conversations.branch']({ messageId: first });
    expect((await hits('vermilionish')).filter((t) => t.includes('vermilionish'))).toHaveLength(1);
    await host.close();
    hosts.splice(hosts.indexOf(host), 1);

    // What the nap and light sleep read (they keep messages with replacedBy null): the chosen line, and no copy.
    const db = await openDatabase(dataDir);
    try {
      const conversations = new Conversations(db);
      const read = (await conversations.chatMessagesAfter(new Map())).filter((m) => m.replacedBy === null).map((m) => m.content);
      expect(read).toEqual(['My favourite colour?', 'Perhaps vermilionish.']);
      expect((await conversations.chatMessagesOf(conversationId, 0)).find((m) => m.id === second.id)?.replacedBy).toBe(first);
    } finally {
      await db.close();
    }
  });
});
