// A conversation in the trash has left the person's data: the next export's anima.json and vault carry
// neither it nor its messages; an off-the-record one is the person's and goes, flagged. (anima.sql is
// the database as it stands, the trash included until it is purged.)
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, expect, it } from 'vitest';
import { Conversations } from '../conversations/conversations.js';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { exportArchive } from './export.js';

let db: Database | undefined;
let dir: string | undefined;
afterAll(async () => {
  await db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('leaves a trashed conversation and its messages out of anima.json and the vault, and keeps an off-the-record one', async () => {
  dir = tempDataDir('anima-archive-trash-');
  db = await openDatabase(dir, { template: dbTemplate() });
  const conversations = new Conversations(db);
  const kept = await conversations.create('Garden plans');
  await conversations.append({ conversationId: kept.id, role: 'user', content: 'The tomatoes go by the south wall.', status: 'complete' });
  const trashed = await conversations.create('Old argument');
  await conversations.append({ conversationId: trashed.id, role: 'user', content: 'Something I asked to delete: quokka.', status: 'complete' });
  const off = await conversations.create('Between us', { offRecord: true });
  await conversations.append({ conversationId: off.id, role: 'user', content: 'Off the record: pelican.', status: 'complete' });
  await conversations.trash(trashed.id, new Date(), {});

  const file = path.join(dir, 'exports', 'a.zip');
  await exportArchive({ db, appVersion: '1.0.0', file });
  const entries = Object.fromEntries(Object.entries(unzipSync(fs.readFileSync(file))).map(([n, d]) => [n, strFromU8(d)]));
  const json = JSON.parse(entries['anima.json']!) as {
    sections: Record<string, { id: string; content?: string; off_record?: boolean }[]>;
    counts: Record<string, number>;
  };

  expect(json.sections.conversations!.map((c) => c.id).sort()).toEqual([kept.id, off.id].sort());
  expect(json.counts.conversations).toBe(2);
  expect(json.sections.messages!.map((m) => m.content).sort()).toEqual(['Off the record: pelican.', 'The tomatoes go by the south wall.']);
  expect(json.counts.messages).toBe(2);
  expect(json.sections.messages!.find((m) => m.content!.includes('pelican'))!.off_record).toBe(true);
  const everything = Object.entries(entries)
    .filter(([name]) => name !== 'anima.sql')
    .map(([, text]) => text)
    .join('\n');
  expect(everything).not.toContain('quokka');
  expect(everything).not.toContain('Old argument');
  expect(Object.keys(entries).filter((n) => n.startsWith('vault/conversations/'))).toHaveLength(2);
});
