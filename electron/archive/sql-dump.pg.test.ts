// anima.sql loads into a real, plain PostgreSQL (Debian's `postgresql`, with pg_trgm and without
// pgvector) and holds the same rows as the archive's JSON: a fresh database on the run's throwaway
// cluster (electron/testing/postgres.ts, started by global-setup). Skipped, saying why, where the
// binaries are absent.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { postgresBin } from '../testing/postgres.js';
import { exportArchive } from './export.js';
import { seedFolder } from './testing/seed.js';

const skip = inject('postgresSkip');
if (skip) console.log(`sql-dump.pg.test: skipped — ${skip}.`);

describe.skipIf(!!skip)('anima.sql in a plain PostgreSQL', () => {
  let dataDir: string;
  let db: Database;
  let sqlFile: string;
  let url: URL;
  let counts: Record<string, number>;

  beforeAll(async () => {
    dataDir = tempDataDir('anima-pgdump-');
    db = await openDatabase(dataDir, { template: dbTemplate() });
    await seedFolder(db, dataDir);
    const file = path.join(dataDir, 'archive.zip');
    await exportArchive({ db, appVersion: 'test', file });
    const zip = unzipSync(fs.readFileSync(file));
    counts = (JSON.parse(strFromU8(zip['anima.json'] ?? new Uint8Array())) as { counts: Record<string, number> }).counts;
    sqlFile = path.join(dataDir, 'anima.sql');
    fs.writeFileSync(sqlFile, zip['anima.sql'] ?? new Uint8Array());
    // A plain database (template0: no extensions), as a person's createdb makes it.
    url = new URL(inject('postgresUrl'));
    const name = `anima_dump_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`).finally(() => admin.end());
    url.pathname = `/${name}`;
  }, 180_000);

  afterAll(async () => {
    await db?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const psql = (args: string[]) =>
    execFileSync(path.join(postgresBin() ?? '', 'psql'), ['-d', url.toString(), '-v', 'ON_ERROR_STOP=1', '-X', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  it('loads with ON_ERROR_STOP and holds every exported row; the trigram index works; no vectors', () => {
    psql(['-q', '-f', sqlFile]);
    for (const [table, n] of Object.entries(counts)) {
      expect(Number(psql(['-At', '-c', `SELECT count(*) FROM public.${table}`]).trim()), table).toBe(n);
    }
    expect(counts.messages).toBeGreaterThan(0);
    expect(psql(['-At', '-c', "SELECT extname FROM pg_extension WHERE extname IN ('pg_trgm', 'vector') ORDER BY 1"]).trim()).toBe('pg_trgm');
    expect(psql(['-At', '-c', "SELECT to_regclass('public.embeddings') IS NULL"]).trim()).toBe('t');
    const similar = psql(['-At', '-c', "SELECT content FROM public.messages WHERE content % 'going to Kyoto next week' ORDER BY 1"]);
    expect(similar).toContain('I am going to Kyoto next week.');
  }, 120_000);
});
