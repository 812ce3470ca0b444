// A forget in Anima's own archive, restored into a folder with data of its own (its journal numbers
// renumbered): the diary block, the rolling summary and the message the forget set aside arrive set
// aside on behalf of the forget under its number here. Undoing the restored forget brings all three
// back; undoing this folder's own forget, which holds the archive's old number, brings none of them
// back. On real on-disk PGlite folders, through the export and the importer's own code.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportArchive } from '../archive/export.js';
import { Conversations } from '../conversations/conversations.js';
import { openDatabase, type Database } from '../db/open.js';
import { diaryFollowsForgets } from '../forgetting/diary.js';
import { summariesFollowForgets } from '../forgetting/summaries.js';
import { forgetMemory, undoMemoryChange, type WithSourcesDeps } from '../forgetting/with-sources.js';
import { MemoryStore } from '../memory/store.js';
import { SettingsStore } from '../settings/settings.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { restoreArchive } from './anima-archive-restore.js';
import { parseImport } from './detect.js';

/** What one folder lived through: a fact said, summarised, told again in the diary, remembered, then forgotten with what it came from. */
interface Lived {
  fact: string;
  lines: [string, string];
  summary: string;
  anchor: string;
}

const PEANUTS: Lived = {
  fact: 'Mara is allergic to peanuts.',
  lines: ['The doctor says I am allergic to peanuts, so no more satay for me.', 'That is a big change, I am glad you found out.'],
  summary: 'She told me she is allergic to peanuts, and we planned Lisbon in May.',
  anchor: 'A quiet conversation with Mara. She told me she is allergic to peanuts, and we planned Lisbon in May.',
};
const CELLO: Lived = {
  fact: 'Tomas is learning the cello.',
  lines: ['My brother Tomas is learning the cello and practises every night.', 'A cello in the house, how lovely.'],
  summary: 'Her brother Tomas is learning the cello; she wants to hear him play in June.',
  anchor: 'A warm conversation with Mara: her brother Tomas is learning the cello.',
};

const dbs: Database[] = [];
afterEach(async () => {
  await Promise.all(dbs.splice(0).map((d) => d.close()));
});

/** A migrated folder whose store takes the diary and the summaries along on every forget, as the host's does. */
async function folder(prefix: string) {
  const dir = tempDataDir(prefix);
  const db = await openDatabase(dir, { template: dbTemplate() });
  dbs.push(db);
  const memories = new MemoryStore(db);
  memories.followForgets(diaryFollowsForgets);
  memories.followForgets(summariesFollowForgets);
  const d: WithSourcesDeps = { db, conversations: new Conversations(db), memories, dropRecallIndex: () => {}, now: () => new Date() };
  return { dir, db, d };
}

/** Lives `what` in the folder; returns the conversation, the fact's message and the forget's journal id. */
async function live({ d, db }: { d: WithSourcesDeps; db: Database }, what: Lived) {
  const { id } = await d.conversations.create(what.lines[0]);
  const messages = [];
  for (const [i, content] of what.lines.entries()) {
    messages.push(await d.conversations.append({ conversationId: id, role: i ? 'assistant' : 'user', content, status: 'complete' }));
  }
  expect(await d.conversations.saveRollingSummary(id, what.summary, (await d.conversations.seqOf(messages[1]!.id))!)).toBe(true);
  await db.query(`INSERT INTO diary_blocks (day, kind, conversation_id, title, body, source_message_ids) VALUES ('2026-12-02', 'anchor', $1, NULL, $2, $3)`, [
    id,
    what.anchor,
    [messages[0]!.id],
  ]);
  const memory = (
    await d.memories.create({ type: 'world', content: what.fact, source: 'light-sleep', actor: 'light-sleep', sourceMessageIds: [messages[0]!.id] })
  ).memory;
  const forgotten = await forgetMemory(d, memory.id, true);
  expect(forgotten.hiddenMessages).toBe(1);
  return { conversationId: id, messageId: messages[0]!.id, forgetId: forgotten.changeId };
}

/** Whether each of what the forget of `what` set aside is back: its diary block, its conversation's summary, its message in recall. */
async function back({ d, db }: { d: WithSourcesDeps; db: Database }, what: Lived, lived: { conversationId: string; messageId: string }) {
  const block = await db.query<{ hidden: boolean }>('SELECT hidden_at IS NOT NULL AS hidden FROM diary_blocks WHERE body = $1', [what.anchor]);
  const message = await db.query<{ hidden: boolean }>('SELECT recall_hidden_at IS NOT NULL AS hidden FROM messages WHERE id = $1', [lived.messageId]);
  expect(block.rows).toHaveLength(1);
  return {
    diary: !block.rows[0]!.hidden,
    summary: (await d.conversations.rollingSummary(lived.conversationId))?.text === what.summary,
    message: !message.rows[0]!.hidden,
  };
}

const none = { diary: false, summary: false, message: false };
const all = { diary: true, summary: true, message: true };

describe('a forget restored from an archive into a folder with its own journal', () => {
  it('sets aside under its number here: its own undo brings everything back, the folder’s forget holding its old number brings none of it', async () => {
    const there = await folder('anima-forgets-there-');
    const peanuts = await live(there, PEANUTS);
    expect(await back(there, PEANUTS, peanuts)).toEqual(none);
    const file = path.join(there.dir, 'exports', 'forgets.zip');
    await exportArchive({ db: there.db, appVersion: '1.2.3', file, sql: false, pageSize: 3 });

    // This folder lived the same steps with another fact: its forget holds the archive's forget's number.
    const here = await folder('anima-forgets-here-');
    const cello = await live(here, CELLO);
    expect(cello.forgetId).toBe(peanuts.forgetId);

    const parsed = parseImport(fs.readFileSync(file), 'forgets.zip');
    await restoreArchive(parsed.archive!, { db: here.db, settings: new SettingsStore(here.db, () => {}), markRead: markImportedHistoryRead });
    expect(await back(here, PEANUTS, peanuts)).toEqual(none);
    const restoredForget = await here.db.query<{ id: number }>(
      `SELECT c.id::int AS id FROM memory_changes c JOIN memories m ON m.id = c.memory_id WHERE m.content = $1 AND c.action = 'forget'`,
      [PEANUTS.fact],
    );
    expect(restoredForget.rows).toHaveLength(1);
    const renumbered = restoredForget.rows[0]!.id;
    expect(renumbered).not.toBe(peanuts.forgetId);

    // Undoing this folder's own forget brings back its own, and nothing restored.
    await undoMemoryChange(here.d, cello.forgetId);
    expect(await back(here, CELLO, cello)).toEqual(all);
    expect(await back(here, PEANUTS, peanuts)).toEqual(none);

    // Undoing the restored forget brings back all it set aside.
    await undoMemoryChange(here.d, renumbered);
    expect(await back(here, PEANUTS, peanuts)).toEqual(all);
  });
});
