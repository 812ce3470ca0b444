// Deleting a conversation (trash, restore, purge) and off the record, through the host API on a real
// on-disk PGlite, with a real night of sleep and real chat turns against the loopback model.
import { describe, expect, it } from 'vitest';
import { TRASH_DAYS, type Message } from '../../shared/api.js';
import { readRows } from '../embed/embedded-rows.js';
import type { Host } from '../host/types.js';
import { openTestDatabase, startTestHost } from '../testing/host.js';
import {
  allMemories,
  anchorsOf,
  at,
  closeHost,
  connect,
  day,
  fake,
  hosts,
  model,
  night,
  openHost,
  say,
  seedDir,
  talk,
  TODAY,
  useCycleHarness,
} from '../sleep/testing/cycle-harness.js';

useCycleHarness();

const A_LINES = [
  { who: 'Mara' as const, text: 'My sister Margaret kayaks around Lofoten every summer.' },
  { who: 'Me' as const, text: 'Lofoten by kayak sounds cold and wonderful.' },
  { who: 'Mara' as const, text: 'Margaret paddles past the sea eagles near Reine.' },
];
const B_LINES = [
  { who: 'Mara' as const, text: 'I love the fjords around Bergen in the rain.' },
  { who: 'Me' as const, text: 'Bergen rain has its own charm.' },
];
const ONLY_A = 'Mara’s sister Margaret kayaks around Lofoten every summer.';
const SHARED = 'Mara loves Norwegian fjords.';
const QUESTION = 'Does my sister still kayak around Lofoten every summer?';

/** Every chat request's body the loopback server saw, as one text. */
const sentToModel = () => fake.requests.map((r) => JSON.stringify(r.body)).join('\n');

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const entityNamed = async (host: Host, name: string) => (await host.api['graph.search']({ query: name })).find((e) => e.name === name);

async function seed() {
  return seedDir(async ({ conversations, store }) => {
    const a = await talk(conversations, 'Lofoten', day(-1), A_LINES);
    const b = await talk(conversations, 'Bergen', day(-1), B_LINES, 14);
    const aIds = (await conversations.messages(a)).map((m) => m.id);
    const bIds = (await conversations.messages(b)).map((m) => m.id);
    const onlyA = await store.create({ type: 'world', content: ONLY_A, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [aIds[0]!, aIds[2]!] });
    const shared = await store.create({ type: 'world', content: SHARED, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [aIds[0]!, bIds[0]!] });
    return { a, b, aIds, onlyA: onlyA.memory.id, shared: shared.memory.id };
  });
}

describe('deleting a conversation', () => {
  it('takes it and what was derived from it alone out of recall, the chat, the diary and the graph; restore brings all back; the purge removes its rows after 30 days', async () => {
    const { dir, value: s } = await seed();
    const o = await openHost(dir);
    const { host } = o;
    await connect(host);
    // A night: the anchors of both conversations (and light sleep's own memories from them).
    await night(host);
    const anchorsBefore = await anchorsOf(host);
    expect(anchorsBefore.some((b) => b.conversationId === s.a)).toBe(true);
    expect(anchorsBefore.some((b) => b.conversationId === s.b)).toBe(true);
    const margaret = (await until(
      'Margaret in the graph',
      () => entityNamed(host, 'Margaret'),
      (e) => (e?.mentionCount ?? 0) > 0,
    ))!;
    const chatsNaming = async () => (await host.api['graph.entity']({ id: margaret.id })).conversations.map((c) => c.id);
    const mentionsIn = async () => (await host.api['graph.entity']({ id: margaret.id })).conversations.find((c) => c.id === s.a)?.mentions ?? 0;
    const mentionsBefore = await until('A in Margaret’s chats', mentionsIn, (n) => n > 0);
    const recallA = async () =>
      (await host.api['recall.search']({ query: 'Lofoten kayak Margaret', limit: 50 })).filter(
        (h) => h.link.kind === 'message' && h.link.conversationId === s.a,
      );
    expect((await recallA()).length).toBeGreaterThan(0);

    // Before the delete, the same question in the other conversation brings what was learned from it.
    fake.requests.length = 0;
    model.reset();
    await say(host, s.b, QUESTION);
    const before = sentToModel();
    expect(A_LINES.some((l) => before.includes(l.text)) || before.includes('Lofoten every summer')).toBe(true);

    // What the night and the seed left active: learned from A alone, or from A and B.
    const active = (await allMemories(host)).filter((m) => m.status === 'active');
    const fromA = (m: { sourceMessageIds: string[] }) => m.sourceMessageIds.filter((id) => s.aIds.includes(id)).length;
    const onlyFromA = active.filter((m) => m.sourceMessageIds.length > 0 && fromA(m) === m.sourceMessageIds.length);
    const alsoElsewhere = active.filter((m) => fromA(m) > 0 && fromA(m) < m.sourceMessageIds.length);
    expect(onlyFromA.length).toBeGreaterThan(0);
    expect(alsoElsewhere.map((m) => m.id)).toContain(s.shared);

    const result = await host.api['conversations.delete']({ id: s.a });
    expect(result.memoriesExpired).toBe(onlyFromA.length);
    expect(result.diaryHidden).toBeGreaterThanOrEqual(1);
    expect(result.mentionsCleared).toBeGreaterThanOrEqual(1);
    expect(Date.parse(result.trashed.purgeAt) - Date.parse(result.trashed.deletedAt)).toBe(TRASH_DAYS * 86_400_000);

    // Out of the lists, not openable, in the trash.
    expect((await host.api['conversations.list']({})).map((c) => c.id)).not.toContain(s.a);
    expect((await host.api['conversations.list']({ query: 'Lofoten' })).map((c) => c.id)).not.toContain(s.a);
    await expect(host.api['conversations.get']({ id: s.a })).rejects.toMatchObject({ code: 'not_found' });
    await expect(host.api['chat.send']({ conversationId: s.a, content: 'still there?' })).rejects.toMatchObject({ code: 'not_found' });
    expect((await host.api['conversations.trash']({})).map((t) => t.id)).toEqual([s.a]);

    // Recall: no message of it, the memory learned from it alone expired, the shared one active.
    expect(await recallA()).toEqual([]);
    const after = new Map((await allMemories(host)).map((m) => [m.id, m]));
    for (const m of onlyFromA) expect(after.get(m.id)!.status).toBe('expired');
    for (const m of alsoElsewhere) expect(after.get(m.id)!.status).toBe('active');
    const semantic = await host.api['recall.search']({ query: 'Margaret kayaks Lofoten summer', sources: ['semantic'] });
    for (const m of onlyFromA) expect(semantic.map((h) => h.text)).not.toContain(m.content);
    // Its anchor is hidden, the other conversation's stays; the graph no longer counts its mentions.
    const anchorsAfter = await anchorsOf(host);
    expect(anchorsAfter.some((b) => b.conversationId === s.a)).toBe(false);
    expect(anchorsAfter.some((b) => b.conversationId === s.b)).toBe(true);
    expect(await chatsNaming()).not.toContain(s.a);

    // A chat turn elsewhere asking about it: nothing of the deleted conversation reaches the model.
    fake.requests.length = 0;
    model.reset();
    await say(host, s.b, QUESTION);
    const asked = sentToModel();
    expect(asked).toContain('sister still kayak');
    // A memory that stays (drawn from both conversations: deep sleep's profile of Mara quotes both)
    // keeps its words; apart from those, nothing of the deleted conversation reaches the model.
    let sent = asked;
    for (const m of (await allMemories(host)).filter((x) => x.status === 'active')) sent = sent.split(JSON.stringify(m.content).slice(1, -1)).join('');
    for (const line of A_LINES) expect(sent).not.toContain(line.text);
    for (const m of onlyFromA) expect(sent).not.toContain(JSON.stringify(m.content).slice(1, -1));

    // Restore: everything comes back.
    const restored = await host.api['conversations.restore']({ id: s.a });
    expect(restored.id).toBe(s.a);
    expect((await host.api['conversations.trash']({})).length).toBe(0);
    expect((await host.api['conversations.list']({})).map((c) => c.id)).toContain(s.a);
    const back = new Map((await allMemories(host)).map((m) => [m.id, m]));
    for (const m of onlyFromA) expect(back.get(m.id)!.status).toBe('active');
    expect((await anchorsOf(host)).filter((b) => b.conversationId === s.a).map((b) => b.id)).toEqual(
      anchorsBefore.filter((b) => b.conversationId === s.a).map((b) => b.id),
    );
    expect((await recallA()).length).toBeGreaterThan(0);
    // Recorded again from its messages (the count read before may have been taken while the graph was still reading them).
    expect(await mentionsIn()).toBeGreaterThanOrEqual(mentionsBefore);

    // Deleted again, then the host starts 31 days later: the purge removes its messages for good.
    await host.api['conversations.delete']({ id: s.a });
    await closeHost(o);
    const later = at(TODAY, 12);
    later.setUTCDate(later.getUTCDate() + TRASH_DAYS + 1);
    const host2 = await startTestHost({ dataDir: dir, now: () => later, sleep: { tickMs: 0 } });
    hosts.push(host2);
    await until(
      'the purge',
      () => host2.api['conversations.trash']({}),
      (t) => t.length === 0,
    );
    await expect(host2.api['conversations.restore']({ id: s.a })).rejects.toMatchObject({ code: 'not_found' });
    expect((await host2.api['conversations.get']({ id: s.b })).messages.length).toBe(B_LINES.length + 4);
    await closeHost({ host: host2, dir, clock: { now: later }, disk: { low: false } });
    const db = await openTestDatabase(dir);
    try {
      const left = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [s.a]);
      expect(left.rows[0]!.n).toBe(0);
      const mentions = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM entity_mentions WHERE message_id = ANY($1::text[])', [s.aIds]);
      expect(mentions.rows[0]!.n).toBe(0);
      const row = await db.query<{ title: string; purged: boolean }>('SELECT title, purged_at IS NOT NULL AS purged FROM conversations WHERE id = $1', [s.a]);
      expect(row.rows[0]).toEqual({ title: '', purged: true });
    } finally {
      await db.close();
    }
  }, 240_000);
});

describe('off the record', () => {
  it('is kept for the person but never recalled, read by the night, embedded or put in the graph; back on feeds only what comes after', async () => {
    const { dir } = await seed();
    const { host } = await openHost(dir);
    await connect(host);
    const off = await host.api['conversations.create']({ offRecord: true });
    expect(off.offRecord).toBe(true);
    await say(host, off.id, 'Between us: my cousin Oswaldo hides his periwinkle umbrella collection.');
    const shown = (await host.api['conversations.get']({ id: off.id })).messages;
    expect(shown.length).toBe(2);
    expect(shown.every((m: Message) => m.offRecord === true)).toBe(true);
    expect((await host.api['conversations.list']({})).find((c) => c.id === off.id)?.offRecord).toBe(true);

    // A message on the record after it: once the graph has it, it has read everything before it.
    const on = await host.api['conversations.create']({});
    await say(host, on.id, 'My neighbour Bertrand fixed the periwinkle gate.');
    await until(
      'Bertrand in the graph',
      () => entityNamed(host, 'Bertrand'),
      (e) => e !== undefined,
    );
    expect(await entityNamed(host, 'Oswaldo')).toBeUndefined();

    const recallOff = async () =>
      (await host.api['recall.search']({ query: 'periwinkle umbrella Oswaldo', limit: 50 })).filter(
        (h) => h.link.kind === 'message' && h.link.conversationId === off.id && h.text.includes('periwinkle'),
      );
    expect(await recallOff()).toEqual([]);
    // The on-record message about a periwinkle gate is found by the same words: recall did run.
    expect((await host.api['recall.search']({ query: 'periwinkle gate', limit: 50 })).some((h) => h.text.includes('Bertrand'))).toBe(true);

    // The night reads the seeded chats and the on-record one, never the off-record one.
    model.tasks.length = 0;
    await night(host);
    const prompts = model.tasks.map((t) => t.prompt).join('\n');
    expect(prompts).toContain('Bertrand');
    expect(prompts).not.toContain('Oswaldo');
    expect((await allMemories(host)).some((m) => m.content.includes('Oswaldo'))).toBe(false);
    expect((await anchorsOf(host)).some((b) => b.conversationId === off.id)).toBe(false);

    // Back on the record: what is said from now is read; what was said off it stays off.
    const back = await host.api['conversations.setOffRecord']({ id: off.id, offRecord: false });
    expect(back.offRecord).toBeUndefined();
    await say(host, off.id, 'Now on the record: Oswaldo also collects tangerine kites.');
    expect(
      (await host.api['recall.search']({ query: 'tangerine kites', limit: 50 })).some((h) => h.link.kind === 'message' && h.link.conversationId === off.id),
    ).toBe(true);
    expect(await recallOff()).toEqual([]);

    // Switching an existing conversation off takes its messages out of recall at once.
    const recallOn = async () =>
      (await host.api['recall.search']({ query: 'Bertrand gate', limit: 50 })).filter((h) => h.link.kind === 'message' && h.link.conversationId === on.id);
    expect((await recallOn()).length).toBeGreaterThan(0);
    await host.api['conversations.setOffRecord']({ id: on.id, offRecord: true });
    expect(await recallOn()).toEqual([]);
  }, 240_000);

  it('gives an off-the-record or deleted message no vector', async () => {
    const { dir, value: s } = await seed();
    const o = await openHost(dir);
    await o.host.api['conversations.setOffRecord']({ id: s.b, offRecord: true });
    await o.host.api['conversations.delete']({ id: s.a });
    await closeHost(o);
    const db = await openTestDatabase(dir);
    try {
      const { texts, drop } = await readRows(
        db,
        [...s.aIds, ...(await db.query<{ id: string }>('SELECT id FROM messages WHERE conversation_id = $1', [s.b])).rows.map((r) => r.id)].map((id) => ({
          source: 'message' as const,
          id,
        })),
      );
      expect(texts).toEqual([]);
      expect(drop.message.length).toBe(A_LINES.length + B_LINES.length);
    } finally {
      await db.close();
    }
  }, 120_000);
});
