// "Erase everything" through the host API on a real PGlite folder: a wrong word changes nothing; the
// right word leaves a fresh companion (no conversations, memories, diary, providers or keys, settings
// at their defaults) in a folder holding only the new database and the lock, with the host still
// answering; the person's own backup folder is left as it was.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/open.js';
import { tableCounts } from './copies.js';
import { LOCK_FILE } from '../db/lock.js';
import type { Host } from '../host/types.js';
import { SECRET_KEY, seedFolder } from '../archive/testing/seed.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';

const dirs: string[] = [];
const scratch = (prefix: string) => {
  const d = tempDataDir(prefix);
  dirs.push(d);
  return d;
};

/** Everything a person would see of their companion. */
async function seen(host: Host) {
  const [conversations, memories, providers, settings, self] = await Promise.all([
    host.api['conversations.list']({}),
    host.api['memories.list']({ statuses: ['active', 'expired', 'superseded'] }),
    host.api['providers.list']({}),
    host.api['settings.get']({}),
    host.api['self.list']({}),
  ]);
  return { conversations, memories: memories.items, providers, settings, self };
}

/** Every file under a folder, with its bytes: "nothing changed" compares these. */
function tree(dir: string, skip: (name: string) => boolean = () => false): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (!rel && skip(e.name)) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else out[r] = fs.statSync(path.join(d, e.name)).size;
    }
  };
  walk(dir, '');
  return out;
}

let dataDir: string;
let ownFolder: string;
let host: Host;
let seeded: Record<string, number>;
/** The tables that hold the person's life (the settings and self layer get their defaults again). */
const LIFE = ['conversations', 'messages', 'memories', 'memory_changes', 'memory_references', 'diary_blocks', 'mood_days', 'entities', 'providers'];

beforeAll(async () => {
  dataDir = scratch('anima-erase-');
  ownFolder = scratch('anima-erase-own-folder-');
  // A lived-in folder: conversations, memories with their journal, a diary, a provider with its key, settings.
  const db = await openDatabase(dataDir, { template: dbTemplate() });
  await seedFolder(db, dataDir);
  seeded = await tableCounts(db);
  await db.close();
  host = await startTestHost({ dataDir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
  await host.api['settings.update']({ onboarded: true });
  // The companion's picture, kept in the data folder (companion/).
  await host.api['self.setAvatar']({ image: `data:image/png;base64,${fs.readFileSync(path.resolve('build', 'icon.png')).toString('base64')}` });
  // Copies of every kind in the data folder and one in the person's own folder; an export; a restore's undo.
  await host.api['backups.setFolder']({ folder: ownFolder });
  const [copy] = await host.api['backups.makeNow']({ where: 'both' });
  fs.mkdirSync(path.join(dataDir, 'snapshots'), { recursive: true });
  fs.copyFileSync(path.join(dataDir, 'backups', copy!.name), path.join(dataDir, 'snapshots', '2026-11-03-run1.tar.gz'));
  await host.api['backups.restore']({ id: copy!.id });
  const done = nextEvent(host, 'archive.progress', (p: { state: string }) => p.state !== 'running', PATIENCE_MS);
  await host.api['archive.export']({});
  await done;
}, 300_000);

afterAll(async () => {
  await host?.close().catch(() => {});
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('Erase everything', () => {
  it('refuses a wrong or missing word in words, and changes nothing', async () => {
    const before = await seen(host);
    const files = tree(dataDir, (name) => name === 'db');
    expect(before.conversations.length).toBeGreaterThan(0);
    for (const table of LIFE) expect(seeded[table], table).toBeGreaterThan(0);
    expect(before.providers).toHaveLength(1);
    expect(Object.keys(files).some((f) => f.startsWith('exports/') && f.endsWith('.zip'))).toBe(true);
    expect(Object.keys(files).some((f) => f.startsWith('db.before-restore-'))).toBe(true);
    for (const confirm of ['', 'eras', 'erase everything', 'delete', '清']) {
      await expect(host.api['app.eraseEverything']({ confirm })).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'confirm',
        message: expect.stringMatching(/type the word “erase”.*Nothing was erased/),
      });
    }
    expect(await seen(host)).toEqual(before);
    expect(tree(dataDir, (name) => name === 'db')).toEqual(files);
  });

  it('with the word, leaves a fresh companion in a folder holding only the new database and the lock', async () => {
    const own = tree(ownFolder);
    expect(Object.keys(own).length).toBeGreaterThan(0);
    const first = host.api['app.eraseEverything']({ confirm: ' Erase ' });
    // A second erase while the first runs is refused; the first answers.
    await expect(host.api['app.eraseEverything']({ confirm: '清除' })).rejects.toMatchObject({ code: 'conflict' });
    const result = await first;
    expect(result).toEqual({ safetyCopies: 3, previousData: 1, exports: 1, keys: true, backupFolder: ownFolder, left: [] });

    // Nothing of the person is left, and settings are the defaults (onboarding shows again).
    const after = await seen(host);
    expect(after.conversations).toEqual([]);
    expect(after.memories).toEqual([]);
    expect(after.providers).toEqual([]);
    expect(after.settings.onboarded).toBe(false);
    expect(after.settings.backups.folder).toBeNull();
    expect(after.settings.theme).not.toBe('dark');
    expect((await host.api['backups.list']({})).copies).toEqual([]);

    // The folder: the new database and the lock; no key anywhere in it.
    expect(fs.readdirSync(dataDir).sort()).toEqual(['db', LOCK_FILE].sort());
    const grepKey = (dir: string): boolean =>
      fs.readdirSync(dir, { withFileTypes: true }).some((e) => {
        const full = path.join(dir, e.name);
        return e.isDirectory() ? grepKey(full) : fs.readFileSync(full).includes(SECRET_KEY);
      });
    expect(grepKey(dataDir)).toBe(false);

    // The person's own folder is untouched.
    expect(tree(ownFolder)).toEqual(own);

    // The host still serves calls, on the fresh data.
    const made = await host.api['conversations.create']({ title: 'a new beginning' });
    expect((await host.api['conversations.list']({})).map((c) => c.id)).toEqual([made.id]);
    expect((await host.api['app.info']({})).dataDir).toBe(dataDir);
  });

  it('every table holds what a brand-new folder holds, and a restart opens the fresh data as it was left', async () => {
    await host.close();
    const db = await openDatabase(dataDir);
    const counts = await tableCounts(db);
    await db.close();
    // Row for row what a brand-new folder holds once the same conversation is made in it.
    const freshDir = scratch('anima-erase-baseline-');
    const fresh = await startTestHost({ dataDir: freshDir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
    await fresh.api['conversations.create']({ title: 'a new beginning' });
    await fresh.close();
    const baselineDb = await openDatabase(freshDir);
    const baseline = await tableCounts(baselineDb);
    await baselineDb.close();
    expect(counts).toEqual(baseline);
    for (const table of LIFE) expect(counts[table], table).toBeLessThan(seeded[table]!);
    host = await startTestHost({ dataDir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
    expect((await host.api['conversations.list']({})).map((c) => c.title)).toEqual(['a new beginning']);
    expect((await host.api['providers.list']({})).length).toBe(0);
    expect(fs.readdirSync(dataDir).sort()).toEqual(['db', LOCK_FILE].sort());
  });
});
