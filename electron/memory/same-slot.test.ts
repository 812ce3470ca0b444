// The same-slot rule on its own, and through the memory store on a real PGlite: a new value for the
// same subject and slot supersedes (linked, valid time closed, journalled, undoable, and the result
// says so); distinct facts that merely look alike stay two active memories.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MemoryChange } from '../../shared/api.js';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { sameSlot, slotContext } from './same-slot.js';
import { MemoryStore, type MemoryWrite, type PreparedCreate } from './store.js';

describe('sameSlot', () => {
  it.each([
    ['where someone lives', 'The person lives in Brno.', 'The person lives in Prague.'],
    ['a value of two words', 'I live in New York.', 'I live in New Jersey.'],
    ['an age', 'My sister Anna is 31.', 'My sister Anna is 32.'],
    ['an age in words', 'My sister Anna is thirty-one years old.', 'My sister Anna is 32 years old.'],
    ['where someone works', 'Mara works at Google.', 'Mara works at Meta.'],
    ['a favourite', "John's favourite band is Queen.", "John's favorite band is Muse."],
    ['where someone lives (zh)', '我住在布尔诺', '我住在布拉格'],
    ['an age (zh)', '我妹妹安娜今年三十一岁。', '我妹妹安娜今年32岁。'],
    ['where someone works (zh)', '用户的哥哥在深圳工作。', '用户的哥哥在广州工作。'],
    ['a favourite (zh)', '我最喜欢的颜色是蓝色', '我最喜欢的颜色是绿色'],
  ])('a new value: %s', (_why, a, b) => {
    expect(sameSlot(a, b)).toBe(true);
  });

  it.each([
    ['another name (the subject)', 'My sister Anna lives in Berlin.', 'My sister Hanna lives in Berlin.'],
    ['another subject and value', 'Anna lives in Brno.', 'Hanna lives in Prague.'],
    ['a negation', 'Tom is allergic to peanuts.', 'Tom is not allergic to peanuts.'],
    ['no longer', 'The person lives in Brno.', 'The person no longer lives in Brno.'],
    ['an antonym', 'The person likes jazz.', 'The person dislikes jazz.'],
    ['another owner', "Caroline's dog is called Max.", "Melanie's dog is called Max."],
    ['a slot that holds many (allergies)', 'Tom is allergic to peanuts.', 'Tom is allergic to shellfish.'],
    ['a value added', 'The person lives in Brno.', 'The person lives in Brno and Prague.'],
    ['another tense', 'The person lives in Brno.', 'The person lived in Prague.'],
    ['a time, not a slot', 'The dentist appointment is on Monday at 8 am.', 'The dentist appointment is on Monday at 10 am.'],
    ['a count, not a slot', 'Maria has three children.', 'Maria has four children.'],
    ['the same fact', 'The person lives in Brno.', 'the person lives in Brno!'],
    ['a negation (zh)', '用户对花生过敏。', '用户对花生不过敏。'],
    ['another subject (zh)', '用户的妹妹住在上海。', '用户的弟弟住在北京。'],
  ])('not a new value: %s', (_why, a, b) => {
    expect(sameSlot(a, b)).toBe(false);
  });

  it('tells 13 from 31 inside Chinese text (digits stay one number)', () => {
    expect(sameSlot('我妹妹安娜13岁', '我妹妹安娜31岁')).toBe(true);
  });

  it('names the words before the value, for finding the memory that holds the slot', () => {
    expect(slotContext('The person lives in Prague.')).toBe('person lives in');
    expect(slotContext('我住在布拉格')).toBe('我住在');
    expect(slotContext('Tom is allergic to peanuts.')).toBeNull();
  });
});

describe('through the memory store', () => {
  let db: Database;
  let store: MemoryStore;
  let changes: MemoryChange[];
  beforeAll(async () => {
    db = await openDatabase(tempDataDir('anima-same-slot-'), { template: dbTemplate() });
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await db.exec('DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;');
    changes = [];
    store = new MemoryStore(db, (c) => changes.push(c));
  });
  const fact = (content: string, extra: Partial<MemoryWrite> = {}): MemoryWrite => ({ type: 'world', content, source: 'user', actor: 'person', ...extra });
  const active = async () => (await store.list({ statuses: ['active'] })).items.map((m) => m.content).sort();

  it('keeps Anna and Hanna, and allergic and not allergic, as separate active memories', async () => {
    await store.create(fact('My sister Anna lives in Berlin.'));
    const hanna = await store.create(fact('My sister Hanna lives in Berlin.'));
    expect(hanna).toMatchObject({ outcome: 'created' });
    expect(hanna.superseded).toBeUndefined();
    await store.create(fact('Tom is allergic to peanuts.'));
    expect((await store.create(fact('Tom is not allergic to peanuts.'))).superseded).toBeUndefined();
    expect(await active()).toEqual([
      'My sister Anna lives in Berlin.',
      'My sister Hanna lives in Berlin.',
      'Tom is allergic to peanuts.',
      'Tom is not allergic to peanuts.',
    ]);
  });

  it('supersedes Brno with Prague: linked, valid time closed, journalled, said so — and undo restores', async () => {
    const brno = await store.create(fact('The person lives in Brno.', { validFrom: '2020-01-01' }));
    const prague = await store.create(fact('The person lives in Prague.', { validFrom: '2025-03-01' }));
    expect(prague).toMatchObject({ outcome: 'created', superseded: brno.memory.id, memory: { status: 'active', content: 'The person lives in Prague.' } });
    const { memory: old, chain } = await store.get(brno.memory.id);
    expect(old).toMatchObject({ status: 'superseded', supersededBy: prague.memory.id, validTo: '2025-03-01T00:00:00.000Z' });
    expect(chain.map((m) => m.id)).toEqual([brno.memory.id, prague.memory.id]);
    expect(changes.slice(-2).map((c) => [c.memoryId, c.action, c.actor])).toEqual([
      [prague.memory.id, 'create', 'person'],
      [brno.memory.id, 'supersede', 'person'],
    ]);
    expect(await active()).toEqual(['The person lives in Prague.']);

    await store.undo(prague.changeId, 'person');
    expect((await store.get(brno.memory.id)).memory).toMatchObject({ status: 'active', supersededBy: null, validTo: null });
    expect((await store.get(prague.memory.id)).memory.status).toBe('expired');
    expect(await active()).toEqual(['The person lives in Brno.']);
  });

  it('closes the old valid time now when the new value has no date of its own', async () => {
    const before = Date.now();
    const a = await store.create(fact('My sister Anna is 31.'));
    const b = await store.create(fact('My sister Anna is 32.'));
    expect(b.superseded).toBe(a.memory.id);
    const old = (await store.get(a.memory.id)).memory;
    expect(Date.parse(old.validTo!)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(old.validTo!)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('supersedes in Chinese, and a pinned memory passes its pin on', async () => {
    const a = await store.create(fact('我住在布尔诺', { pinned: true }));
    const b = await store.create(fact('我住在布拉格'));
    expect(b).toMatchObject({ superseded: a.memory.id, memory: { pinned: true } });
    expect(await active()).toEqual(['我住在布拉格']);
    const c = await store.create(fact('用户的哥哥在深圳工作。'));
    expect((await store.create(fact('用户的哥哥在广州工作。'))).superseded).toBe(c.memory.id);
  });

  it('supersedes through the sleep cycle’s prepared batches too', async () => {
    const a = await store.create(fact('The person works at Google.', { source: 'light-sleep', actor: 'light-sleep' }));
    const prepared = await store.prepareCreates([fact('The person works at Meta.', { source: 'light-sleep', actor: 'light-sleep' })]);
    const [saved] = await store.batch(async (b) => [await b.createPrepared(prepared.items[0] as PreparedCreate)], prepared);
    expect(saved).toMatchObject({ superseded: a.memory.id });
    expect(await active()).toEqual(['The person works at Meta.']);
  });

  it("leaves deep sleep's own writes to its explicit decisions (a merge must not supersede what it links)", async () => {
    await store.create(fact('The person works at Google.', { source: 'light-sleep', actor: 'light-sleep' }));
    const merged = await store.create(fact('The person works at Meta.', { source: 'deep-sleep', actor: 'deep-sleep' }));
    expect(merged.superseded).toBeUndefined();
    expect(await active()).toEqual(['The person works at Google.', 'The person works at Meta.']);
  });

  it("a person's edit to a new value is a supersede; a wording fix stays an edit", async () => {
    const a = await store.create(fact('The person lives in Brno.'));
    const fixed = await store.update(a.memory.id, { content: 'The person lives in Brno, Czechia.' }, 'person');
    // "Brno" → "Brno, Czechia" adds to the value (it holds the old one): an edit of the same memory.
    expect(fixed).toMatchObject({ outcome: 'updated', memory: { id: a.memory.id, content: 'The person lives in Brno, Czechia.' } });
    expect(fixed.superseded).toBeUndefined();
    const typo = await store.update(a.memory.id, { content: 'The person lives in Brno, Czechia!' }, 'person');
    expect(typo.memory.id).toBe(a.memory.id);

    const moved = await store.update(a.memory.id, { content: 'The person lives in Prague, Czechia.' }, 'person');
    expect(moved).toMatchObject({ outcome: 'created', superseded: a.memory.id, memory: { content: 'The person lives in Prague, Czechia.', source: 'user' } });
    expect(moved.memory.id).not.toBe(a.memory.id);
    expect((await store.get(a.memory.id)).memory).toMatchObject({
      status: 'superseded',
      supersededBy: moved.memory.id,
      content: 'The person lives in Brno, Czechia!',
    });
    await store.undo(moved.changeId, 'person');
    expect(await active()).toEqual(['The person lives in Brno, Czechia!']);
  });
});

describe('the development pairs', () => {
  it('supersedes none of the restatements and no pair whose subject differs', () => {
    const file = path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'bench', 'memory', 'pairs-dev.json');
    const pairs = JSON.parse(fs.readFileSync(file, 'utf8')) as { a: string; b: string; same: boolean; why: string }[];
    expect(pairs.filter((p) => p.same && sameSlot(p.a, p.b))).toEqual([]);
    // The one distinct pair that is a new value for the same slot ("住在上海" → "住在北京") is the only one superseded.
    expect(pairs.filter((p) => !p.same && sameSlot(p.a, p.b)).map((p) => p.why)).toEqual(['another city (zh)']);
  });
});
