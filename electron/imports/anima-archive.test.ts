// Anima's own archive, imported: the round trip (export a lived-in folder → import into an empty one
// → export again gives the same anima.json), a second import that finds everything here already, an
// import into a folder with its own data (taken numbers renumbered, every reference following), and
// the refusals that change nothing (a newer schema, a damaged row, a cancel). Real PGlite folders, the
// export's own code, the importer's own code.
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportArchive } from '../archive/export.js';
import { seedFolder, SECRET_KEY } from '../archive/testing/seed.js';
import { openDatabase, type Database } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { Conversations } from '../conversations/conversations.js';
import { SettingsStore } from '../settings/settings.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { ARCHIVE_SECTIONS, appSchemaVersion, type ArchiveSection } from './anima-archive.js';
import { archiveCounts, restoreArchive } from './anima-archive-restore.js';
import { parseImport } from './detect.js';
import { ImportError } from './errors.js';

type Json = {
  format: string;
  schemaVersion: number;
  exportedAt: string;
  sections: Record<ArchiveSection, Record<string, unknown>[]>;
  counts: Record<string, number>;
};

const dirs: string[] = [];
const dbs: Database[] = [];

async function folder(prefix: string): Promise<{ dir: string; db: Database }> {
  const dir = tempDataDir(prefix);
  const db = await openDatabase(dir, { template: dbTemplate() });
  dirs.push(dir);
  dbs.push(db);
  return { dir, db };
}

async function exportOf(db: Database, dir: string, name: string): Promise<{ zip: Buffer; json: Json }> {
  const file = path.join(dir, 'exports', name);
  await exportArchive({ db, appVersion: '1.2.3', file, sql: false, pageSize: 3 });
  const zip = fs.readFileSync(file);
  return { zip, json: JSON.parse(strFromU8(unzipSync(zip)['anima.json']!)) as Json };
}

// The messages' search indexes are set aside and built again even for these few rows, so that path is tested too.
function restore(db: Database, zip: Buffer, name = 'archive.zip', signal?: AbortSignal) {
  const parsed = parseImport(zip, name);
  expect(parsed.format).toBe('anima');
  return restoreArchive(
    parsed.archive!,
    { db, settings: new SettingsStore(db, () => {}), markRead: markImportedHistoryRead },
    { signal, suspendIndexesFrom: 1 },
  );
}

async function messageIndexes(db: Database): Promise<string[]> {
  const r = await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'messages' ORDER BY indexname`);
  return r.rows.map((x) => x.indexdef);
}

/** Every table an archive holds, row counts (what "nothing changed" compares). */
async function tableCounts(db: Database): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of [...ARCHIVE_SECTIONS, 'sleep_watermarks']) out[t] = Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0]?.n);
  return out;
}

let source: { dir: string; db: Database };
let first: { zip: Buffer; json: Json };

beforeAll(async () => {
  source = await folder('anima-archive-src-');
  await seedFolder(source.db, source.dir);
  first = await exportOf(source.db, source.dir, 'first.zip');
}, 120_000);

afterAll(async () => {
  for (const db of dbs) await db.close().catch(() => {});
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the round trip', () => {
  let target: { dir: string; db: Database };
  let second: Json;

  beforeAll(async () => {
    target = await folder('anima-archive-dst-');
    const r = await restore(target.db, first.zip);
    expect(r).toMatchObject({ total: 2, done: 2, imported: 2, already: 0, messages: 4, versions: 1 });
    second = (await exportOf(target.db, target.dir, 'second.zip')).json;
  }, 120_000);

  it('builds the messages’ search indexes again, and full-text search finds a restored message', async () => {
    expect((await messageIndexes(target.db)).filter((d) => d.includes('USING gin'))).toHaveLength(2);
    const hit = await target.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE content_fts @@ plainto_tsquery('english', 'dumpling recipe')`,
    );
    expect(hit.rows[0]!.n).toBe(1);
  });

  it('exporting the imported folder gives the same anima.json, ids and all (only the moment of the export differs)', () => {
    expect(second.exportedAt).not.toBe('');
    const { exportedAt: _a, ...a } = first.json;
    const { exportedAt: _b, ...b } = second;
    // Not vacuous: every section the seed fills is there.
    for (const s of ARCHIVE_SECTIONS) expect(a.sections[s].length, s).toBeGreaterThan(0);
    expect(b).toEqual(a);
  });

  it('brings back no API key: the connection is there, its key is not', async () => {
    expect(JSON.stringify(second)).not.toContain(SECRET_KEY);
    expect(fs.existsSync(path.join(target.dir, 'secrets.json'))).toBe(false);
    expect(second.sections.providers).toHaveLength(1);
  });

  it('marks the conversations as history the sleep cycle has read, and new messages follow the restored ones', async () => {
    const marks = await target.db.query<{ n: number }>('SELECT count(DISTINCT conversation_id)::int AS n FROM sleep_watermarks');
    expect(marks.rows[0]?.n).toBe(2);
    const conversations = new Conversations(target.db);
    const c = first.json.sections.conversations[0]!.id as string;
    const m = await conversations.append({ conversationId: c, role: 'user', content: 'back again', status: 'complete' });
    const maxSeq = Math.max(...first.json.sections.messages.map((x) => Number(x.seq)));
    const seq = await target.db.query<{ seq: number }>('SELECT seq::int AS seq FROM messages WHERE id = $1', [m.id]);
    expect(seq.rows[0]!.seq).toBeGreaterThan(maxSeq);
    // And a new memory takes a number past the restored ones.
    const created = await new MemoryStore(target.db).create({
      type: 'world',
      content: 'Water boils at 100 °C at sea level.',
      source: 'tool',
      actor: 'companion',
    });
    expect(created.memory.id).toBeGreaterThan(Math.max(...first.json.sections.memories.map((x) => Number(x.id))));
  });

  it('a second import of the same archive finds everything here and writes nothing', async () => {
    const before = await tableCounts(target.db);
    const parsed = parseImport(first.zip, 'first.zip');
    const counts = await archiveCounts(target.db, parsed.archive!);
    expect(counts.conversations).toEqual({ total: 2, already: 2 });
    expect(counts.messages).toEqual({ total: 5, already: 5 });
    expect(counts.memories).toEqual({ total: 3, already: 3 });
    expect(counts.diaryBlocks).toEqual({ total: 7, already: 7 });
    for (const [part, c] of Object.entries(counts)) expect(c.already, part).toBe(c.total);
    const r = await restore(target.db, first.zip);
    expect(r).toMatchObject({ imported: 0, already: 2, messages: 0 });
    expect(r.counts.memories.already).toBe(3);
    expect(r.counts.diaryBlocks.already).toBe(7);
    expect(await tableCounts(target.db)).toEqual(before);
  });
});

describe('into a folder with its own data', () => {
  it('keeps what is here, renumbers the archive’s taken numbers and every reference follows', async () => {
    const here = await folder('anima-archive-merge-');
    const store = new MemoryStore(here.db);
    for (const text of ['The person has a cat named Miso.', 'The person works nights.', 'The person lives by the sea.', 'The person plays the cello.'])
      await store.create({ type: 'observation', content: text, source: 'tool', actor: 'companion' });
    const conversations = new Conversations(here.db);
    const own = await conversations.create('Mine');
    await conversations.append({ conversationId: own.id, role: 'user', content: 'my own words', status: 'complete' });
    const before = await tableCounts(here.db);

    const r = await restore(here.db, first.zip);
    expect(r).toMatchObject({ imported: 2, already: 0, messages: 4, versions: 1 });
    const after = await tableCounts(here.db);
    expect(after.memories).toBe(before.memories! + 3);
    expect(after.messages).toBe(before.messages! + 5);
    expect(after.diary_blocks).toBe(7);
    // The citation and the [[anima:N]] marker name the same memory as in the archive, under its new number.
    const kyoto = await here.db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE content LIKE '%Kyoto) in November%'`);
    const newId = kyoto.rows[0]!.id;
    expect(newId).toBeGreaterThan(4);
    const refs = await here.db.query<{ memory_id: number; content: string }>(
      'SELECT r.memory_id::int AS memory_id, m.content FROM memory_references r JOIN messages m ON m.id = r.message_id',
    );
    expect(refs.rows).toEqual([{ memory_id: newId, content: `Lovely! [[anima:${newId}]]` }]);
    const journal = await here.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_changes WHERE memory_id = $1', [newId]);
    expect(journal.rows[0]!.n).toBeGreaterThanOrEqual(2);
    // What was here is untouched.
    const mine = await here.db.query<{ content: string }>('SELECT content FROM memories WHERE id = 1');
    expect(mine.rows[0]?.content).toBe('The person has a cat named Miso.');
    // Entities matched by name are not doubled; the relation joins the right two.
    const edges = await here.db.query<{ s: string; t: string }>(
      `SELECT s.name AS s, t.name AS t FROM entity_edges e JOIN entities s ON s.id = e.source_id JOIN entities t ON t.id = e.target_id WHERE e.relation = 'lives_in'`,
    );
    expect(edges.rows).toEqual([{ s: 'Ana', t: 'Kyoto' }]);
  });
});

describe('refusals that change nothing', () => {
  function withJson(edit: (json: Json) => void): Buffer {
    const entries = unzipSync(first.zip);
    const json = JSON.parse(strFromU8(entries['anima.json']!)) as Json;
    edit(json);
    return Buffer.from(zipSync({ ...entries, 'anima.json': strToU8(JSON.stringify(json)) }));
  }

  it('an archive from a newer Anima is refused in words', () => {
    const zip = withJson((j) => (j.schemaVersion = appSchemaVersion() + 1));
    let error: unknown;
    try {
      parseImport(zip, 'newer.zip');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).code).toBe('newer_version');
    expect((error as Error).message).toMatch(/newer Anima.*Update Anima/);
  });

  it('a message naming a conversation the archive does not hold is refused before anything is stored', () => {
    const zip = withJson((j) => (j.sections.messages[0]!.conversation_id = 'nowhere'));
    expect(() => parseImport(zip, 'broken.zip')).toThrow(/names the conversation "nowhere"/);
  });

  it('duplicated ids are refused', () => {
    const zip = withJson((j) => j.sections.memories.push({ ...j.sections.memories[0]! }));
    expect(() => parseImport(zip, 'dup.zip')).toThrow(/twice/);
  });

  it('a row the database refuses (late in the archive) leaves the folder as it was', async () => {
    const target = await folder('anima-archive-fail-');
    const before = await tableCounts(target.db);
    const indexes = await messageIndexes(target.db);
    expect(indexes.filter((d) => d.includes('USING gin'))).toHaveLength(2);
    const zip = withJson((j) => (j.sections.entity_edges[0]!.weight = -5));
    await expect(restore(target.db, zip)).rejects.toThrow();
    expect(await tableCounts(target.db)).toEqual(before);
    // The search indexes set aside for the restore are back as they were.
    expect(await messageIndexes(target.db)).toEqual(indexes);
  });

  it('a cancel leaves the folder as it was', async () => {
    const target = await folder('anima-archive-cancel-');
    const before = await tableCounts(target.db);
    const controller = new AbortController();
    controller.abort();
    await expect(restore(target.db, first.zip, 'archive.zip', controller.signal)).rejects.toMatchObject({ code: 'cancelled' });
    expect(await tableCounts(target.db)).toEqual(before);
  });
});

describe('anima.json alone', () => {
  it('imports like the zip', async () => {
    const target = await folder('anima-archive-json-');
    const json = Buffer.from(strFromU8(unzipSync(first.zip)['anima.json']!));
    const r = await restore(target.db, json, 'anima.json');
    expect(r).toMatchObject({ imported: 2, messages: 4, versions: 1 });
  });
});
