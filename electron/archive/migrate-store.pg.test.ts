// `anima migrate-store` on real engines: a PGlite data folder with messages, memories, the graph,
// sleep rows, the diary and vectors goes to a fresh database of the run's PostgreSQL cluster and back
// to a new folder. Every row arrives as it was (compared as JSON, table by table), the counts and
// recall's answers match, the source's rows are the same before and after, a non-empty target is
// refused in words and left as it was, a copy that does not match is removed, a source in use is
// refused with the "already open" words, and a password in the URL is never printed.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../db/database.js';
import { acquireLock } from '../db/lock.js';
import { databaseDir, openDatabase, openDatabaseDir } from '../db/open.js';
import { Recall } from '../memory/recall/index.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { rejection } from '../testing/rejection.js';
import { migrateStore, parseStoreEnd } from './migrate-store.js';

const skip = inject('postgresSkip');
if (skip) console.log(`migrate-store.pg.test: skipped — ${skip}.`);

const SECRET = 'hunter2-not-for-logs';
/** A bound for hangs: each test opens and migrates whole databases, and the CLI test starts a process, on two shared cores. */
const BOUND_MS = 4 * PATIENCE_MS;
const dirs: string[] = [];
const admin = () => inject('postgresUrl');

/** A new, empty database on the run's cluster (no tables at all), its URL carrying a password trust auth ignores. */
async function emptyDatabase(): Promise<string> {
  const name = `anima_move_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const u = new URL(admin());
  u.pathname = `/${name}`;
  u.password = SECRET;
  return u.toString();
}

async function seed(db: Database): Promise<void> {
  await db.exec(`
    INSERT INTO settings (key, value) VALUES ('test.move', '{"a": [1, 2, {"b": "c"}], "n": null}');
    INSERT INTO conversations (id, title) VALUES ('c1', 'Kyoto trip'), ('c2', '旅行の計画');
    INSERT INTO messages (id, conversation_id, role, content, status, error) VALUES
      ('m1', 'c1', 'user', 'I am planning a trip to Kyoto in April to see the cherry blossoms', 'complete', NULL),
      ('m2', 'c1', 'assistant', 'Kyoto in April sounds lovely, the temples will be busy with visitors', 'complete', NULL),
      ('m3', 'c1', 'user', 'My sister Mara is coming along, she loves green tea and old gardens', 'complete', NULL),
      ('m4', 'c2', 'user', '我们下个月去杭州看西湖，顺便喝龙井茶', 'complete', NULL),
      ('m5', 'c2', 'assistant', 'The model stopped', 'error', '{"code": "provider_unreachable", "message": "down"}');
    INSERT INTO memories (type, content, source) VALUES
      ('experience', 'The person is planning a trip to Kyoto in April with their sister Mara', 'tool'),
      ('preference', 'Mara loves green tea and old Japanese gardens', 'light-sleep'),
      ('world', 'The person works as a nurse on night shifts at the city hospital', 'user');
    INSERT INTO entities (kind, name, name_key) VALUES ('person', 'Mara', 'mara'), ('place', 'Kyoto', 'kyoto');
    INSERT INTO entity_mentions (entity_id, surface, surface_key, origin, seen_at, message_id)
      SELECT id, name, name_key, 'detected', now(), 'm3' FROM entities WHERE name_key IN ('mara', 'kyoto');
    INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, status) VALUES ('2026-04-01', 'manual', 1, 'here', 'done');
    INSERT INTO sleep_steps (run_id, step_id, status, stats) SELECT id, 'light', 'done', '{"memories": 2}' FROM sleep_runs;
    INSERT INTO diary_blocks (day, kind, body) VALUES ('2026-04-01', 'narrative', 'Today we talked about Kyoto and Mara''s tea.');
    INSERT INTO embeddings (source, source_id, model, dimensions, embedding, content_hash)
      SELECT 'memory', id, 'test-model', 3, ARRAY[0.1, -0.25, 3.5e-7]::real[], md5(content) FROM memories;
  `);
}

/**
 * Every row of every table, as the engine writes it in JSON, sorted: what "the same data" means here.
 * Generated columns (the search vectors) are left out: each engine computes them with its own text
 * parser (the cluster's C locale splits Chinese punctuation where PGlite's does not).
 */
async function snapshot(db: Database): Promise<Record<string, string[]>> {
  const tables = await db.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND relname <> 'schema_migrations' ORDER BY relname`,
  );
  const out: Record<string, string[]> = {};
  for (const { name } of tables.rows) {
    const cols = await db.query<{ c: string }>(
      `SELECT attname AS c FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated::text = '' ORDER BY attnum`,
      [name],
    );
    const list = cols.rows.map((c) => `"${c.c}"`).join(', ');
    const rows = await db.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM (SELECT ${list} FROM "${name}") t`);
    out[name] = rows.rows.map((row) => row.r).sort();
  }
  return out;
}

async function folderSnapshot(dataDir: string): Promise<Record<string, string[]>> {
  const db = await openDatabaseDir(databaseDir(dataDir), { asIs: true });
  try {
    return await snapshot(db);
  } finally {
    await db.close();
  }
}

async function serverSnapshot(url: string): Promise<Record<string, string[]>> {
  const db = await openDatabase(tempDataDir('anima-move-look-'), { database: url });
  try {
    return await snapshot(db);
  } finally {
    await db.close();
  }
}

async function tableCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'`);
    return r.rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe.skipIf(!!skip)('anima migrate-store', () => {
  let source: string;
  let before: Record<string, string[]>;
  let server: string;
  const lines: string[] = [];

  beforeAll(async () => {
    source = tempDataDir('anima-move-src-');
    dirs.push(source);
    const db = await openDatabase(source, { template: dbTemplate() });
    await seed(db);
    await db.close();
    before = await folderSnapshot(source);
    server = await emptyDatabase();
  }, BOUND_MS);

  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'copies a folder into an empty PostgreSQL database: every row, counts and recall checked, the source unchanged',
    async () => {
      const result = await migrateStore({ from: parseStoreEnd(source), to: parseStoreEnd(server), log: (line) => lines.push(line) });
      const rows = Object.fromEntries(result.tables.map((t) => [t.table, t.rows]));
      expect(rows).toMatchObject({
        conversations: 2,
        messages: 5,
        memories: 3,
        entity_mentions: 2,
        sleep_runs: 1,
        sleep_steps: 1,
        diary_blocks: 1,
        embeddings: 3,
      });
      expect(result.recallChecks.length).toBeGreaterThan(0);
      expect(result.recallChecks.some((c) => c.hits > 0)).toBe(true);
      expect(lines.some((l) => /^ {2}messages: 5 rows$/.test(l))).toBe(true);
      // Debian's PostgreSQL has no pgvector: the vectors are there, and it says search by meaning is unavailable.
      expect(result.notes.join('\n')).toMatch(/3 stored vectors were copied as they are, but search by meaning is unavailable/);
      expect(result.notes.join('\n')).toContain(`--data-dir ${source}`);
      expect([...lines, ...result.notes].join('\n')).not.toContain(SECRET);

      expect(await folderSnapshot(source)).toEqual(before);
      expect(await serverSnapshot(server)).toEqual(before);
    },
    BOUND_MS,
  );

  it(
    'the copy answers recall as the source does, and goes on numbering where the source stopped',
    async () => {
      const here = await openDatabaseDir(databaseDir(source), { asIs: true });
      const there = await openDatabase(tempDataDir('anima-move-look-'), { database: server });
      try {
        for (const query of ['Kyoto trip with Mara', 'green tea gardens', 'night shifts nurse', '西湖 龙井茶']) {
          const a = await new Recall({ db: here }).search({ query, limit: 5 });
          const b = await new Recall({ db: there }).search({ query, limit: 5 });
          expect(b.map((h) => h.link)).toEqual(a.map((h) => h.link));
        }
        const next = await there.query<{ id: number }>(`INSERT INTO memories (type, content, source) VALUES ('world', 'A new fact', 'user') RETURNING id`);
        const max = await here.query<{ id: number }>('SELECT max(id)::int AS id FROM memories');
        expect(next.rows[0]!.id).toBeGreaterThan(max.rows[0]!.id);
        await there.query('DELETE FROM memories WHERE id = $1', [next.rows[0]!.id]);
      } finally {
        await there.close();
        await here.close();
      }
    },
    BOUND_MS,
  );

  it(
    'refuses a target that is not empty, in words, and changes nothing there',
    async () => {
      const onServer = await serverSnapshot(server);
      const other = tempDataDir('anima-move-other-');
      dirs.push(other);
      const db = await openDatabase(other, { template: dbTemplate() });
      await db.close();
      const err = await rejection(migrateStore({ from: parseStoreEnd(other), to: parseStoreEnd(server) }), 'conflict');
      expect(err.message).toMatch(/is not empty \(conversations: 2, .* rows\)\. migrate-store copies only into an empty database/);
      expect(err.message).not.toContain(SECRET);
      expect(await serverSnapshot(server)).toEqual(onServer);

      const folderErr = await rejection(migrateStore({ from: parseStoreEnd(server), to: parseStoreEnd(other) }), 'conflict');
      expect(folderErr.message).toMatch(/already holds an Anima database/);
    },
    BOUND_MS,
  );

  it(
    'moves back from PostgreSQL to a new folder (the command, as a person runs it): the same rows as the first folder',
    async () => {
      const back = path.join(tempDataDir('anima-move-back-'), 'data');
      dirs.push(path.dirname(back));
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'electron/cli.ts', 'migrate-store', '--from', server, '--to', back],
        { cwd: path.resolve(import.meta.dirname, '..', '..'), timeout: BOUND_MS, env: { ...process.env, CI: '1' } },
      );
      expect(stdout).toMatch(/^ {2}memories: 3 rows$/m);
      expect(stdout).toMatch(/rows per table equal; recall gives the same results/);
      expect(stdout).toMatch(/Done: .* rows in \d+ tables copied and checked/);
      expect(stdout + stderr).not.toContain(SECRET);
      expect(stdout).toContain('postgres://postgres:***@');
      expect(await folderSnapshot(back)).toEqual(before);
    },
    BOUND_MS,
  );

  it(
    'removes a copy that does not match the source, and says so; the source stays as it was',
    async () => {
      const target = await emptyDatabase();
      const err = await rejection(
        migrateStore({
          from: parseStoreEnd(source),
          to: parseStoreEnd(target),
          beforeVerify: async (db) => void (await db.query(`DELETE FROM memories WHERE content LIKE 'Mara loves%'`)),
        }),
      );
      expect(err.message).toMatch(/The copy does not match the source \(memories: 3 in the source, 2 in the copy\)\. The copy was removed/);
      expect(await tableCount(target)).toBe(0);
      expect(await folderSnapshot(source)).toEqual(before);
    },
    BOUND_MS,
  );

  it(
    'refuses a source Anima has open, with the usual words',
    async () => {
      const lock = acquireLock(source);
      try {
        const target = await emptyDatabase();
        const err = await rejection(migrateStore({ from: parseStoreEnd(source), to: parseStoreEnd(target) }), 'data_dir_locked');
        expect(err.message).toMatch(/already open|already running|another Anima/i);
        expect(await tableCount(target)).toBe(0);
      } finally {
        lock.release();
      }
    },
    BOUND_MS,
  );
});
