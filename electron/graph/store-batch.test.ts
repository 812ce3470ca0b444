// Recording in batches on real PGlite: a batch ends where one-at-a-time recording ends, its
// statement count does not grow with the batch, no recording reads a whole graph table (the tables'
// sequential scan counts on a graph with thousands of rows), and the person's own name resolves to "You".
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../db/database.js';
import { USER_ENTITY_ID } from './store.js';
import { conversations, conversationId, db, store, useGraphStore } from './testing/store-harness.js';

useGraphStore();

const TEXTS = [
  'Ana moved to Lisbon with Tomáš.',
  'I had lunch with Ana and Tomáš in Lisbon.',
  'Tomáš and Ana visited Brno with Pepík.',
  'We went to Brno with Pepík and Zuzana.',
  'Zuzana works at Nimbus Labs in Lisbon.',
  'Nothing with a name here.',
  'Ana said Zuzana is moving to Kraków.',
];

async function store_(texts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const content of texts) ids.push((await conversations.append({ conversationId, role: 'user', content, status: 'complete' })).id);
  return ids;
}

/** The graph as names: entities with their counts, co-mention edges with their weights, mentions per message. */
async function picture(): Promise<string> {
  const entities = (await db.query<{ name: string; n: number }>('SELECT name, mention_count AS n FROM entities WHERE id > 2 ORDER BY name')).rows;
  const edges = (
    await db.query<{ a: string; b: string; w: number }>(
      `SELECT least(s.name, t.name) AS a, greatest(s.name, t.name) AS b, e.weight AS w FROM entity_edges e
       JOIN entities s ON s.id = e.source_id JOIN entities t ON t.id = e.target_id WHERE e.relation = 'co_mention' ORDER BY 1, 2`,
    )
  ).rows;
  const mentions = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM entity_mentions')).rows[0]!.n;
  const scans = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM entity_scans')).rows[0]!.n;
  return JSON.stringify({ entities, edges, mentions, scans });
}

const CLEAR = `DELETE FROM entity_ambiguities; DELETE FROM entity_edges; DELETE FROM entity_mentions; DELETE FROM entity_scans;
  DELETE FROM entity_changes; DELETE FROM entity_aliases; DELETE FROM entities WHERE id > 2;`;

/** Every statement the store sends inside its transactions while `fn` runs. */
async function statements(fn: () => Promise<unknown>): Promise<{ sql: string; params: unknown[] }[]> {
  const seen: { sql: string; params: unknown[] }[] = [];
  const original = db.transaction.bind(db);
  const watched = <T>(cb: (tx: Transaction) => Promise<T>) =>
    original(async (tx) => {
      const query = tx.query.bind(tx);
      tx.query = ((sql: string, params?: unknown[]) => {
        seen.push({ sql, params: params ?? [] });
        return query(sql, params);
      }) as typeof tx.query;
      return cb(tx);
    });
  db.transaction = watched as typeof db.transaction;
  try {
    await fn();
  } finally {
    db.transaction = original;
  }
  return seen;
}

describe('recordMentionsBatch', () => {
  it('ends where recording one text at a time ends: entities, counts, co-mention weights, mentions, scans', async () => {
    const ids = await store_(TEXTS);
    for (const [i, messageId] of ids.entries()) await store.recordMentions({ messageId, text: TEXTS[i]! });
    const oneByOne = await picture();
    expect(JSON.parse(oneByOne).edges).toContainEqual({ a: 'Ana', b: 'Tomáš', w: 3 });

    await db.exec(CLEAR);
    await store.recordMentionsBatch(ids.map((messageId, i) => ({ messageId, text: TEXTS[i]! })));
    expect(await picture()).toBe(oneByOne);
    // Again: nothing changes (the same names are already recorded for each text).
    await store.recordMentionsBatch(ids.map((messageId, i) => ({ messageId, text: TEXTS[i]! })));
    expect(await picture()).toBe(oneByOne);
  });

  it('an edited text in a batch lowers the weights it no longer supports, and a name new to two texts is one entity', async () => {
    const ids = await store_(['Ana met Pepík in Brno.', 'Pepík and Ana love Brno.']);
    await store.recordMentionsBatch(ids.map((messageId, i) => ({ messageId, text: ['Ana met Pepík in Brno.', 'Pepík and Ana love Brno.'][i]! })));
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM entities WHERE name = 'Pepík'`)).rows[0]!.n).toBe(1);
    // Both texts read again, the second without Brno: Ana–Brno and Pepík–Brno drop to 1.
    await store.recordMentionsBatch([
      { messageId: ids[0]!, text: 'Ana met Pepík in Brno.' },
      { messageId: ids[1]!, text: 'Pepík and Ana love it.' },
    ]);
    const edges = JSON.parse(await picture()).edges;
    expect(edges).toEqual([
      { a: 'Ana', b: 'Brno', w: 1 },
      { a: 'Ana', b: 'Pepík', w: 2 },
      { a: 'Brno', b: 'Pepík', w: 1 },
    ]);
    expect(JSON.parse(await picture()).entities).toContainEqual({ name: 'Brno', n: 1 });
  });

  it('sends as many statements for twenty texts as for one', async () => {
    const ids = await store_(TEXTS);
    await store.recordMentions({ messageId: ids[0]!, text: TEXTS[0]! });
    const one = await statements(() => store.recordMentions({ messageId: ids[1]!, text: TEXTS[1]! }));
    const more = [...TEXTS, ...TEXTS, ...TEXTS].slice(0, 20).map((t) => t.replace('Lisbon', 'Porto'));
    const moreIds = await store_(more);
    const batch = await statements(() => store.recordMentionsBatch(moreIds.map((messageId, i) => ({ messageId, text: more[i]! }))));
    expect(one.length).toBeLessThanOrEqual(8);
    expect(batch.length).toBeLessThanOrEqual(one.length + 4);
  });

  it('no recording reads a whole graph table (sequential scans counted, with 5,000 entities, aliases, edges and mentions)', async () => {
    // Names the detector reads as names: two capitalised letter-only words ("Bakel Dorin").
    const letters = (n: number) => {
      let out = '';
      for (let k = 0; k < 3; k++, n = Math.floor(n / 20)) out += 'aeioubdklmnprstvzgh'[n % 19];
      return out;
    };
    const names = Array.from({ length: 5000 }, (_, i) => `Bar${letters(i)} Dor${letters(i * 7 + 3)}`);
    await db.query(
      `INSERT INTO entities (kind, name, name_key, mention_count) SELECT 'person', n, lower(n), 1 FROM unnest($1::text[]) n ON CONFLICT DO NOTHING`,
      [names],
    );
    await db.exec(`
      INSERT INTO entity_aliases (entity_id, alias, alias_key) SELECT id, 'P' || id, 'p' || id FROM entities WHERE id > 2;
      INSERT INTO entity_edges (source_id, target_id, relation, weight)
        SELECT a.id, a.id + 1, 'co_mention', 1 FROM entities a WHERE a.id > 2 AND a.id < 4000;`);
    // Mentions and scans of their own: 300 messages naming three of them each.
    const filler = Array.from({ length: 300 }, (_, i) => `Yesterday ${names[i]} met ${names[i + 700]} and ${names[i + 1400]}.`);
    const fillerIds = await store_(filler);
    for (let i = 0; i < filler.length; i += 50) {
      await store.recordMentionsBatch(fillerIds.slice(i, i + 50).map((messageId, k) => ({ messageId, text: filler[i + k]! })));
    }
    const texts = [`${names[17]} met ${names[4000]} and Zdeněk Kovář in Ostrava.`, `${names[17]} and ${names[99]} went to Olomouc.`];
    const ids = await store_(texts);
    await store.recordMentions({ messageId: ids[0]!, text: texts[0]! });
    await db.exec('ANALYZE entities; ANALYZE entity_aliases; ANALYZE entity_mentions; ANALYZE entity_scans; ANALYZE entity_edges;');
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM entity_mentions')).rows[0]!.n).toBeGreaterThan(900);
    // What runs, not what a statement's EXPLAIN says: the reads and writes happen inside migration 032's
    // functions. The statistics views count each table's sequential scans; flushed before each read.
    const seqScans = async () => {
      await db.query('SELECT pg_stat_force_next_flush()');
      const rows = await db.query<{ relname: string; n: number }>(
        `SELECT relname, seq_scan::int AS n FROM pg_stat_user_tables
         WHERE relname IN ('entities', 'entity_aliases', 'entity_edges', 'entity_mentions', 'entity_scans', 'entity_ambiguities') ORDER BY relname`,
      );
      return Object.fromEntries(rows.rows.map((r) => [r.relname, r.n]));
    };
    const before = await seqScans();
    const seen = await statements(() => store.recordMentionsBatch(ids.map((messageId, i) => ({ messageId, text: texts[i]! + ' Again with Radim.' }))));
    const after = await seqScans();
    // New names (Radim, and Zdeněk Kovář on the second text) were probed by trigrams.
    expect(seen.some((s) => s.sql.includes('graph_mentions_read') && (s.params[3] as string[]).includes('radim'))).toBe(true);
    expect((await store.search('Radim')).map((e) => e.name)).toContain('Radim');
    expect(after).toEqual(before);
  });

  it("the person's own words give their name to You; the companion's do not", async () => {
    const [intro] = await store_(["Hi, I'm Marek. I live in Brno."]);
    const seen = await statements(() => store.recordMentions({ messageId: intro!, text: "Hi, I'm Marek. I live in Brno.", role: 'user' }));
    expect((await store.resolve('Marek')).entity?.id).toBe(USER_ENTITY_ID);
    // The name is given in the recording of a message: two statements besides the recording's own (the alias, its journal entry).
    expect(seen.filter((st) => !st.sql.includes('graph_mentions_')).map((st) => st.sql.trim().split(/\s+/).slice(0, 3).join(' '))).toEqual([
      'INSERT INTO entity_aliases',
      'INSERT INTO entity_changes',
    ]);
    // Journalled as the graph's change, once: saying it again changes nothing.
    const [again] = await store_(["Marek here, as I said: I'm Marek."]);
    await store.recordMentions({ messageId: again!, text: "Marek here, as I said: I'm Marek.", role: 'user' });
    const aliasChanges = (await store.history(USER_ENTITY_ID)).filter((c) => c.action === 'alias');
    expect(aliasChanges.map((c) => [c.actor, c.after])).toEqual([['graph', { alias: 'Marek', key: 'marek' }]]);
    const [later] = await store_(['Marek and Pepík went to Prague.']);
    const recorded = await store.recordMentions({ messageId: later!, text: 'Marek and Pepík went to Prague.' });
    expect(recorded.map((m) => m.entityId)).toContain(USER_ENTITY_ID);
    // Pepík is someone else now: the person calling themself so is left for them to merge.
    const pepik = (await store.resolve('Pepík')).entity!.id;
    const [call] = await store_(['Call me Pepík, everyone does.']);
    await store.recordMentions({ messageId: call!, text: 'Call me Pepík, everyone does.', role: 'user' });
    expect((await store.resolve('Pepík')).entity?.id).toBe(pepik);
    expect((await store.history(USER_ENTITY_ID)).filter((c) => c.action === 'alias')).toHaveLength(1);
    const [zh] = await store_(['我叫马雷克，住在布尔诺。']);
    await store.recordMentions({ messageId: zh!, text: '我叫马雷克，住在布尔诺。', role: 'user' });
    expect((await store.resolve('马雷克')).entity?.id).toBe(USER_ENTITY_ID);
    // A reply that says "I'm Mira" is the companion speaking: no alias of the person.
    const reply = await conversations.append({ conversationId, role: 'assistant', content: "I'm Mira, nice to meet you.", status: 'complete' });
    await store.recordMentions({ messageId: reply.id, text: reply.content, role: 'assistant' });
    expect((await store.resolve('Mira')).entity?.id).not.toBe(USER_ENTITY_ID);
    // Undo takes the names back, the latest first.
    const names = (await store.history(USER_ENTITY_ID)).filter((c) => c.action === 'alias');
    expect(names.map((c) => c.after)).toEqual([
      { alias: 'Marek', key: 'marek' },
      { alias: '马雷克', key: '马雷克' },
    ]);
    for (const c of names.reverse()) await store.undo(c.id);
    expect((await store.resolve('Marek')).entity?.id).not.toBe(USER_ENTITY_ID);
    expect((await store.resolve('马雷克')).entity?.id).not.toBe(USER_ENTITY_ID);
  });
});
