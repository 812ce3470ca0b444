// vault.sync through the host API, on a real PGlite on disk and a real folder: the person's edits,
// new files and deletions become journalled, undoable memory changes; what cannot be taken is
// reported and left exactly as it was; a preview and a sync with nothing to do change nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VaultSyncReport } from '../../shared/api/vault.js';
import { memoryFile } from '../archive/vault.js';
import type { Host } from '../host/types.js';
import { startTestHost, tempDataDir } from '../testing/host.js';

let host: Host;
let dataDir: string;
let dir: string;
const ids: Record<string, number> = {};

/** Every file of the folder (the state file too) and its bytes. */
function snapshot(folder: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    if (!fs.existsSync(abs)) return;
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(abs, e.name), r);
      else out[r] = fs.readFileSync(path.join(abs, e.name)).toString('base64');
    }
  };
  walk(folder, '');
  return out;
}

/** Memories by status and the journal's length: what a change to memory would move. */
async function memoryCounts() {
  const all = await host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 });
  let journal = 0;
  for (const m of all.items) journal += (await host.api['memories.get']({ id: m.id })).history.length;
  const by = (s: string) => all.items.filter((m) => m.status === s).length;
  return { total: all.total, active: by('active'), expired: by('expired'), superseded: by('superseded'), journal };
}

function fileOf(id: number): string {
  const found = Object.keys(snapshot(dir)).find((f) => new RegExp(`^memories/[a-z]+/${id}-`).test(f));
  if (!found) throw new Error(`no file for memory ${id}`);
  return path.join(dir, found);
}

const sync = (dryRun = false): Promise<VaultSyncReport> => host.api['vault.sync']({ dir, dryRun });

beforeAll(async () => {
  dataDir = tempDataDir('anima-vault-');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-vault-folder-'));
  host = await startTestHost({ dataDir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
  for (const [key, content] of Object.entries({
    brno: 'Mara lives in Brno.',
    cat: 'Mara has a grey cat called Pixel.',
    tea: 'Mara drinks green tea every morning.',
    piano: 'Mara took piano lessons as a child.',
  })) {
    ids[key] = (await host.api['memories.create']({ type: 'world', content })).memory.id;
  }
}, 120_000);

afterAll(async () => {
  await host?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('vault.sync', () => {
  it('writes one file per active memory, in the export format, on the first sync', async () => {
    const report = await sync();
    expect(report.firstSync).toBe(true);
    expect(report.changes).toEqual([]);
    expect(report.written).toHaveLength(4);
    expect(fs.existsSync(path.join(dir, '.anima-vault.json'))).toBe(true);
    const text = fs.readFileSync(fileOf(ids.cat!), 'utf8');
    expect(text).toMatch(/^---\nid: \d+\ntype: "world"\nstatus: "active"\n/);
    expect(text.endsWith('\nMara has a grey cat called Pixel.\n')).toBe(true);
    // Byte for byte what the export writes for the same row.
    const fm = Object.fromEntries(
      text
        .split('\n---\n')[0]!
        .slice(4)
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf(':')), JSON.parse(l.slice(l.indexOf(':') + 1)) as unknown]),
    );
    expect(
      memoryFile({
        id: fm.id as number,
        type: fm.type as string,
        status: fm.status as string,
        content: 'Mara has a grey cat called Pixel.',
        valid_from: fm.valid_from as null,
        valid_to: fm.valid_to as null,
        superseded_by: null,
        pinned: false,
        source: fm.source as string,
        reference_count: 0,
        injected_count: 0,
        entity_names: fm.entities as string[],
        created_at: fm.created_at as string,
        updated_at: fm.updated_at as string,
        changes: fm.changes as number,
        references: 0,
      }),
    ).toBe(text);
  });

  it('a second sync with nothing changed changes nothing (idempotent)', async () => {
    const before = { files: snapshot(dir), counts: await memoryCounts() };
    const report = await sync();
    expect(report.firstSync).toBe(false);
    expect(report).toMatchObject({ changes: [], conflicts: [], ignored: [], written: [], removed: [], unchanged: 4 });
    const after = snapshot(dir);
    // The state file records when it synced; every memory file is byte for byte the same.
    delete after['.anima-vault.json'];
    delete before.files['.anima-vault.json'];
    expect(after).toEqual(before.files);
    expect(await memoryCounts()).toEqual(before.counts);
  });

  it('an edited file becomes a journalled edit by the person, undoable; the folder follows the undo', async () => {
    const file = fileOf(ids.tea!);
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace('Mara drinks green tea every morning.', 'Mara drinks green tea every morning, without sugar.'),
    );
    const report = await sync();
    expect(report.changes).toEqual([expect.objectContaining({ kind: 'edited', memoryId: ids.tea, changeId: expect.any(Number) })]);
    const { memory, history } = await host.api['memories.get']({ id: ids.tea! });
    expect(memory.content).toBe('Mara drinks green tea every morning, without sugar.');
    expect(history.at(-1)).toMatchObject({ action: 'update', actor: 'person', reason: 'edited in the vault folder' });
    // The file now carries the fresh counts (its journal has one more entry).
    expect(fs.readFileSync(file, 'utf8')).toContain('changes: 2');

    await host.api['memories.undo']({ changeId: report.changes[0]!.changeId! });
    expect((await host.api['memories.get']({ id: ids.tea! })).memory.content).toBe('Mara drinks green tea every morning.');
    const again = await sync();
    expect(again.changes).toEqual([]);
    expect(again.written).toEqual([path.relative(dir, file).split(path.sep).join('/')]);
    expect(fs.readFileSync(file, 'utf8')).toContain('\nMara drinks green tea every morning.\n');
  });

  it('a new file (no id) becomes a new memory, and gets its id in place', async () => {
    const file = path.join(dir, 'memories', 'experience', 'bike.md');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'Mara rode her bike to Vienna in May 2024.\n');
    const report = await sync();
    expect(report.changes).toEqual([expect.objectContaining({ kind: 'created', file: 'memories/experience/bike.md', changeId: expect.any(Number) })]);
    const id = report.changes[0]!.memoryId!;
    const { memory, history } = await host.api['memories.get']({ id });
    expect(memory).toMatchObject({ type: 'experience', content: 'Mara rode her bike to Vienna in May 2024.', source: 'user', status: 'active' });
    expect(history[0]).toMatchObject({ action: 'create', actor: 'person' });
    expect(fs.readFileSync(file, 'utf8')).toMatch(new RegExp(`^---\\nid: ${id}\\ntype: "experience"`));
    ids.bike = id;
  });

  it('a deleted file forgets its memory (expired, not deleted), and the undo brings file and memory back', async () => {
    const file = fileOf(ids.piano!);
    const text = fs.readFileSync(file, 'utf8');
    fs.rmSync(file);
    const report = await sync();
    expect(report.changes).toEqual([expect.objectContaining({ kind: 'forgotten', memoryId: ids.piano })]);
    expect((await host.api['memories.get']({ id: ids.piano! })).memory.status).toBe('expired');
    expect(fs.existsSync(file)).toBe(false);
    expect((await sync()).changes).toEqual([]);

    await host.api['memories.undo']({ changeId: report.changes[0]!.changeId! });
    expect((await host.api['memories.get']({ id: ids.piano! })).memory.status).toBe('active');
    const back = await sync();
    expect(back.changes).toEqual([]);
    expect(back.written).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, back.written[0]!), 'utf8')).toContain('\nMara took piano lessons as a child.\n');
    expect(back.written[0]).toBe(path.relative(dir, file).split(path.sep).join('/'));
    expect(text).toContain('Mara took piano lessons');
  });

  it('a secret in a new file is refused and reported; nothing is stored and the file is left as written', async () => {
    const file = path.join(dir, 'memories', 'world', 'key.md');
    const secret = 'Mara keeps her OpenAI key here: sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wX6yZ0aB2cD4eF6gH8iJ0kL2mN\n';
    fs.writeFileSync(file, secret);
    const before = await memoryCounts();
    const report = await sync();
    expect(report.changes).toEqual([]);
    expect(report.ignored).toEqual([expect.objectContaining({ reason: 'refused', file: 'memories/world/key.md' })]);
    expect(report.ignored[0]!.message).toMatch(/secret|key|credential/i);
    expect(await memoryCounts()).toEqual(before);
    expect(fs.readFileSync(file, 'utf8')).toBe(secret);
    fs.rmSync(file);
  });

  it('foreign files, broken frontmatter, unknown types and impossible dates are reported and left untouched', async () => {
    const put = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    put('notes.txt', 'my own notes\n');
    put('memories/world/stranger.md', '---\nid: 9999\ntype: "world"\n---\n\nA memory from another Anima.\n');
    put('memories/world/broken.md', '---\ntype: "world"\nthis line has no colon\n---\n\nSomething.\n');
    put('memories/world/unclosed.md', '---\ntype: "world"\n\nNever closed.\n');
    put('memories/feelings/odd.md', 'Mara felt odd on Tuesday.\n');
    put('memories/world/date.md', '---\ntype: world\nvalid_from: 2025-02-30\n---\n\nMara moved on a day that does not exist.\n');
    const edited = fileOf(ids.cat!);
    const catText = fs.readFileSync(edited, 'utf8');
    put(path.relative(dir, edited), catText.replace('type: "world"', 'type: "gossip"'));
    const files = snapshot(dir);
    const before = await memoryCounts();

    const report = await sync();
    expect(report.changes).toEqual([]);
    const reasons = Object.fromEntries(report.ignored.map((p) => [p.file, p.reason]));
    expect(reasons).toEqual({
      'notes.txt': 'foreign',
      'memories/world/stranger.md': 'foreign',
      'memories/world/broken.md': 'broken',
      'memories/world/unclosed.md': 'broken',
      'memories/feelings/odd.md': 'unknown-type',
      'memories/world/date.md': 'bad-date',
      [path.relative(dir, edited).split(path.sep).join('/')]: 'unknown-type',
    });
    const after = snapshot(dir);
    delete after['.anima-vault.json'];
    delete files['.anima-vault.json'];
    expect(after).toEqual(files);
    expect(await memoryCounts()).toEqual(before);
    for (const f of [
      'notes.txt',
      'memories/world/stranger.md',
      'memories/world/broken.md',
      'memories/world/unclosed.md',
      'memories/feelings/odd.md',
      'memories/world/date.md',
    ])
      fs.rmSync(path.join(dir, f));
    fs.rmdirSync(path.join(dir, 'memories', 'feelings'));
    fs.writeFileSync(edited, catText);
  });

  it('a dry run lists what would change and changes nothing: not the database, not one byte of the folder', async () => {
    fs.writeFileSync(fileOf(ids.cat!), fs.readFileSync(fileOf(ids.cat!), 'utf8').replace('grey cat', 'black cat'));
    fs.writeFileSync(path.join(dir, 'memories', 'world', 'new.md'), '---\ntype: world\n---\n\nMara speaks Czech and German.\n');
    fs.rmSync(path.join(dir, 'memories', 'experience', 'bike.md'));
    const files = snapshot(dir);
    const before = await memoryCounts();

    const report = await sync(true);
    expect(report.dryRun).toBe(true);
    expect(report.changes.map((c) => [c.kind, c.memoryId, c.changeId]).sort()).toEqual(
      [
        ['edited', ids.cat, null],
        ['created', null, null],
        ['forgotten', ids.bike, null],
      ].sort(),
    );
    expect(snapshot(dir)).toEqual(files);
    expect(await memoryCounts()).toEqual(before);

    // The real sync does what the preview said.
    const real = await sync();
    expect(real.changes.map((c) => c.kind).sort()).toEqual(['created', 'edited', 'forgotten']);
    expect((await host.api['memories.get']({ id: ids.cat! })).memory.content).toBe('Mara has a black cat called Pixel.');
  });

  it('a file edited here and a memory changed in Anima since the last sync: a conflict, both left alone', async () => {
    const file = fileOf(ids.brno!);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Mara lives in Brno.', 'Mara lives in Brno, near the park.'));
    await host.api['memories.update']({ id: ids.brno!, content: 'Mara lives in Brno, in the old town.' });
    const fileText = fs.readFileSync(file, 'utf8');
    const report = await sync();
    expect(report.changes).toEqual([]);
    expect(report.conflicts).toEqual([expect.objectContaining({ reason: 'conflict', memoryId: ids.brno })]);
    expect(fs.readFileSync(file, 'utf8')).toBe(fileText);
    expect((await host.api['memories.get']({ id: ids.brno! })).memory.content).toBe('Mara lives in Brno, in the old town.');
    // Deleting the file takes Anima's version (written again), it does not forget.
    fs.rmSync(file);
    const resolved = await sync();
    expect(resolved.changes).toEqual([]);
    expect((await host.api['memories.get']({ id: ids.brno! })).memory.status).toBe('active');
    expect(fs.readFileSync(file, 'utf8')).toContain('\nMara lives in Brno, in the old town.\n');
    expect((await sync()).conflicts).toEqual([]);
  });

  it('a new value for the same slot supersedes (linked, undone together); a pin and a moved file are followed', async () => {
    const job = (await host.api['memories.create']({ type: 'world', content: 'Mara works at Skoda.' })).memory.id;
    await sync();
    const file = fileOf(job);
    const rel = path.relative(dir, file).split(path.sep).join('/');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Mara works at Skoda.', 'Mara works at Siemens.').replace('pinned: false', 'pinned: true'));
    const report = await sync();
    const superseded = report.changes.find((c) => c.kind === 'superseded')!;
    expect(superseded).toMatchObject({ file: rel, otherId: job, text: 'Mara works at Siemens.' });
    expect(report.changes.find((c) => c.kind === 'pinned')).toMatchObject({ memoryId: superseded.memoryId });
    const old = await host.api['memories.get']({ id: job });
    expect(old.memory).toMatchObject({ status: 'superseded', supersededBy: superseded.memoryId });
    expect((await host.api['memories.get']({ id: superseded.memoryId! })).memory).toMatchObject({ status: 'active', pinned: true });
    // The file stays where the person keeps it, now the new memory's.
    expect(fs.readFileSync(file, 'utf8')).toMatch(new RegExp(`^---\nid: ${superseded.memoryId}\n`));
    expect((await sync()).changes).toEqual([]);

    // Moved by the person: the same memory, followed to its new name.
    const moved = path.join(dir, 'memories', 'world', 'job.md');
    fs.renameSync(file, moved);
    const after = await sync();
    expect(after).toMatchObject({ changes: [], conflicts: [], ignored: [], written: [], removed: [] });
    expect(fs.readFileSync(moved, 'utf8')).toContain('Mara works at Siemens.');

    // One undo takes the supersede back whole; the folder follows: the new memory's file goes, the old one's comes back.
    await host.api['memories.undo']({ changeId: superseded.changeId! });
    expect((await host.api['memories.get']({ id: job })).memory.status).toBe('active');
    const back = await sync();
    expect(back.changes).toEqual([]);
    expect(back.removed).toEqual(['memories/world/job.md']);
    expect(fs.readFileSync(fileOf(job), 'utf8')).toContain('\nMara works at Skoda.\n');
  });

  it('a copy of a memory file (the same id) is reported and left; the memory is read from its own file', async () => {
    const file = fileOf(ids.tea!);
    const copy = path.join(dir, 'memories', 'world', '0-a-copy.md');
    fs.writeFileSync(copy, fs.readFileSync(file, 'utf8').replace('every morning', 'every evening'));
    const report = await sync();
    expect(report.changes).toEqual([]);
    expect(report.ignored).toEqual([expect.objectContaining({ reason: 'duplicate-id', file: 'memories/world/0-a-copy.md' })]);
    expect((await host.api['memories.get']({ id: ids.tea! })).memory.content).toBe('Mara drinks green tea every morning.');
    fs.rmSync(copy);
  });

  it('a new file saying what a memory already says is saved into it (merged), and the copy goes', async () => {
    const copy = path.join(dir, 'memories', 'world', 'again.md');
    fs.writeFileSync(copy, 'Mara has a black cat called Pixel.\n');
    const before = await memoryCounts();
    const report = await sync();
    expect(report.changes).toEqual([expect.objectContaining({ kind: 'merged', memoryId: ids.cat, file: 'memories/world/again.md' })]);
    expect(report.removed).toEqual(['memories/world/again.md']);
    expect(fs.existsSync(copy)).toBe(false);
    const after = await memoryCounts();
    expect([after.total, after.active]).toEqual([before.total, before.active]);
  });

  it('refuses a relative folder, a file, and a folder inside the data folder, in words', async () => {
    await expect(host.api['vault.sync']({ dir: 'relative/dir' })).rejects.toMatchObject({ code: 'invalid_input' });
    const aFile = path.join(os.tmpdir(), `anima-vault-a-file-${process.pid}.txt`);
    fs.writeFileSync(aFile, 'not a folder\n');
    await expect(host.api['vault.sync']({ dir: aFile })).rejects.toThrow(/is a file/);
    fs.rmSync(aFile);
    await expect(host.api['vault.sync']({ dir: path.join(dataDir, 'vault') })).rejects.toThrow(/inside Anima's data folder/);
    // A disk that is not connected: its folders are never made on the disk Anima runs from.
    const unplugged = path.join(os.tmpdir(), `anima-no-disk-${process.pid}`, 'Anima');
    await expect(host.api['vault.sync']({ dir: unplugged })).rejects.toThrow(/does not exist \(a disk that is not connected\?\)/);
    expect(fs.existsSync(path.dirname(unplugged))).toBe(false);
  });
});

describe('keeping a folder in step', () => {
  it('syncs the chosen folder when Anima starts', async () => {
    const data = tempDataDir('anima-vault-auto-');
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-vault-auto-folder-'));
    try {
      let h = await startTestHost({ dataDir: data, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
      await h.api['memories.create']({ type: 'world', content: 'Mara plays the cello.' });
      await expect(h.api['vault.configure']({ folder: 'not/absolute', keepInStep: true })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(h.api['vault.configure']({ folder: null, keepInStep: true })).rejects.toThrow(/Choose a vault folder first/);
      const configured = await h.api['vault.configure']({ folder, keepInStep: true });
      expect(configured.settings).toEqual({ folder, keepInStep: true });
      expect(fs.readdirSync(folder)).toEqual([]); // configuring syncs nothing
      await h.close();

      h = await startTestHost({ dataDir: data, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
      try {
        await expect.poll(async () => (await h.api['vault.status']({})).last?.written.length ?? 0, { timeout: 60_000 }).toBe(1);
        expect(fs.readdirSync(path.join(folder, 'memories', 'world'))).toHaveLength(1);
      } finally {
        await h.close();
      }
    } finally {
      fs.rmSync(data, { recursive: true, force: true });
      fs.rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a folder emptied at once', () => {
  it('forgets nothing and writes the files again', async () => {
    const data = tempDataDir('anima-vault-mass-');
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-vault-mass-folder-'));
    const h = await startTestHost({ dataDir: data, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
    try {
      for (let i = 1; i <= 12; i++) await h.api['memories.create']({ type: 'world', content: `Mara visited town number ${i} on her trip.` });
      await h.api['vault.sync']({ dir: folder });
      fs.rmSync(path.join(folder, 'memories'), { recursive: true });
      const report = await h.api['vault.sync']({ dir: folder });
      expect(report.changes).toEqual([]);
      expect(report.conflicts).toHaveLength(12);
      expect(report.conflicts[0]!.reason).toBe('emptied');
      expect(report.conflicts[0]!.message).toContain('12 of the 12 memory files are gone at once');
      expect(report.written).toHaveLength(12);
      expect((await h.api['memories.list']({ statuses: ['active'] })).total).toBe(12);
    } finally {
      await h.close();
      fs.rmSync(data, { recursive: true, force: true });
      fs.rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
