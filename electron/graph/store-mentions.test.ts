// The entity store on real PGlite: the seeded nodes, mentions from messages and memories, and how a
// name resolves to an entity (case, aliases, close spellings, ambiguity). Harness: testing/store-harness.ts.
import { describe, expect, it } from 'vitest';
import { SELF_ENTITY_ID, USER_ENTITY_ID } from './store.js';
import { rejection } from '../testing/rejection.js';
import { db, store, memories, changed, say, byName, count, weight, useGraphStore } from './testing/store-harness.js';

useGraphStore();

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

  it('a given name that is no one (a weekday, the transcript label for the person) makes no entity', async () => {
    const { memory } = await memories.create({ type: 'world', content: 'On Saturday the person went to Brno with Eva.', source: 'user', actor: 'person' });
    const recorded = await store.recordMentions({ memoryId: memory.id, text: '', names: ['Saturday', 'Person', 'hello', { name: 'Eva', kind: 'person' }] });
    expect(recorded.map((r) => r.surface)).toEqual(['Eva']);
    expect(await count(`SELECT count(*)::int AS n FROM entities WHERE name_key IN ('saturday', 'person', 'hello')`)).toBe(0);
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

  it('a name of three letters is compared with the short names (their own index), a longer one with every name', async () => {
    const { memory } = await memories.create({ type: 'world', content: 'Names.', source: 'user', actor: 'person' });
    await store.recordMentions({
      memoryId: memory.id,
      text: '',
      names: ['Mell', 'Mel Gibson', 'Mela Kowal'].map((name) => ({ name, kind: 'person' as const })),
    });
    const [mell, melaKowal] = [await byName('Mell'), await byName('Mela Kowal')];
    // "mel" (4 trigrams) can be at least 0.45 alike only to a name of at most 8: "mell" is 0.5 alike,
    // "mel gibson" 0.36.
    expect(await store.resolve('Mel', 'person')).toMatchObject({ entity: null, via: 'ambiguous', candidates: [{ id: mell.id, similarity: 0.5 }] });
    // "mela" (5 trigrams) reaches names of 11: "mela kowal" is 0.45 alike, found outside the short names.
    expect(await store.resolve('Mela', 'person')).toMatchObject({ entity: null, via: 'ambiguous', candidates: [{ id: melaKowal.id, similarity: 0.455 }] });
  });

  it('refuses names that are not names', async () => {
    await rejection(store.resolve('🎉🎉'), 'invalid_input');
    await rejection(store.resolve('...'), 'invalid_input');
    await rejection(store.resolve('x'.repeat(500)), 'invalid_input');
  });
});
