// The PostgreSQL driver (node-postgres): the same Database as PGlite, on a server.
//
// One connection, used one call at a time, as PGlite is: a transaction holds the database alone and
// every other call waits, so the rooms' read-then-write steps behave exactly as on PGlite. That
// connection also holds the session's advisory lock — one host per database, so the in-memory recall
// index stays exact — which the server drops by itself when the connection goes.
//
// Work in the background (the graph's backfill of a whole history) gets a second connection of the
// same host (background()): on one connection each of its batches held every call of the person's
// behind it — recall through the host took 5× PGlite's time while the graph backfilled. Transactions
// still never overlap: once a host has a background connection, every transaction on either takes a
// transaction-level advisory lock as its first statement, so a transaction holds the database alone
// as before, and only the single statements outside transactions (a recall's reads, a message's
// insert) run beside a background transaction. No deadlock can come of it: a transaction waiting for
// that lock holds nothing yet. The background connection takes no host lock of its own and refuses
// every call while the host's connection is down (another Anima may hold the database then).
//
// A dropped connection (the server restarted, the backend was terminated): the call in flight fails,
// and the next call connects again (retrying while the server comes back, up to RECONNECT_MS) and
// takes the lock again before it runs. If another Anima took the database meanwhile, this one is
// refused from then on, in words: it must be started again. If the lock was free meanwhile, another
// Anima may have opened the database, written and closed: whoever keeps what it read in memory hears
// of every lock taken again (onLockRetaken, before the call that made the connection runs) and reads
// afresh; reconnectIfLost lets the host make the connection again before it answers a call.
//
// Rows look exactly like PGlite's: PGlite's own parsers and array parser are used for every type
// (int8 is a number when it fits and a BigInt otherwise, numeric a string, date and timestamp a
// Date, bytea a Uint8Array, interval and point as text). Parameters are turned into text as PGlite
// does, by the parameter's type: a JS array to a jsonb parameter is JSON, to an int8[] an array —
// the server is asked the types of a statement's parameters once, the first time an array or an
// object is passed to it. The session's time zone is UTC, as PGlite's.
import os from 'node:os';
import pg from 'pg';
import { types as pgliteTypes } from '@electric-sql/pglite';
import { ApiError } from '../../shared/api.js';
import type { Database, QueryResult, Transaction } from './database.js';

/** The session-level advisory lock one Anima host holds on its database: 'anima' in ASCII, 0x616e696d61. */
const HOST_LOCK_KEY = '418464230753';
/** The transaction-level advisory lock that keeps a host's transactions from overlapping across its two connections: 'animt', 0x616e696d74. */
const TRANSACTION_LOCK_KEY = '418464230772';
const MIN_SERVER_VERSION = 150000;
const DESCRIBE_CACHE_MAX = 2000;
const AFFECTING = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);
/** How long the next call after a dropped connection keeps trying to connect again (a server restart). */
const RECONNECT_MS = 20_000;

type Parser = (value: string, type?: number) => unknown;
type Serializer = (value: unknown) => string;
const parsers = pgliteTypes.parsers as Record<number, Parser>;
const serializers = pgliteTypes.serializers as Record<number, Serializer>;

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The URL with its password (and any password parameter) replaced: safe for a log line or an error. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass|secret|key/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return 'postgres://… (not a valid URL)';
  }
}

/** Checks a --database value: a postgres:// URL with a database name. Throws invalid_input in words. */
export function checkDatabaseUrl(url: string): void {
  let u: URL;
  try {
    if (!isPostgresUrl(url)) throw new Error('scheme');
    u = new URL(url);
  } catch {
    throw new ApiError('invalid_input', `The database must be a PostgreSQL URL such as postgres://user@host:5432/anima (got ${redactDatabaseUrl(url)}).`);
  }
  if (!u.hostname && !u.searchParams.get('host')) throw new ApiError('invalid_input', `The database URL ${redactDatabaseUrl(url)} names no server.`);
  if (u.pathname.replace(/^\//, '') === '') throw new ApiError('invalid_input', `The database URL ${redactDatabaseUrl(url)} names no database (…:5432/anima).`);
}

interface Holder {
  pid: string;
  hostname: string;
  startedAt: string;
}

function applicationName(): string {
  // At most 63 bytes (NAMEDATALEN): the holder's pid, host and start, read back by a second host.
  return `anima ${process.pid}@${os.hostname().slice(0, 24)} ${new Date().toISOString().slice(0, 19)}Z`;
}

function parseHolder(name: string | null | undefined): Holder | undefined {
  const m = /^anima (\d+)@(\S*) (\S+)$/.exec(name ?? '');
  return m ? { pid: m[1]!, hostname: m[2]!, startedAt: m[3]! } : undefined;
}

/** What a server's vector support is, in words for the log and Settings. */
export interface ServerVectors {
  usable: boolean;
  reason: string;
  problem?: string;
}

export class PostgresDatabase implements Database {
  readonly engine = 'postgres' as const;
  #client: pg.Client;
  readonly #url: string;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  #lost: Error | undefined;
  /** Set when the lock could not be taken again after a dropped connection: every call is refused with it. */
  #gone: ApiError | undefined;
  /** How many times the connection was made again (for the log and the tests). */
  reconnects = 0;
  readonly #retaken = new Set<() => void>();
  /** Array type → its element type (pg_type), read at open as PGlite does. */
  #arrays = new Map<number, number>();
  #paramTypes = new Map<string, number[]>();
  vectors: ServerVectors = { usable: false, reason: 'not checked yet' };
  readonly where: string;
  /** Set on a background connection: the host connection it works for (see background()). */
  readonly #host: PostgresDatabase | null;
  #background: PostgresDatabase | null = null;

  private constructor(url: string, where: string, host: PostgresDatabase | null = null) {
    this.where = where;
    this.#url = url;
    this.#host = host;
    this.#client = this.#newClient();
    // A background connection connects with its first call.
    if (host) this.#lost = new Error('not connected yet');
  }

  /**
   * This host's second connection, for background work whose transactions must not hold up the
   * person's calls (made with its first call, closed with the host's). Its transactions and the
   * host's never overlap (TRANSACTION_LOCK_KEY); its single statements and the host's do.
   */
  background(): PostgresDatabase {
    if (this.#host) return this;
    this.#background ??= new PostgresDatabase(this.#url, this.where, this);
    return this.#background;
  }

  #newClient(): pg.Client {
    const client = new pg.Client({
      connectionString: this.#url,
      application_name: applicationName(),
      connectionTimeoutMillis: 30_000,
      types: { getTypeParser: ((oid: number) => (value: string) => this.parse(value, oid)) as never },
    });
    // A dropped connection (and with it the lock, which the server let go): the next call connects again.
    client.on('error', (err) => {
      if (client === this.#client) this.#lost ??= err;
    });
    client.on('end', () => {
      if (client === this.#client && !this.#closed) this.#lost ??= new Error('the connection ended');
    });
    return client;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Called each time a dropped connection was made again and the host lock taken again, before the
   * call that made it runs. The lock was free in between, so another Anima may have opened this
   * database, written and closed: what was read into memory may be stale. Returns the unsubscribe.
   */
  onLockRetaken(listener: () => void): () => void {
    this.#retaken.add(listener);
    return () => this.#retaken.delete(listener);
  }

  /** Whether the connection dropped and has not been made again yet (the next call makes it). */
  get lost(): boolean {
    return this.#lost !== undefined && !this.#gone;
  }

  /** Null while the connection is up; after a drop, the reconnection (the lock taken again, the listeners told) the next call would make. */
  reconnectIfLost(): Promise<void> | null {
    if (!this.#lost || this.#closed || this.#gone) return null;
    return this.#exclusive(async () => {});
  }

  /**
   * Connects, checks the server, takes the host lock, loads the extensions. The caller migrates.
   * `asIs`: creates no extension (a copy's source is read, never changed).
   */
  static async open(url: string, options: { asIs?: boolean } = {}): Promise<PostgresDatabase> {
    checkDatabaseUrl(url);
    const where = redactDatabaseUrl(url);
    const db = new PostgresDatabase(url, where);
    const client = db.#client;
    try {
      await client.connect();
    } catch (err) {
      throw new ApiError('invalid_input', `Could not connect to the PostgreSQL server at ${where}: ${(err as Error).message}`);
    }
    try {
      await db.#setUp(options.asIs === true);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    return db;
  }

  /**
   * After a dropped connection: a new one, the session set up and the host lock taken again, retried
   * while the server comes back. A background connection takes no lock: it connects and reads the
   * array types.
   */
  async #reconnect(): Promise<void> {
    const cause = this.#lost;
    const deadline = Date.now() + RECONNECT_MS;
    for (let wait = 250; ; wait = Math.min(wait * 2, 2000)) {
      const client = this.#newClient();
      try {
        await client.connect();
        await client.query(`SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'`);
        if (this.#host) {
          this.#client = client;
          this.#lost = undefined;
          await this.refreshArrayTypes();
          return;
        }
        const lock = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${HOST_LOCK_KEY}) AS ok`);
        if (!lock.rows[0]?.ok) {
          await client.end().catch(() => {});
          this.#gone = new ApiError(
            'data_dir_locked',
            `The connection to the PostgreSQL server at ${this.where} was lost, and another Anima opened that database meanwhile. ` +
              'This Anima stopped using it so the two do not write over each other: close one, then start Anima again.',
          );
          throw this.#gone;
        }
        this.#client = client;
        this.#lost = undefined;
        this.reconnects++;
        // The lock was free for a while: another Anima may have written. Listeners only mark what they
        // hold as stale (they run inside this call's turn; a query of theirs waits behind it).
        for (const listener of [...this.#retaken]) {
          try {
            listener();
          } catch {
            // One listener's failure must not keep the connection from being used.
          }
        }
        return;
      } catch (err) {
        await client.end().catch(() => {});
        if (this.#gone) throw this.#gone;
        if (Date.now() + wait > deadline) {
          this.#lost = cause ?? (err as Error);
          throw this.#lostError();
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  async #setUp(asIs: boolean): Promise<void> {
    const c = this.#client;
    const version = Number((await c.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v ?? 0);
    if (version < MIN_SERVER_VERSION) {
      const shown = (await c.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? String(version);
      throw new ApiError('invalid_input', `Anima needs PostgreSQL 15 or newer; the server at ${this.where} is ${shown}.`);
    }
    await c.query(`SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'`);
    const lock = await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${HOST_LOCK_KEY}) AS ok`);
    if (!lock.rows[0]?.ok) {
      const holder = await c
        .query<{ name: string | null }>(
          `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND ((l.classid::bigint << 32) | l.objid::bigint) = ${HOST_LOCK_KEY} LIMIT 1`,
        )
        .then((r) => parseHolder(r.rows[0]?.name))
        .catch(() => undefined);
      const who = holder ? `process ${holder.pid} on ${holder.hostname}, since ${holder.startedAt}` : 'another Anima';
      throw new ApiError(
        'data_dir_locked',
        `Anima is already open with this database (${who}, at ${this.where}). Close the other Anima first, or start with a different --database.`,
      );
    }
    try {
      if (!asIs) await c.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    } catch (err) {
      throw new ApiError(
        'invalid_input',
        `Anima needs the pg_trgm extension in the database at ${this.where} and could not create it (${(err as Error).message}). ` +
          'Install PostgreSQL\'s contrib extensions, or ask the server\'s administrator to run "CREATE EXTENSION pg_trgm" in that database.',
      );
    }
    this.vectors = await this.#loadVectors(asIs);
    await this.refreshArrayTypes();
  }

  async #loadVectors(asIs: boolean): Promise<ServerVectors> {
    const c = this.#client;
    const installed = await c.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`);
    if (installed.rows.length) return { usable: true, reason: '' };
    const available = await c.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (!available.rows.length) {
      return {
        usable: false,
        reason: 'the PostgreSQL server has no pgvector extension installed',
        problem: 'Search by meaning is unavailable on this server: its PostgreSQL has no pgvector extension (install it, then start Anima again).',
      };
    }
    if (asIs) return { usable: false, reason: 'pgvector is not created in this database (opened as it is)' };
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS vector');
      return { usable: true, reason: '' };
    } catch (err) {
      const reason = `the pgvector extension could not be created in this database (${(err as Error).message})`;
      return { usable: false, reason, problem: `Search by meaning is unavailable on this server: ${reason}.` };
    }
  }

  /** Reads the array types from pg_type (as PGlite does at start): arrays of every type parse element by element. */
  async refreshArrayTypes(): Promise<void> {
    const r = await this.#client.query<{ oid: number; typarray: number }>(
      `SELECT b.oid::int AS oid, b.typarray::int AS typarray FROM pg_catalog.pg_type a
         JOIN pg_catalog.pg_type b ON b.oid = a.typelem WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray`,
    );
    this.#arrays = new Map(r.rows.map((row) => [Number(row.typarray), Number(row.oid)]));
  }

  private parse(value: string, oid: number): unknown {
    const element = this.#arrays.get(oid);
    if (element !== undefined) return pgliteTypes.arrayParser(value, (v: string) => this.parse(v, element), oid);
    const parser = parsers[oid];
    return parser ? parser(value, oid) : value;
  }

  #serialize(value: unknown, oid: number | undefined): unknown {
    if (value === null || value === undefined) return null;
    if (oid !== undefined) {
      const element = this.#arrays.get(oid);
      if (element !== undefined && Array.isArray(value)) {
        return pgliteTypes.arraySerializer(value, (v: unknown) => String(this.#serialize(v, element)), oid);
      }
      const serializer = serializers[oid];
      if (serializer) return serializer(value);
    }
    if (value instanceof Date) return value.toISOString();
    if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    if (typeof value === 'object') return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    return String(value as string | number | boolean | bigint);
  }

  /** The server's types for a statement's parameters, asked once per statement text. */
  async #describe(sql: string): Promise<number[]> {
    const known = this.#paramTypes.get(sql);
    if (known) return known;
    const c = this.#client;
    await c.query(`PREPARE anima_describe AS ${sql}`);
    try {
      const r = await c.query<{ t: string | null }>(
        `SELECT array_to_string(parameter_types::oid[], ',') AS t FROM pg_prepared_statements WHERE name = 'anima_describe'`,
      );
      const types = (r.rows[0]?.t ?? '').split(',').filter(Boolean).map(Number);
      if (this.#paramTypes.size >= DESCRIBE_CACHE_MAX) this.#paramTypes.clear();
      this.#paramTypes.set(sql, types);
      return types;
    } finally {
      await c.query('DEALLOCATE anima_describe');
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      if (this.#closed) throw new Error('The database is closed.');
      this.#checkHostHolds();
      if (this.#gone) throw this.#gone;
      if (this.#lost) {
        await this.#reconnect();
        // Logging in takes time, retried while the server comes back: the host's connection may
        // have been cut meanwhile.
        this.#checkHostHolds();
      }
      return fn();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /** On a background connection: throws unless the host's connection is up (else this host may no longer hold the database, and nothing is written). */
  #checkHostHolds(): void {
    const host = this.#host;
    if (!host) return;
    if (host.#closed) throw new Error('The database is closed.');
    if (host.#gone) throw host.#gone;
    if (host.#lost) throw host.#lostError();
  }

  #lostError(): ApiError {
    return new ApiError(
      'internal',
      `The connection to the PostgreSQL server at ${this.where} was lost (${this.#lost?.message ?? 'closed'}) and could not be made again yet; Anima tries again with the next step.`,
    );
  }

  async #query<T>(sql: string, params: unknown[] = []): Promise<QueryResult<T>> {
    let values: unknown[] = params;
    if (params.length) {
      const needsTypes = params.some((p) => p !== null && typeof p === 'object' && !(p instanceof Date) && !(p instanceof Uint8Array));
      const types = needsTypes ? await this.#describe(sql) : [];
      values = params.map((p, i) => this.#serialize(p, types[i]));
    }
    const r = await this.#client.query({ text: sql, values, queryMode: 'extended' } as pg.QueryConfig);
    return toResult<T>(r, { affected: 0 });
  }

  async #exec(sql: string): Promise<QueryResult[]> {
    const r = (await this.#client.query(sql)) as pg.QueryResult | pg.QueryResult[];
    const all = Array.isArray(r) ? r : [r];
    const acc = { affected: 0 };
    return all.map((one) => toResult(one, acc));
  }

  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    return this.#exclusive(() => this.#query<T>(sql, params));
  }

  exec(sql: string): Promise<QueryResult[]> {
    return this.#exclusive(() => this.#exec(sql));
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#exclusive(async () => {
      await this.#client.query('BEGIN');
      if (this.#host || this.#background) await this.#client.query(`SELECT pg_advisory_xact_lock(${TRANSACTION_LOCK_KEY})`);
      let closed = false;
      const open = () => {
        if (closed) throw new Error('Transaction is closed');
      };
      const tx: Transaction = {
        query: <R>(sql: string, params?: unknown[]) => (open(), this.#query<R>(sql, params)),
        exec: (sql: string) => (open(), this.#exec(sql)),
        rollback: async () => {
          open();
          await this.#client.query('ROLLBACK');
          closed = true;
        },
        get closed() {
          return closed;
        },
      };
      try {
        const result = await fn(tx);
        if (!closed) await this.#client.query('COMMIT');
        return result;
      } catch (err) {
        if (!closed && !this.#lost) await this.#client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        closed = true;
      }
    });
  }

  /** Waits for the calls before it (and the background connection's), then ends the connection (the server drops the host lock with it). */
  close(): Promise<void> {
    const run = this.#queue.then(async () => {
      if (this.#closed) return;
      await this.#background?.close();
      this.#closed = true;
      if (this.#host) {
        // Never connected: nothing to end.
        if (!this.#lost) await this.#client.end().catch(() => {});
        return;
      }
      if (!this.#lost) await this.#client.query(`SELECT pg_advisory_unlock(${HOST_LOCK_KEY})`).catch(() => {});
      await this.#client.end().catch(() => {});
    });
    this.#queue = run.catch(() => {});
    return run;
  }
}

function toResult<T>(r: pg.QueryResult, acc: { affected: number }): QueryResult<T> {
  const command = r.command;
  const count = typeof r.rowCount === 'number' ? r.rowCount : undefined;
  if (command && AFFECTING.has(command)) acc.affected += count ?? 0;
  return {
    rows: r.rows as T[],
    fields: (r.fields ?? []).map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    command,
    affectedRows: acc.affected,
    ...(count === undefined ? {} : { rowCount: count }),
  };
}
