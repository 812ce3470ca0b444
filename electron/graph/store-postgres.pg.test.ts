// Mention recording on a PostgreSQL server ends where it ends on PGlite: the same entities with
// their counts, the same co-mention weights, mentions, scans and ambiguities, through migration 032's
// functions on both engines — a batch, a close name that is ambiguous, a close name that resolves by
// trigrams, a three-letter name ambiguous among the short names (migration 034's index), and a text
// read again without one of its names.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/database.js';
import { openDatabase, openPostgres } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { dbTemplate, tempDataDir, testPostgresUrl } from '../testing/host.js';
import { EntityStore } from './store.js';

const skip = inject('postgresSkip');
if (skip) console.log(`store-postgres.pg.test: skipped — ${skip}.`);

const TEXTS = [
  'Ana moved to Lisbon with Tomáš.',
  'I had lunch with Ana and Tomáš in Lisbon.',
  'Zuzana works at Nimbus Labs in Lisbon.',
  'Nothing with a name here.',
  'Zuzana met Caroline at Nimbus Lab.',
  'Carol and Caroline went to Brno.',
  'Zuzana called Mell.',
  'Caroline met Mel in Brno.',
];

/** Records the texts (the first four as one batch), reads one again without Lisbon, and returns the graph as names. */
async function recordAndPicture(db: Database): Promise<string> {
  const conversations = new Conversations(db);
  const store = new EntityStore(db, { conversations, memories: new MemoryStore(db) });
  const conversationId = (await conversations.create('graph on two engines')).id;
  const ids: string[] = [];
  for (const content of TEXTS) ids.push((await conversations.append({ conversationId, role: 'user', content, status: 'complete' })).id);
  await store.recordMentionsBatch(ids.slice(0, 4).map((messageId, i) => ({ messageId, text: TEXTS[i]! })));
  for (let i = 4; i < TEXTS.length; i++) await store.recordMentions({ messageId: ids[i]!, text: TEXTS[i]! });
  await store.recordMentions({ messageId: ids[1]!, text: 'I had lunch with Ana and Tomáš.' });
  const rows = async (sql: string) => (await db.query(sql)).rows;
  return JSON.stringify({
    entities: await rows(`SELECT name, kind, mention_count FROM entities ORDER BY name`),
    edges: await rows(
      `SELECT s.name AS a, t.name AS b, e.weight FROM entity_edges e JOIN entities s ON s.id = e.source_id JOIN entities t ON t.id = e.target_id ORDER BY 1, 2`,
    ),
    mentions: await rows(`SELECT e.name, m.surface, m.span_start FROM entity_mentions m JOIN entities e ON e.id = m.entity_id ORDER BY 1, 2, 3`),
    scans: (await rows(`SELECT count(*)::int AS n FROM entity_scans`))[0],
    ambiguities: await rows(`SELECT e.name, a.surface, a.similarities FROM entity_ambiguities a JOIN entities e ON e.id = a.entity_id ORDER BY 1, 2`),
  });
}

describe.skipIf(!!skip)('mention recording on PostgreSQL', () => {
  let dir: string;
  let pglite: Database;
  let postgres: Database;

  beforeAll(async () => {
    dir = tempDataDir('anima-graph-engines-');
    pglite = await openDatabase(dir, { template: dbTemplate() });
    postgres = await openPostgres(await testPostgresUrl());
  });

  afterAll(async () => {
    await pglite?.close();
    await postgres?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ends with the same graph as on PGlite', async () => {
    const onPglite = await recordAndPicture(pglite);
    const parsed = JSON.parse(onPglite);
    // The run did what it is meant to check: trigram resolution and an ambiguity, a lowered weight.
    expect(parsed.entities.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['Ana', 'Caroline', 'Carol', 'Nimbus Labs']));
    expect(parsed.ambiguities.length).toBeGreaterThan(0);
    expect(parsed.ambiguities).toContainEqual({ name: 'Mel', surface: 'Mel', similarities: [0.5] });
    expect(parsed.edges).toContainEqual({ a: 'Ana', b: 'Lisbon', weight: 1 });
    expect(await recordAndPicture(postgres)).toBe(onPglite);
  });
});
