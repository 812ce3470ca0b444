// A conversation in the trash has left the person's data: the next export's anima.json, vault and
// anima.sql carry neither it nor its messages; an off-the-record one is the person's and goes, flagged,
// and so does a message hidden from recall by a forget. The dump still loads (its foreign keys hold).
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { afterAll, expect, it } from 'vitest';
import { Conversations } from '../conversations/conversations.js';
import { openDatabase, type Database } from '../db/open.js';
import { recordCitations } from '../memory/citations.js';
import { MemoryStore } from '../memory/store.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { exportArchive } from './export.js';

let db: Database | undefined;
let dir: string | undefined;
afterAll(async () => {
  await db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('leaves a trashed conversation and its messages out of anima.json, the vault and anima.sql, and keeps an off-the-record one', async () => {
  dir = tempDataDir('anima-archive-trash-');
  db = await openDatabase(dir, { template: dbTemplate() });
  const conversations = new Conversations(db);
  const kept = await conversations.create('Garden plans');
  await conversations.append({ conversationId: kept.id, role: 'user', content: 'The tomatoes go by the south wall.', status: 'complete' });
  const trashed = await conversations.create('Old argument');
  await conversations.append({ conversationId: trashed.id, role: 'user', content: 'Something I asked to delete: quokka.', status: 'complete' });
  const off = await conversations.create('Between us', { offRecord: true });
  await conversations.append({ conversationId: off.id, role: 'user', content: 'Off the record: pelican.', status: 'complete' });
  // The trashed conversation's words reach other tables too: a citation of a memory, an earlier version.
  const memory = (await new MemoryStore(db).create({ type: 'world', content: 'Quokkas live on Rottnest.', source: 'user', actor: 'person' })).memory;
  const earlier = await conversations.append({ conversationId: trashed.id, role: 'assistant', content: 'A first reply about the wombat.', status: 'complete' });
  const cited = await conversations.append({
    conversationId: trashed.id,
    role: 'assistant',
    content: `The quokka again [[anima:${memory.id}]]`,
    status: 'complete',
  });
  await conversations.markReplaced([earlier.id], cited.id);
  expect(await recordCitations(db, cited.id, cited.content)).toEqual([memory.id]);
  // Hidden from recall by a forget with what it came from: kept for the person, in every file.
  const hidden = await conversations.append({ conversationId: kept.id, role: 'user', content: 'The gate code story: marmot.', status: 'complete' });
  await db.transaction((tx) => conversations.hideFromRecall(tx, [hidden.id], 7, new Date()));
  await conversations.trash(trashed.id, new Date(), {});
  const inTrash = async () => (await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [trashed.id])).rows[0]!.n;
  expect(await inTrash()).toBe(3);

  const file = path.join(dir, 'exports', 'a.zip');
  await exportArchive({ db, appVersion: '1.0.0', file });
  const entries = Object.fromEntries(Object.entries(unzipSync(fs.readFileSync(file))).map(([n, d]) => [n, strFromU8(d)]));
  const json = JSON.parse(entries['anima.json']!) as {
    sections: Record<string, { id: string; content?: string; off_record?: boolean }[]>;
    counts: Record<string, number>;
  };

  expect(json.sections.conversations!.map((c) => c.id).sort()).toEqual([kept.id, off.id].sort());
  expect(json.counts.conversations).toBe(2);
  expect(json.sections.messages!.map((m) => m.content).sort()).toEqual([
    'Off the record: pelican.',
    'The gate code story: marmot.',
    'The tomatoes go by the south wall.',
  ]);
  expect(json.counts.messages).toBe(3);
  expect(json.sections.messages!.find((m) => m.content!.includes('pelican'))!.off_record).toBe(true);
  for (const [name, text] of Object.entries(entries)) {
    expect(text, name).not.toContain('quokka');
    expect(text, name).not.toContain('wombat');
    expect(text, name).not.toContain('Old argument');
  }
  expect(Object.keys(entries).filter((n) => n.startsWith('vault/conversations/'))).toHaveLength(2);

  // anima.sql: the off-the-record and the hidden messages are there; the trash only as a blank tombstone.
  const sql = entries['anima.sql']!;
  for (const kept of ['pelican', 'marmot', 'south wall', 'Quokkas live on Rottnest']) expect(sql).toContain(kept);
  // The live database still has the trash: only the dump's copy was purged.
  expect(await inTrash()).toBe(3);
  expect((await conversations.trashed(trashed.id)).trashed.title).toBe('Old argument');
  // So too where the process holds the database alone (the CLI, the bench), which otherwise dumps in place.
  const alone = path.join(dir, 'exports', 'b.zip');
  await exportArchive({ db, appVersion: '1.0.0', file: alone, alone: true });
  const aloneSql = strFromU8(unzipSync(fs.readFileSync(alone))['anima.sql']!);
  expect(aloneSql).toContain('marmot');
  expect(aloneSql).not.toContain('quokka');
  expect(await inTrash()).toBe(3);
  expect((await conversations.trashed(trashed.id)).trashed.title).toBe('Old argument');

  // It loads (pg_dump adds the foreign keys after the rows: a row naming a removed message would fail).
  const pg = await PGlite.create({ extensions: { pg_trgm } });
  try {
    // psql's \restrict / \unrestrict lines are for psql; the rest is plain SQL.
    await pg.exec(sql.replace(/^\\(un)?restrict .*$/gm, ''));
    const loaded = await pg.query<{ c: number; m: number; r: number; t: string }>(
      `SELECT (SELECT count(*)::int FROM public.conversations) AS c, (SELECT count(*)::int FROM public.messages) AS m,
              (SELECT count(*)::int FROM public.memory_references) AS r, (SELECT title FROM public.conversations WHERE id = $1) AS t`,
      [trashed.id],
    );
    expect(loaded.rows[0]).toEqual({ c: 3, m: 3, r: 0, t: '' });
  } finally {
    await pg.close();
  }
}, 120_000);
