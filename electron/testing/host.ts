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
export async function testPostgresUrl(): Promise<string> {
  const admin = inject('postgresUrl');
  if (!admin) throw new Error(`No PostgreSQL for this test run: ${inject('postgresSkip')}.`);
  return createTestDatabase(admin);
}

/** Where a test's database comes from on this run's engine: the PGlite template, or a new PostgreSQL database. */
export async function testDatabaseOptions(): Promise<{ template?: Blob; database?: string }> {
  return TEST_ENGINE === 'postgres' ? { database: await testPostgresUrl() } : { template: dbTemplate() };
}

/** Opens a migrated database for a test on this run's engine (`dataDir` holds PGlite's folder). */
export async function openTestDatabase(dataDir: string): Promise<Database> {
  return openDatabase(dataDir, await testDatabaseOptions());
}

/** On PostgreSQL, each data folder's database: a test that starts a host on the same folder again finds its data. */
const databaseOf = new Map<string, string>();

export async function startTestHost(options: Partial<HostOptions> = {}): Promise<Host> {
  const dataDir = options.dataDir ?? tempDataDir();
  let database = options.database;
  if (!database && TEST_ENGINE === 'postgres') {
    database = databaseOf.get(dataDir) ?? (await testPostgresUrl());
    databaseOf.set(dataDir, database);
  }
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
