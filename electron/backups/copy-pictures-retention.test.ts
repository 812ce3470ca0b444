// A copy's pictures folder (`<copy>.files/`, hard links) goes with its copy, on real files and PGlite:
// the nightly retention removes an old copy together with its pictures, and a pictures folder left
// without its copy (the copy removed by hand) is gone once the host starts; the data folder's own
// pictures and the kept copies' stay.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { solidPng } from '../../e2e/fake-llm/images.js';
import { attachmentsDir } from '../attachments/store.js';
import { pruneCopies } from '../sleep/steps/snapshots.js';
import { openTestDatabase, startTestHost, tempDataDir, TEST_ENGINE } from '../testing/host.js';
import { filesPath, nightlyManifestDir, writeCopy } from './copies.js';
import { NIGHTLY_DIR, OWN_DIR } from './service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const ls = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

describe.skipIf(TEST_ENGINE === 'postgres')('a copy’s pictures go with it', () => {
  it('the nightly retention removes an old copy’s pictures with it, and pictures left without their copy are gone at start', async () => {
    const dataDir = tempDataDir('anima-copy-pictures-');
    dirs.push(dataDir);
    const png = solidPng(8, 8, [200, 40, 40]);
    const picture = path.join(attachmentsDir(dataDir), `${createHash('sha256').update(png).digest('hex').slice(0, 32)}.png`);
    fs.mkdirSync(path.dirname(picture), { recursive: true });
    fs.writeFileSync(picture, png);

    const db = await openTestDatabase(dataDir);
    const snapshots = path.join(dataDir, NIGHTLY_DIR);
    const nightlyExtras = nightlyManifestDir(snapshots);
    const nights = ['2026-11-28', '2026-11-29', '2026-11-30'];
    const names = nights.map((day, i) => `${day}-run${i + 1}.tar.gz`);
    for (const [i, name] of names.entries()) {
      await writeCopy(db, [snapshots], name, {
        kind: 'nightly',
        createdAt: new Date(`${nights[i]}T03:00:00Z`),
        sleepDay: nights[i],
        runId: i + 1,
        manifestDir: nightlyExtras,
        dataDir,
      });
    }
    const pictures = (name: string) => filesPath(path.join(snapshots, name), nightlyExtras);
    for (const name of names) expect(ls(path.join(pictures(name), 'attachments'))).toEqual([path.basename(picture)]);

    // Run 3 keeps two copies: the oldest goes, its manifest and its pictures with it.
    expect(await pruneCopies(db, snapshots, 3, 2)).toBe(2);
    expect(ls(snapshots)).toEqual(names.slice(1));
    expect(ls(nightlyExtras)).toEqual(
      names
        .slice(1)
        .flatMap((n) => [path.basename(pictures(n)), `${n}.json`])
        .sort(),
    );
    expect(fs.readFileSync(picture)).toEqual(png);

    // A copy the person made, and a nightly one, each removed by hand with their pictures left behind.
    const own = path.join(dataDir, OWN_DIR);
    await writeCopy(db, [own], 'anima-manual.tar.gz', { kind: 'manual', createdAt: new Date('2026-12-01T09:00:00Z'), dataDir });
    await db.close();
    fs.rmSync(path.join(own, 'anima-manual.tar.gz'));
    fs.rmSync(path.join(snapshots, names[1]!));
    expect(ls(own)).toContain('anima-manual.files');
    expect(fs.existsSync(pictures(names[1]!))).toBe(true);

    const host = await startTestHost({ dataDir, backups: { tickMs: 0 }, sleep: { tickMs: 0 } });
    try {
      expect(ls(own).filter((n) => n.endsWith('.files'))).toEqual([]);
      expect(fs.existsSync(pictures(names[1]!))).toBe(false);
      // The copy still there keeps its pictures, and the data folder its own.
      expect(ls(path.join(pictures(names[2]!), 'attachments'))).toEqual([path.basename(picture)]);
      expect(fs.readFileSync(picture)).toEqual(png);
    } finally {
      await host.close();
    }
  });
});
