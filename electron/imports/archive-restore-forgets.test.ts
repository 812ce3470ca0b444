// A forget in Anima's own archive, restored into a folder with data of its own (its journal numbers
// renumbered): the diary block, the rolling summary and the message the forget set aside arrive set
// aside on behalf of the forget under its number here. Undoing the restored forget brings all three
// back; undoing this folder's own forget, which holds the archive's old number, brings none of them
// back. A rolling summary, live or set aside, restored where the messages took other seqs, covers the
// same messages as before. A forget of a memory the folder holds already (its journal here counts)
// leaves the diary block and the message shown where that memory is not forgotten here, and sets them
// aside on behalf of the forget here where it is. On real on-disk PGlite folders, through the export
// and the importer's own code.
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
import type { AnimaArchive } from './anima-archive.js';
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

/** Lives `what` in the folder; returns the conversation, the fact's message, the message its summary ends at and the forget's journal id. */
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
  return { conversationId: id, messageId: messages[0]!.id, summaryThroughId: messages[1]!.id, forgetId: forgotten.changeId };
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

/** Restores the archive `file` into the folder, through the importer's own code. */
async function restore(into: { db: Database }, file: string, edit: (archive: AnimaArchive) => void = () => {}) {
  const archive = parseImport(fs.readFileSync(file), path.basename(file)).archive!;
  edit(archive);
  await restoreArchive(archive, { db: into.db, settings: new SettingsStore(into.db, () => {}), markRead: markImportedHistoryRead });
}

/** The journal id the forget of `what`'s fact has in the folder. */
async function forgetOf({ db }: { db: Database }, what: Lived): Promise<number> {
  const r = await db.query<{ id: number }>(
    `SELECT c.id::int AS id FROM memory_changes c JOIN memories m ON m.id = c.memory_id WHERE m.content = $1 AND c.action = 'forget'`,
    [what.fact],
  );
  expect(r.rows).toHaveLength(1);
  return r.rows[0]!.id;
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

    await restore(here, file);
    expect(await back(here, PEANUTS, peanuts)).toEqual(none);
    const renumbered = await forgetOf(here, PEANUTS);
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

describe('a rolling summary restored into a folder whose messages took other seqs', () => {
  const LONG = [
    'I started running in the mornings this week.',
    'How is it going so far?',
    'Hard, but I did three kilometres today.',
    'Three kilometres is a real start.',
    'Tomorrow I want to try four.',
    'Take it slowly, your knees will thank you.',
  ];

  /**
   * A folder with a long conversation summarised through its fourth message and the peanuts forget
   * (its conversation's summary set aside), after a conversation now in the trash (not exported): the
   * archive's seqs run past those its messages take in a folder with fewer, so a summary keeping its
   * seq would claim turns restored after its end. Exported; returns the file and the ids.
   */
  async function exported() {
    const there = await folder('anima-summary-there-');
    const { id: earlier } = await there.d.conversations.create('Earlier');
    for (const content of ['One.', 'Two.', 'Three.', 'Four.', 'Five.', 'Six.']) {
      await there.d.conversations.append({ conversationId: earlier, role: 'user', content, status: 'complete' });
    }
    await there.d.conversations.trash(earlier, new Date(), null);
    const { id: long } = await there.d.conversations.create(LONG[0]);
    const ids: string[] = [];
    for (const [i, content] of LONG.entries()) {
      ids.push((await there.d.conversations.append({ conversationId: long, role: i % 2 ? 'assistant' : 'user', content, status: 'complete' })).id);
    }
    expect(
      await there.d.conversations.saveRollingSummary(long, 'She took up running: three kilometres so far.', (await there.d.conversations.seqOf(ids[3]!))!),
    ).toBe(true);
    const peanuts = await live(there, PEANUTS);
    const file = path.join(there.dir, 'exports', 'summaries.zip');
    await exportArchive({ db: there.db, appVersion: '1.2.3', file, sql: false, pageSize: 3 });
    return { there, file, long, ids, peanuts };
  }

  /** The messages of `conversationId` a request leaves to its rolling summary (seq through the summary's), in order. */
  async function coveredBy(d: WithSourcesDeps, conversationId: string): Promise<string[]> {
    const summary = await d.conversations.rollingSummary(conversationId);
    expect(summary).not.toBeNull();
    return (await d.conversations.chatMessagesOf(conversationId, 0)).filter((m) => m.seq <= summary!.throughSeq).map((m) => m.content);
  }

  it('covers the same messages: the live one ends at its message’s new seq, the one set aside too once its forget is undone', async () => {
    const { there, file, long, ids, peanuts } = await exported();
    const seqThere = (await there.d.conversations.seqOf(ids[3]!))!;
    const here = await folder('anima-summary-here-');
    await live(here, CELLO);
    await restore(here, file);

    const seqHere = (await here.d.conversations.seqOf(ids[3]!))!;
    expect(seqHere).toBeLessThan(seqThere);
    expect((await here.d.conversations.rollingSummary(long))?.throughSeq).toBe(seqHere);
    expect(await coveredBy(here.d, long)).toEqual(LONG.slice(0, 4));

    expect(await here.d.conversations.rollingSummary(peanuts.conversationId)).toBeNull();
    await undoMemoryChange(here.d, await forgetOf(here, PEANUTS));
    expect((await here.d.conversations.rollingSummary(peanuts.conversationId))?.throughSeq).toBe(await here.d.conversations.seqOf(peanuts.summaryThroughId));
  });

  it('ends at the last message restored before it when the one it ended at did not come along', async () => {
    const { file, long, ids } = await exported();
    const here = await folder('anima-summary-here-');
    await live(here, CELLO);
    await restore(here, file, (archive) => {
      archive.sections.messages = archive.sections.messages
        .filter((m) => m.id !== ids[3])
        .map((m) => (m.parent_id === ids[3] ? { ...m, parent_id: ids[2] } : m));
    });

    expect((await here.d.conversations.rollingSummary(long))?.throughSeq).toBe(await here.d.conversations.seqOf(ids[2]!));
    expect(await coveredBy(here.d, long)).toEqual(LONG.slice(0, 3));
  });
});

describe('a forget of a memory this folder has already (its journal stays as it is here)', () => {
  /** Exports a folder that lived PEANUTS; a second folder holds the same memory (same id, same time), forgotten or not. */
  async function theSameMemoryHere(forgottenHere: boolean) {
    const there = await folder('anima-forgets-there-');
    const peanuts = await live(there, PEANUTS);
    const file = path.join(there.dir, 'exports', 'forgets.zip');
    await exportArchive({ db: there.db, appVersion: '1.2.3', file, sql: false, pageSize: 3 });
    const here = await folder('anima-forgets-mine-');
    const mine = (await here.d.memories.create({ type: 'world', content: PEANUTS.fact, source: 'user', actor: 'person' })).memory;
    const forget = forgottenHere ? (await forgetMemory(here.d, mine.id, true)).changeId : null;
    await restore(here, file, (archive) => {
      const row = archive.sections.memories.find((m) => m.content === PEANUTS.fact)!;
      expect(Number(row.id)).toBe(mine.id);
      row.created_at = mine.createdAt;
    });
    // The memory was here already: its journal here is the one that counts, the archive's forget is not restored.
    const forgetsHere = await here.db.query<{ id: number }>(
      `SELECT c.id::int AS id FROM memory_changes c JOIN memories m ON m.id = c.memory_id WHERE m.content = $1 AND c.action = 'forget'`,
      [PEANUTS.fact],
    );
    expect(forgetsHere.rows.map((r) => r.id)).toEqual(forget === null ? [] : [forget]);
    return { here, peanuts, forget };
  }

  it('shows what the forget set aside when the memory is not forgotten here', async () => {
    const { here, peanuts } = await theSameMemoryHere(false);
    expect((await here.db.query('SELECT status FROM memories WHERE content = $1', [PEANUTS.fact])).rows).toEqual([{ status: 'active' }]);
    expect(await back(here, PEANUTS, peanuts)).toMatchObject({ diary: true, message: true });
  });

  it('sets it aside on behalf of the forget here when the memory is forgotten here: that undo brings it back', async () => {
    const { here, peanuts, forget } = await theSameMemoryHere(true);
    expect(await back(here, PEANUTS, peanuts)).toMatchObject({ diary: false, message: false });
    await undoMemoryChange(here.d, forget!);
    expect(await back(here, PEANUTS, peanuts)).toMatchObject({ diary: true, message: true });
  });
});
