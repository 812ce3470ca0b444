// The PostgreSQL driver against a real server (the run's throwaway cluster): rows look exactly like
// PGlite's, parameters are typed as PGlite types them, counts and transactions behave the same, one
// host per database (the advisory lock) with the same "already open" words, pg_trgm is there and
// pgvector is not (Debian's postgresql has none), so search by meaning says it is unavailable.
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { ApiError } from '../../shared/api.js';
import { waitUntil } from '../testing/patience.js';
import { rejection } from '../testing/rejection.js';
import { startTestHost, tempDataDir, testPostgresUrl } from '../testing/host.js';
import { backgroundConnection, engineOf, type Database } from './database.js';
import { openPostgres } from './open.js';
import { vectorSupport } from './pgvector.js';
import pg from 'pg';
import { checkDatabaseUrl, PostgresDatabase, redactDatabaseUrl } from './postgres.js';

const skip = inject('postgresSkip');
if (skip) console.log(`postgres.pg.test: skipped — ${skip}.`);

const PARITY_SQL = `SELECT 1::int8 AS i8, 9007199254740993::int8 AS big, 1.5::numeric AS num, '2024-01-02'::date AS d,
  '2024-01-02 03:04:05.678+00'::timestamptz AS ts, '2024-01-02 03:04'::timestamp AS tsn, '{"a":[1,2]}'::jsonb AS j,
  ARRAY[1,2]::int8[] AS a8, ARRAY[1.5, 2]::real[] AS ar, '\\x0102'::bytea AS b, 1.5::float4 AS f4, 'a'::text AS t, true AS bo,
  '1 day 02:00'::interval AS iv, 123::oid AS o, ARRAY['x', NULL, 'y z']::text[] AS ta, '12:00'::time AS tm, count(*) AS c,
  ARRAY['2024-01-01'::date] AS da, ARRAY['{"a":1}'::jsonb] AS ja, '(1,2)'::point AS pt, NULL::int AS nothing,
  to_tsvector('english', 'going to Kyoto') AS tv, ARRAY[true, false] AS bools, 2.5::float8 AS f8, 7::int2 AS i2`;

describe.skipIf(!!skip)('PostgreSQL as the store', () => {
  let pglite: PGlite;
  let db: Database;
  let url: string;

  beforeAll(async () => {
    pglite = await PGlite.create();
    url = await testPostgresUrl();
    db = await openPostgres(url);
  });

  afterAll(async () => {
    await db?.close();
    await pglite?.close();
  });

  it('parses every type as PGlite does', async () => {
    const [a, b] = await Promise.all([pglite.query(PARITY_SQL), db.query(PARITY_SQL)]);
    expect(b.rows).toEqual(a.rows);
    expect(b.fields).toEqual(a.fields);
    expect(b.rows[0]).toMatchObject({ i8: 1, big: 9007199254740993n, num: '1.5', b: new Uint8Array([1, 2]) });
    expect(engineOf(db)).toBe('postgres');
    expect(engineOf(pglite)).toBe('pglite');
  });

  it('types parameters as PGlite does: arrays to jsonb are JSON, to int8[] arrays; dates and bytes', async () => {
    const sql =
      'SELECT $1::jsonb AS j, $2::int8[] AS a, $3::text AS t, $4::timestamptz AS ts, $5::bytea AS b, $6::jsonb AS o, $7::text[] AS ta, $8::bool AS bo';
    const params = [[1, { x: 'y' }], [1, 2], 5, new Date(0), new Uint8Array([1, 255]), { a: [1, 2], big: 5n }, ['a"b', null, 'c,d'], 1];
    const [a, b] = await Promise.all([pglite.query(sql, params), db.query(sql, params)]);
    expect(b.rows).toEqual(a.rows);
    expect(b.rows[0]).toMatchObject({ j: [1, { x: 'y' }], a: [1, 2], o: { a: [1, 2], big: '5' }, ta: ['a"b', null, 'c,d'], bo: true });
  });

  it('counts affected rows and runs several statements in exec, as PGlite does', async () => {
    const run = async (d: Database) => {
      await d.exec('CREATE TEMP TABLE IF NOT EXISTS x (a int); DELETE FROM x');
      const ins = await d.query('INSERT INTO x VALUES (1), (2), (3)');
      const sel = await d.query('SELECT a FROM x ORDER BY a');
      const ex = await d.exec('UPDATE x SET a = a + 1 WHERE a > 1; SELECT count(*) AS n FROM x');
      const del = await d.query('DELETE FROM x WHERE a = $1', [99]);
      return [ins, sel, ex, del].map((r) => JSON.parse(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) as unknown);
    };
    expect(await run(db)).toEqual(await run(pglite));
  });

  it('commits a transaction that resolves, rolls back one that throws or asks to, and serialises calls', async () => {
    await db.exec('CREATE TEMP TABLE IF NOT EXISTS t (a int); DELETE FROM t');
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (1)');
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (2)');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    const kept = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (3)');
      await tx.rollback();
      return tx.closed;
    });
    expect(kept).toBe(true);
    // A query issued while a transaction runs waits for it: it sees the committed row, never a half.
    const inside = db.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (4)');
      await tx.query('INSERT INTO t VALUES (5)');
    });
    const meanwhile = db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
    await inside;
    expect((await meanwhile).rows[0]!.n).toBe(3);
    expect((await db.query<{ a: number }>('SELECT a FROM t ORDER BY a')).rows.map((r) => r.a)).toEqual([1, 4, 5]);
  });

  it('holds one host per database: a second gets the same "already open" words; after close, it opens', async () => {
    const err = await rejection(openPostgres(url));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('data_dir_locked');
    expect((err as ApiError).message).toMatch(/^Anima is already open with this database \(process \d+ on /);
    expect((err as ApiError).message).toContain(`at ${url})`);
    const other = await testPostgresUrl();
    const second = await openPostgres(other);
    await second.close();
    await expect(openPostgres(other).then((d) => d.close())).resolves.toBeUndefined();
  });

  it('has pg_trgm, and says search by meaning is unavailable where the server has no pgvector', async () => {
    const ext = await db.query<{ extname: string }>(`SELECT extname FROM pg_extension WHERE extname IN ('pg_trgm', 'vector') ORDER BY 1`);
    expect(ext.rows.map((r) => r.extname)).toEqual(['pg_trgm']);
    const support = vectorSupport(db);
    expect(support.usable).toBe(false);
    expect(support.problem).toMatch(/^Search by meaning is unavailable on this server/);
    expect((await db.query<{ sim: boolean }>(`SELECT 'going to Kyoto next week' % 'going to Kyoto' AS sim`)).rows[0]!.sim).toBe(true);
  });

  it('hides the password of a URL in every message, and refuses a URL that is not PostgreSQL', async () => {
    expect(redactDatabaseUrl('postgres://anima:s3cret@db.home:5432/anima?password=x')).toBe('postgres://anima:***@db.home:5432/anima?password=***');
    expect(() => checkDatabaseUrl('mysql://x@y/z')).toThrow(/PostgreSQL URL/);
    expect(() => checkDatabaseUrl('postgres://u@host')).toThrow(/names no database/);
    const refused = await rejection(openPostgres('postgres://anima:s3cret@127.0.0.1:1/anima'), 'invalid_input');
    expect(refused.message).toMatch(/^Could not connect to the PostgreSQL server at postgres:\/\/anima:\*\*\*@127\.0\.0\.1:1\/anima/);
    expect(refused.message).not.toContain('s3cret');
  });

  /** Ends a session from another connection, as a server restart or an administrator would; waits until it is gone. */
  async function terminate(d: Database): Promise<void> {
    const pid = (await d.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 600; i++) {
        const r = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        if (!r.rows.length) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await admin.end();
    }
  }

  /** The next call that gets through (one racing the drop may fail; a later one reconnects). */
  async function nextAnswer<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (attempt >= 2) throw err;
      }
    }
  }

  it('connects again after the server ended its session, with the host lock taken again', async () => {
    const where = await testPostgresUrl();
    const d = (await openPostgres(where)) as PostgresDatabase;
    try {
      await d.exec('CREATE TABLE kept (a int); INSERT INTO kept VALUES (1)');
      const before = (await d.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await terminate(d);
      const rows = await nextAnswer(() => d.query<{ a: number }>('SELECT a FROM kept'));
      expect(rows.rows).toEqual([{ a: 1 }]);
      expect(d.reconnects).toBe(1);
      expect((await d.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid).not.toBe(before);
      // The lock is held again: a second host is refused, and the session is UTC as before.
      expect((await rejection(openPostgres(where), 'data_dir_locked')).message).toMatch(/^Anima is already open with this database/);
      expect((await d.query<{ tz: string }>('SHOW TimeZone')).rows[0]).toEqual({ TimeZone: 'UTC' });
      await d.transaction(async (tx) => void (await tx.query('INSERT INTO kept VALUES (2)')));
      expect((await d.query<{ n: number }>('SELECT count(*)::int AS n FROM kept')).rows[0]!.n).toBe(2);
    } finally {
      await d.close();
    }
  });

  it('stops using the database, in words, when another Anima took it while the connection was down', async () => {
    const where = await testPostgresUrl();
    const d = await openPostgres(where);
    let other: Database | undefined;
    try {
      await terminate(d);
      other = await openPostgres(where);
      const err = await nextAnswer(() => rejection(d.query('SELECT 1'), 'data_dir_locked'));
      expect(err.message).toMatch(/was lost, and another Anima opened that database meanwhile/);
      // Refused from then on, even once the other has gone: this one must be started again.
      await other.close();
      other = undefined;
      await rejection(d.query('SELECT 1'), 'data_dir_locked');
    } finally {
      await other?.close();
      await d.close();
    }
  });

  it("runs the host's statements beside a background transaction, and never two transactions at once", async () => {
    const where = await testPostgresUrl();
    const d = await openPostgres(where);
    const bg = backgroundConnection(d);
    const admin = new pg.Client({ connectionString: where });
    await admin.connect();
    try {
      expect(bg).not.toBe(d);
      expect(backgroundConnection(d)).toBe(bg);
      await d.exec('CREATE TABLE steps (a int)');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => (opened = resolve));
      const background = bg.transaction(async (tx) => {
        await tx.query('INSERT INTO steps VALUES (1)');
        opened();
        await held;
      });
      await isOpen;
      // A single statement of the host's answers while the background transaction is open (and
      // does not see its uncommitted row): on one connection it would wait for it.
      expect((await d.query<{ n: number }>('SELECT count(*)::int AS n FROM steps')).rows[0]!.n).toBe(0);
      await d.query('INSERT INTO steps VALUES (2)');
      // A transaction of the host's waits for the background one to end.
      let hostDone = false;
      const host = d
        .transaction(async (tx) => void (await tx.query('INSERT INTO steps VALUES (3)')))
        .then(() => {
          hostDone = true;
        });
      await waitUntil(
        async () => (await admin.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows.length === 1,
        "the host's transaction waiting for the background one",
      );
      expect(hostDone).toBe(false);
      release();
      await background;
      await host;
      expect((await d.query<{ a: number }>('SELECT a FROM steps ORDER BY a')).rows).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    } finally {
      await admin.end();
      await d.close();
    }
    // Closed with the host: its session is gone.
    expect(bg.closed).toBe(true);
    await expect(bg.query('SELECT 1')).rejects.toThrow(/closed/);
  });

  it('writes nothing through the background connection while the host connection is down', async () => {
    const where = await testPostgresUrl();
    const d = (await openPostgres(where)) as PostgresDatabase;
    const bg = backgroundConnection(d);
    try {
      await bg.exec('CREATE TABLE notes (a int)');
      await terminate(d);
      await waitUntil(() => d.lost, 'the host connection to notice the drop');
      // Another Anima may hold the database now: the background connection refuses, in words.
      const refused = await rejection(bg.query('INSERT INTO notes VALUES (1)'), 'internal');
      expect(refused.message).toMatch(/was lost/);
      // Once the host has connected again (the lock is its own again), the background works again.
      await nextAnswer(() => d.query('SELECT 1'));
      await bg.query('INSERT INTO notes VALUES (2)');
      expect((await d.query<{ a: number }>('SELECT a FROM notes')).rows).toEqual([{ a: 2 }]);
    } finally {
      await d.close();
    }
  });

  it('writes nothing through a background connection whose login ended after the host connection was cut', async () => {
    // The server behind a loopback relay that can hold a new connection before it reaches the
    // server: the background connection's login is held while the host's connection is cut.
    const where = new URL(await testPostgresUrl());
    let holding = false;
    const held: (() => void)[] = [];
    const relay = net.createServer((socket) => {
      const connect = () => {
        const upstream = net.connect(Number(where.port), where.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      };
      if (holding) held.push(connect);
      else connect();
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayed = new URL(where);
    relayed.hostname = '127.0.0.1';
    relayed.port = String((relay.address() as net.AddressInfo).port);
    const d = (await openPostgres(relayed.toString())) as PostgresDatabase;
    try {
      await d.exec('CREATE TABLE notes (a int)');
      const bg = backgroundConnection(d);
      holding = true;
      const write = bg.query('INSERT INTO notes VALUES (1)').then(
        () => null,
        (err: Error) => err,
      );
      await waitUntil(() => held.length === 1, "the background connection's login to reach the relay");
      await terminate(d);
      await waitUntil(() => d.lost, 'the host connection to notice the drop');
      holding = false;
      held.shift()!();
      const refused = await write;
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused!.message).toMatch(/was lost/);
      await nextAnswer(() => d.query('SELECT 1'));
      expect((await d.query('SELECT a FROM notes')).rows).toEqual([]);
    } finally {
      await d.close();
      await new Promise((resolve) => relay.close(resolve));
    }
  });

  it('runs a host: a conversation written through the API is read back, and the data folder holds no db', async () => {
    const dataDir = tempDataDir('anima-pghost-');
    const host = await startTestHost({ dataDir, database: await testPostgresUrl() });
    try {
      const { id } = await host.api['conversations.create']({});
      expect((await host.api['conversations.list']({})).map((c) => c.id)).toContain(id);
      expect(fs.existsSync(`${dataDir}/db`)).toBe(false);
    } finally {
      await host.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
