// Backups and restore through the host API, on real PGlite on disk: the list, "Back up now", a
// restore round trip (the data equals the copy; the state before it is kept twice: a copy and the
// folder itself), undoing a restore, a damaged copy refused with nothing changed, the person's folder
// with its schedule and retention.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BackupProgress } from '../../shared/api/backups.js';
import type { Host } from '../host/types.js';
import { SelfLayer } from '../companion/self-layer.js';
import { openDatabase } from '../db/open.js';
import { HostEvents } from '../events/events.js';
import { SettingsStore } from '../settings/settings.js';
import { dbTemplate } from '../testing/host.js';
import { rejection } from '../testing/rejection.js';
import { useBackupHosts } from './testing/hosts.js';
import { nightlyManifestDir, writeCopy } from './copies.js';
import { BackupService } from './service.js';
import { JOURNAL_FILE } from './switch.js';

const { scratch, open, close } = useBackupHosts('anima-backups-');

/** What a person would notice: conversation titles, active memories, the identity block. */
async function snapshot(host: Host) {
  const chats = (await host.api['conversations.list']({})).map((c) => c.title).sort();
  const memories = (await host.api['memories.list']({})).items.map((m) => m.content).sort();
  const identity = (await host.api['self.list']({})).find((b) => b.key === 'identity')!.content;
  return { chats, memories, identity };
}

async function seed(host: Host, tag: string) {
  await host.api['conversations.create']({ title: `chat ${tag}` });
  await host.api['memories.create']({ type: 'preference', content: `The person likes ${tag} tea.` });
  await host.api['self.update']({ key: 'identity', content: `I am the companion of version ${tag}.` });
}

const leftovers = (dataDir: string) => fs.readdirSync(dataDir).filter((f) => f.startsWith('db.restoring-') || f === JOURNAL_FILE);

describe('backups and restore', () => {
  it('lists a copy made now with what it holds, restores it into place, and keeps the state before it', async () => {
    const dataDir = scratch();
    const host = await open(dataDir);
    await seed(host, 'green');
    const before = await snapshot(host);

    const progress: BackupProgress[] = [];
    const off = host.on((event, payload) => event === 'backups.progress' && progress.push(payload));
    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    expect(copy).toMatchObject({ where: 'data', kind: 'manual', counts: { conversations: 1, memories: 1 } });
    expect(progress.at(-1)).toMatchObject({ operation: 'backup', phase: 'done' });
    const listed = (await host.api['backups.list']({})).copies;
    expect(listed.map((c) => c.id)).toContain(copy!.id);
    expect(listed.find((c) => c.id === copy!.id)!.bytes).toBe(fs.statSync(path.join(dataDir, 'backups', copy!.name)).size);

    // Life goes on after the copy: another chat, the memory changed, the identity rewritten.
    await seed(host, 'black');
    const memory = (await host.api['memories.list']({})).items.find((m) => m.content.includes('green'))!;
    await host.api['memories.forget']({ id: memory.id });
    const after = await snapshot(host);
    expect(after).not.toEqual(before);

    const result = await host.api['backups.restore']({ id: copy!.id });
    off();
    expect(result.counts).toEqual(copy!.counts);
    expect(await snapshot(host)).toEqual(before);
    const phases = progress.filter((p) => p.operation === 'restore').map((p) => p.phase);
    expect(phases).toEqual(['unpacking', 'verifying', 'safety-copy', 'switching', 'done']);

    // The way back, twice: a copy of the state before the restore and that database folder itself.
    const state = await host.api['backups.list']({});
    const safety = state.copies.find((c) => c.id === result.safetyCopy.id)!;
    expect(safety).toMatchObject({ kind: 'before-restore', where: 'data', counts: { conversations: 2, memories: 1 } });
    const previous = state.copies.find((c) => c.where === 'previous')!;
    expect(previous.name).toBe(result.previous);
    // Copies hold the pictures now; this data folder had none, so the kept folder holds none (not "database only").
    expect(previous.images).toEqual({ files: 0, bytes: 0 });
    expect(safety.images).toEqual({ files: 0, bytes: 0 });
    expect(fs.existsSync(path.join(dataDir, result.previous, 'PG_VERSION'))).toBe(true);
    expect(leftovers(dataDir)).toEqual([]);

    // The host works on the restored data: a write, and the data is still there after a restart.
    await host.api['conversations.create']({ title: 'after the restore' });
    await close(host);
    const again = await open(dataDir);
    expect((await snapshot(again)).chats).toEqual([...before.chats, 'after the restore'].sort());

    // Undo the restore: the folder it replaced comes back as it was.
    await again.api['backups.restore']({ id: previous.id });
    expect(await snapshot(again)).toEqual(after);
    expect(leftovers(dataDir)).toEqual([]);
    await close(again);
  }, 240_000);

  it('refuses a damaged copy with the reason and changes nothing', async () => {
    const dataDir = scratch();
    const host = await open(dataDir);
    await seed(host, 'oolong');
    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    const file = path.join(dataDir, 'backups', copy!.name);
    const whole = fs.readFileSync(file);
    await seed(host, 'jasmine');
    const now = await snapshot(host);
    const listed = (await host.api['backups.list']({})).copies.map((c) => c.id).sort();
    const entries = fs.readdirSync(dataDir).sort();

    const refusedAs = async (bytes: Buffer, manifest: boolean) => {
      fs.writeFileSync(file, bytes);
      if (!manifest) fs.rmSync(`${file}.json`, { force: true });
      const err = await rejection(host.api['backups.restore']({ id: copy!.id }), 'invalid_input');
      expect(err.message).toMatch(/cannot be restored: .+ Nothing was changed\.$/);
      expect(await snapshot(host)).toEqual(now);
      expect((await host.api['backups.list']({})).copies.map((c) => c.id).sort()).toEqual(listed);
      expect(fs.readdirSync(dataDir).sort()).toEqual(entries);
      return err.message;
    };
    // Cut short, with its manifest (the size differs) and without (the gzip stream ends early).
    expect(await refusedAs(whole.subarray(0, Math.floor(whole.length / 2)), true)).toMatch(/cut short/);
    expect(await refusedAs(whole.subarray(0, Math.floor(whole.length / 2)), false)).toMatch(/damaged or cut short/);
    // Not a copy at all.
    expect(await refusedAs(Buffer.from('this is not a backup'), false)).toMatch(/damaged/);
    // An unknown id.
    await rejection(host.api['backups.restore']({ id: 'data:backups/../../etc/passwd' }), 'not_found');
    await close(host);

    // A disk without room for the restored copy beside the current data: refused before anything is written.
    fs.writeFileSync(file, whole);
    const full = await open(dataDir, { freeBytes: () => 10 * 1024 * 1024 });
    const err = await rejection(full.api['backups.restore']({ id: copy!.id }), 'invalid_input');
    expect(err.message).toMatch(/not enough room on the disk: about \d+ MB are needed and 10 MB are free\. Nothing was changed\.$/);
    expect(await snapshot(full)).toEqual(now);
    expect(fs.readdirSync(dataDir).sort()).toEqual(entries);
    await close(full);
  }, 240_000);

  it('writes into the chosen folder on a schedule, keeps its newest copies, and lists the nightly ones', async () => {
    const dataDir = scratch();
    const folder = scratch('anima-backup-folder-');
    let clock = new Date('2026-12-01T10:00:00Z');
    // The service on its own database (the host builds the same; its timer calls tick()).
    const db = await openDatabase(dataDir, { template: dbTemplate() });
    const settings = new SettingsStore(db, () => {});
    const backups = new BackupService({ db, dataDir, settings, events: new HostEvents(), log: () => {}, now: () => clock, version: 'test' }, { tickMs: 0 });
    await new SelfLayer(db).ensureDefaults();

    const refused = await rejection(backups.setFolder(path.join(folder, 'not-there')), 'invalid_input');
    expect(refused.message).toMatch(/is not there/);
    await rejection(backups.setSchedule({ schedule: 'daily' }), 'invalid_input');
    await backups.setFolder(folder);
    let state = await backups.setSchedule({ schedule: 'daily', keep: 2 });
    expect(state.settings).toEqual({ folder, schedule: 'daily', keep: 2 });
    expect(state.nextScheduledAt).toBe(clock.toISOString());

    const scheduledFiles = () => fs.readdirSync(folder).filter((f) => f.endsWith('-scheduled.tar.gz'));
    // Through time: a copy at once, none an hour later, one each day after.
    expect(await backups.tick()).not.toBeNull();
    clock = new Date(clock.getTime() + 60 * 60 * 1000);
    expect(await backups.tick()).toBeNull();
    for (let day = 1; day <= 3; day++) {
      clock = new Date(clock.getTime() + 24 * 60 * 60 * 1000);
      expect(await backups.tick()).not.toBeNull();
    }
    expect(scheduledFiles()).toHaveLength(2);
    // A copy the person makes into the folder is never pruned by the schedule.
    clock = new Date(clock.getTime() + 60 * 1000);
    await backups.makeNow('folder');
    clock = new Date(clock.getTime() + 24 * 60 * 60 * 1000);
    expect(await backups.tick()).not.toBeNull();
    state = await backups.state();
    expect(state.copies.filter((c) => c.where === 'folder').map((c) => c.kind)).toEqual(['scheduled', 'manual', 'scheduled']);
    expect(scheduledFiles()).toHaveLength(2);
    expect(state.lastScheduledAt).toBe(clock.toISOString());

    // A nightly copy (the sleep cycle's writer) shows its night and run.
    const snapshots = path.join(dataDir, 'snapshots');
    await writeCopy(db, [snapshots], '2026-11-30-run7.tar.gz', {
      kind: 'nightly',
      createdAt: clock,
      sleepDay: '2026-11-30',
      runId: 7,
      manifestDir: nightlyManifestDir(snapshots),
    });
    expect(fs.readdirSync(snapshots)).toEqual(['2026-11-30-run7.tar.gz']);
    const nightly = (await backups.list()).find((c) => c.kind === 'nightly')!;
    expect(nightly).toMatchObject({ sleepDay: '2026-11-30', runId: 7, where: 'data', counts: { conversations: 0, memories: 0 } });

    // An unplugged disk: the folder stays chosen, the list says why, the schedule waits.
    fs.rmSync(folder, { recursive: true, force: true });
    state = await backups.state();
    expect(state.folderProblem).toMatch(/is not there/);
    clock = new Date(clock.getTime() + 24 * 60 * 60 * 1000);
    expect(await backups.tick()).toBeNull();
    await backups.close();
    await db.close();
  }, 240_000);
});
