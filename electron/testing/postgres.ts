// A throwaway PostgreSQL cluster for tests: Debian's server binaries (.ci/run installs them), a temp
// folder, 127.0.0.1 on a free port, trust auth, stopped and removed afterwards. As root (CI), the
// cluster is run by the `postgres` user, since initdb and postgres refuse root.
//
// Started once per vitest run by global-setup.ts where the binaries exist; tests reach it through
// postgresAvailable() / createTestDatabase() (a fresh database each, copied from a migrated template
// database: CREATE DATABASE … TEMPLATE is a file copy, far quicker than migrating).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** The newest server binaries under /usr/lib/postgresql, or null. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

export const NO_POSTGRES_REASON = 'no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql; .ci/run does)';

const asRoot = process.getuid?.() === 0;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export interface PostgresCluster {
  dir: string;
  port: number;
  bin: string;
  /** A URL to database `name` on this cluster, as the superuser (trust auth: no password). */
  url(name?: string): string;
  /** Runs one of the server's programs (psql, createdb…) as the cluster's owner. */
  run(cmd: string, args: string[], timeout?: number): string;
  stop(): void;
}

export async function startCluster(bin: string): Promise<PostgresCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-pg-'));
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  const run = (cmd: string, args: string[], timeout = 120_000): string => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    return execFileSync(file, argv, { encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const port = await freePort();
  const data = path.join(dir, 'data');
  let started = false;
  const stop = () => {
    try {
      if (started) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']);
    } finally {
      started = false;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
      '-w',
      '-t',
      '120',
      'start',
    ]);
    started = true;
  } catch (err) {
    stop();
    throw err;
  }
  return { dir, port, bin, url: (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`, run, stop };
}

/** The template database global-setup migrates once per run. */
export const TEMPLATE_DATABASE = 'anima_template';

/** A fresh, migrated database on the run's cluster (a copy of `template`, which nobody may hold open); returns its URL. */
export async function createTestDatabase(adminUrl: string, template = TEMPLATE_DATABASE): Promise<string> {
  const name = `anima_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // Two workers copying the template at once: the server refuses the second while the first reads it.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (err) {
        if (attempt >= 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}
