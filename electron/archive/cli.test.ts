// `anima export` as a person runs it: its own process on a real data folder. It writes the archive,
// refuses to replace a file without --force, and says so when a running Anima holds the folder.
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../db/lock.js';
import { openDatabase } from '../db/open.js';
import { runCli } from '../testing/cli.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { seedFolder } from './testing/seed.js';

let dataDir: string;

const cli = (args: string[]) => runCli(args, 90_000);

beforeAll(async () => {
  dataDir = tempDataDir('anima-archive-cli-');
  const db = await openDatabase(dataDir, { template: dbTemplate() });
  await seedFolder(db, dataDir);
  await db.close();
}, 60_000);

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('anima export', () => {
  it('writes the archive, with progress on stderr and a summary on stdout', async () => {
    const out = path.join(dataDir, 'out', 'mine.zip');
    const run = await cli(['export', '--data-dir', dataDir, '--out', out]);
    expect(run.stderr).toContain('Exporting… 0% (data)');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Wrote .*mine\.zip \([\d.]+ MB\): 2 conversations, 5 messages, 3 memories, 7 diary blocks in [\d.]+ s\.\n$/);
    const json = JSON.parse(strFromU8(unzipSync(fs.readFileSync(out))['anima.json'] ?? new Uint8Array()));
    expect(json.appVersion).toBe(JSON.parse(fs.readFileSync('package.json', 'utf8')).version);

    // The same name again: refused without --force, and the file is left as it was.
    const before = fs.readFileSync(out);
    const again = await cli(['export', '--data-dir', dataDir, '--out', out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect(fs.readFileSync(out).equals(before)).toBe(true);
    const forced = await cli(['export', '--data-dir', dataDir, '--out', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
  }, 180_000);

  it('says the folder is in use when a running Anima holds it, and writes nothing', async () => {
    const lock = acquireLock(dataDir);
    try {
      const out = path.join(dataDir, 'locked.zip');
      const run = await cli(['export', '--data-dir', dataDir, '--out', out]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Anima could not export: Anima is already open with this data folder');
      expect(fs.existsSync(out)).toBe(false);
      expect(fs.existsSync(`${out}.partial`)).toBe(false);
    } finally {
      lock.release();
    }
  }, 120_000);

  it('refuses a folder with no Anima data, and a missing --out', async () => {
    const empty = tempDataDir('anima-archive-empty-');
    const run = await cli(['export', '--data-dir', empty, '--out', path.join(empty, 'x.zip')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`There is no Anima data in ${empty}.`);
    expect(fs.readdirSync(empty)).toEqual([]);
    fs.rmSync(empty, { recursive: true, force: true });
    const noOut = await cli(['export', '--data-dir', dataDir]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('anima export needs --out FILE.');
  }, 120_000);
});
