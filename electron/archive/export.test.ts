// The archive on a real PGlite folder: every section with the right counts, no API key anywhere,
// the vault's files and frontmatter, and a cancelled or failed export that leaves no file behind
// (and never touches a good archive already under that name).
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api.js';
import { openDatabase, type Database } from '../db/open.js';
import { SECRETS_FILE } from '../settings/secrets.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { ARCHIVE_FORMAT, exportArchive, type ExportProgress } from './export.js';
import { SECTIONS } from './reads.js';
import { SECRET_KEY, seedFolder } from './testing/seed.js';

let dir: string;
let db: Database;
let out: string;
let entries: Record<string, string>;
let progress: ExportProgress[];

const count = async (table: string) => Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n);

function frontmatterOf(text: string): Record<string, unknown> {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!m?.[1]) throw new Error(`no frontmatter in ${text.slice(0, 80)}`);
  return Object.fromEntries(m[1].split('\n').map((line) => [line.slice(0, line.indexOf(':')), JSON.parse(line.slice(line.indexOf(':') + 1))]));
}

beforeAll(async () => {
  dir = tempDataDir('anima-archive-');
  db = await openDatabase(dir, { template: dbTemplate() });
  await seedFolder(db, dir);
  out = path.join(dir, 'exports', 'archive.zip');
  progress = [];
  // Pages of 2 rows: every section crosses page boundaries.
  await exportArchive({ db, appVersion: '9.8.7', file: out, pageSize: 2, onProgress: (p) => progress.push(p) });
  entries = Object.fromEntries(Object.entries(unzipSync(fs.readFileSync(out))).map(([name, data]) => [name, strFromU8(data)]));
}, 120_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('anima.json', () => {
  it('states its format, the app version and the schema version (the last migration)', async () => {
    const json = JSON.parse(entries['anima.json'] ?? '');
    const last = (await db.query<{ v: number }>('SELECT max(version)::int AS v FROM schema_migrations')).rows[0]?.v;
    expect(json).toMatchObject({ format: ARCHIVE_FORMAT, formatVersion: 1, appVersion: '9.8.7', schemaVersion: last, companion: { name: 'Anima' } });
    expect(last).toBeGreaterThanOrEqual(13);
    expect(JSON.parse(entries['manifest.json'] ?? '')).toMatchObject({ schemaVersion: last, counts: json.counts });
  });

  it('holds every section with as many rows as the database', async () => {
    const json = JSON.parse(entries['anima.json'] ?? '') as { sections: Record<string, unknown[]>; counts: Record<string, number> };
    expect(Object.keys(json.sections)).toEqual(SECTIONS.map((s) => s.name));
    for (const s of SECTIONS) {
      const n = await count(s.name);
      expect(json.sections[s.name], s.name).toHaveLength(n);
      expect(json.counts[s.name], s.name).toBe(n);
    }
    // What the seed wrote, so an empty section cannot pass by matching an empty table.
    expect(json.counts).toMatchObject({
      conversations: 2,
      messages: 5,
      memories: 3,
      memory_references: 1,
      diary_blocks: 7,
      mood_days: 2,
      self_blocks: 6,
      providers: 1,
    });
    expect(json.counts.memory_changes).toBeGreaterThanOrEqual(5);
    expect(json.counts.entities).toBeGreaterThanOrEqual(4);
    expect(json.counts.entity_aliases).toBeGreaterThanOrEqual(2);
  });

  it('keeps every version of a message, the memory journal, valid time and hidden diary blocks', () => {
    const { sections } = JSON.parse(entries['anima.json'] ?? '') as { sections: Record<string, Record<string, unknown>[]> };
    const replaced = sections.messages?.find((m) => m.content === 'Lovely! [[anima:1]]');
    expect(replaced?.replaced_by).toEqual(expect.any(String));
    expect(sections.messages?.[0]).not.toHaveProperty('content_fts');
    expect(sections.memories?.[0]).not.toHaveProperty('search_fts');
    expect(sections.memory_changes?.map((c) => c.action)).toEqual(expect.arrayContaining(['create', 'update', 'forget', 'pin']));
    const edge = sections.entity_edges?.find((e) => e.relation === 'lives_in');
    expect(edge).toMatchObject({ valid_from: expect.stringContaining('2020-01-01'), valid_to: expect.stringContaining('2025-06-30') });
    expect(sections.diary_blocks?.filter((b) => b.hidden_at !== null)).toHaveLength(1);
    expect(sections.settings?.map((s) => s.key)).toEqual(expect.arrayContaining(['theme']));
  });

  it('reports progress up to the whole', () => {
    expect(progress[0]).toMatchObject({ phase: 'data', done: 0 });
    const lastP = progress[progress.length - 1];
    expect(lastP?.done).toBe(lastP?.total);
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['data', 'sql', 'finishing']));
  });
});

describe('secrets', () => {
  it('puts no API key in any entry', () => {
    // The key was really saved: it is in the secret store beside the database.
    expect(fs.readFileSync(path.join(dir, SECRETS_FILE), 'utf8')).toContain(SECRET_KEY);
    expect(Object.keys(entries)).toEqual(expect.arrayContaining(['anima.json', 'anima.sql', 'manifest.json']));
    for (const [name, text] of Object.entries(entries)) {
      expect(text.includes(SECRET_KEY), name).toBe(false);
    }
    const { sections } = JSON.parse(entries['anima.json'] ?? '') as { sections: Record<string, Record<string, unknown>[]> };
    expect(sections.providers?.[0]).toMatchObject({ name: 'Cloud', base_url: 'https://api.example.test/v1' });
  });
});

describe('vault', () => {
  const names = () => Object.keys(entries).filter((n) => n.startsWith('vault/'));

  it('has one file per memory, grouped by type, with its frontmatter', async () => {
    const files = names().filter((n) => n.startsWith('vault/memories/'));
    expect(files).toHaveLength(3);
    const kyoto = files.find((n) => n.startsWith('vault/memories/experience/'));
    expect(kyoto).toMatch(/^vault\/memories\/experience\/\d+-the-person-is-travelling-to-京都-kyoto/);
    const fm = frontmatterOf(entries[kyoto ?? ''] ?? '');
    const changes = await count('memory_changes WHERE memory_id = ' + Number(fm.id));
    expect(fm).toMatchObject({ type: 'experience', status: 'active', references: 1, changes, valid_to: null });
    expect(changes).toBe(2);
    expect(entries[kyoto ?? '']).toContain('京都 (Kyoto) in November 2026.');
    const world = files.find((n) => n.startsWith('vault/memories/world/'));
    expect(frontmatterOf(entries[world ?? ''] ?? '')).toMatchObject({ status: 'expired' });
    const pref = files.find((n) => n.startsWith('vault/memories/preference/'));
    expect(frontmatterOf(entries[pref ?? ''] ?? '')).toMatchObject({ pinned: true, valid_from: expect.stringContaining('2026-11-02') });
  });

  it('has one file per diary day and per dream; hidden blocks stay out', () => {
    expect(names().filter((n) => n.startsWith('vault/diary/'))).toEqual(['vault/diary/2026-11-01.md', 'vault/diary/2026-11-02.md']);
    const first = entries['vault/diary/2026-11-01.md'] ?? '';
    expect(frontmatterOf(first)).toMatchObject({ day: '2026-11-01', blocks: 3, anchor: 1, imprint: 1, narrative: 1 });
    expect(first).not.toContain('red maples');
    expect(entries['vault/diary/2026-11-02.md']).not.toContain('Should not be in the vault');
    const dreams = names().filter((n) => n.startsWith('vault/dreams/'));
    expect(dreams).toEqual([expect.stringMatching(/^vault\/dreams\/2026-11-01-\d+-红叶の夢\.md$/)]);
    expect(entries[dreams[0] ?? '']).toContain('Walking through red maples.');
  });

  it('has one file per conversation with safe names (no path from a title) and the current messages', () => {
    const files = names().filter((n) => n.startsWith('vault/conversations/'));
    expect(files).toHaveLength(2);
    for (const n of Object.keys(entries)) {
      expect(n.split('/')).not.toContain('..');
      expect(n).not.toMatch(/^\/|\\/);
    }
    const trip = files.find((n) => n.includes('京都'));
    expect(trip).toMatch(/^vault\/conversations\/\d{4}-\d{2}-\d{2}-trip-to-京都-etc-passwd-[\p{L}\p{N}-]+\.md$/u);
    const text = entries[trip ?? ''] ?? '';
    expect(frontmatterOf(text)).toMatchObject({ title: 'Trip to 京都 / ../../etc/passwd', messages: 2 });
    expect(text).toContain('How exciting — 京都 in autumn!');
    expect(text).not.toContain('Lovely!');
    expect(entries['vault/self.md']).toContain('## identity');
  });
});

describe('a stopped or failed export', () => {
  it('cancelled: rejects with cancelled and leaves neither the file nor its partial', async () => {
    const file = path.join(dir, 'exports', 'cancelled.zip');
    const controller = new AbortController();
    const run = exportArchive({ db, appVersion: '1', file, pageSize: 1, signal: controller.signal, onProgress: () => controller.abort() });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    await expect(run).rejects.toBeInstanceOf(ApiError);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });

  it('failed midway: the good archive under that name is untouched and the partial is gone', async () => {
    const good = fs.readFileSync(out);
    let calls = 0;
    const run = exportArchive({
      db,
      appVersion: '1',
      file: out,
      pageSize: 1,
      onProgress: () => {
        // Fail once the partial file holds data.
        if (++calls === 1) return;
        if (fs.existsSync(`${out}.partial`) && fs.statSync(`${out}.partial`).size > 0) throw new Error('disk went away');
      },
    });
    await expect(run).rejects.toThrow('disk went away');
    expect(fs.readFileSync(out).equals(good)).toBe(true);
    expect(fs.existsSync(`${out}.partial`)).toBe(false);
  });
});
