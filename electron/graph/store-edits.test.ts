// The entity store's edits on real PGlite: rename and aliases, merge, hide and refused relations, each
// undoable and each refusal changing nothing. Harness: testing/store-harness.ts.
import { describe, expect, it } from 'vitest';
import { SELF_ENTITY_ID, USER_ENTITY_ID } from './store.js';
import { rejection } from '../testing/rejection.js';
import { db, store, say, byName, count, weight, snapshot, useGraphStore } from './testing/store-harness.js';

useGraphStore();

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

describe('the most mentioned (entity_counts, migration 037)', () => {
  // The active entities' counts, as the Graph view orders by them, next to the entities' own.
  const countsApart = async () =>
    (await db.query<{ id: number; n: number }>('SELECT entity_id::int AS id, mention_count AS n FROM entity_counts ORDER BY entity_id')).rows;
  const countsOfActive = async () =>
    (await db.query<{ id: number; n: number }>(`SELECT id::int AS id, mention_count AS n FROM entities WHERE status = 'active' ORDER BY id`)).rows;

  it('follow every recording, hide, merge and undo, and order the Graph view and its default centre', async () => {
    await say('Ana met Tom in Lisbon.');
    await say('Ana and Tom again.');
    await say('Ana alone.');
    const [ana, tom, lisbon] = [await byName('Ana'), await byName('Tom'), await byName('Lisbon')];
    expect(await countsApart()).toEqual(await countsOfActive());
    expect((await store.graph()).nodes.map((n) => n.name).slice(0, 3)).toEqual(['Ana', 'Tom', 'Lisbon']);
    expect(await store.defaultCentre()).toBe(ana.id);

    const hidden = await store.hide(ana.id);
    expect(await countsApart()).toEqual(await countsOfActive());
    expect(await store.defaultCentre()).toBe(tom.id);
    await store.undo(hidden.changeId);
    const merged = await store.merge(lisbon.id, tom.id);
    expect(await countsApart()).toEqual(await countsOfActive());
    expect((await countsApart()).find((c) => c.id === lisbon.id)?.n).toBe(2);
    await store.undo(merged.changeId);
    expect(await countsApart()).toEqual(await countsOfActive());
    expect((await store.graph()).nodes.map((n) => n.name).slice(0, 3)).toEqual(['Ana', 'Tom', 'Lisbon']);
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
