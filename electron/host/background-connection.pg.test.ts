// A host on PostgreSQL records the graph's mentions on a second connection of its own (db/postgres.ts
// background()): the indexer's batches — a whole history's after an import — no longer stand between
// the person's calls. The connection is made with the first recording and closed with the host.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestHost, tempDataDir, testPostgresUrl } from '../testing/host.js';
import { waitUntil } from '../testing/patience.js';

const skip = inject('postgresSkip');
if (skip) console.log(`background-connection.pg.test: skipped — ${skip}.`);

describe.skipIf(!!skip)("a host on PostgreSQL: the graph's recording on a connection of its own", () => {
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
  });

  afterAll(async () => {
    await admin.end();
  });

  /** This host's sessions on `database` (every connection of Anima's names itself "anima <pid>@…"). */
  async function sessions(database: string): Promise<number> {
    const r = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE $2`, [
      database,
      `anima ${process.pid}@%`,
    ]);
    return r.rows[0]!.n;
  }

  it('records mentions on a second session, and closes both with the host', async () => {
    const url = await testPostgresUrl();
    const database = new URL(url).pathname.slice(1);
    const host = await startTestHost({ dataDir: tempDataDir('anima-pgbg-'), database: url });
    try {
      await host.api['memories.create']({ type: 'world', content: 'Anna moved to Brno last spring to teach music.' });
      await waitUntil(async () => (await host.api['graph.search']({ query: 'Anna' })).length > 0, 'the memory’s mentions recorded');
      expect(await sessions(database)).toBe(2);
      // The person's calls go on answering on the host's own session.
      expect((await host.api['recall.search']({ query: 'Where did Anna move?', limit: 5 })).length).toBeGreaterThan(0);
    } finally {
      await host.close();
    }
    await waitUntil(async () => (await sessions(database)) === 0, 'both sessions gone after close');
  });
});
