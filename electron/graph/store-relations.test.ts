// The entity store's reads and the sleep cycle's relations on real PGlite: the ego walk, strengthening
// and closing relations with undo, and profiles through supersedes and merges. Harness: testing/store-harness.ts.
import { describe, expect, it } from 'vitest';
import { USER_ENTITY_ID } from './store.js';
import { rejection } from '../testing/rejection.js';
import { db, store, memories, conversationId, say, byName, count, useGraphStore } from './testing/store-harness.js';

useGraphStore();

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
