// What the rest of Anima uses of a database: queries, multi-statement exec, transactions, close.
// Two drivers satisfy it: PGlite itself (embedded, on disk; unchanged and unwrapped, so it costs
// nothing) and node-postgres (db/postgres.ts: a PostgreSQL server, its rows parsed to look exactly
// like PGlite's). What differs between them — dump and restore, the extensions, the lock — is asked
// of this folder (engineOf, asPGlite, vectorSupport), never decided in a room.
import type { PGlite } from '@electric-sql/pglite';
import { ApiError } from '../../shared/api.js';

export interface QueryResult<T = Record<string, unknown>> {
  rows: T[];
  /** Rows an INSERT, UPDATE, DELETE or MERGE changed; 0 for other statements (cumulative in an exec). */
  affectedRows?: number;
  /** The command tag's count, per statement (the rows a SELECT returned). */
  rowCount?: number;
  command?: string;
  fields: { name: string; dataTypeID: number }[];
}

export interface Queryable {
  /** One statement with $1… parameters, typed by the server (a JS array to a jsonb parameter is JSON). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Several statements, no parameters: one result per statement. */
  exec(sql: string): Promise<QueryResult[]>;
}

export interface Transaction extends Queryable {
  /** Rolls back now; the transaction's function still returns what it returns. */
  rollback(): Promise<void>;
  readonly closed: boolean;
}

export interface Database extends Queryable {
  /** Runs `fn` in a transaction holding the database alone (every other call waits), committed when it resolves. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly closed: boolean;
  /** Set by the PostgreSQL driver only: PGlite is used as it is. */
  readonly engine?: 'postgres';
  /** PostgreSQL only (db/postgres.ts): see onLockRetaken below. */
  onLockRetaken?(listener: () => void): () => void;
  /** PostgreSQL only: null while connected; after a drop, the reconnection. */
  reconnectIfLost?(): Promise<void> | null;
  /** PostgreSQL only: see backgroundConnection below. */
  background?(): Database;
}

export type Engine = 'pglite' | 'postgres';

/**
 * `listener` runs whenever the connection to a PostgreSQL server was made again and the host lock
 * taken again: the lock was free meanwhile, so another Anima may have opened the database, written
 * and closed, and what was read into memory must be read afresh. It runs before the call that made
 * the connection, and must only mark things stale (a query of its own waits behind that call).
 * Never on PGlite (its folder lock is held for as long as it is open). Returns the unsubscribe.
 */
export function onLockRetaken(db: Database, listener: () => void): () => void {
  return db.onLockRetaken?.(listener) ?? (() => {});
}

/** Null when the database is connected (always on PGlite); otherwise the reconnection, with onLockRetaken's listeners told. */
export function reconnectIfLost(db: Database): Promise<void> | null {
  return db.reconnectIfLost?.() ?? null;
}

export function engineOf(db: Database): Engine {
  return db.engine === 'postgres' ? 'postgres' : 'pglite';
}

/**
 * The PGlite under this database, for what only the embedded engine can do (dump its folder, clone,
 * PGlite's pg_dump); on PostgreSQL `what` is refused in words.
 */
export function asPGlite(db: Database, what: string): PGlite {
  if (engineOf(db) === 'pglite') return db as unknown as PGlite;
  throw new ApiError('conflict', `${what} is not available when Anima stores its data on a PostgreSQL server: use the server's own backups (pg_dump) there.`);
}

/**
 * Where background work (the graph's mention recording) runs so that its transactions do not hold up
 * the person's calls: on PostgreSQL a second connection of this host, whose transactions never
 * overlap the host's but whose batches no longer stand between the person's single statements
 * (db/postgres.ts); on PGlite the database itself — it has one connection, in this process.
 * Closed with `db`.
 */
export function backgroundConnection(db: Database): Database {
  return db.background?.() ?? db;
}
