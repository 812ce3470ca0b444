// `anima migrate-store --from DIR --to postgres://…` (and back): a whole store copied from one engine
// to the other, table by table, checked, the source never changed.
//
// - The source is opened as it is (no migration, no extension created) under its own lock — the data
//   folder's file lock, or the server's advisory lock — so no Anima writes while it is read; it is read
//   in one read-only, repeatable-read transaction (one snapshot). It must be at this version's schema.
// - The target must be empty: a folder without a database, or a PostgreSQL database with no tables
//   (or only Anima's, holding nothing but what the migrations seed). It is migrated by the same
//   migrations, then every table is copied in one transaction with triggers and foreign-key checks off
//   (session_replication_role = replica: rows arrive exactly as they were, in any order), generated
//   columns (the search vectors) left to the target to compute, identity values kept, each sequence
//   set to where the source's is. Rows travel as JSON the source makes (row_to_json) and the target
//   reads (json_populate_recordset), so every type — jsonb, bytea, arrays, the real[] vectors — is
//   carried by the engines' own text forms.
// - Then it is checked: rows per table equal, and recall gives the same top results for a few
//   queries drawn from the data. On a mismatch or an error the copy is removed (the target is empty
//   again) and it says why; the source is untouched either way.
// - Files stay in the data folder: attached images, the companion's pictures, keys and the browser
//   link are files beside the database, and the server engine uses a data folder for them too
//   (`anima serve --data-dir DIR --database URL`).
//
// Table names come from the catalogue (every table the migrations made), never written here.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import type { RecallHit } from '../../shared/api.js';
import type { Database, Transaction } from '../db/database.js';
import { acquireLock, type DataDirLock } from '../db/lock.js';
import { migrate } from '../db/migrate.js';
import { migrations } from '../db/migrations/index.js';
import { databaseDir, openDatabaseDir } from '../db/open.js';
import { vectorSupport } from '../db/pgvector.js';
import { checkDatabaseUrl, isPostgresUrl, PostgresDatabase, redactDatabaseUrl } from '../db/postgres.js';
import { Recall } from '../memory/recall/index.js';

export type StoreEnd = { kind: 'folder'; dataDir: string } | { kind: 'postgres'; url: string };

export function parseStoreEnd(value: string): StoreEnd {
  if (isPostgresUrl(value)) {
    checkDatabaseUrl(value);
    return { kind: 'postgres', url: value };
  }
  return { kind: 'folder', dataDir: path.resolve(value) };
}

/** Where a store is, in words safe to print (a URL's password hidden). */
export function describeEnd(end: StoreEnd): string {
  return end.kind === 'folder' ? end.dataDir : redactDatabaseUrl(end.url);
}

export interface MigrateStoreOptions {
  from: StoreEnd;
  to: StoreEnd;
  /** One line per step and table, for the terminal. */
  log?: (line: string) => void;
  /** Runs on the target after the copy and before the check (a test changes a row there to see the check refuse it). */
  beforeVerify?: (target: Database) => Promise<void>;
}

export interface MigrateStoreResult {
  tables: { table: string; rows: number }[];
  rows: number;
  /** The recall queries checked, and how many results each gave on both. */
  recallChecks: { query: string; hits: number }[];
  /** What the person should know: where the files are, vectors without pgvector. */
  notes: string[];
  ms: number;
}

const FETCH_ROWS = 200;
const SEEDED: Record<string, number> = { schema_migrations: Infinity, embedding_state: 1, entities: 2 };
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const fmt = (n: number) => n.toLocaleString('en-US');

interface Opened {
  db: Database;
  lock?: DataDirLock;
  /** Removes what this run made in the target (its database folder; its tables). */
  dropCopy: () => Promise<void>;
}

function sameEnd(a: StoreEnd, b: StoreEnd): boolean {
  if (a.kind === 'folder' && b.kind === 'folder') return a.dataDir === b.dataDir;
  if (a.kind === 'postgres' && b.kind === 'postgres') {
    const x = new URL(a.url);
    const y = new URL(b.url);
    return x.hostname === y.hostname && (x.port || '5432') === (y.port || '5432') && x.pathname === y.pathname;
  }
  return false;
}

async function openSource(end: StoreEnd): Promise<Opened> {
  if (end.kind === 'postgres') {
    const db = await PostgresDatabase.open(end.url, { asIs: true });
    return { db, dropCopy: async () => {} };
  }
  const dir = databaseDir(end.dataDir);
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) throw new ApiError('not_found', `There is no Anima data in ${end.dataDir}.`);
  const lock = acquireLock(end.dataDir);
  try {
    return { db: await openDatabaseDir(dir, { asIs: true }), lock, dropCopy: async () => {} };
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function schemaVersions(db: Pick<Database, 'query'>): Promise<number[]> {
  const has = await db.query(`SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'schema_migrations' AND relnamespace = current_schema()::regnamespace`);
  if (!has.rows.length) return [];
  const r = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return r.rows.map((row) => Number(row.version));
}

async function checkSourceSchema(db: Database, where: string): Promise<void> {
  const have = await schemaVersions(db);
  if (!have.length) throw new ApiError('not_found', `There is no Anima data in ${where}.`);
  const known = migrations.map((m) => m.version);
  const newest = Math.max(...have);
  if (newest > Math.max(...known)) {
    throw new ApiError('conflict', `${where} was written by a newer Anima (schema ${newest}). Update Anima to move it; nothing was changed.`);
  }
  const missing = known.filter((v) => !have.includes(v));
  if (missing.length) {
    throw new ApiError(
      'conflict',
      `${where} is from an older Anima (schema ${newest}). Open it once with this version (anima serve) so it is brought up to date, then move it; nothing was changed.`,
    );
  }
}

async function userTables(db: Pick<Database, 'query'>): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_catalog.pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
  );
  return r.rows.map((row) => row.name);
}

async function countRows(db: Pick<Database, 'query'>, table: string): Promise<number> {
  const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quote(table)}`);
  return Number(r.rows[0]?.n ?? 0);
}

/** Refuses, in words, a target that holds anything but what Anima's migrations seed. */
async function checkEmpty(db: Database, where: string): Promise<void> {
  const tables = await userTables(db);
  if (!tables.length) return;
  if (!tables.includes('schema_migrations')) {
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? ', …' : '');
    throw new ApiError(
      'conflict',
      `The database at ${where} is not empty: it holds tables that are not Anima's (${shown}). Move into an empty database (createdb); nothing was changed.`,
    );
  }
  const held: string[] = [];
  for (const table of tables) {
    const n = await countRows(db, table);
    if (n > (SEEDED[table] ?? 0)) held.push(`${table}: ${fmt(n)}`);
  }
  if (held.length) {
    const shown = held.slice(0, 5).join(', ') + (held.length > 5 ? ', …' : '');
    throw new ApiError(
      'conflict',
      `The database at ${where} is not empty (${shown} rows). migrate-store copies only into an empty database, so nothing there is ever replaced; create a new one (createdb) and move into that. Nothing was changed.`,
    );
  }
}

async function openTarget(end: StoreEnd): Promise<Opened> {
  if (end.kind === 'postgres') {
    const where = redactDatabaseUrl(end.url);
    const db = await PostgresDatabase.open(end.url);
    try {
      await checkEmpty(db, where);
      await migrate(db);
      await db.refreshArrayTypes();
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
    return {
      db,
      dropCopy: async () => {
        // The target was empty: every table and function in its schema now is this run's (extensions' own stay).
        const tables = await userTables(db);
        if (tables.length) await db.exec(`DROP TABLE IF EXISTS ${tables.map(quote).join(', ')} CASCADE`);
        const fns = await db.query<{ sig: string }>(
          `SELECT p.oid::regprocedure::text AS sig FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = current_schema()::regnamespace
              AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`,
        );
        for (const { sig } of fns.rows) await db.exec(`DROP FUNCTION IF EXISTS ${sig} CASCADE`);
      },
    };
  }
  const dir = databaseDir(end.dataDir);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length) {
    throw new ApiError(
      'conflict',
      `${end.dataDir} already holds an Anima database (${dir}). migrate-store copies only into a folder without one, so nothing there is ever replaced; nothing was changed.`,
    );
  }
  fs.mkdirSync(end.dataDir, { recursive: true, mode: 0o700 });
  const lock = acquireLock(end.dataDir);
  let db: Database;
  try {
    db = await openDatabaseDir(dir);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    lock.release();
    throw err;
  }
  return {
    db,
    lock,
    dropCopy: async () => {
      await db.close().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Tables in an order where each comes after those its foreign keys name (replica mode does not need it; a reader of the log does). */
async function copyOrder(db: Pick<Database, 'query'>, tables: string[]): Promise<string[]> {
  const r = await db.query<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_catalog.pg_constraint c
      WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
  );
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]));
  for (const { child, parent } of r.rows) if (child !== parent) parents.get(child.replace(/"/g, ''))?.add(parent.replace(/"/g, ''));
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (t: string, path: Set<string>) => {
    if (seen.has(t) || path.has(t)) return;
    path.add(t);
    for (const p of parents.get(t) ?? []) if (parents.has(p)) visit(p, path);
    seen.add(t);
    out.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return out;
}

async function copyColumns(db: Pick<Database, 'query'>, table: string): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_catalog.pg_attribute a
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated::text = '' ORDER BY a.attnum`,
    [quote(table)],
  );
  return r.rows.map((row) => row.name);
}

async function copyTable(source: Transaction, target: Transaction, table: string, columns: string[]): Promise<number> {
  const cols = columns.map(quote).join(', ');
  await source.exec(`DECLARE anima_copy NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS r FROM (SELECT ${cols} FROM ${quote(table)}) t`);
  let rows = 0;
  try {
    for (;;) {
      const batch = (await source.query<{ r: string }>(`FETCH ${FETCH_ROWS} FROM anima_copy`)).rows;
      if (!batch.length) break;
      await target.query(
        `INSERT INTO ${quote(table)} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM json_populate_recordset(NULL::${quote(table)}, $1::json)`,
        [`[${batch.map((b) => b.r).join(',')}]`],
      );
      rows += batch.length;
    }
  } finally {
    await source.exec('CLOSE anima_copy');
  }
  return rows;
}

async function copySequences(source: Transaction, target: Transaction): Promise<void> {
  const seqs = await source.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_catalog.pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'S' ORDER BY c.relname`,
  );
  for (const { name } of seqs.rows) {
    const state = (await source.query<{ v: string; called: boolean }>(`SELECT last_value::text AS v, is_called AS called FROM ${quote(name)}`)).rows[0];
    if (!state) continue;
    await target.query(`SELECT setval($1::regclass, $2::bigint, $3::boolean)`, [quote(name), state.v, state.called]);
  }
}

/** A few queries from the data itself: words of the oldest active memories and of some messages. */
async function spotQueries(db: Database): Promise<string[]> {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).slice(0, 6).join(' ');
  const memories = await db.query<{ t: string }>(`SELECT content AS t FROM memories WHERE status = 'active' ORDER BY id LIMIT 3`);
  const messages = await db.query<{ t: string }>(
    `SELECT content AS t FROM messages WHERE role IN ('user', 'assistant') AND length(content) > 20 ORDER BY seq LIMIT 40`,
  );
  const picked = [...memories.rows, ...messages.rows.filter((_, i) => i % 13 === 0)].map((r) => words(r.t)).filter((q) => q.length > 2);
  return [...new Set(picked)].slice(0, 6);
}

const hitKey = (h: RecallHit) => `${h.source}:${JSON.stringify(h.link)}`;

async function checkRecall(source: Database, target: Database): Promise<{ query: string; hits: number }[]> {
  const queries = await spotQueries(source);
  const a = new Recall({ db: source });
  const b = new Recall({ db: target });
  const checks: { query: string; hits: number }[] = [];
  for (const query of queries) {
    const there = (await a.search({ query, limit: 5 })).map(hitKey).sort();
    const here = (await b.search({ query, limit: 5 })).map(hitKey).sort();
    if (there.join('\n') !== here.join('\n')) {
      throw new ApiError(
        'internal',
        `Recall differs for "${query}": ${there.length} results from the source, ${here.length} from the copy, not the same ones.`,
      );
    }
    checks.push({ query, hits: there.length });
  }
  return checks;
}

export async function migrateStore(o: MigrateStoreOptions): Promise<MigrateStoreResult> {
  const started = Date.now();
  const log = o.log ?? (() => {});
  const from = describeEnd(o.from);
  const to = describeEnd(o.to);
  if (sameEnd(o.from, o.to)) throw new ApiError('invalid_input', `--from and --to are the same store (${from}).`);

  const source = await openSource(o.from);
  let target: Opened | undefined;
  let copied = false;
  try {
    await checkSourceSchema(source.db, from);
    log(`Reading ${from}`);
    target = await openTarget(o.to);
    log(`Writing ${to} (migrated, empty)`);
    const t = target;
    const tables = (await userTables(source.db)).filter((name) => name !== 'schema_migrations');
    const targetTables = new Set(await userTables(t.db));
    const missing = tables.filter((name) => !targetTables.has(name));
    if (missing.length) throw new ApiError('internal', `The target has no table ${missing.join(', ')} after its migrations.`);
    const order = await copyOrder(source.db, tables);

    const counts: { table: string; rows: number }[] = [];
    await source.db.transaction(async (stx) => {
      await stx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await t.db.transaction(async (ttx) => {
        try {
          await ttx.exec(`SET LOCAL session_replication_role = replica`);
        } catch (err) {
          throw new ApiError(
            'invalid_input',
            `The copy needs to write rows exactly as they are, with triggers off (session_replication_role), and ${to} refused it (${(err as Error).message}). ` +
              'Run it as the database owner with that right: a superuser, or after "GRANT SET ON PARAMETER session_replication_role TO <role>".',
          );
        }
        // What the migrations seeded (the graph's self and you, the embedding state) makes way for the source's rows.
        await ttx.exec(`TRUNCATE ${order.map(quote).join(', ')}`);
        for (const table of order) {
          const rows = await copyTable(stx, ttx, table, await copyColumns(stx, table));
          const expected = await countRows(stx, table);
          counts.push({ table, rows: expected });
          log(`  ${table}: ${fmt(rows)} ${rows === 1 ? 'row' : 'rows'}`);
        }
        await copySequences(stx, ttx);
      });
    });
    copied = true;
    await o.beforeVerify?.(t.db);

    log('Checking the copy…');
    const wrong: string[] = [];
    for (const { table, rows } of counts) {
      const n = await countRows(t.db, table);
      if (n !== rows) wrong.push(`${table}: ${fmt(rows)} in the source, ${fmt(n)} in the copy`);
    }
    if (wrong.length) throw new ApiError('internal', `The copy does not match the source (${wrong.join('; ')}).`);
    const recallChecks = await checkRecall(source.db, t.db);
    log(`  rows per table equal; recall gives the same results for ${recallChecks.length} ${recallChecks.length === 1 ? 'query' : 'queries'}`);

    const notes: string[] = [];
    const vectors = counts.find((c) => c.table === 'embeddings')?.rows ?? 0;
    const support = vectorSupport(t.db);
    if (vectors && !support.usable) {
      notes.push(
        `${to} has no pgvector (${support.reason}): the ${fmt(vectors)} stored vectors were copied as they are, but search by meaning is unavailable there until it is installed.`,
      );
    }
    if (o.to.kind === 'postgres' && o.from.kind === 'folder') {
      notes.push(
        `Attached images, the companion's pictures and your API keys are files and stay in ${from}: start Anima on the server with that folder, anima serve --data-dir ${from} --database ${to}`,
      );
    }
    if (o.to.kind === 'folder' && o.from.kind === 'postgres') {
      notes.push(
        `Attached images and the companion's pictures are files in the data folder Anima ran with on the server; if that was not ${to}, copy its attachments/ and companion/ folders (and secrets.json for the API keys) into ${to}.`,
      );
    }
    const rows = counts.reduce((sum, c) => sum + c.rows, 0);
    return { tables: counts, rows, recallChecks, notes, ms: Date.now() - started };
  } catch (err) {
    if (target) {
      await target.dropCopy().catch(() => {});
      const reason = err instanceof Error ? err.message : String(err);
      const what = copied ? 'The copy was removed' : 'Nothing was left there';
      throw new ApiError(err instanceof ApiError ? err.code : 'internal', `${reason} ${what} (${to} is empty again); ${from} was not changed.`);
    }
    throw err;
  } finally {
    await target?.db.close().catch(() => {});
    target?.lock?.release();
    await source.db.close().catch(() => {});
    source.lock?.release();
  }
}
