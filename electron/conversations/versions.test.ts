// The tree of versions on real PGlite: the parents migration 023 works out for messages written
// before it (regenerate, edit and the imports' layouts), and the chosen line's rules.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { Conversations } from './conversations.js';
import { buildTree, lineChanges, lineThrough, type TreeRow } from './versions.js';

let dir: string;
let db: Database;

beforeAll(async () => {
  dir = tempDataDir();
  db = await openDatabase(dir, { template: dbTemplate() });
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes rows as Anima did before migration 023 (no parent), then asks for the parents as the migration does. */
async function oldLayout(conversation: string, rows: [id: string, role: 'user' | 'assistant', replacedBy: string | null][]) {
  await db.query(`INSERT INTO conversations (id, title) VALUES ($1, 't')`, [conversation]);
  for (const [id, role] of rows) {
    await db.query(`INSERT INTO messages (id, conversation_id, role, content, status) VALUES ($1, $2, $3, $1, 'complete')`, [id, conversation, role]);
  }
  for (const [id, , by] of rows) if (by) await db.query('UPDATE messages SET replaced_by = $2 WHERE id = $1', [id, by]);
  await db.query('SELECT link_message_parents($1::text[])', [[conversation]]);
  const r = await db.query<{ id: string; parent_id: string | null }>('SELECT id, parent_id FROM messages WHERE conversation_id = $1 ORDER BY seq', [
    conversation,
  ]);
  return Object.fromEntries(r.rows.map((x) => [x.id, x.parent_id]));
}

describe('parents of messages written before versions', () => {
  it('regenerate twice, then edit the last message: versions are siblings', async () => {
    // u1, a1 → regenerate a1b (a1 replaced by a1b) → edit u1 as u1e (u1 and a1b replaced by u1e) → a2.
    const parents = await oldLayout('c-regen', [
      ['u1', 'user', 'u1e'],
      ['a1', 'assistant', 'a1b'],
      ['a1b', 'assistant', 'u1e'],
      ['u1e', 'user', null],
      ['a2', 'assistant', null],
    ]);
    expect(parents).toEqual({ u1: null, a1: 'u1', a1b: 'u1', u1e: null, a2: 'u1e' });
    const conversations = new Conversations(db);
    const shown = await conversations.messages('c-regen', { versions: true });
    expect(shown.map((m) => [m.id, m.versionIds ?? null])).toEqual([
      ['u1e', ['u1', 'u1e']],
      ['a2', null],
    ]);
    // Flipping back to the original finds the reply written last below it.
    await conversations.choose('u1');
    expect((await conversations.messages('c-regen', { versions: true })).map((m) => [m.id, m.versionIds ?? null])).toEqual([
      ['u1', ['u1', 'u1e']],
      ['a1b', ['a1', 'a1b']],
    ]);
  });

  it("an import's earlier versions, written before the version they lead to", async () => {
    const parents = await oldLayout('c-import', [
      ['u', 'user', null],
      ['v1', 'assistant', 'c'],
      ['v2', 'assistant', 'c'],
      ['c', 'assistant', null],
      ['u2', 'user', null],
    ]);
    expect(parents).toEqual({ u: null, v1: 'u', v2: 'u', c: 'u', u2: 'c' });
  });

  it('a message written without a parent follows the last message of the chosen line', async () => {
    const conversations = new Conversations(db);
    const c = await conversations.create();
    const a = await conversations.append({ conversationId: c.id, role: 'user', content: 'a', status: 'complete' });
    const b = await conversations.append({ conversationId: c.id, role: 'assistant', content: 'b', status: 'complete' });
    const parent = async (id: string) => (await db.query<{ p: string | null }>('SELECT parent_id AS p FROM messages WHERE id = $1', [id])).rows[0]!.p;
    expect(await parent(a.id)).toBeNull();
    expect(await parent(b.id)).toBe(a.id);
    const root = await conversations.append({ conversationId: c.id, role: 'user', content: 'a2', status: 'complete', parentId: null });
    expect(await parent(root.id)).toBeNull();
  });
});

describe('the chosen line', () => {
  const row = (id: string, parentId: string | null, seq: number, replacedBy: string | null = null, removed = false): TreeRow => ({
    id,
    parentId,
    role: seq % 2 ? 'user' : 'assistant',
    seq,
    removed,
    replacedBy,
  });

  it('goes down the line already chosen, else the branch written in last; off the line names where it left', () => {
    const tree = buildTree([row('u', null, 1), row('a1', 'u', 2, 'a2'), row('a2', 'u', 4), row('u2', 'a1', 5, 'a2'), row('a3', 'u2', 6, 'a2')]);
    expect(lineThrough(tree, 'a2')).toEqual(['u', 'a2']);
    const line = lineThrough(tree, 'u');
    expect(line).toEqual(['u', 'a2']);
    expect(lineThrough(tree, 'a1')).toEqual(['u', 'a1', 'u2', 'a3']);
    expect(lineChanges(tree, lineThrough(tree, 'a1'))).toEqual([
      { id: 'a1', replacedBy: null },
      { id: 'a2', replacedBy: 'a1' },
      { id: 'u2', replacedBy: null },
      { id: 'a3', replacedBy: null },
    ]);
  });

  it('a removed message is skipped: what followed it follows its parent', () => {
    const tree = buildTree([row('u', null, 1), row('a', 'u', 2, 'a', true), row('u2', 'a', 3), row('a2', 'u2', 4)]);
    expect(tree.parentOf('u2')).toBe('u');
    expect(lineThrough(tree, 'a2')).toEqual(['u', 'u2', 'a2']);
    expect(lineChanges(tree, ['u', 'u2', 'a2'])).toEqual([]);
  });
});

describe('the rolling summary follows the chosen line', () => {
  it('is dropped when a message it covers leaves or joins the line, kept when the change is after it', async () => {
    await oldLayout('c-summary', [
      ['s-u1', 'user', 's-u1e'],
      ['s-a1', 'assistant', 's-u1e'],
      ['s-u1e', 'user', null],
      ['s-a2', 'assistant', null],
      ['s-u3', 'user', null],
      ['s-a3', 'assistant', 's-a3b'],
      ['s-a3b', 'assistant', null],
    ]);
    const conversations = new Conversations(db);
    const seq = async (id: string) => (await conversations.seqOf(id))!;

    // A summary through s-a2: flipping the last reply's versions (after it) leaves it alone.
    expect(await conversations.saveRollingSummary('c-summary', 'They talked about Pairs.', await seq('s-a2'))).toBe(true);
    await conversations.choose('s-a3');
    expect((await conversations.rollingSummary('c-summary'))?.text).toBe('They talked about Pairs.');

    // Flipping the first message back to its original (inside what the summary covers) drops it.
    await conversations.choose('s-u1');
    expect(await conversations.rollingSummary('c-summary')).toBeNull();

    // Deleting a covered message on the line drops a new summary too.
    await conversations.choose('s-u1e');
    expect(await conversations.saveRollingSummary('c-summary', 'They talked about Paris.', await seq('s-a2'))).toBe(true);
    await conversations.removeMessage('s-u1e', new Date());
    expect(await conversations.rollingSummary('c-summary')).toBeNull();
  });
});
