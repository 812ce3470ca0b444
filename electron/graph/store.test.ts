import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import { MemoryStore } from '../memory/store.js';
import { EntityStore, SELF_ENTITY_ID, USER_ENTITY_ID, type Entity } from './store.js';
import { rejection } from '../testing/rejection.js';

// Everything but the two seeded nodes, which go back to how migration 006 left them.
const RESET = `
  DELETE FROM entity_changes; DELETE FROM entity_ambiguities; DELETE FROM entity_edges; DELETE FROM entity_mentions;
  DELETE FROM entity_scans; DELETE FROM entity_aliases;
  UPDATE entities SET merged_into = NULL, status = 'active';
  DELETE FROM entities WHERE id > 2;
  UPDATE entities SET name = 'Anima', name_key = 'anima', mention_count = 0, first_seen = NULL, last_seen = NULL WHERE id = 1;
  UPDATE entities SET name = 'You', name_key = 'you', mention_count = 0, first_seen = NULL, last_seen = NULL WHERE id = 2;
  ALTER TABLE entities ALTER COLUMN id RESTART WITH 3;
  ALTER TABLE entity_changes ALTER COLUMN id RESTART; ALTER TABLE entity_edges ALTER COLUMN id RESTART;
  ALTER TABLE entity_mentions ALTER COLUMN id RESTART;
  DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories; DELETE FROM messages; DELETE FROM conversations;
  ALTER TABLE memories ALTER COLUMN id RESTART;`;

let db: Database;
let dir: string;
let store: EntityStore;
let conversations: Conversations;
let memories: MemoryStore;
let conversationId: string;
let changed: number[][];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-graph-'));
  db = await openDatabase(dir, { template: new Blob([fs.readFileSync(inject('dbTemplatePath'))]) });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(RESET);
  changed = [];
  conversations = new Conversations(db);
  memories = new MemoryStore(db);
  store = new EntityStore(
    db,
    { conversations, memories },
    () => {},
    (ids) => changed.push(ids),
  );
  conversationId = (await conversations.create('graph test')).id;
});

async function say(content: string, at?: Date): Promise<string> {
  const m = await conversations.append({ conversationId, role: 'user', content, status: 'complete', createdAt: at });
  await store.recordMentions({ messageId: m.id, text: content });
  return m.id;
}

async function byName(name: string): Promise<Entity> {
  const r = await store.resolve(name);
  if (!r.entity) throw new Error(`no entity for ${name}`);
  return r.entity;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
}

async function weight(a: number, b: number): Promise<number | null> {
  const row = (
    await db.query<{ weight: number }>(`SELECT weight FROM entity_edges WHERE relation = 'co_mention' AND source_id = $1 AND target_id = $2`, [
      Math.min(a, b),
      Math.max(a, b),
    ])
  ).rows[0];
  return row ? Number(row.weight) : null;
}

/** Every row of the graph tables, to show a refused change left nothing behind. */
async function snapshot(): Promise<string> {
  const tables = ['entities', 'entity_aliases', 'entity_mentions', 'entity_edges', 'entity_changes', 'entity_ambiguities'];
  const out: unknown[] = [];
  for (const t of tables) out.push((await db.query(`SELECT * FROM ${t} ORDER BY 1, 2`)).rows);
  return JSON.stringify(out);
}

describe('the fixed nodes', () => {
  it('seeds the companion and the person', async () => {
    expect(await store.entity(SELF_ENTITY_ID)).toMatchObject({ kind: 'self', name: 'Anima', status: 'active' });
    expect(await store.entity(USER_ENTITY_ID)).toMatchObject({ kind: 'user', name: 'You', status: 'active' });
  });
});

describe('recordMentions', () => {
  it('turns an English message into entities, mentions, counts and co-mention edges', async () => {
    const at = new Date('2025-03-01T10:00:00Z');
    const messageId = await say('My sister Ana moved to Lisbon to work at Nimbus Labs.', at);
    const ana = await byName('Ana');
    const lisbon = await byName('Lisbon');
    const nimbus = await byName('Nimbus Labs');
    expect([ana.kind, lisbon.kind, nimbus.kind]).toEqual(['person', 'place', 'org']);
    expect(ana).toMatchObject({ mentionCount: 1, firstSeen: at.toISOString(), lastSeen: at.toISOString(), status: 'active' });
    const mentions = await db.query<{ surface: string; span_start: number; span_end: number; origin: string }>(
      'SELECT surface, span_start, span_end, origin FROM entity_mentions WHERE message_id = $1 ORDER BY span_start',
      [messageId],
    );
    expect(mentions.rows).toEqual([
      { surface: 'Ana', span_start: 10, span_end: 13, origin: 'detected' },
      { surface: 'Lisbon', span_start: 23, span_end: 29, origin: 'detected' },
      { surface: 'Nimbus Labs', span_start: 41, span_end: 52, origin: 'detected' },
    ]);
    expect(await weight(ana.id, lisbon.id)).toBe(1);
    expect(await weight(ana.id, nimbus.id)).toBe(1);
    expect(await weight(lisbon.id, nimbus.id)).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM entity_scans WHERE message_id = $1', [messageId])).toBe(1);
    expect(changed.at(-1)!.sort()).toEqual([ana.id, lisbon.id, nimbus.id].sort());
  });

  it('turns a Chinese message into entities', async () => {
    await say('我妹妹在上海的华为工作。');
    expect(await byName('上海')).toMatchObject({ kind: 'place', mentionCount: 1 });
    expect(await byName('华为')).toMatchObject({ kind: 'org', mentionCount: 1 });
    expect(await weight((await byName('上海')).id, (await byName('华为')).id)).toBe(1);
  });

  it('weights co-mentions by how many texts name both, and first/last seen follow the texts', async () => {
    await say('Ana loves Lisbon.', new Date('2025-01-01T00:00:00Z'));
    await say('Ana flew back to Lisbon with Tom.', new Date('2025-02-01T00:00:00Z'));
    // The same names twice in one text count once.
    await say('Ana, Ana, Ana! Lisbon again.', new Date('2025-03-01T00:00:00Z'));
    const [ana, lisbon, tom] = [await byName('Ana'), await byName('Lisbon'), await byName('Tom')];
    expect(await weight(ana.id, lisbon.id)).toBe(3);
    expect(await weight(ana.id, tom.id)).toBe(1);
    expect(ana).toMatchObject({ mentionCount: 3, firstSeen: '2025-01-01T00:00:00.000Z', lastSeen: '2025-03-01T00:00:00.000Z' });
    expect(tom.mentionCount).toBe(1);
  });

  it('is idempotent for one text, and an edited memory loses the names it no longer has', async () => {
    const { memory } = await memories.create({ type: 'world', content: 'Ana and Tom met in Lisbon.', source: 'user', actor: 'person' });
    await store.recordMentions({ memoryId: memory.id, text: memory.content });
    await store.recordMentions({ memoryId: memory.id, text: memory.content });
    const [ana, tom, lisbon] = [await byName('Ana'), await byName('Tom'), await byName('Lisbon')];
    expect(ana.mentionCount).toBe(1);
    expect(await weight(ana.id, tom.id)).toBe(1);

    await memories.update(memory.id, { content: 'Ana and Tom met in Porto.' }, 'person');
    await store.recordMentions({ memoryId: memory.id, text: 'Ana and Tom met in Porto.' });
    expect((await store.entity(lisbon.id)).mentionCount).toBe(0);
    expect(await weight(ana.id, lisbon.id)).toBeNull();
    expect(await weight(ana.id, tom.id)).toBe(1);
    expect(await weight(ana.id, (await byName('Porto')).id)).toBe(1);
  });

  it('records the names given with a memory (entity_names), taking kinds from detection', async () => {
    const { memory } = await memories.create({
      type: 'world',
      content: 'My sister works in finance.',
      source: 'light-sleep',
      actor: 'light-sleep',
      entityNames: ['Mara', 'Shanghai', '🎉', '...'],
    });
    const recorded = await store.recordMentions({ memoryId: memory.id, text: memory.content, names: memory.entityNames });
    expect(recorded.map((r) => [r.surface, r.kind, r.origin])).toEqual([
      ['Mara', 'person', 'given'],
      ['Shanghai', 'place', 'given'],
    ]);
    expect(await count(`SELECT count(*)::int AS n FROM entity_mentions WHERE memory_id = $1 AND span_start IS NULL`, [memory.id])).toBe(2);
  });

  it('refuses a call without exactly one source, and a source that does not exist', async () => {
    await rejection(store.recordMentions({ text: 'Ana' }), 'invalid_input');
    await rejection(store.recordMentions({ messageId: 'x', memoryId: 1, text: 'Ana' }), 'invalid_input');
    await rejection(store.recordMentions({ messageId: 'no-such-message', text: 'Ana' }), 'not_found');
    await rejection(store.recordMentions({ memoryId: 999, text: 'Ana' }), 'not_found');
    expect(await count('SELECT count(*)::int AS n FROM entities')).toBe(2);
  });
});

describe('resolve', () => {
  it('matches the same name whatever its case, spacing or punctuation', async () => {
    await say('J.K. Rowling met Ana.');
    const rowling = await byName('J.K. Rowling');
    expect(await store.resolve('jk rowling')).toMatchObject({ via: 'name', entity: { id: rowling.id } });
    expect(await store.resolve('  ANA ')).toMatchObject({ via: 'name', entity: { name: 'Ana' } });
    await say('JK Rowling again.');
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE name_key = 'jk rowling'`)).toBe(1);
    expect((await store.entity(rowling.id)).mentionCount).toBe(2);
  });

  it('matches an alias', async () => {
    await say('Melanie painted a lake.');
    const melanie = await byName('Melanie');
    await store.addAlias(melanie.id, 'Mel');
    expect(await store.resolve('Mel')).toMatchObject({ via: 'alias', entity: { id: melanie.id } });
    await say('Hey Mel! Good to see you!');
    expect((await store.entity(melanie.id)).mentionCount).toBe(2);
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE name_key = 'mel'`)).toBe(0);
  });

  it('matches a close spelling (trigram) of the same kind', async () => {
    await say('I work at Nimbus Labs with Melanie.');
    const nimbus = await byName('Nimbus Labs');
    const r = await store.resolve('Nimbus Lab', 'org');
    expect(r).toMatchObject({ via: 'similar', entity: { id: nimbus.id } });
    expect(r.similarity).toBeGreaterThanOrEqual(0.6);
    await say('Melani called me.');
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE kind = 'person'`)).toBe(1);
  });

  it('an ambiguous name picks none: a new entity, with the candidates recorded', async () => {
    await say('I work at Nimbus Labs.');
    const nimbus = await byName('Nimbus Labs');
    // "nimbus" is 0.58 alike: close, not close enough.
    expect(await store.resolve('Nimbus')).toMatchObject({ entity: null, via: 'ambiguous', candidates: [{ id: nimbus.id, name: 'Nimbus Labs' }] });
    const { memory } = await memories.create({ type: 'world', content: 'The person mentioned a company.', source: 'user', actor: 'person' });
    const [rec] = await store.recordMentions({ memoryId: memory.id, text: memory.content, names: [{ name: 'Nimbus', kind: 'org' }] });
    expect(rec).toMatchObject({ created: true, surface: 'Nimbus' });
    const amb = (await db.query<{ entity_id: number; candidate_ids: number[] }>('SELECT entity_id, candidate_ids FROM entity_ambiguities')).rows;
    expect(amb).toEqual([{ entity_id: rec!.entityId, candidate_ids: [nimbus.id] }]);
    // From now on the name is exact.
    expect(await store.resolve('Nimbus')).toMatchObject({ via: 'name', entity: { id: rec!.entityId } });
  });

  it('two close candidates are ambiguous too, and a close name of another kind is not the same', async () => {
    const { memory } = await memories.create({ type: 'world', content: 'Names.', source: 'user', actor: 'person' });
    await store.recordMentions({
      memoryId: memory.id,
      text: '',
      names: [
        { name: 'Jonathan Smyth', kind: 'person' },
        { name: 'Jonathan Smith', kind: 'person' },
      ],
    });
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE kind = 'person'`)).toBe(2);
    // 0.71 alike to both.
    const r = await store.resolve('Jonathan Smth', 'person');
    expect(r.entity).toBeNull();
    expect(r.candidates.length).toBe(2);

    await say('We flew to Paris.');
    const paris = await byName('Paris');
    // 0.63 alike, but a person is not a place.
    expect((await store.resolve('Parisa', 'person')).entity).toBeNull();
    expect((await store.resolve('Parisa', 'place')).entity?.id).toBe(paris.id);
  });

  it('refuses names that are not names', async () => {
    await rejection(store.resolve('🎉🎉'), 'invalid_input');
    await rejection(store.resolve('...'), 'invalid_input');
    await rejection(store.resolve('x'.repeat(500)), 'invalid_input');
  });
});

describe('rename and aliases', () => {
  it('renames, keeps the old name as an alias, and undo restores both', async () => {
    await say('Mel came over.');
    const mel = await byName('Mel');
    const { entity, changeId } = await store.rename(mel.id, 'Melanie');
    expect(entity).toMatchObject({ name: 'Melanie', aliases: ['Mel'] });
    expect(await store.resolve('Mel')).toMatchObject({ via: 'alias', entity: { id: mel.id } });
    const back = await store.undo(changeId);
    expect(back).toMatchObject({ name: 'Mel', aliases: [] });
    expect((await store.history(mel.id)).map((c) => [c.action, c.undoneBy !== null])).toEqual([
      ['rename', true],
      ['undo', false],
    ]);
    await rejection(store.undo(changeId), 'conflict');
  });

  it('an alias can be undone', async () => {
    await say('Caroline went to the support group.');
    const caroline = await byName('Caroline');
    const { changeId } = await store.addAlias(caroline.id, 'Caro');
    expect((await store.undo(changeId)).aliases).toEqual([]);
    expect((await store.resolve('Caro')).entity).toBeNull();
  });

  it('refuses bad names, taken names and alias cycles, and changes nothing', async () => {
    await say('Ana met Tom in Lisbon.');
    const [ana, tom] = [await byName('Ana'), await byName('Tom')];
    await store.addAlias(ana.id, 'Annie');
    const before = await snapshot();
    for (const bad of ['🎉🥳', 'x'.repeat(500), '!!!…', '', '   ', 'Аna' /* Cyrillic А */, 'An\u202Ea', 'Ana\u0000']) {
      await rejection(store.rename(ana.id, bad), 'invalid_input');
      await rejection(store.addAlias(ana.id, bad), 'invalid_input');
    }
    // A name or alias another entity answers to: merge instead.
    await rejection(store.rename(tom.id, 'Ana'), 'conflict');
    await rejection(store.rename(tom.id, 'annie'), 'conflict');
    await rejection(store.addAlias(tom.id, 'ANA'), 'conflict');
    await rejection(store.addAlias(tom.id, 'Annie'), 'conflict');
    // Its own name, or an alias it already has.
    await rejection(store.addAlias(ana.id, 'ana'), 'invalid_input');
    await rejection(store.addAlias(ana.id, 'Annie'), 'conflict');
    await rejection(store.rename(ana.id, 'Ana'), 'invalid_input');
    await rejection(store.rename(999, 'Someone'), 'not_found');
    await rejection(store.rename(-1, 'Someone'), 'invalid_input');
    expect(await snapshot()).toBe(before);
    // Han beside Latin, as separate words, is a name.
    expect((await store.rename(ana.id, 'Ana 张')).entity.name).toBe('Ana 张');
  });
});

describe('merge', () => {
  it('moves mentions, edges and names to the kept entity, and undo puts every one back', async () => {
    await say('Mel and Ana went to Lisbon.');
    await say('Melanie and Tom painted in Porto.');
    await say('Melanie called Ana.');
    const [mel, melanie, ana, tom, lisbon] = [await byName('Mel'), await byName('Melanie'), await byName('Ana'), await byName('Tom'), await byName('Lisbon')];
    await store.addAlias(mel.id, 'Melly');
    // A typed relation into the merged one, which must follow it and come back.
    const edge = await store.relate({ sourceId: ana.id, targetId: mel.id, relation: 'friend_of' });
    const before = {
      mentions: (await db.query('SELECT id, entity_id FROM entity_mentions ORDER BY id')).rows,
      edges: (await db.query('SELECT source_id, target_id, relation, weight FROM entity_edges ORDER BY source_id, target_id, relation')).rows,
      counts: (await db.query('SELECT id, mention_count, first_seen, last_seen FROM entities ORDER BY id')).rows,
    };
    expect(await weight(melanie.id, ana.id)).toBe(1);

    const { entity, changeId } = await store.merge(melanie.id, mel.id);
    expect(entity).toMatchObject({ id: melanie.id, name: 'Melanie', mentionCount: 3 });
    expect(entity.aliases.sort()).toEqual(['Mel', 'Melly']);
    expect(await store.entity(mel.id)).toMatchObject({ status: 'merged', mergedInto: melanie.id, mentionCount: 0 });
    expect(await count('SELECT count(*)::int AS n FROM entity_mentions WHERE entity_id = $1', [mel.id])).toBe(0);
    expect(await weight(melanie.id, ana.id)).toBe(2);
    expect(await weight(melanie.id, lisbon.id)).toBe(1);
    expect(await weight(mel.id, ana.id)).toBeNull();
    expect((await db.query('SELECT target_id FROM entity_edges WHERE id = $1', [edge.id])).rows).toEqual([{ target_id: melanie.id }]);
    // Its names now find the survivor; nothing new is made for them.
    expect(await store.resolve('Mel')).toMatchObject({ via: 'alias', entity: { id: melanie.id } });
    expect(await store.resolve('Melly')).toMatchObject({ via: 'alias', entity: { id: melanie.id } });
    expect((await store.get(melanie.id)).relations.map((r) => r.other.id).sort()).toEqual(
      [ana.id, lisbon.id, tom.id, ana.id, (await byName('Porto')).id].sort(),
    );

    const restored = await store.undo(changeId);
    expect(restored).toMatchObject({ id: melanie.id, aliases: [] });
    expect(await store.entity(mel.id)).toMatchObject({ status: 'active', mergedInto: null, aliases: ['Melly'] });
    expect((await db.query('SELECT id, entity_id FROM entity_mentions ORDER BY id')).rows).toEqual(before.mentions);
    expect((await db.query('SELECT source_id, target_id, relation, weight FROM entity_edges ORDER BY source_id, target_id, relation')).rows).toEqual(
      before.edges,
    );
    expect((await db.query('SELECT id, mention_count, first_seen, last_seen FROM entities ORDER BY id')).rows).toEqual(before.counts);
    expect(await store.resolve('Mel')).toMatchObject({ via: 'name', entity: { id: mel.id } });
  });

  it('folds co-mention edges without mention rows (imported) and leaves a repeated typed edge behind; undo restores the graph exactly', async () => {
    await store.importGraph({
      entities: [
        { name: 'Ana', kind: 'person' },
        { name: 'Ana Sousa', kind: 'person' },
        { name: 'Santa Maria', kind: 'org' },
        { name: 'Lisbon', kind: 'place' },
        { name: 'Tomás', kind: 'person' },
      ],
      edges: [
        { source: 0, target: 2, relation: 'works_at' },
        { source: 1, target: 2, relation: 'works_at' },
        { source: 1, target: 0, relation: 'sister_of' },
        { source: 0, target: 3, relation: 'co_mention', weight: 8 },
        { source: 1, target: 3, relation: 'co_mention', weight: 2 },
        { source: 1, target: 4, relation: 'co_mention', weight: 5 },
        { source: 0, target: 1, relation: 'co_mention', weight: 3 },
      ],
    });
    const [ana, sousa, lisbon, tomas] = [await byName('Ana'), await byName('Ana Sousa'), await byName('Lisbon'), await byName('Tomás')];
    type EdgeRow = { id: number; source_id: number; target_id: number; relation: string; weight: number };
    const snapshot = async () => (await db.query<EdgeRow>('SELECT id, source_id, target_id, relation, weight FROM entity_edges ORDER BY id')).rows;
    const before = await snapshot();

    const { changeId } = await store.merge(ana.id, sousa.id);
    expect(await weight(ana.id, lisbon.id)).toBe(10);
    expect(await weight(ana.id, tomas.id)).toBe(5);
    expect(await weight(ana.id, sousa.id)).toBeNull();
    // One works_at for Ana, not two; no Ana sister_of Ana.
    const relations = (await store.get(ana.id)).relations.filter((r) => r.relation !== 'co_mention');
    expect(relations.map((r) => `${r.relation}:${r.other.name}`)).toEqual(['works_at:Santa Maria']);

    // A text after the merge that names Ana and Tomás stays counted on Ana when the merge is undone.
    const later = await say('Ana and Tomás cooked dinner.');
    expect(await weight(ana.id, tomas.id)).toBe(6);
    await store.undo(changeId);
    expect(await weight(ana.id, tomas.id)).toBe(1);
    expect(await weight(sousa.id, tomas.id)).toBe(5);
    const after = (await snapshot()).filter((e) => !(e.relation === 'co_mention' && [e.source_id, e.target_id].includes(tomas.id)));
    const strip = (rows: typeof before) => rows.map(({ id: _id, ...e }) => e).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(strip(after)).toEqual(strip(before.filter((e) => !(e.relation === 'co_mention' && [e.source_id, e.target_id].includes(tomas.id)))));
    expect(later).toBeTruthy();
  });

  it('counts a text that named both merged names and a third once', async () => {
    await say('Mel and Melanie met Ana.');
    await say('Melanie met Ana again.');
    const [mel, melanie, ana] = [await byName('Mel'), await byName('Melanie'), await byName('Ana')];
    expect(await weight(mel.id, ana.id)).toBe(1);
    expect(await weight(melanie.id, ana.id)).toBe(2);
    const { changeId } = await store.merge(melanie.id, mel.id);
    // Two texts name Melanie (under either name) with Ana.
    expect(await weight(melanie.id, ana.id)).toBe(2);
    await store.undo(changeId);
    expect(await weight(mel.id, ana.id)).toBe(1);
    expect(await weight(melanie.id, ana.id)).toBe(2);
    expect(await weight(mel.id, melanie.id)).toBe(1);
  });

  it('merges someone into the person, but never the person or the companion away', async () => {
    await say('Caroline went hiking.');
    const caroline = await byName('Caroline');
    const { entity } = await store.merge(USER_ENTITY_ID, caroline.id);
    expect(entity).toMatchObject({ id: USER_ENTITY_ID, kind: 'user', aliases: ['Caroline'], mentionCount: 1 });
    await say('Hey Caroline!');
    expect((await store.entity(USER_ENTITY_ID)).mentionCount).toBe(2);
    // Only exact names find the fixed nodes: "Animal" is not the companion "Anima".
    expect((await store.resolve('Animal')).entity).toBeNull();
    expect((await store.resolve('Carolin')).entity).toBeNull();
    await rejection(store.merge(caroline.id, USER_ENTITY_ID), 'conflict');
    await rejection(store.merge(USER_ENTITY_ID, SELF_ENTITY_ID), 'conflict');
  });

  it('refuses merging with itself, with a missing or merged entity, and out-of-order undo', async () => {
    await say('Ana met Tom and Bob.');
    const [ana, tom, bob] = [await byName('Ana'), await byName('Tom'), await byName('Bob')];
    const before = await snapshot();
    await rejection(store.merge(ana.id, ana.id), 'invalid_input');
    await rejection(store.merge(ana.id, 999), 'not_found');
    await rejection(store.merge(999, ana.id), 'not_found');
    expect(await snapshot()).toBe(before);

    const first = await store.merge(ana.id, tom.id);
    // Tom is merged: no merge chain, no cycle back.
    await rejection(store.merge(tom.id, ana.id), 'conflict');
    await rejection(store.merge(bob.id, tom.id), 'conflict');
    await rejection(store.rename(tom.id, 'Thomas'), 'conflict');
    const second = await store.merge(ana.id, bob.id);
    // The later merge touches Ana: undo that one first.
    await rejection(store.undo(first.changeId), 'conflict');
    await store.undo(second.changeId);
    await store.undo(first.changeId);
    expect(await snapshot().then((s) => JSON.parse(s)[2])).toEqual(JSON.parse(before)[2]); // mentions
    expect((await store.entities([ana.id, tom.id, bob.id])).map((e) => [e.status, e.mentionCount])).toEqual([
      ['active', 1],
      ['active', 1],
      ['active', 1],
    ]);
    expect(await weight(tom.id, bob.id)).toBe(1);
  });
});

describe('hide', () => {
  it('hides from views, keeps resolving to the same entity, and undo shows it again', async () => {
    await say('Ana met Tom in Lisbon.');
    const [ana, tom] = [await byName('Ana'), await byName('Tom')];
    const { changeId } = await store.hide(tom.id);
    expect((await store.ego(ana.id)).nodes.map((n) => n.name)).toEqual(['Ana', 'Lisbon']);
    expect((await store.graph()).nodes.map((n) => n.name)).not.toContain('Tom');
    // Mentioned again: the same hidden entity, not a new one.
    await say('Tom again.');
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE name_key = 'tom'`)).toBe(1);
    expect(await store.entity(tom.id)).toMatchObject({ status: 'hidden', mentionCount: 2 });
    await rejection(store.hide(tom.id), 'conflict');
    expect((await store.undo(changeId)).status).toBe('active');
    expect((await store.ego(ana.id)).nodes.map((n) => n.name).sort()).toEqual(['Ana', 'Lisbon', 'Tom']);
    await rejection(store.hide(SELF_ENTITY_ID), 'conflict');
  });
});

describe('relations', () => {
  it('refuses a relation to a missing entity, to itself, or with bad fields', async () => {
    await say('Ana works at Nimbus Labs.');
    const [ana, nimbus] = [await byName('Ana'), await byName('Nimbus Labs')];
    const before = await snapshot();
    await rejection(store.relate({ sourceId: ana.id, targetId: 999, relation: 'works_at' }), 'not_found');
    await rejection(store.relate({ sourceId: 999, targetId: ana.id, relation: 'works_at' }), 'not_found');
    await rejection(store.relate({ sourceId: ana.id, targetId: ana.id, relation: 'works_at' }), 'invalid_input');
    await rejection(store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'Works At!' }), 'invalid_input');
    await rejection(store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'co_mention' }), 'invalid_input');
    await rejection(store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'works_at', validFrom: 'soon' }), 'invalid_input');
    await rejection(
      store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'works_at', validFrom: '2025-02-01', validTo: '2025-01-01' }),
      'invalid_input',
    );
    await rejection(store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'works_at', evidenceMemoryIds: [424242] }), 'not_found');
    expect(await snapshot()).toBe(before);
    const edge = await store.relate({ sourceId: ana.id, targetId: nimbus.id, relation: 'works_at', validFrom: '2025-01-01' });
    expect(edge).toMatchObject({ source: ana.id, target: nimbus.id, relation: 'works_at', validFrom: '2025-01-01T00:00:00.000Z', validTo: null });
    // As of a time before it held, the ego graph has only the co-mention.
    expect((await store.ego(ana.id, { at: '2024-06-01' })).edges.map((e) => e.relation)).toEqual(['co_mention']);
  });
});

describe('reading', () => {
  it('ego walks two hops along the heaviest edges, and get lists what mentions the entity', async () => {
    await say('Ana met Tom in Lisbon.');
    await say('Ana and Tom again.');
    await say('Tom introduced Bob.');
    await say('Bob lives in Porto.');
    const [ana, tom, bob, porto] = [await byName('Ana'), await byName('Tom'), await byName('Bob'), await byName('Porto')];
    const one = await store.ego(ana.id, { hops: 1 });
    expect(one.nodes.map((n) => [n.name, n.hop])).toEqual([
      ['Ana', 0],
      ['Tom', 1],
      ['Lisbon', 1],
    ]);
    const two = await store.ego(ana.id, { hops: 2 });
    expect(two.nodes.map((n) => [n.name, n.hop])).toEqual([
      ['Ana', 0],
      ['Tom', 1],
      ['Lisbon', 1],
      ['Bob', 2],
    ]);
    expect(two.edges[0]).toMatchObject({ source: ana.id, target: tom.id, weight: 2 });
    expect(two.edges.some((e) => e.target === porto.id || e.source === porto.id)).toBe(false);
    expect((await store.ego(ana.id, { hops: 2, kinds: ['person'] })).nodes.map((n) => n.name)).toEqual(['Ana', 'Tom', 'Bob']);

    const { memory } = await memories.create({ type: 'world', content: 'Bob and Tom are brothers.', source: 'user', actor: 'person' });
    await store.recordMentions({ memoryId: memory.id, text: memory.content });
    const detail = await store.get(bob.id);
    expect(detail.factIds).toEqual([memory.id]);
    expect(detail.conversations).toEqual([{ id: conversationId, title: 'graph test', mentions: 2, lastAt: expect.any(String) }]);
    expect(detail.relations.map((r) => r.other.name).sort()).toEqual(['Porto', 'Tom']);

    expect((await store.search('an')).map((e) => e.name)).toContain('Ana');
    expect((await store.search('Tim')).map((e) => e.name)).toEqual([]);
    const whole = await store.graph({ limit: 3 });
    // Tom and Bob are named 3 times each (ties go by id), Ana twice.
    expect(whole.nodes.map((n) => n.name)).toEqual(['Tom', 'Bob', 'Ana']);
    expect(whole.totalEntities).toBe(7);
    await rejection(store.ego(999), 'not_found');
  });
});

describe('relations from the sleep cycle: strengthen, close, undo, profiles', () => {
  const fact = async (content: string) => (await memories.create({ type: 'world', content, source: 'user', actor: 'person' })).memory.id;
  const edgeRow = async (id: number) =>
    (
      await db.query<{ weight: number; valid_from: Date | null; valid_to: Date | null; evidence: number[] }>(
        `SELECT weight, valid_from, valid_to, evidence_memory_ids AS evidence FROM entity_edges WHERE id = $1`,
        [id],
      )
    ).rows[0]!;
  const typedAt = async (at: string) =>
    (await store.graph({ at, limit: 100 })).edges
      .filter((e) => e.relation !== 'co_mention')
      .map((e) => `${e.source} ${e.relation} ${e.target}`)
      .sort();

  it('names resolve to the same entities a mention would, made when unknown; the person and the companion keep their own', async () => {
    await say('Ana works at Nimbus Labs.');
    const ana = await byName('Ana');
    const ids = await store.ensureEntities(['Ana', 'Lisbon', 'lisbon', 'You', '!!']);
    expect(ids.get('ana')).toBe(ana.id);
    expect(ids.get('you')).toBe(USER_ENTITY_ID);
    expect(ids.size).toBe(3);
    const lisbon = await store.entity(ids.get('lisbon')!);
    expect(lisbon).toMatchObject({ name: 'Lisbon', status: 'active', mentionCount: 0 });
    // Recording the memory later finds the entity that was made, not a second one.
    const id = await fact('Ana moved to Lisbon.');
    await store.recordMentions({ memoryId: id, text: 'Ana moved to Lisbon.', names: ['Lisbon'] });
    expect((await byName('Lisbon')).id).toBe(lisbon.id);
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE name_key = 'lisbon'`)).toBe(1);
  });

  it('strengthens the same open relation instead of adding a copy, and undo takes back exactly that', async () => {
    const ids = await store.ensureEntities(['Mara', 'Lisbon', 'Porto']);
    const mara = ids.get('mara')!,
      lisbon = ids.get('lisbon')!,
      porto = ids.get('porto')!;
    const m1 = await fact('Mara lives in Lisbon.');
    const m2 = await fact('Mara has a flat in Lisbon.');
    const edge = await store.relate(
      { sourceId: mara, targetId: lisbon, relation: 'lives_in', validFrom: '2024-01-01', evidenceMemoryIds: [m1] },
      'light-sleep',
    );
    expect(await store.strengthen({ sourceId: mara, targetId: porto, relation: 'lives_in', evidenceMemoryIds: [m2] }, 'light-sleep')).toBeNull();
    expect(await store.strengthen({ sourceId: mara, targetId: lisbon, relation: 'lives_in', validTo: '2030-01-01', evidenceMemoryIds: [m2] })).toBeNull();
    const again = await store.strengthen(
      { sourceId: mara, targetId: lisbon, relation: 'lives_in', validFrom: '2023-06-01', evidenceMemoryIds: [m2, m1] },
      'light-sleep',
    );
    expect(again).toMatchObject({ id: edge.id, weight: 2, validFrom: '2023-06-01T00:00:00.000Z', validTo: null, evidenceMemoryIds: [m1, m2] });
    expect(await count(`SELECT count(*)::int AS n FROM entity_edges WHERE relation = 'lives_in'`)).toBe(1);
    const change = (await store.history(mara)).at(-1)!;
    expect(change).toMatchObject({ action: 'strengthen', actor: 'light-sleep', entityId: mara, otherId: lisbon });

    // Evidence carried in by a merge after the strengthen stays when the strengthen is undone.
    const m3 = await fact('Mara has lived in Lisbon for years.');
    expect(await store.carryEvidence([m2], [m3])).toBe(1);
    await store.undo(change.id);
    expect(await edgeRow(edge.id)).toMatchObject({ weight: 1, valid_from: new Date('2024-01-01'), valid_to: null });
    expect((await edgeRow(edge.id)).evidence.map(Number)).toEqual([m1, m3]);
    await rejection(store.strengthen({ sourceId: mara, targetId: lisbon, relation: 'Lives In' }), 'invalid_input');
  });

  it('closes the older of two single-valued relations where the newer begins; undo reopens it, and it stays open', async () => {
    const ids = await store.ensureEntities(['Mara', 'Lisbon', 'Porto', 'Tom', 'Lena']);
    const mara = ids.get('mara')!,
      lisbon = ids.get('lisbon')!,
      porto = ids.get('porto')!,
      tom = ids.get('tom')!,
      lena = ids.get('lena')!;
    const lisbonEdge = await store.relate({
      sourceId: mara,
      targetId: lisbon,
      relation: 'lives_in',
      validFrom: '2024-01-01',
      evidenceMemoryIds: [await fact('Mara lives in Lisbon.')],
    });
    const portoEdge = await store.relate({
      sourceId: mara,
      targetId: porto,
      relation: 'lives_in',
      validFrom: '2025-03-01',
      evidenceMemoryIds: [await fact('Mara moved to Porto.')],
    });
    // Many-valued relations and different sources are left alone.
    await store.relate({ sourceId: tom, targetId: lisbon, relation: 'lives_in', validFrom: '2020-01-01' });
    await store.relate({ sourceId: mara, targetId: tom, relation: 'likes' });
    await store.relate({ sourceId: mara, targetId: lena, relation: 'likes' });
    // A symmetric one is single-valued at either end: Lena partner_of Tom, later Mara partner_of Tom.
    const older = await store.relate({ sourceId: lena, targetId: tom, relation: 'partner_of', validFrom: '2019-01-01' });
    const newer = await store.relate({ sourceId: mara, targetId: tom, relation: 'partner_of', validFrom: '2022-05-01' });

    const closed = await store.closeReplaced(['lives_in'], ['partner_of'], 'deep-sleep');
    expect(closed.map((e) => [e.id, e.validTo]).sort()).toEqual(
      [
        [lisbonEdge.id, '2025-03-01T00:00:00.000Z'],
        [older.id, '2022-05-01T00:00:00.000Z'],
      ].sort(),
    );
    expect(await typedAt('2024-06-01')).toContain(`${mara} lives_in ${lisbon}`);
    expect(await typedAt('2024-06-01')).not.toContain(`${mara} lives_in ${porto}`);
    expect(await typedAt('2025-06-01')).toContain(`${mara} lives_in ${porto}`);
    expect(await typedAt('2025-06-01')).not.toContain(`${mara} lives_in ${lisbon}`);
    expect(await typedAt('2025-06-01')).toContain(`${mara} partner_of ${tom}`);
    expect(await typedAt('2025-06-01')).not.toContain(`${lena} partner_of ${tom}`);
    expect((await edgeRow(portoEdge.id)).valid_to).toBeNull();
    expect((await edgeRow(newer.id)).valid_to).toBeNull();
    // History stays: nothing was deleted.
    expect(await count(`SELECT count(*)::int AS n FROM entity_edges WHERE relation <> 'co_mention'`)).toBe(7);

    const close = (await store.history(lisbon)).find((c) => c.action === 'close')!;
    expect(close).toMatchObject({ actor: 'deep-sleep', entityId: mara, otherId: lisbon, after: { cause: 'replaced', by: portoEdge.id } });
    await store.undo(close.id);
    expect((await edgeRow(lisbonEdge.id)).valid_to).toBeNull();
    expect(await typedAt('2025-06-01')).toContain(`${mara} lives_in ${lisbon}`);
    // The person reopened it: the next night leaves it open.
    expect(await store.closeReplaced(['lives_in'], ['partner_of'])).toEqual([]);
    await rejection(store.closeRelation(older.id, '2023-01-01'), 'conflict');
    // Closing never ends a relation before it began.
    expect((await store.closeRelation(portoEdge.id, '2020-01-01')).validTo).toBe('2025-03-01T00:00:00.000Z');
  });

  it('closes a relation whose memories all stopped being true, at the time they stopped', async () => {
    const ids = await store.ensureEntities(['Mara', 'Nimbus Labs', 'Lisbon']);
    const mara = ids.get('mara')!,
      nimbus = ids.get('nimbus labs')!,
      lisbon = ids.get('lisbon')!;
    const job = await fact('Mara works at Nimbus Labs.');
    const home = await fact('Mara lives in Lisbon.');
    const again = await fact('Mara still lives in Lisbon.');
    const works = await store.relate({ sourceId: mara, targetId: nimbus, relation: 'works_at', validFrom: '2020-01-01', evidenceMemoryIds: [job] });
    const lives = await store.relate({ sourceId: mara, targetId: lisbon, relation: 'lives_in', evidenceMemoryIds: [home, again] });
    await memories.batch(async (b) => {
      await b.expire(job, '2024-09-30', 'deep-sleep');
      await b.expire(home, '2024-10-31', 'deep-sleep');
    });
    const closed = await store.closeUnsupported([job, home], '2099-01-01T00:00:00.000Z', 'deep-sleep');
    // The home still rests on an active memory.
    expect(closed.map((e) => [e.id, e.validTo])).toEqual([[works.id, '2024-09-30T00:00:00.000Z']]);
    expect((await edgeRow(lives.id)).valid_to).toBeNull();
    expect((await store.history(mara)).at(-1)).toMatchObject({ action: 'close', after: { cause: 'evidence', memoryIds: [job] } });
    expect(await store.closeUnsupported([job, home], '2099-01-01T00:00:00.000Z')).toEqual([]);
  });

  it('links a profile, leaves it out of the facts, and follows it through a supersede and its undo', async () => {
    const ids = await store.ensureEntities(['Mara']);
    const mara = ids.get('mara')!;
    const factId = await fact('Mara lives in Lisbon.');
    await store.recordMentions({ memoryId: factId, text: 'Mara lives in Lisbon.' });
    expect((await store.get(mara)).profileMemoryId).toBeNull();
    const first = await memories.batch(async (b) => {
      const saved = await b.create({
        type: 'observation',
        content: 'Mara is a friend of the person who lives in Lisbon.',
        entityNames: ['Mara'],
        source: 'deep-sleep',
        actor: 'deep-sleep',
      });
      await store.setProfileIn(b.tx, mara, saved.memory.id);
      return saved.memory.id;
    });
    await store.recordMentions({ memoryId: first, text: 'Mara is a friend of the person who lives in Lisbon.', names: ['Mara'] });
    expect(await store.get(mara)).toMatchObject({ profileMemoryId: first, factIds: [factId] });

    const second = await memories.batch(async (b) => {
      const saved = await b.supersede(
        first,
        {
          type: 'observation',
          content: 'Mara, the person’s friend, lives in Lisbon and paints.',
          entityNames: ['Mara'],
          source: 'deep-sleep',
          actor: 'deep-sleep',
        },
        'deep-sleep',
      );
      await store.setProfileIn(b.tx, mara, saved.memory.id);
      return saved;
    });
    expect(await store.profileOf(mara)).toBe(second.memory.id);
    // Undoing the new profile brings the old one back, and the link follows it.
    await memories.undo(second.changeId, 'person');
    expect(await store.profileOf(mara)).toBe(first);
    await rejection(
      db.transaction((tx) => store.setProfileIn(tx, 999, first)),
      'not_found',
    );
  });

  it('gives a merge the merged entity’s profile when the kept one has none, and undo takes it back', async () => {
    const ids = await store.ensureEntities(['Mara', 'Mara Costa', 'Lisbon']);
    const [mara, costa, lisbon] = [ids.get('mara')!, ids.get('mara costa')!, ids.get('lisbon')!];
    const profile = await memories.batch(async (b) => {
      const saved = await b.create({
        type: 'observation',
        content: 'Mara Costa is the person’s neighbour.',
        entityNames: ['Mara Costa'],
        source: 'deep-sleep',
        actor: 'deep-sleep',
      });
      await store.setProfileIn(b.tx, costa, saved.memory.id);
      return saved.memory.id;
    });
    const merged = await store.merge(mara, costa);
    expect(await store.profileOf(mara)).toBe(profile);
    await store.undo(merged.changeId);
    expect(await store.profileOf(mara)).toBeNull();
    expect(await store.profileOf(costa)).toBe(profile);

    // A kept entity with its own profile keeps it.
    const own = await memories.batch(async (b) => {
      const saved = await b.create({
        type: 'observation',
        content: 'Lisbon is where Mara lives.',
        entityNames: ['Lisbon'],
        source: 'deep-sleep',
        actor: 'deep-sleep',
      });
      await store.setProfileIn(b.tx, lisbon, saved.memory.id);
      return saved.memory.id;
    });
    await store.merge(lisbon, costa);
    expect(await store.profileOf(lisbon)).toBe(own);
  });
});
