// Builds the migrated database template once per test run (initdb costs seconds; loading a dump
// is several times faster), cached by a hash of the migrations so a schema change rebuilds it.
// Where PostgreSQL's server binaries exist, starts the run's throwaway cluster (testing/postgres.ts)
// with a migrated template database, and stops it at the end.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { dumpTemplate, openDatabase, openPostgres } from '../db/open.js';
import { migrations } from '../db/migrations/index.js';
import { runTempRoot } from './temp-root.js';
import { NO_POSTGRES_REASON, postgresBin, startCluster, TEMPLATE_DATABASE, type PostgresCluster } from './postgres.js';

// What it provides to the tests (inject) is declared in provided-context.d.ts.

/**
 * Whether this run may need the cluster: every full run and every run on PostgreSQL does; a run of
 * named test files only if one of them is a `.pg.test.ts` (a targeted run does not pay for initdb).
 */
function wantsPostgres(): boolean {
  if (process.env.ANIMA_TEST_ENGINE === 'postgres') return true;
  if (process.env.ANIMA_TEST_POSTGRES === 'off') return false;
  const files = process.argv.slice(2).filter((a) => !a.startsWith('-') && /\.test\.|\//.test(a));
  return files.length === 0 || files.some((f) => f.includes('.pg.'));
}

async function startPostgres(project: TestProject): Promise<(() => void) | undefined> {
  const bin = postgresBin();
  let skip = bin ? '' : NO_POSTGRES_REASON;
  if (bin && !wantsPostgres()) skip = 'the PostgreSQL cluster is started only for full runs, .pg.test.ts files and ANIMA_TEST_ENGINE=postgres';
  let cluster: PostgresCluster | undefined;
  if (bin && !skip) {
    cluster = await startCluster(bin);
    try {
      cluster.run('createdb', ['-h', '127.0.0.1', '-p', String(cluster.port), '-U', 'postgres', TEMPLATE_DATABASE]);
      const db = await openPostgres(cluster.url(TEMPLATE_DATABASE));
      await db.close();
    } catch (err) {
      cluster.stop();
      throw err;
    }
  }
  project.provide('postgresUrl', cluster ? cluster.url() : '');
  project.provide('postgresSkip', skip);
  if (process.env.ANIMA_TEST_ENGINE === 'postgres' && !cluster) console.log(`ANIMA_TEST_ENGINE=postgres: the PostgreSQL runs are skipped — ${skip}.`);
  return cluster ? () => cluster.stop() : undefined;
}

export default async function setup(project: TestProject): Promise<() => void> {
  const removeTempRoot = runTempRoot('anima-test-run-');
  try {
    project.provide('dbTemplatePath', await migratedTemplate());
    const stopPostgres = await startPostgres(project);
    return () => {
      stopPostgres?.();
      removeTempRoot();
    };
  } catch (err) {
    removeTempRoot();
    throw err;
  }
}

/** The migrated database template's file, built when the migrations changed since it was cached. */
async function migratedTemplate(): Promise<string> {
  const hash = createHash('sha256')
    .update(migrations.map((m) => `${m.version}:${m.sql}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const cacheDir = path.resolve('.cache', 'test-template');
  const file = path.join(cacheDir, `anima-${hash}.tar.gz`);
  if (!fs.existsSync(file)) {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-template-'));
    const db = await openDatabase(scratch);
    const blob = await dumpTemplate(db);
    await db.close();
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(`${file}.tmp`, Buffer.from(await blob.arrayBuffer()));
    fs.renameSync(`${file}.tmp`, file);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return file;
}
