// anima.sql loads into a real, plain PostgreSQL (Debian's `postgresql`, with pg_trgm and without
// pgvector) and holds the same rows as the archive's JSON. A throwaway cluster on 127.0.0.1 in a temp
// folder, on a free port, stopped afterwards. Skipped, saying why, where the binaries are absent.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { exportArchive } from './export.js';
import { seedFolder } from './testing/seed.js';

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

const bin = postgresBin();
if (!bin) console.log('sql-dump.pg.test: skipped — no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql; .ci/run does).');

/** initdb and postgres refuse root: as root, the cluster is run by the `postgres` user. */
const asRoot = process.getuid?.() === 0;
function run(cmd: string, args: string[], timeout = 60_000): string {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin ?? '', cmd), ...args]] : [path.join(bin ?? '', cmd), args];
  return execFileSync(file, argv, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

describe.skipIf(!bin)('anima.sql in a plain PostgreSQL', () => {
  let dataDir: string;
  let db: Database;
  let cluster: string;
  let port: number;
  let started = false;
  let counts: Record<string, number>;

  beforeAll(async () => {
    dataDir = tempDataDir('anima-pgdump-');
    db = await openDatabase(dataDir, { template: dbTemplate() });
    await seedFolder(db, dataDir);
    const file = path.join(dataDir, 'archive.zip');
    await exportArchive({ db, appVersion: 'test', file });
    const zip = unzipSync(fs.readFileSync(file));
    counts = (JSON.parse(strFromU8(zip['anima.json'] ?? new Uint8Array())) as { counts: Record<string, number> }).counts;

    cluster = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-pg-'));
    fs.writeFileSync(path.join(cluster, 'anima.sql'), zip['anima.sql'] ?? new Uint8Array());
    if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', cluster]);
    fs.chmodSync(cluster, 0o700);
    port = await freePort();
    run('initdb', ['-D', path.join(cluster, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    run('pg_ctl', [
      '-D',
      path.join(cluster, 'data'),
      '-l',
      path.join(cluster, 'log'),
      '-o',
      `-p ${port} -k ${cluster} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      '-t',
      '60',
      'start',
    ]);
    started = true;
    run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'anima']);
  }, 180_000);

  afterAll(async () => {
    if (started) run('pg_ctl', ['-D', path.join(cluster, 'data'), '-m', 'immediate', '-w', '-t', '30', 'stop']);
    if (cluster) fs.rmSync(cluster, { recursive: true, force: true });
    await db?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const psql = (args: string[]) =>
    run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'anima', '-v', 'ON_ERROR_STOP=1', '-X', ...args]);

  it('loads with ON_ERROR_STOP and holds every exported row; the trigram index works; no vectors', () => {
    psql(['-q', '-f', path.join(cluster, 'anima.sql')]);
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
