// Settings → Data → Storage on a real host and the run's PostgreSQL cluster: the Test says what a
// server offers (version, pg_trgm, pgvector, what the database holds) and changes nothing there;
// choosing a server keeps the URL's password in the secret store, never in the choice file; the
// choice applies on the next start and back again; a refused server changes nothing; a chosen
// server that cannot be reached at start stops it in words that say how to go back.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createHost } from '../host/index.js';
import type { Host } from '../host/types.js';
import { SECRETS_FILE } from '../settings/secrets.js';
import { dbTemplate, tempDataDir, testPostgresUrl } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { freePort } from '../testing/postgres.js';
import { rejection } from '../testing/rejection.js';
import { DATABASE_CHOICE_FILE, probeDatabase, writeDatabaseChoice } from './choice.js';
import { OwnerOnlyFileSecretStore } from '../settings/secrets.js';

const skip = inject('postgresSkip');
if (skip) console.log(`choice.pg.test: skipped — ${skip}.`);

const SECRET = 'hunter2-not-for-logs';
const BOUND_MS = 4 * PATIENCE_MS;
const dirs: string[] = [];

async function newDatabase(withTable = false): Promise<string> {
  const name = `anima_choice_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: inject('postgresUrl') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(inject('postgresUrl'));
  u.pathname = `/${name}`;
  if (withTable) {
    const c = new pg.Client({ connectionString: u.toString() });
    await c.connect();
    await c.query('CREATE TABLE someone_elses (id int)');
    await c.end();
  }
  u.password = SECRET;
  return u.toString();
}

function open(dataDir: string): Promise<Host> {
  return createHost({ dataDir, template: dbTemplate(), detectLocalServers: false, log: () => {}, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!!skip)('Settings → Data → Storage', () => {
  it(
    'the Test says what a server offers, and changes nothing there',
    async () => {
      const empty = await newDatabase();
      const probe = await probeDatabase(empty);
      expect(probe).toMatchObject({ supported: true, trgm: 'available', contents: 'empty' });
      expect(probe.version).toMatch(/^1[5-9]/);
      // Debian's postgresql has no pgvector.
      expect(probe.vector).toBe('missing');
      expect(probe.where).not.toContain(SECRET);
      expect((await probeDatabase(empty)).trgm).toBe('available'); // nothing was created

      const used = await testPostgresUrl();
      expect(await probeDatabase(used)).toMatchObject({ trgm: 'installed', contents: 'anima' });
      expect((await probeDatabase(await newDatabase(true))).contents).toBe('other');

      const closed = `postgres://anima:${SECRET}@127.0.0.1:${await freePort()}/anima`;
      const err = await rejection(probeDatabase(closed), 'invalid_input');
      expect(err.message).toMatch(/^Could not connect to the PostgreSQL server at postgres:\/\/anima:\*\*\*@127\.0\.0\.1:\d+\/anima/);
      expect(err.message).not.toContain(SECRET);
    },
    BOUND_MS,
  );

  it(
    'choosing a server keeps its password with the keys, applies on the next start, and back again',
    async () => {
      const dataDir = tempDataDir('anima-choice-');
      dirs.push(dataDir);
      const server = await newDatabase();
      let host = await open(dataDir);
      try {
        expect(await host.api['storage.status']({})).toMatchObject({ engine: 'pglite', chosen: null, restartNeeded: false, fixedByCommandLine: false });
        await host.api['conversations.create']({ title: 'Kept in the folder' });

        const refused = await rejection(host.api['storage.choose']({ url: await newDatabase(true) }), 'invalid_input');
        expect(refused.message).toMatch(/holds tables that are not Anima's/);
        expect(fs.existsSync(path.join(dataDir, DATABASE_CHOICE_FILE))).toBe(false);

        const chosen = await host.api['storage.choose']({ url: server });
        expect(chosen).toMatchObject({ engine: 'pglite', chosen: { hasPassword: true }, restartNeeded: true });
        expect(chosen.chosen!.url).not.toContain(SECRET);
        const file = fs.readFileSync(path.join(dataDir, DATABASE_CHOICE_FILE), 'utf8');
        expect(file).not.toContain(SECRET);
        expect(fs.statSync(path.join(dataDir, DATABASE_CHOICE_FILE)).mode & 0o077).toBe(0);
        expect(await new OwnerOnlyFileSecretStore(dataDir).get('database.password')).toBe(SECRET);
        expect(fs.readFileSync(path.join(dataDir, SECRETS_FILE), 'utf8')).toContain(SECRET);
        // Settings shows the URL without its password; testing it uses the stored one.
        expect((await host.api['storage.test']({ url: chosen.chosen!.url })).contents).toBe('empty');
      } finally {
        await host.close();
      }

      host = await open(dataDir);
      try {
        const status = await host.api['storage.status']({});
        expect(status).toMatchObject({ engine: 'postgres', restartNeeded: false });
        expect(status.where).toContain('postgres://postgres:***@127.0.0.1');
        expect((await host.api['conversations.list']({})).some((c) => c.title === 'Kept in the folder')).toBe(false);
        await host.api['conversations.create']({ title: 'Kept on the server' });
        expect(await host.api['storage.choose']({ url: null })).toMatchObject({ engine: 'postgres', chosen: null, restartNeeded: true });
        expect(await new OwnerOnlyFileSecretStore(dataDir).get('database.password')).toBeUndefined();
      } finally {
        await host.close();
      }

      host = await open(dataDir);
      try {
        expect(await host.api['storage.status']({})).toMatchObject({ engine: 'pglite', restartNeeded: false });
        const titles = (await host.api['conversations.list']({})).map((c) => c.title);
        expect(titles).toContain('Kept in the folder');
        expect(titles).not.toContain('Kept on the server');
      } finally {
        await host.close();
      }
    },
    BOUND_MS,
  );

  it(
    'a chosen server that cannot be reached stops the start in words that say how to go back',
    async () => {
      const dataDir = tempDataDir('anima-choice-gone-');
      dirs.push(dataDir);
      const secrets = new OwnerOnlyFileSecretStore(dataDir);
      await writeDatabaseChoice(dataDir, secrets, `postgres://anima:${SECRET}@127.0.0.1:${await freePort()}/anima`);
      const err = await rejection(open(dataDir));
      expect(err.message).toMatch(/Could not connect to the PostgreSQL server/);
      expect(err.message).toContain(`remove ${path.join(dataDir, DATABASE_CHOICE_FILE)} and start Anima again`);
      expect(err.message).not.toContain(SECRET);
      // The lock was let go: after removing the file, the folder opens.
      fs.rmSync(path.join(dataDir, DATABASE_CHOICE_FILE));
      const host = await open(dataDir);
      expect((await host.api['storage.status']({})).engine).toBe('pglite');
      await host.close();
    },
    BOUND_MS,
  );
});
