// A forgotten fact does not come back by itself: the sleep cycle's saves (one at a time, or prepared
// in a batch as light sleep and the nap write) skip a memory the person forgot — the same fact, or a
// look-alike from the same messages — quietly, writing and journalling nothing. The person can add it
// again by hand; the chat model's `remember` can when the person says it anew.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type MemoryChange } from '../../shared/api.js';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { MemoryStore, type MemoryWrite, type PreparedCreate } from './store.js';

let db: Database;
let store: MemoryStore;
let changes: MemoryChange[];

beforeAll(async () => {
  db = await openDatabase(tempDataDir('anima-forgotten-'), { template: dbTemplate() });
});
afterAll(async () => {
  await db.close();
});
beforeEach(async () => {
  await db.exec('DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;');
  changes = [];
  store = new MemoryStore(db, (c) => changes.push(c));
});

const sleep = (content: string, sources: string[], extra: Partial<MemoryWrite> = {}): MemoryWrite => ({
  type: 'world',
  content,
  source: 'light-sleep',
  actor: 'light-sleep',
  sourceMessageIds: sources,
  reason: 'light sleep of 2025-06-01',
  ...extra,
});
const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories')).rows[0]!.n;

/** Light sleep saved it from message m1, and the person forgot it. */
async function forgotten(content: string, sources = ['m1']) {
  const saved = await store.create(sleep(content, sources));
  const forget = await store.forget(saved.memory.id, 'person');
  changes = [];
  return { id: saved.memory.id, forgetChange: forget.changeId };
}

/** Saves as light sleep and the nap do: probed ahead, written in one batch. */
async function batchSave(w: MemoryWrite) {
  const prepared = await store.prepareCreates([w]);
  return store.batch(async (b) => b.createPrepared(prepared.items[0] as PreparedCreate), prepared);
}

describe('an automatic save of a forgotten fact', () => {
  it('is skipped quietly when the same messages say it again (no memory, no journal entry, no error)', async () => {
    const { id, forgetChange } = await forgotten('The person is allergic to peanuts.');
    const before = await count();
    const again = await store.create(sleep('The person is allergic to peanuts.', ['m1']));
    expect(again).toMatchObject({ outcome: 'skipped', skipped: 'forgotten', memory: { id, status: 'expired' }, changeId: forgetChange });
    // A look-alike from the same message, as the model words it another night.
    const reworded = await store.create(sleep('The person is allergic to peanuts and cashews.', ['m1', 'm2']));
    expect(reworded).toMatchObject({ outcome: 'skipped', memory: { id } });
    expect(await count()).toBe(before);
    expect(changes).toEqual([]);
  });

  it('is skipped from other messages too when it is the same fact, in prepared batches as well (light sleep, the nap)', async () => {
    const { id } = await forgotten('The person has two cats.');
    expect(await batchSave(sleep('The person has 2 cats!', ['m9']))).toMatchObject({ outcome: 'skipped', memory: { id } });
    expect(await store.create(sleep('The person has 2 cats.', [], { source: 'deep-sleep', actor: 'deep-sleep' }))).toMatchObject({ outcome: 'skipped' });
    expect(changes).toEqual([]);
  });

  it('keeps a different fact from the same message, and a look-alike from other messages', async () => {
    await forgotten('My sister Anna is 31.');
    expect((await store.create(sleep('My sister Anna is 32.', ['m1']))).outcome).toBe('created');
    await forgotten('The person likes green tea.', ['m5']);
    expect((await store.create(sleep('The person likes green tea with honey in the evening.', ['m6']))).outcome).toBe('created');
  });

  it('is skipped when deep sleep rewrites a forgotten profile from the same messages in other words', async () => {
    const profile = (content: string, sources: string[]): MemoryWrite => ({
      type: 'observation',
      content,
      source: 'deep-sleep',
      actor: 'deep-sleep',
      entityNames: ['Mara'],
      sourceMessageIds: sources,
      keepApart: true,
    });
    const old = await store.create(profile('Mara is a violinist in her 30s who plays in 2 quartets and lives in Shanghai.', ['m1', 'm2']));
    await store.forget(old.memory.id, 'person');
    const again = await store.create(profile('Mara, a musician of about 35, plays violin with 3 groups; she is based in Shanghai.', ['m2', 'm3']));
    expect(again).toMatchObject({ outcome: 'skipped', memory: { id: old.memory.id } });
    // About someone else, or from other messages: written.
    expect((await store.create({ ...profile('Mara, a musician of about 35, plays violin with 3 groups.', ['m4']) })).outcome).toBe('created');
  });

  it('is skipped in Chinese', async () => {
    const { id } = await forgotten('用户住在上海。');
    expect(await store.create(sleep('用户住在上海', ['m3']))).toMatchObject({ outcome: 'skipped', memory: { id } });
  });

  it('is written again once the forget is undone (then it is an update of the memory brought back)', async () => {
    const { id, forgetChange } = await forgotten('The person is allergic to peanuts.');
    await store.undo(forgetChange, 'person');
    expect(await store.create(sleep('The person is allergic to peanuts!', ['m1']))).toMatchObject({ outcome: 'updated', memory: { id, status: 'active' } });
  });
});

describe('the person and the chat model', () => {
  it('the person can add a forgotten fact again by hand', async () => {
    const { id } = await forgotten('The person is allergic to peanuts.');
    const again = await store.create({ type: 'world', content: 'The person is allergic to peanuts.', source: 'user', actor: 'person' });
    expect(again.outcome).toBe('created');
    expect(again.memory.id).not.toBe(id);
    // Once the person has written it again, the sleep cycle's restatement updates that one.
    expect(await store.create(sleep('The person is allergic to peanuts.', ['m1']))).toMatchObject({ outcome: 'updated', memory: { id: again.memory.id } });
  });

  it("the chat model's remember is skipped from the forgotten memory's own message, saved from a new one", async () => {
    const { id } = await forgotten('The person is allergic to peanuts.', ['m1']);
    const tool = (sources: string[]): MemoryWrite => ({
      type: 'world',
      content: 'The person is allergic to peanuts.',
      source: 'tool',
      actor: 'companion',
      sourceMessageIds: sources,
    });
    expect(await store.create(tool(['m1']))).toMatchObject({ outcome: 'skipped', memory: { id } });
    expect((await store.create(tool(['m7']))).outcome).toBe('created');
  });

  it('a forget by the sleep cycle does not hold the fact back', async () => {
    const saved = await store.create(sleep('The person is training for a marathon.', ['m1']));
    await store.batch((b) => b.expire(saved.memory.id, new Date(Date.now() - 1000).toISOString(), 'deep-sleep'));
    expect((await store.create(sleep('The person is training for a marathon.', ['m1']))).outcome).toBe('created');
  });

  it('a refused write still throws (a guard is not a skip)', async () => {
    await forgotten('The person is allergic to peanuts.');
    await expect(store.create(sleep('', ['m1']))).rejects.toBeInstanceOf(ApiError);
  });
});
