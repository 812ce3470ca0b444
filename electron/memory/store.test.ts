import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type MemoryChange } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { openTestDatabase } from '../testing/host.js';
import { MemoryStore, namesWhose, type MemoryWrite } from './store.js';
import { SECRET_REFUSAL } from './secret-filter.js';
import { rejection } from '../testing/rejection.js';

// Fake credentials, one per pattern, assembled at run time so no secret scanner flags this file.
const rnd = (n: number) => Array.from({ length: n }, (_, i) => 'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7'[(i * 7) % 27]).join('');
const SECRETS = [
  `-----BEGIN ${'OPENSSH'} PRIVATE KEY-----`,
  ['sk', 'ant', 'api03', rnd(40)].join('-'),
  `${'sk'}-${rnd(48)}`,
  `${'AK' + 'IA'}QZ7XW3KD9RT2MB5Q`,
  `${'AS' + 'IA'}QZ7XW3KD9RT2MB5Q`,
  `${'gh' + 'p_'}${rnd(36)}`,
  `${'github' + '_pat_'}11ABCDEFGH0_${rnd(60)}`,
  `${'xo' + 'xb'}-1234567890-${rnd(24)}`,
  `${'AI' + 'za'}${rnd(35)}`,
  `${'gl' + 'pat'}-${rnd(20)}`,
  'SMTP_PASSWORD=hunter22',
];

// DELETE and an identity restart: several times faster than TRUNCATE on PGlite, and ids start at 1.
const RESET = `DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;
  ALTER TABLE memories ALTER COLUMN id RESTART; ALTER TABLE memory_changes ALTER COLUMN id RESTART;`;

let db: Database;
let dir: string;
let changes: MemoryChange[];
let logs: string[];
let store: MemoryStore;

// The migrated template straight from the global setup: this suite needs the database, not a host.
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-memory-'));
  db = await openTestDatabase(dir);
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(RESET);
  changes = [];
  logs = [];
  store = new MemoryStore(
    db,
    (c) => changes.push(c),
    (level, msg) => logs.push(`${level}: ${msg}`),
  );
});

const fact = (content: string, extra: Partial<MemoryWrite> = {}): MemoryWrite => ({
  type: 'world',
  content,
  source: 'user',
  actor: 'person',
  ...extra,
});

async function count(sql: string): Promise<number> {
  return (await db.query<{ n: number }>(sql)).rows[0]!.n;
}
const memoryCount = () => count('SELECT count(*)::int AS n FROM memories');
const changeCount = () => count('SELECT count(*)::int AS n FROM memory_changes');

describe('create', () => {
  it('writes the memory and journals every field as "after"', async () => {
    const result = await store.create(
      fact('Mara lives in Shanghai.', { sourceMessageIds: ['m1', 'm1'], entityNames: ['Mara', ' Shanghai ', ''], pinned: true }),
    );
    expect(result.outcome).toBe('created');
    expect(result.memory).toMatchObject({
      id: 1,
      type: 'world',
      content: 'Mara lives in Shanghai.',
      status: 'active',
      supersededBy: null,
      validFrom: null,
      validTo: null,
      pinned: true,
      pinOrder: 1,
      referenceCount: 0,
      injectedCount: 0,
      source: 'user',
      sourceMessageIds: ['m1'],
      entityNames: ['Mara', 'Shanghai'],
    });
    expect(changes).toEqual([
      {
        id: result.changeId,
        memoryId: 1,
        action: 'create',
        actor: 'person',
        before: null,
        after: {
          type: 'world',
          content: 'Mara lives in Shanghai.',
          status: 'active',
          supersededBy: null,
          validFrom: null,
          validTo: null,
          pinned: true,
          pinOrder: 1,
          source: 'user',
          sourceMessageIds: ['m1'],
          entityNames: ['Mara', 'Shanghai'],
        },
        batchId: null,
        reason: null,
        undoneBy: null,
        createdAt: expect.any(String),
      },
    ]);
  });

  it('segments CJK content so full-text search finds a word inside it', async () => {
    const { memory } = await store.create(fact('我的妹妹在上海的复旦大学读书'));
    const row = (await db.query<{ fts_segmented: string | null }>('SELECT fts_segmented FROM memories WHERE id = $1', [memory.id])).rows[0];
    expect(row!.fts_segmented).toBe('我 的 妹妹 在 上海 的 复旦大学 读书');
    const hits = await db.query<{ id: number }>(`SELECT id FROM memories WHERE search_fts @@ to_tsquery('english', '妹妹')`);
    expect(hits.rows.map((r) => r.id)).toEqual([memory.id]);

    const { memory: latin } = await store.create(fact('Mara has a younger sister.'));
    const latinRow = (await db.query<{ fts_segmented: string | null }>('SELECT fts_segmented FROM memories WHERE id = $1', [latin.id])).rows[0];
    expect(latinRow!.fts_segmented).toBeNull();
  });

  it('updates an active near-duplicate instead of adding a copy, and says so', async () => {
    const first = await store.create(fact('The person likes green tea', { type: 'preference', sourceMessageIds: ['m1'] }));
    const again = await store.create(fact('The person likes green tea a lot', { type: 'preference', sourceMessageIds: ['m2'], actor: 'companion' }));
    expect(again.outcome).toBe('updated');
    expect(again.memory.id).toBe(first.memory.id);
    expect(again.memory.content).toBe('The person likes green tea a lot');
    expect(again.memory.sourceMessageIds).toEqual(['m1', 'm2']);
    expect(await memoryCount()).toBe(1);
    expect(changes[1]).toMatchObject({
      id: again.changeId,
      action: 'update',
      actor: 'companion',
      before: { content: 'The person likes green tea', sourceMessageIds: ['m1'] },
      after: { content: 'The person likes green tea a lot', sourceMessageIds: ['m1', 'm2'] },
      reason: 'saved again: near-duplicate of an active memory',
    });
  });

  it('a near-duplicate save keeps the dates it had and can pin', async () => {
    const first = await store.create(fact('Mara works at Fudan University.', { validFrom: '2024-09-01' }));
    const again = await store.create(fact('Mara works at Fudan University', { pinned: true }));
    expect(again.memory).toMatchObject({ id: first.memory.id, validFrom: '2024-09-01T00:00:00.000Z', pinned: true, pinOrder: 1 });
    expect(changes[1]).toMatchObject({
      before: { content: 'Mara works at Fudan University.', pinned: false, pinOrder: null },
      after: { content: 'Mara works at Fudan University', pinned: true, pinOrder: 1 },
    });
  });

  it('treats text identical up to case, spaces and punctuation as a duplicate', async () => {
    const first = await store.create(fact("Mara's birthday is on 3 May."));
    const again = await store.create(fact("mara's   birthday is on 3 may"));
    expect(again).toMatchObject({ outcome: 'updated', memory: { id: first.memory.id, content: "mara's   birthday is on 3 may" } });
    expect(changes[1]!.before).toEqual({ content: "Mara's birthday is on 3 May." });
    const cjk = await store.create(fact('我的妹妹在上海读书'));
    expect(await store.create(fact('我的妹妹在上海读书。'))).toMatchObject({ outcome: 'updated', memory: { id: cjk.memory.id } });
    // Spaces inside CJK defeat trigrams (similarity 0.4 here); the normalised key still sees the twin.
    const sim = await db.query<{ s: number }>("SELECT similarity('我的 妹妹 在 上海 读书', '我的妹妹在上海读书。') AS s");
    expect(sim.rows[0]!.s).toBeLessThan(0.8);
    expect(await store.create(fact('我的 妹妹 在 上海 读书'))).toMatchObject({ outcome: 'updated', memory: { id: cjk.memory.id } });
    expect(await memoryCount()).toBe(2);
  });

  it('leaves the shared connection as it found it', async () => {
    const before = await db.query<{ s: string; t: string }>("SELECT current_setting('enable_seqscan') AS s, show_limit()::text AS t");
    await store.create(fact('A fact to compare against.'));
    await store.create(fact('A fact to compare against, again.'));
    const after = await db.query<{ s: string; t: string }>("SELECT current_setting('enable_seqscan') AS s, show_limit()::text AS t");
    expect(after.rows).toEqual(before.rows);
    expect(after.rows[0]!.s).toBe('on');
  });

  it('keeps different facts, other types and forgotten memories apart', async () => {
    await store.create(fact('The person likes green tea', { type: 'preference' }));
    expect((await store.create(fact('The person likes black tea', { type: 'preference' }))).outcome).toBe('created');
    expect((await store.create(fact("Mara's birthday is on 3 May."))).outcome).toBe('created');
    expect((await store.create(fact("Mara's birthday is on 5 March."))).outcome).toBe('created');
    expect((await store.create(fact('The person likes green tea'))).outcome).toBe('created'); // world, not preference
    const old = await store.create(fact('Mara lives in Shanghai.'));
    await store.forget(old.memory.id, 'person');
    expect((await store.create(fact('Mara lives in Shanghai.'))).outcome).toBe('created');
    expect(await memoryCount()).toBe(7);
  });

  it.each(SECRETS)('refuses a secret and writes nothing: %s', async (secret) => {
    const err = await rejection(store.create(fact(`The work login is ${secret}`)));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('content');
    expect(err.message).toContain(SECRET_REFUSAL);
    expect(await memoryCount()).toBe(0);
    expect(changes).toEqual([]);
  });

  it('refuses a missing type, empty or oversized content, a bad date, and writes nothing', async () => {
    const noType = await rejection(store.create({ ...fact('x'), type: undefined as never }));
    expect([noType.code, noType.field, noType.message]).toEqual([
      'invalid_input',
      'type',
      'A memory needs a type: one of world, experience, opinion, observation, preference, procedural.',
    ]);
    expect((await rejection(store.create({ ...fact('x'), type: 'fact' as never }))).message).toBe(
      'Unknown memory type "fact": use one of world, experience, opinion, observation, preference, procedural.',
    );
    expect((await rejection(store.create(fact('   ')))).field).toBe('content');
    const huge = await rejection(store.create(fact('a'.repeat(1024 * 1024))));
    expect(huge.message).toBe('The content is 1048576 characters; a memory holds at most 4000. Keep the one thing worth remembering, in a sentence or two.');
    expect((await rejection(store.create(fact('Mara moved.', { validFrom: 'last spring' })))).field).toBe('validFrom');
    expect((await rejection(store.create(fact('Mara moved.', { validFrom: '2025-05-01', validTo: '2025-01-01' })))).field).toBe('validTo');
    expect(await memoryCount()).toBe(0);
    expect(await changeCount()).toBe(0);
  });

  it('requires opinions and preferences to say whose they are', async () => {
    const err = await rejection(store.create(fact('Prefers green tea', { type: 'preference' })));
    expect(err.message).toContain('must say whose it is');
    expect((await rejection(store.create(fact('TypeScript fits this project better than Python', { type: 'opinion' })))).field).toBe('content');
    expect((await store.create(fact('I think TypeScript fits this project better than Python', { type: 'opinion' }))).outcome).toBe('created');
    expect((await store.create(fact('Mara prefers window seats', { type: 'preference' }))).outcome).toBe('created');
    // Only opinions and preferences carry the rule.
    expect((await store.create(fact('Green tea has less caffeine than coffee'))).outcome).toBe('created');
  });
});

describe('namesWhose', () => {
  it.each([
    ['I prefer concise answers', true],
    ['My favourite season is autumn', true],
    ['The person thinks the plan is too ambitious', true],
    ['The user prefers dark mode', true],
    ["Mara's favourite tea is oolong", true],
    ['Bob really likes jazz', true],
    ['For Mara, mornings are the best time to talk', true],
    ['Caroline said she loves hiking in the rain', true],
    ['Said to be the best tea in town', false],
    ['我喜欢安静的早晨', true],
    ['小明喜欢绿茶', true],
    ['Prefers green tea', false],
    ['Green tea is better than coffee', false],
    ['绿茶比咖啡好', false],
  ])('%s → %s', (text, expected) => {
    expect(namesWhose(text)).toBe(expected);
  });
});

describe('prepared saves (the sleep cycle probes ahead, then writes in a short transaction)', () => {
  const write = (content: string): MemoryWrite => ({ type: 'world', content, source: 'light-sleep', actor: 'light-sleep' });

  it('updates the near-duplicate found ahead, adds the rest, and refuses what a guard refuses', async () => {
    const existing = await store.create(write('Mara lives in Lisbon with her two cats.'));
    const prepared = await store.prepareCreates([write('Mara lives in Lisbon with her two cats!'), write('Joana teaches piano.'), write(`Key: ${SECRETS[2]}`)]);
    expect(prepared.items[2]).toBeInstanceOf(ApiError);
    const saved = await store.batch(async (b) => {
      const out = [];
      for (const item of prepared.items) if (!(item instanceof ApiError)) out.push(await b.createPrepared(item));
      return out;
    }, prepared);
    expect(saved.map((r) => r.outcome)).toEqual(['updated', 'created']);
    expect(saved[0]!.memory.id).toBe(existing.memory.id);
    expect((await store.list()).total).toBe(2);
  });

  it('probes again inside the batch when memory changed after the probes, so no copy slips in', async () => {
    const prepared = await store.prepareCreates([write('Rui works at the harbour museum.')]);
    // Between the probes and the batch, the companion saves the same fact in a chat.
    const meanwhile = await store.create({ ...write('Rui works at the harbour museum'), source: 'tool', actor: 'companion' });
    const [saved] = await store.batch(async (b) => [await b.createPrepared(prepared.items[0] as Exclude<(typeof prepared.items)[number], ApiError>)], prepared);
    expect(saved).toMatchObject({ outcome: 'updated', memory: { id: meanwhile.memory.id } });
    expect((await store.list()).total).toBe(1);
  });

  it('collapses the same fact said twice in one answer', async () => {
    const prepared = await store.prepareCreates([write('Ana visits on Sundays.'), write('ana visits on sundays')]);
    const saved = await store.batch(async (b) => {
      const out = [];
      for (const item of prepared.items) if (!(item instanceof ApiError)) out.push(await b.createPrepared(item));
      return out;
    }, prepared);
    expect(saved.map((r) => r.outcome)).toEqual(['created', 'updated']);
    expect((await store.list()).total).toBe(1);
  });
});

describe('update, forget, pin', () => {
  it('journals only the fields that changed', async () => {
    // A wording fix (a new value for a slot is a supersede: same-slot.test.ts).
    const { memory } = await store.create(fact('Mara plays the violin in a quartet.'));
    const result = await store.update(memory.id, { content: 'Mara plays the violin in a string quartet.', validFrom: '2025-03-01' }, 'person', 'more exact');
    expect(result).toMatchObject({
      outcome: 'updated',
      memory: { content: 'Mara plays the violin in a string quartet.', validFrom: '2025-03-01T00:00:00.000Z' },
    });
    expect(changes[1]).toMatchObject({
      id: result.changeId,
      memoryId: memory.id,
      action: 'update',
      actor: 'person',
      before: { content: 'Mara plays the violin in a quartet.', validFrom: null },
      after: { content: 'Mara plays the violin in a string quartet.', validFrom: '2025-03-01T00:00:00.000Z' },
      reason: 'more exact',
    });
    const err = await rejection(store.update(memory.id, { content: 'Mara plays the violin in a string quartet.' }, 'person'));
    expect(err.message).toBe(`Nothing to change: memory ${memory.id} already says that.`);
  });

  it.each(SECRETS)('refuses a secret in an edit and keeps the memory as it was: %s', async (secret) => {
    const { memory } = await store.create(fact('The VPN login is in the password manager.'));
    const err = await rejection(store.update(memory.id, { content: `The VPN login is ${secret}` }, 'person'));
    expect([err.code, err.field]).toEqual(['invalid_input', 'content']);
    expect((await store.get(memory.id)).memory.content).toBe('The VPN login is in the password manager.');
    expect(await changeCount()).toBe(1);
  });

  it('checks whose it is when an edit makes a memory an opinion', async () => {
    const { memory } = await store.create(fact('Jazz is relaxing'));
    expect((await rejection(store.update(memory.id, { type: 'opinion' }, 'person'))).message).toContain('must say whose it is');
  });

  it('forgets by expiring: the row stays, out of the active list', async () => {
    const { memory } = await store.create(fact('Mara works at Fudan.'));
    const result = await store.forget(memory.id, 'companion');
    expect(result.memory.status).toBe('expired');
    expect(result.memory.validTo).not.toBeNull();
    expect(changes[1]).toMatchObject({
      action: 'forget',
      actor: 'companion',
      before: { status: 'active', validTo: null },
      after: { status: 'expired', validTo: result.memory.validTo },
    });
    expect((await store.list()).total).toBe(0);
    expect(await memoryCount()).toBe(1);
    const again = await rejection(store.forget(memory.id, 'companion'));
    expect(again.code).toBe('conflict');
    expect((await rejection(store.update(memory.id, { content: 'Mara works at Tongji.' }, 'person'))).code).toBe('conflict');
    expect((await rejection(store.forget(999, 'person'))).code).toBe('not_found');
  });

  it('pins at the end of the pin order and unpins', async () => {
    const a = await store.create(fact('Fact A about Mara.'));
    const b = await store.create(fact('Fact B about the garden.'));
    expect((await store.pin(a.memory.id, true, 'person')).memory.pinOrder).toBe(1);
    const pinB = await store.pin(b.memory.id, true, 'person');
    expect(pinB.memory).toMatchObject({ pinned: true, pinOrder: 2 });
    expect(changes.at(-1)).toMatchObject({ action: 'pin', before: { pinned: false, pinOrder: null }, after: { pinned: true, pinOrder: 2 } });
    expect((await rejection(store.pin(b.memory.id, true, 'person'))).code).toBe('conflict');
    const unpin = await store.pin(a.memory.id, false, 'person');
    expect(unpin.memory).toMatchObject({ pinned: false, pinOrder: null });
    expect(changes.at(-1)).toMatchObject({ action: 'unpin', before: { pinned: true, pinOrder: 1 }, after: { pinned: false, pinOrder: null } });
  });

  it('reorders pins in one batch; names not given keep their order after', async () => {
    const ids: number[] = [];
    for (const c of ['Pinned one.', 'Pinned two, longer.', 'Pinned three, the last one.']) ids.push((await store.create(fact(c, { pinned: true }))).memory.id);
    const before = changes.length;
    const ordered = await store.reorderPins([ids[2]!, ids[0]!], 'person');
    expect(ordered.map((m) => [m.id, m.pinOrder])).toEqual([
      [ids[2], 1],
      [ids[0], 2],
      [ids[1], 3],
    ]);
    const reorders = changes.slice(before);
    expect(reorders.map((c) => [c.memoryId, c.action, c.before, c.after])).toEqual([
      [ids[2], 'reorder', { pinOrder: 3 }, { pinOrder: 1 }],
      [ids[0], 'reorder', { pinOrder: 1 }, { pinOrder: 2 }],
      [ids[1], 'reorder', { pinOrder: 2 }, { pinOrder: 3 }],
    ]);
    expect(new Set(reorders.map((c) => c.batchId)).size).toBe(1);
    expect((await store.list({ pinned: true })).items.map((m) => m.id)).toEqual([ids[2], ids[0], ids[1]]);
    expect((await rejection(store.reorderPins([ids[0]!, ids[0]!], 'person'))).field).toBe('ids');
    const unpinned = await store.create(fact('Not pinned at all.'));
    expect((await rejection(store.reorderPins([unpinned.memory.id], 'person'))).message).toBe(`Memory ${unpinned.memory.id} is not a pinned active memory.`);
  });
});

describe('undo', () => {
  it('restores an update, records an undo entry, and refuses a second undo', async () => {
    const { memory } = await store.create(fact('我的妹妹在上海读书'));
    const edit = await store.update(memory.id, { content: 'Mara studies in Beijing.' }, 'companion');
    const restored = await store.undo(edit.changeId, 'person');
    expect(restored.content).toBe('我的妹妹在上海读书');
    const seg = (await db.query<{ fts_segmented: string }>('SELECT fts_segmented FROM memories WHERE id = $1', [memory.id])).rows[0];
    expect(seg!.fts_segmented).toBe('我 的 妹妹 在 上海 读书');
    const undo = changes.at(-1)!;
    expect(undo).toMatchObject({
      memoryId: memory.id,
      action: 'undo',
      actor: 'person',
      before: { content: 'Mara studies in Beijing.' },
      after: { content: '我的妹妹在上海读书' },
      reason: `undo of change ${edit.changeId} (update)`,
    });
    const { history } = await store.get(memory.id);
    expect(history.map((c) => [c.action, c.undoneBy])).toEqual([
      ['create', null],
      ['update', undo.id],
      ['undo', null],
    ]);
    const twice = await rejection(store.undo(edit.changeId, 'person'));
    expect([twice.code, twice.message]).toEqual(['conflict', `Change ${edit.changeId} was already undone.`]);
    expect((await rejection(store.undo(undo.id, 'person'))).code).toBe('invalid_input');
    expect((await rejection(store.undo(9999, 'person'))).code).toBe('not_found');
  });

  it('brings back a forgotten memory', async () => {
    const { memory } = await store.create(fact('Mara works at Fudan.'));
    const forget = await store.forget(memory.id, 'person');
    const back = await store.undo(forget.changeId, 'person');
    expect(back).toMatchObject({ status: 'active', validTo: null });
  });

  it('undoes a pin', async () => {
    const { memory } = await store.create(fact('Mara works at Fudan.'));
    const pin = await store.pin(memory.id, true, 'person');
    expect(await store.undo(pin.changeId, 'person')).toMatchObject({ pinned: false, pinOrder: null });
  });

  it('undoes a create by expiring the memory, never deleting it', async () => {
    const created = await store.create(fact('Mara works at Fudan.'));
    const undone = await store.undo(created.changeId, 'person');
    expect(undone.status).toBe('expired');
    expect(changes.at(-1)).toMatchObject({ action: 'undo', before: { status: 'active', validTo: null }, after: { status: 'expired' } });
    expect(await memoryCount()).toBe(1);
  });

  it('undoes a whole batch, newest first', async () => {
    const a = await store.create(fact('Night fact A: Mara adopted a cat.', { actor: 'light-sleep', source: 'light-sleep', batchId: 'night-1' }));
    const b = await store.create(fact('Night fact B: the cat is called Miso.', { actor: 'light-sleep', source: 'light-sleep', batchId: 'night-1' }));
    const other = await store.create(fact('A fact from the day, not the night.'));
    await store.undo(b.changeId, 'person');
    const [ma, mb, mo] = await store.getMany([a.memory.id, b.memory.id, other.memory.id]);
    expect([ma!.status, mb!.status, mo!.status]).toEqual(['expired', 'expired', 'active']);
    const undos = changes.filter((c) => c.action === 'undo');
    expect(undos.map((c) => c.memoryId)).toEqual([b.memory.id, a.memory.id]);
    expect(undos[0]!.batchId).toBe(undos[1]!.batchId);
    expect(undos[0]!.batchId).not.toBeNull();
    expect((await rejection(store.undo(a.changeId, 'person'))).code).toBe('conflict');
  });

  it('undoes a supersede: the old memory is active again and the new one expires', async () => {
    const old = await store.create(fact('Mara lives in Shanghai.', { pinned: true }));
    const next = await store.supersede(old.memory.id, fact('Mara lives in Beijing since March.', { validFrom: '2025-03-01' }), 'deep-sleep');
    expect(next.memory).toMatchObject({ pinned: true, pinOrder: 1 });
    const [superseded] = await store.getMany([old.memory.id]);
    expect(superseded).toMatchObject({ status: 'superseded', supersededBy: next.memory.id, validTo: '2025-03-01T00:00:00.000Z' });
    expect(changes.slice(1).map((c) => [c.memoryId, c.action, c.actor])).toEqual([
      [next.memory.id, 'create', 'deep-sleep'],
      [old.memory.id, 'supersede', 'deep-sleep'],
    ]);
    await store.undo(next.changeId, 'person');
    const [o, n] = await store.getMany([old.memory.id, next.memory.id]);
    expect(o).toMatchObject({ status: 'active', supersededBy: null, validTo: null });
    expect(n!.status).toBe('expired');
  });

  it('refuses to undo a change whose fields were changed again since', async () => {
    const { memory } = await store.create(fact('Mara plays the violin.'));
    const first = await store.update(memory.id, { content: 'Mara plays the violin well.' }, 'person');
    await store.update(memory.id, { content: 'Mara plays the violin very well.' }, 'person');
    const err = await rejection(store.undo(first.changeId, 'person'));
    expect(err.code).toBe('conflict');
    expect((await store.get(memory.id)).memory.content).toBe('Mara plays the violin very well.');
  });
});

describe('reading', () => {
  it('get returns the history and the supersede chain, oldest first', async () => {
    const a = await store.create(fact('Mara lives in Shanghai.'));
    const b = await store.supersede(a.memory.id, fact('Mara lives in Hangzhou.'), 'deep-sleep');
    const c = await store.supersede(b.memory.id, fact('Mara lives in Beijing.'), 'deep-sleep');
    const got = await store.get(b.memory.id);
    expect(got.chain.map((m) => m.id)).toEqual([a.memory.id, b.memory.id, c.memory.id]);
    expect(got.history.map((h) => h.action)).toEqual(['create', 'supersede']);
    expect((await store.get(a.memory.id)).chain.map((m) => m.id)).toEqual([a.memory.id, b.memory.id, c.memory.id]);
    expect((await store.get(c.memory.id)).chain.map((m) => m.id)).toEqual([a.memory.id, b.memory.id, c.memory.id]);
    expect((await rejection(store.get(404))).code).toBe('not_found');
  });

  it('lists active memories, pinned first in pin order, then newest updated', async () => {
    const one = await store.create(fact('First plain fact.'));
    const two = await store.create(fact('Second plain fact, a little longer.'));
    const pinned = await store.create(fact('A pinned fact about the garden.', { pinned: true }));
    const pref = await store.create(fact('I prefer mornings for long talks', { type: 'preference' }));
    const gone = await store.create(fact('A fact that will be forgotten.'));
    await store.forget(gone.memory.id, 'person');
    await store.update(one.memory.id, { content: 'First plain fact, edited.' }, 'person');

    const all = await store.list();
    expect(all.total).toBe(4);
    expect(all.items.map((m) => m.id)).toEqual([pinned.memory.id, one.memory.id, pref.memory.id, two.memory.id]);
    expect((await store.list({ types: ['preference'] })).items.map((m) => m.id)).toEqual([pref.memory.id]);
    expect((await store.list({ statuses: ['expired'] })).items.map((m) => m.id)).toEqual([gone.memory.id]);
    expect((await store.list({ pinned: false, limit: 1, offset: 1 })).items.map((m) => m.id)).toEqual([pref.memory.id]);
  });

  it('getMany keeps the order asked; addInjected counts once per call', async () => {
    const a = await store.create(fact('Fact about apples.'));
    const b = await store.create(fact('Fact about bicycles.'));
    expect((await store.getMany([b.memory.id, 77, a.memory.id])).map((m) => m.id)).toEqual([b.memory.id, a.memory.id]);
    await store.addInjected([a.memory.id, b.memory.id, a.memory.id]);
    await store.addInjected([a.memory.id]);
    expect((await store.getMany([a.memory.id, b.memory.id])).map((m) => m.injectedCount)).toEqual([2, 1]);
    expect(changes.length).toBe(2);
  });
});

describe('change listener', () => {
  it('hears every change after commit; a failing listener is logged and the write stands', async () => {
    const failing = new MemoryStore(
      db,
      () => {
        throw new Error('renderer gone');
      },
      (level, msg) => logs.push(`${level}: ${msg}`),
    );
    const { memory } = await failing.create(fact('Fact written despite the listener.'));
    expect(logs).toEqual(['error: a memory change listener failed: renderer gone']);
    expect((await store.get(memory.id)).memory.status).toBe('active');
  });
});
