// `anima vault sync` as a person runs it: its own process on a real data folder and a real vault
// folder. The preview writes nothing; the sync writes the files, then takes an edit back; a running
// Anima holding the data folder is refused in words.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../db/lock.js';
import { openDatabase } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { runCli } from '../testing/cli.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';

let dataDir: string;
let vault: string;

const cli = (args: string[]) => runCli(args, 120_000);

beforeAll(async () => {
  dataDir = tempDataDir('anima-vault-cli-');
  vault = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'anima-vault-cli-folder-')), 'Anima');
  const db = await openDatabase(dataDir, { template: dbTemplate() });
  const store = new MemoryStore(db);
  await store.create({ type: 'world', content: 'Mara lives in Brno.', source: 'user', actor: 'person' });
  await store.create({ type: 'experience', content: 'Mara ran her first marathon in 2023.', source: 'user', actor: 'person' });
  await db.close();
}, 60_000);

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(path.dirname(vault), { recursive: true, force: true });
});

describe('anima vault sync', () => {
  it('previews without writing, writes the files, then takes an edit back as an undoable change', async () => {
    const preview = await cli(['vault', 'sync', '--dir', vault, '--dry-run', '--data-dir', dataDir]);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('nothing was changed');
    expect(preview.stdout).toContain('2 files would be written');
    expect(fs.existsSync(vault)).toBe(false);

    const first = await cli(['vault', 'sync', '--dir', vault, '--data-dir', dataDir]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('(the first time)');
    expect(first.stdout).toContain('2 files written');
    const file = path.join(vault, 'memories', 'world', fs.readdirSync(path.join(vault, 'memories', 'world'))[0]!);

    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Mara lives in Brno.', 'Mara lives in Brno, Czechia.'));
    const edit = await cli(['vault', 'sync', '--dir', vault, '--data-dir', dataDir]);
    expect(edit.code, edit.stderr).toBe(0);
    expect(edit.stdout).toMatch(/edit taken memory 1 — “Mara lives in Brno, Czechia\.” \[undo: change \d+\]/);
    expect(fs.readFileSync(file, 'utf8')).toContain('changes: 2');
  }, 400_000);

  it('says the folder is in use when a running Anima holds it, and changes nothing', async () => {
    const before = fs.readdirSync(vault);
    const lock = acquireLock(dataDir);
    try {
      const run = await cli(['vault', 'sync', '--dir', vault, '--data-dir', dataDir]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Anima could not sync the vault: Anima is already open with this data folder');
      expect(fs.readdirSync(vault)).toEqual(before);
    } finally {
      lock.release();
    }
  }, 200_000);

  it('needs --dir, and an existing data folder', async () => {
    const noDir = await cli(['vault', 'sync', '--data-dir', dataDir]);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toContain('anima vault sync needs --dir DIR.');
    const empty = tempDataDir('anima-vault-cli-empty-');
    const run = await cli(['vault', 'sync', '--dir', vault, '--data-dir', empty]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`There is no Anima data in ${empty}.`);
    expect(fs.readdirSync(empty)).toEqual([]);
    fs.rmSync(empty, { recursive: true, force: true });
  }, 200_000);
});
