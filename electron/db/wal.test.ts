// The WAL a PGlite data folder keeps (open.ts): after bulk work and a checkpoint, or a close, two
// 16 MB segments — not the up to 1 GB of old segments Postgres keeps for reuse by default.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { checkpoint, openDatabase } from './open.js';

const dir = tempDataDir('anima-wal-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function walBytes(): number {
  const wal = path.join(dir, 'db', 'pg_wal');
  return fs
    .readdirSync(wal, { withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + fs.statSync(path.join(wal, e.name)).size, 0);
}

describe('the WAL of a PGlite folder', () => {
  it('goes back to 32 MB after bulk work and a checkpoint, and stays there across a restart', async () => {
    const db = await openDatabase(dir, { template: dbTemplate() });
    const settings = await db.query<{ name: string; setting: string; unit: string }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('max_wal_size', 'min_wal_size') ORDER BY name`,
    );
    expect(settings.rows.map((r) => `${r.name}=${r.setting}${r.unit}`)).toEqual(['max_wal_size=32MB', 'min_wal_size=32MB']);
    await db.exec('CREATE TABLE wal_probe (body text)');
    for (let i = 0; i < 6; i++) await db.query(`INSERT INTO wal_probe SELECT repeat(md5(g::text || $1), 40) FROM generate_series(1, 8000) g`, [String(i)]);
    // The load wrote more WAL than the limit (single-user Postgres never checkpoints on its own).
    expect(walBytes()).toBeGreaterThan(60e6);
    await checkpoint(db);
    expect(walBytes()).toBeLessThanOrEqual(34e6);
    await db.exec('DROP TABLE wal_probe');
    await db.close();
    expect(walBytes()).toBeLessThanOrEqual(34e6);
    const again = await openDatabase(dir, { template: dbTemplate() });
    await again.close();
    expect(walBytes()).toBeLessThanOrEqual(34e6);
  }, 300_000);
});
