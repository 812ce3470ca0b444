// The bulk write path on real PGlite: Conversations.appendMany writes the rows one append per message
// would (columns, segmentation, seq order, the parent chain of migration 023), in one transaction,
// and tells its listener of each message once, after the commit.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { APPEND_BATCH_ROWS, Conversations } from './conversations.js';

let dir: string;
let db: Database;

beforeAll(async () => {
  dir = tempDataDir('anima-append-many-');
  db = await openDatabase(dir, { template: dbTemplate() });
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const day = (n: number) => new Date(Date.UTC(2024, 4, 1 + n, 9, n % 60));

/** A history with what differs between messages: roles, speakers, a model, Chinese text, the same moment twice. */
function history(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    role: (i % 3 === 2 ? 'assistant' : 'user') as 'user' | 'assistant',
    content: i % 7 === 3 ? `我们周末去了杭州，第${i}次` : `Turn ${i}: we planted tomatoes in the garden and talked about Brno.`,
    status: 'complete' as const,
    speaker: i % 3 === 2 ? null : i % 2 ? 'Ana' : 'Bo',
    model: i % 3 === 2 ? 'test-model' : null,
    createdAt: day(Math.floor(i / 2)),
  }));
}

/** The rows of a conversation as a reader sees them, with each parent as its position in the conversation. */
async function rowsOf(conversationId: string) {
  const r = await db.query<{ id: string; parent_id: string | null; seq: number; fts_segmented: string | null; off_record: boolean } & Record<string, unknown>>(
    `SELECT id, parent_id, seq::float8 AS seq, role, content, status, model, speaker, fts_segmented, content_fts::text AS fts, created_at,
            off_record, replaced_by, error, images, removed_at
       FROM messages WHERE conversation_id = $1 ORDER BY seq`,
    [conversationId],
  );
  const position = new Map(r.rows.map((row, i) => [row.id, i]));
  return r.rows.map(({ id: _id, seq: _seq, parent_id, ...rest }) => ({ ...rest, parent: parent_id === null ? null : position.get(parent_id) }));
}

describe('Conversations.appendMany', () => {
  it('writes the same rows as one append per message, across several statements', async () => {
    const messages = history(APPEND_BATCH_ROWS + 13);
    const one = new Conversations(db);
    const a = await one.create('one by one');
    for (const m of messages) await one.append({ conversationId: a.id, ...m });
    const heard: Message[] = [];
    const many = new Conversations(db, (m) => heard.push(m));
    const b = await many.create('at once');
    const stored = await many.appendMany(b.id, messages);

    const rowsA = await rowsOf(a.id);
    const rowsB = await rowsOf(b.id);
    expect(rowsB).toHaveLength(messages.length);
    expect(rowsB).toEqual(rowsA);
    // Each follows the one before it, across the statements' boundaries too.
    expect(rowsB.map((r) => r.parent)).toEqual(messages.map((_, i) => (i === 0 ? null : i - 1)));
    expect(rowsB.some((r) => r.fts_segmented !== null)).toBe(true);
    // Returned and announced once each, in order, after the commit.
    expect(stored.map((m) => m.content)).toEqual(messages.map((m) => m.content));
    expect(heard.map((m) => m.id)).toEqual(stored.map((m) => m.id));
    const seqs = (await db.query<{ seq: number }>('SELECT seq::float8 AS seq FROM messages WHERE conversation_id = $1 ORDER BY seq', [b.id])).rows;
    expect(seqs.map((s) => s.seq)).toEqual([...seqs.map((s) => s.seq)].sort((x, y) => x - y));
    expect((await many.messages(b.id)).map((m) => m.id)).toEqual(stored.map((m) => m.id));
  });

  it('goes on from the last message already there and keeps the conversation off the record', async () => {
    const c = new Conversations(db);
    const conv = await c.create('later', { offRecord: true });
    const first = await c.append({ conversationId: conv.id, role: 'user', content: 'Hello', status: 'complete', createdAt: day(0) });
    const later = new Date(Date.now() + 86_400_000);
    const rest = await c.appendMany(conv.id, [...history(2), { role: 'assistant', content: 'See you tomorrow', createdAt: later }]);
    const rows = await rowsOf(conv.id);
    expect(rows.map((r) => r.parent)).toEqual([null, 0, 1, 2]);
    expect(rows.every((r) => r.off_record === true)).toBe(true);
    expect(rest[0]!.id).not.toBe(first.id);
    // The conversation's time moves to its latest message, as append moves it.
    expect((await c.get(conv.id)).updatedAt).toBe(later.toISOString());
  });

  it('makes text storable as an import does', async () => {
    const c = new Conversations(db);
    const conv = await c.create('odd text');
    const [m] = await c.appendMany(conv.id, [{ role: 'user', content: 'a\u0000b\ud800c', speaker: 'X\u0000', createdAt: day(1) }]);
    expect(m!.content).toBe('a\ufffdb\ufffdc');
    expect(m!.speaker).toBe('X\ufffd');
  });

  it('writes nothing to a conversation in the trash or one that does not exist', async () => {
    const heard: Message[] = [];
    const c = new Conversations(db, (m) => heard.push(m));
    const conv = await c.create('trashed');
    await c.trash(conv.id, new Date(), null);
    await expect(c.appendMany(conv.id, history(APPEND_BATCH_ROWS + 1))).rejects.toMatchObject({ code: 'not_found' });
    await expect(c.appendMany('no-such-conversation', history(2))).rejects.toMatchObject({ code: 'not_found' });
    const count = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [conv.id]);
    expect(count.rows[0]!.n).toBe(0);
    expect(heard).toEqual([]);
    expect(await c.appendMany(conv.id, [])).toEqual([]);
  });
});
