// Test helpers: a real host on a real on-disk PGlite, started from the migrated template — or, when
// the run says ANIMA_TEST_ENGINE=postgres (vitest.postgres.config.ts), on a fresh database of the
// run's PostgreSQL cluster (testing/postgres.ts): the same tests, the other engine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import type { Engine } from '../db/database.js';
import { openDatabase, type Database } from '../db/open.js';
import { createHost } from '../host/index.js';
import { createTestDatabase } from './postgres.js';
import type { ApiEventName } from '../../shared/api.js';
import type { Host, HostOptions } from '../host/types.js';
import { PATIENCE_MS } from './patience.js';

export function tempDataDir(prefix = 'anima-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function dbTemplate(): Blob {
  return new Blob([fs.readFileSync(inject('dbTemplatePath'))]);
}

/** The engine this run's tests use: PGlite, unless ANIMA_TEST_ENGINE=postgres. */
export const TEST_ENGINE: Engine = process.env.ANIMA_TEST_ENGINE === 'postgres' ? 'postgres' : 'pglite';

/** A fresh migrated database on the run's PostgreSQL cluster (its URL); throws, saying why, where there is none. */
export async function testPostgresUrl(template?: string): Promise<string> {
  const admin = inject('postgresUrl');
  if (!admin) throw new Error(`No PostgreSQL for this test run: ${inject('postgresSkip')}.`);
  return createTestDatabase(admin, template);
}

/** Folders copied from another test folder (fs.cpSync): on PostgreSQL their database is a copy of the source's, made when first opened. */
const copiedFrom = new Map<string, string>();

/** Says that `to` is a copy of the test folder `from`, so that on PostgreSQL it opens a copy of that folder's database. */
export function copiedTestData(from: string, to: string): void {
  if (TEST_ENGINE === 'postgres') copiedFrom.set(to, from);
}

/** On PostgreSQL, each data folder's database: a test that starts a host on the same folder again finds its data. */
const databaseOf = new Map<string, string>();

/**
 * Opens a test's migrated database on this run's engine: PGlite in `dataDir` (from the template when
 * new), or on PostgreSQL the database of that data folder (a new one the first time) — so opening the
 * folder again after its host closed finds the same data on either engine.
 */
export async function openTestDatabase(dataDir: string): Promise<Database> {
  if (TEST_ENGINE === 'pglite') return openDatabase(dataDir, { template: dbTemplate() });
  return openDatabase(dataDir, { database: await testDatabaseFor(dataDir) });
}

async function testDatabaseFor(dataDir: string): Promise<string> {
  const known = databaseOf.get(dataDir);
  if (known) return known;
  const source = copiedFrom.get(dataDir);
  const sourceUrl = source === undefined ? undefined : await testDatabaseFor(source);
  const url = await testPostgresUrl(sourceUrl === undefined ? undefined : new URL(sourceUrl).pathname.slice(1));
  databaseOf.set(dataDir, url);
  return url;
}

export async function startTestHost(options: Partial<HostOptions> = {}): Promise<Host> {
  const dataDir = options.dataDir ?? tempDataDir();
  const database = options.database ?? (TEST_ENGINE === 'postgres' ? await testDatabaseFor(dataDir) : undefined);
  return createHost({
    dataDir,
    template: dbTemplate(),
    detectLocalServers: false,
    log: () => {},
    ...options,
    ...(database ? { database } : {}),
  });
}

/** Resolves with the first event of this name that matches; rejects after `timeoutMs` (a bound for hangs). */
export function nextEvent<E extends ApiEventName>(
  host: Host,
  name: E,
  match: (payload: never) => boolean = () => true,
  timeoutMs = PATIENCE_MS,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${name} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = host.on((event, payload) => {
      if (event === name && match(payload as never)) {
        clearTimeout(timer);
        off();
        resolve(payload);
      }
    });
  });
}
