// Opens the companion's database, migrated: PGlite on disk (the default), with pg_trgm for fuzzy
// search and, where its build matches this PGlite (db/pgvector.ts), pgvector for the embeddings; or,
// given a postgres:// URL, a PostgreSQL server through db/postgres.ts (the same migrations).
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { finishInterruptedSwitch } from '../backups/switch.js';
import { asPGlite, engineOf, type Database } from './database.js';
import { pgvectorSupport } from './pgvector.js';
import { migrate } from './migrate.js';
import { PostgresDatabase } from './postgres.js';

export type { Database, Transaction } from './database.js';

export interface OpenOptions {
  /** A dumped data dir (from dumpTemplate) to start from instead of initdb when the folder is new. */
  template?: Blob | File;
  /** Runs after the files are open and before the migrations (a restore checks the copy really loaded). */
  beforeMigrate?: (db: Database) => Promise<void>;
  /** A postgres:// URL: the data lives on that PostgreSQL server instead of `<dataDir>/db`. */
  database?: string;
  /** Open an existing folder as it is: no extension created, no migration (a copy's source is read, never changed). */
  asIs?: boolean;
}

export function databaseDir(dataDir: string): string {
  return path.join(dataDir, 'db');
}

function isNewDatabase(dir: string): boolean {
  return !fs.existsSync(path.join(dir, 'PG_VERSION'));
}

export async function openDatabase(dataDir: string, options: OpenOptions = {}): Promise<Database> {
  // A restore killed between its renames is finished (or undone) before anything opens `db`.
  finishInterruptedSwitch(dataDir);
  if (options.database) return openPostgres(options.database, options);
  return openDatabaseDir(databaseDir(dataDir), options);
}

/** Opens (and migrates) a PostgreSQL database, holding its host lock (db/postgres.ts). */
export async function openPostgres(url: string, options: Pick<OpenOptions, 'beforeMigrate'> = {}): Promise<Database> {
  const db = await PostgresDatabase.open(url);
  try {
    await options.beforeMigrate?.(db);
    await migrate(db);
    await db.refreshArrayTypes();
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

/**
 * The WAL a PGlite folder keeps. PGlite runs Postgres single-user: no checkpointer, so the WAL grows
 * through a bulk load whatever max_wal_size says, and a checkpoint (CHECKPOINT, or the one close
 * makes) keeps up to max_wal_size of old segments for reuse. At the default 1 GB a 100k-message folder
 * kept 705 MB of WAL after a restart; at 32 MB it keeps two segments (docs/recall-tuning.md, "Size
 * and speed at scale"). Nothing is slower: without a checkpointer no limit triggers a checkpoint.
 */
const WAL_LIMITS = ['-c', 'max_wal_size=32MB', '-c', 'min_wal_size=32MB'];

/** After bulk work (an import): a checkpoint, so the WAL it wrote goes now rather than at close. PGlite only (a server checkpoints itself). */
export async function checkpoint(db: Database): Promise<void> {
  if (engineOf(db) === 'pglite' && !db.closed) await db.exec('CHECKPOINT');
}

/** Opens (and migrates) a PGlite folder anywhere: the data folder's `db`, or a restore's new folder. */
export async function openDatabaseDir(dir: string, options: OpenOptions = {}): Promise<Database> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fresh = isNewDatabase(dir);
  const vectors = pgvectorSupport().usable;
  const db = await PGlite.create({
    dataDir: dir,
    extensions: vectors ? { pg_trgm, vector } : { pg_trgm },
    startParams: [...PGlite.defaultStartParams, ...WAL_LIMITS],
    ...(fresh && options.template ? { loadDataDir: options.template } : {}),
  });
  if (options.asIs) return db;
  try {
    await options.beforeMigrate?.(db);
    await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm${vectors ? '; CREATE EXTENSION IF NOT EXISTS vector' : ''}`);
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

/** A gzipped tarball of a freshly migrated database, for fast test setup and first start. */
export async function dumpTemplate(db: Database): Promise<Blob> {
  return (await asPGlite(db, 'A template').dumpDataDir('gzip')) as Blob;
}
