// `anima serve --database postgres://…` as a person runs it: its own process on the run's PostgreSQL
// cluster. It serves, names the database with its password hidden, a second serve on the same
// database is refused with the "already open" words, and once the first stops the database opens again.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { tempDataDir, testPostgresUrl } from './testing/host.js';
import { PATIENCE_MS } from './testing/patience.js';

const skip = inject('postgresSkip');
if (skip) console.log(`cli-database.pg.test: skipped — ${skip}.`);

const SECRET = 'hunter2-not-for-logs';
const dirs: string[] = [];
const children: ChildProcess[] = [];

interface Run {
  child: ChildProcess;
  /** Resolves with everything printed once the address line is out, or the process ended. */
  ready: Promise<{ out: string; code: number | null }>;
  exited: Promise<number | null>;
}

/**
 * A stand-in for the built page (the unit tests run before `npm run build`): this test is about the
 * database, and serve only needs an index.html to point at.
 */
function staticDir(): string {
  const dir = tempDataDir('anima-cli-pg-page-');
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Anima</title>');
  return dir;
}

function serve(url: string): Run {
  const dataDir = tempDataDir('anima-cli-pg-');
  dirs.push(dataDir);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      './scripts/register-sql.mjs',
      'electron/cli.ts',
      'serve',
      '--database',
      url,
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--no-open',
    ],
    { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1', ANIMA_STATIC_DIR: staticDir() } },
  );
  children.push(child);
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const ready = new Promise<{ out: string; code: number | null }>((resolve) => {
    const check = () => out.includes('Press Ctrl+C') && resolve({ out, code: null });
    child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), check()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => resolve({ out, code }));
  });
  return { child, ready, exited };
}

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!!skip)('anima serve --database', () => {
  it(
    'serves on PostgreSQL, hides the password, refuses a second serve on the same database, and lets go when stopped',
    async () => {
      const u = new URL(await testPostgresUrl());
      u.password = SECRET; // trust auth on the test cluster: the password is only there to be hidden
      const url = u.toString();

      const first = serve(url);
      const a = await first.ready;
      expect(a.code, a.out).toBeNull();
      expect(a.out).toMatch(/^Anima is running at http:\/\/127\.0\.0\.1:\d+\/\?token=/);
      expect(a.out).toContain(`Your companion's data is in the PostgreSQL database postgres://postgres:***@127.0.0.1:`);
      expect(a.out).not.toContain(SECRET);

      const second = serve(url);
      const b = await second.ready;
      expect(b.code).toBe(1);
      expect(b.out).toMatch(/Anima is already open with this database \(process \d+ on /);
      expect(b.out).not.toContain(SECRET);

      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const third = serve(url);
      const c = await third.ready;
      expect(c.code, c.out).toBeNull();
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
    },
    PATIENCE_MS * 3,
  );

  it(
    'refuses a database that is not a PostgreSQL URL, in words, before starting anything',
    async () => {
      const run = serve('mysql://anima:secret@localhost/anima');
      const r = await run.ready;
      expect(r.code).toBe(1);
      expect(r.out).toContain('The database must be a PostgreSQL URL such as postgres://');
      expect(r.out).not.toContain(':secret@');
    },
    PATIENCE_MS,
  );
});
