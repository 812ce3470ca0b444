// A host on PostgreSQL whose connection dropped while another Anima opened the same database, wrote
// and closed (the advisory lock was free meanwhile): the first call after it makes the connection
// again, takes the lock again, and answers from the tables as they are now — recall's in-memory index
// is rebuilt and the settings read again (and announced) before that call is answered.
//
// Host A connects as a role of its own, so that while its session is gone the test can keep it from
// connecting again (NOLOGIN) until host B has come and gone; its background work cannot race B for the lock.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Settings } from '../../shared/api.js';
import { onLockRetaken, reconnectIfLost } from '../db/database.js';
import { openPostgres } from '../db/open.js';
import type { PostgresDatabase } from '../db/postgres.js';
import { nextEvent, startTestHost, tempDataDir, testPostgresUrl } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { rejection } from '../testing/rejection.js';
import type { Host } from './types.js';

const skip = inject('postgresSkip');
if (skip) console.log(`reconnect.pg.test: skipped — ${skip}.`);

describe.skipIf(!!skip)('a host on PostgreSQL after its connection dropped', () => {
  const role = `anima_a_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const dirs: string[] = [];
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} SUPERUSER LOGIN`);
  });

  afterAll(async () => {
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Ends the sessions of `role` on `database` and waits until the server has let them go. Each round
   * ends whatever is there: a session whose login was under way at the first round (the host's
   * background connection is made with its first call) shows up only after it.
   */
  async function terminateSessions(database: string): Promise<void> {
    const sessions = async () =>
      (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE usename = $1 AND datname = $2', [role, database])).rows;
    let left = await sessions();
    expect(left.length).toBeGreaterThan(0);
    const deadline = Date.now() + PATIENCE_MS;
    while (left.length) {
      if (Date.now() > deadline) throw new Error('the terminated session did not go');
      for (const { pid } of left) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await sessions();
    }
  }

  it('tells its listeners of the lock taken again before the call that reconnected is answered', async () => {
    const url = await testPostgresUrl();
    const asA = new URL(url);
    asA.username = role;
    const db = (await openPostgres(asA.toString())) as PostgresDatabase;
    try {
      const seen: string[] = [];
      const off = onLockRetaken(db, () => seen.push('lock taken again'));
      expect(reconnectIfLost(db)).toBeNull();
      await terminateSessions(new URL(url).pathname.slice(1));
      // The driver hears of the drop from the server's goodbye; nothing connects until a call.
      await expect.poll(() => db.lost).toBe(true);
      const answer = await db.query<{ one: number }>('SELECT 1 AS one');
      seen.push(`answered ${answer.rows[0]!.one}`);
      expect(seen).toEqual(['lock taken again', 'answered 1']);
      expect(db.lost).toBe(false);
      expect(reconnectIfLost(db)).toBeNull();
      off();
    } finally {
      await db.close();
    }
  });

  it('finds what another Anima wrote meanwhile: recall rebuilt, the settings read again, the lock held again', async () => {
    const url = await testPostgresUrl();
    const database = new URL(url).pathname.slice(1);
    const asA = new URL(url);
    asA.username = role;
    const dirA = tempDataDir('anima-pg-reconnect-a-');
    const dirB = tempDataDir('anima-pg-reconnect-b-');
    dirs.push(dirA, dirB);
    const logA: string[] = [];
    const a: Host = await startTestHost({ dataDir: dirA, database: asA.toString(), log: (_level, message) => logA.push(message) });
    let b: Host | undefined;
    try {
      await a.api['memories.create']({ type: 'world', content: 'Mara lives in Lisbon.' });
      // A's recall index is built and holds what A wrote.
      expect((await a.api['recall.search']({ query: 'Lisbon', sources: ['semantic'] })).map((h) => h.text)).toEqual(['Mara lives in Lisbon.']);
      expect((await a.api['settings.get']({})).sleepTime).toBe('02:00');

      // A's session ends; A cannot connect again until B has come and gone.
      await admin.query(`ALTER ROLE ${role} NOLOGIN`);
      await terminateSessions(database);

      // B opens the same database (the lock is free), writes and closes.
      b = await startTestHost({ dataDir: dirB, database: url });
      await b.api['memories.create']({ type: 'world', content: 'Ines, her sister, plays the cello in Porto.' });
      await b.api['settings.update']({ sleepTime: '03:30' });
      await b.close();
      b = undefined;
      await admin.query(`ALTER ROLE ${role} LOGIN`);

      // A's next calls connect again and answer from the tables as B left them.
      const announced = nextEvent(a, 'settings.changed', (s: Settings) => s.sleepTime === '03:30');
      const hits = await a.api['recall.search']({ query: 'cello Porto', sources: ['semantic'] });
      expect(hits.map((h) => h.text)).toEqual(['Ines, her sister, plays the cello in Porto.']);
      expect((await a.api['settings.get']({})).sleepTime).toBe('03:30');
      await announced;
      expect(logA.filter((m) => /made again: the recall index and the settings are read afresh/.test(m))).toHaveLength(1);
      // What A had before is still found, and A writes on.
      expect((await a.api['recall.search']({ query: 'Lisbon', sources: ['semantic'] })).map((h) => h.text)).toEqual(['Mara lives in Lisbon.']);
      await a.api['memories.create']({ type: 'preference', content: 'Mara prefers green tea.' });
      expect((await a.api['recall.search']({ query: 'green tea', sources: ['semantic'] })).map((h) => h.text)).toEqual(['Mara prefers green tea.']);

      // A holds the lock again: another Anima is refused.
      expect((await rejection(openPostgres(url), 'data_dir_locked')).message).toMatch(/^Anima is already open with this database/);
    } finally {
      await admin.query(`ALTER ROLE ${role} LOGIN`).catch(() => {});
      await b?.close();
      await a.close();
    }
  });
});
