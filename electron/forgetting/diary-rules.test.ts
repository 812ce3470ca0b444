// Which diary blocks a forget hides and when they come back, on the memory store with the forgetting
// room's follower (what the host wires): a real on-disk PGlite, the blocks written as the sleep
// cycle's rows are.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { unhideBlocks } from '../sleep/forget.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { diaryFollowsForgets } from './diary.js';

let db: Database;
let store: MemoryStore;

beforeAll(async () => {
  db = await openDatabase(tempDataDir('anima-diary-forget-'), { template: dbTemplate() });
});
afterAll(async () => {
  await db.close();
});
beforeEach(async () => {
  // Diary blocks are append-only (no DELETE): each test reads only the blocks it wrote.
  await db.exec('DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;');
  store = new MemoryStore(db);
  store.followForgets(diaryFollowsForgets);
});

let seq = 0;
/** A block as light sleep writes it (`sources`: its messages); returns its id. */
async function block(kind: 'anchor' | 'imprint' | 'narrative' | 'dream', body: string, sources: string[], day = '2025-03-01'): Promise<number> {
  // One dream per day, one anchor per conversation and day: each test's blocks get days of their own.
  const r = await db.query<{ id: number }>(
    `INSERT INTO diary_blocks (day, kind, title, body, source_message_ids) VALUES ($1, $2, NULL, $3, $4) RETURNING id::float8 AS id`,
    [day, kind, body, sources],
  );
  return Number(r.rows[0]!.id);
}
const hidden = async (ids: number[]) =>
  (
    await db.query<{ id: number }>('SELECT id::float8 AS id FROM diary_blocks WHERE id = ANY($1::bigint[]) AND hidden_at IS NOT NULL ORDER BY id', [ids])
  ).rows.map((r) => Number(r.id));
/** Fresh message ids for one test. */
const messages = (n: number) => Array.from({ length: n }, () => `m-${++seq}`);
const fact = (content: string, sources: string[]) =>
  store.create({ type: 'world', content, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: sources });

describe('a forget and the diary', () => {
  it('hides the blocks from its messages that say it again (and the dream of their day), not those about other things or from other messages', async () => {
    const [m1, m2] = messages(2);
    const day = '2025-03-02';
    const saved = await fact('Mara is allergic to peanuts.', [m1!]);
    const anchor = await block('anchor', 'A quiet evening. She told me she is allergic to peanuts, and we planned Lisbon in May.', [m1!, m2!], day);
    const dream = await block('dream', 'I dreamt of a market where Mara is allergic to peanuts and every stall sold satay.', [], day);
    const otherThings = await block('imprint', 'Mara laughed about her brother Tomas and his cello.', [m1!], day);
    const elsewhereLoosely = await block('narrative', 'She said she is allergic to peanuts, I think.', ['m-other'], '2025-03-03');
    const elsewhereVerbatim = await block('imprint', 'Mara is allergic to peanuts.', ['m-other'], '2025-03-03');
    await store.forget(saved.memory.id, 'person');
    expect(await hidden([anchor, dream, otherThings, elsewhereLoosely, elsewhereVerbatim])).toEqual([anchor, dream, elsewhereVerbatim]);
  });

  it('in Chinese too', async () => {
    const [m1] = messages(1);
    const saved = await fact('用户住在上海。', [m1!]);
    const saysIt = await block('anchor', '今天和用户聊了很久，她说她住在上海，很喜欢那里的秋天。', [m1!], '2025-03-07');
    const otherThings = await block('imprint', '今天和用户聊了她的工作。', [m1!], '2025-03-07');
    await store.forget(saved.memory.id, 'person');
    expect(await hidden([saysIt, otherThings])).toEqual([saysIt]);
  });

  it('a forget by the companion (on the person’s word) hides them too; a block two forgets hide comes back when both are undone', async () => {
    const [m1, m2] = messages(2);
    const peanuts = await fact('Mara is allergic to peanuts.', [m1!]);
    const shellfish = await fact('Mara cannot eat shellfish.', [m2!]);
    const both = await block('narrative', 'Mara is allergic to peanuts. Mara cannot eat shellfish either, so dinner is tricky.', [m1!, m2!], '2025-03-04');
    const first = await store.forget(peanuts.memory.id, 'companion');
    const second = await store.forget(shellfish.memory.id, 'person');
    expect(await hidden([both])).toEqual([both]);
    await store.undo(first.changeId!, 'person');
    expect(await hidden([both])).toEqual([both]);
    await store.undo(second.changeId!, 'person');
    expect(await hidden([both])).toEqual([]);
  });

  it('never shows a block hidden otherwise: by the person, or with a deleted conversation while a forget still stands', async () => {
    const [m1] = messages(1);
    const saved = await fact('Mara is allergic to peanuts.', [m1!]);
    const byPerson = await block('imprint', 'Mara is allergic to peanuts, she said twice.', [m1!], '2025-03-05');
    await db.query('UPDATE diary_blocks SET hidden_at = now() WHERE id = $1', [byPerson]);
    const forget = await store.forget(saved.memory.id, 'person');
    await store.undo(forget.changeId!, 'person');
    expect(await hidden([byPerson])).toEqual([byPerson]);

    // Forgotten first, then its conversation deleted and restored: the restore leaves it to the forget.
    const again = await store.forget(saved.memory.id, 'person');
    const anchor = await block('anchor', 'Mara is allergic to peanuts.', [m1!], '2025-03-06');
    await store.undo(again.changeId!, 'person');
    const third = await store.forget(saved.memory.id, 'person');
    expect(await hidden([anchor])).toEqual([anchor]);
    expect(await unhideBlocks(db, [anchor])).toBe(0);
    expect(await hidden([anchor])).toEqual([anchor]);
    await store.undo(third.changeId!, 'person');
    expect(await hidden([anchor])).toEqual([]);
  });

  it("takes deep sleep's profile from the same messages along in one batch, expired (not forgotten), and the undo brings it back", async () => {
    const [m1, m2] = messages(2);
    const saved = await fact('Mara is allergic to peanuts.', [m1!]);
    const other = await fact('Mara plays the violin.', [m2!]);
    const profile = await store.create({
      type: 'observation',
      content: 'Mara is the person I talk with most evenings. Mara is allergic to peanuts and plays the violin.',
      source: 'deep-sleep',
      actor: 'deep-sleep',
      entityNames: ['Mara'],
      sourceMessageIds: [m1!, m2!],
      keepApart: true,
    });
    const forget = await store.forget(saved.memory.id, 'person');
    expect((await store.get(profile.memory.id)).memory.status).toBe('expired');
    expect((await store.get(other.memory.id)).memory.status).toBe('active');
    const { history } = await store.get(profile.memory.id);
    expect(history.find((c) => c.action === 'expire')).toMatchObject({ actor: 'system' });
    await store.undo(forget.changeId!, 'person');
    expect((await store.get(profile.memory.id)).memory.status).toBe('active');
    expect((await store.get(saved.memory.id)).memory.status).toBe('active');
  });
});
