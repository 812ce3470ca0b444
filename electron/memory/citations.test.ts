import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { parseCitations, recordCitations, syncReferenceCounts } from './citations.js';
import { MemoryStore } from './store.js';

// DELETE and an identity restart: several times faster than TRUNCATE on PGlite, and ids start at 1.
const RESET = `DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;
  ALTER TABLE memories ALTER COLUMN id RESTART; ALTER TABLE memory_changes ALTER COLUMN id RESTART;`;

let db: Database;
let dir: string;
let store: MemoryStore;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-citations-'));
  db = await openDatabase(dir, { template: new Blob([fs.readFileSync(inject('dbTemplatePath'))]) });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(`${RESET} DELETE FROM messages; DELETE FROM conversations;`);
  store = new MemoryStore(db);
});

async function conversation(kind: 'chat' | 'background' = 'chat'): Promise<string> {
  const id = randomUUID();
  await db.query('INSERT INTO conversations (id, kind, title) VALUES ($1, $2, $3)', [id, kind, 'test']);
  return id;
}

async function message(conversationId: string, content: string, opts: { role?: 'user' | 'assistant'; status?: string } = {}): Promise<string> {
  const id = randomUUID();
  await db.query('INSERT INTO messages (id, conversation_id, role, content, status) VALUES ($1, $2, $3, $4, $5)', [
    id,
    conversationId,
    opts.role ?? 'assistant',
    content,
    opts.status ?? 'complete',
  ]);
  return id;
}

async function memory(content: string): Promise<number> {
  return (await store.create({ type: 'world', content, source: 'user', actor: 'person' })).memory.id;
}

async function counts(...ids: number[]): Promise<number[]> {
  return (await store.getMany(ids)).map((m) => m.referenceCount);
}

const sorted = (rows: [string, number][]) => [...rows].sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1));

async function references(): Promise<[string, number][]> {
  const rows = await db.query<{ message_id: string; memory_id: number }>('SELECT message_id, memory_id FROM memory_references');
  return sorted(rows.rows.map((r) => [r.message_id, Number(r.memory_id)]));
}

describe('parseCitations', () => {
  it('finds distinct [[anima:ID]] markers in order', () => {
    expect(parseCitations('Tea it is. [[anima:12]] [[anima:7]] and again [[anima:12]]')).toEqual([12, 7]);
  });

  it('ignores bare numbers, unbracketed ids and malformed markers', () => {
    expect(parseCitations('memory 12, anima:12, [anima:12], [[anima: 12]], [[anima:abc]], [[anima:0]], {"semantic_memory_id": 12}')).toEqual([]);
  });
});

describe('recordCitations', () => {
  it('adds one per citing message: two messages → +2, the same message twice → still +1', async () => {
    const tea = await memory('Mara drinks oolong in the afternoon.');
    const chat = await conversation();
    const first = await message(chat, `You like oolong. [[anima:${tea}]] [[anima:${tea}]]`);
    const second = await message(chat, `Oolong again? [[anima:${tea}]]`, { role: 'user' });
    expect(await recordCitations(db, first, `You like oolong. [[anima:${tea}]] [[anima:${tea}]]`)).toEqual([tea]);
    expect(await counts(tea)).toEqual([1]);
    expect(await recordCitations(db, first, `You like oolong. [[anima:${tea}]]`)).toEqual([]);
    expect(await counts(tea)).toEqual([1]);
    expect(await recordCitations(db, second, `Oolong again? [[anima:${tea}]]`)).toEqual([tea]);
    expect(await counts(tea)).toEqual([2]);
    expect(await references()).toEqual(
      sorted([
        [first, tea],
        [second, tea],
      ]),
    );
  });

  it('ignores a forgotten memory, a superseded one and an id that never existed', async () => {
    const forgotten = await memory('Mara works at Fudan.');
    await store.forget(forgotten, 'person');
    const old = await memory('Mara lives in Shanghai.');
    await store.supersede(old, { type: 'world', content: 'Mara lives in Beijing.', source: 'user', actor: 'person' }, 'person');
    const live = await memory('Mara has a cat called Miso.');
    const chat = await conversation();
    const text = `[[anima:${forgotten}]] [[anima:${old}]] [[anima:9999]] [[anima:${live}]]`;
    const id = await message(chat, text);
    expect(await recordCitations(db, id, text)).toEqual([live]);
    expect(await counts(forgotten, old, live)).toEqual([0, 0, 1]);
    expect(await references()).toEqual([[id, live]]);
  });

  it('does nothing for a body without markers', async () => {
    const chat = await conversation();
    const id = await message(chat, 'No citations here, memory 1.');
    expect(await recordCitations(db, id, 'No citations here, memory 1.')).toEqual([]);
  });
});

describe('syncReferenceCounts', () => {
  it('recomputes counts from message bodies and credits a superseded memory’s use to its successor', async () => {
    const tea = await memory('Mara drinks oolong in the afternoon.');
    const city = await memory('Mara lives in Shanghai.');
    const gone = await memory('Mara works at Fudan.');
    const chat = await conversation();
    const background = await conversation('background');
    const a = await message(chat, `Oolong. [[anima:${tea}]]`);
    const b = await message(chat, `Still oolong. [[anima:${tea}]] [[anima:${city}]]`, { role: 'user' });
    const c = await message(chat, `Shanghai. [[anima:${city}]]`);
    await message(chat, `Fudan. [[anima:${gone}]]`);
    await message(chat, `Half a reply [[anima:${tea}]]`, { status: 'streaming' });
    await message(background, `Consolidation notes [[anima:${tea}]] [[anima:${city}]]`);
    await message(chat, `A bare 12 and anima:${tea} do not count.`);

    // Two merges in a row: city → moved → moved again; citations follow the chain to its active end.
    const moved = (await store.supersede(city, { type: 'world', content: 'Mara lives in Hangzhou.', source: 'deep-sleep', actor: 'deep-sleep' }, 'deep-sleep'))
      .memory.id;
    const latest = (
      await store.supersede(moved, { type: 'world', content: 'Mara lives in Beijing now.', source: 'deep-sleep', actor: 'deep-sleep' }, 'deep-sleep')
    ).memory.id;
    const d = await message(chat, `Beijing, and Shanghai before. [[anima:${latest}]] [[anima:${city}]]`);
    await store.forget(gone, 'person');
    await db.query('UPDATE memories SET reference_count = 99 WHERE id = ANY($1::bigint[])', [[tea, city, gone]]);

    const result = await syncReferenceCounts(db);
    expect(await counts(tea, city, moved, latest, gone)).toEqual([2, 0, 0, 3, 99]);
    expect(result).toEqual({ memories: 3, references: 5 });
    const expected: [string, number][] = [
      [a, tea],
      [b, tea],
      [b, latest],
      [c, latest],
      [d, latest],
    ];
    expect(await references()).toEqual(sorted(expected));

    // Nothing changed since: a second run changes no count.
    expect(await syncReferenceCounts(db)).toEqual({ memories: 0, references: 5 });
  });
});

describe('citations of memories the reply was not shown', () => {
  it('are credited neither live nor by the recount, while replies from before the record count as before', async () => {
    const tea = await memory('Mara drinks oolong in the afternoon.');
    const city = await memory('Mara lives in Shanghai.');
    const chat = await conversation();
    const reply = await message(chat, `Oolong, in Shanghai. [[anima:${tea}]] [[anima:${city}]]`);
    await db.query('UPDATE messages SET shown_memory_ids = $2::bigint[] WHERE id = $1', [reply, [tea]]);
    expect(await recordCitations(db, reply, `Oolong, in Shanghai. [[anima:${tea}]] [[anima:${city}]]`, [tea])).toEqual([tea]);
    const old = await message(chat, `From before the record: [[anima:${city}]]`);
    await syncReferenceCounts(db);
    expect(await counts(tea, city)).toEqual([1, 1]);
    expect(await references()).toEqual(
      sorted([
        [reply, tea],
        [old, city],
      ]),
    );
  });
});
