// Settings → Data → Backups: the copies there are, "Back up now", the person's own folder with its
// schedule, and restore.
//
// Where copies live:
//   <dataDir>/snapshots/               the sleep cycle's nightly copies (sleep/steps/simple.ts, its own retention)
//   <dataDir>/backups/                 copies the person made, and the copy each restore takes first (never pruned)
//   <folder>/                          the person's folder: their copies and the schedule's (the schedule keeps `keep`)
//   <dataDir>/db.before-restore-<ts>/  the database folder a restore replaced, kept whole: the restore's undo
//
// A restore never deletes the current data before the restored copy is proven: the copy is unpacked
// into a new folder beside `db` and opened, migrated and read there (every table's rows, compared with
// the counts its manifest recorded); only then is a copy of the current state written, and the host
// closes its database while two renames swap the folders (switch.ts, with a journal so a kill between
// them is finished at the next start), then opens again on the restored one.
//
// Pictures: a copy holds the data folder's `attachments/` and `companion/` as they were (copies.ts,
// hard links). A restore proves them too before anything changes — every picture the restored
// messages show is there and its bytes give its name, the companion's pictures match their SHA-256 —
// builds them in `db.restoring-<ts>.files/`, and the switch swaps them in with the database; the
// pictures there were go aside with the old database folder (`db.before-restore-<ts>.files/`), never
// deleted. A copy from before copies held pictures restores the database alone ("database only").
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ApiError } from '../../shared/api.js';
import type { BackupCopy, BackupCounts, BackupKind, BackupProgress, BackupSettings, BackupsState, RestoreResult } from '../../shared/api/backups.js';
import type { Log } from '../../shared/log.js';
import { attachmentsDir, imageMatchesName } from '../attachments/store.js';
import { avatarMatchesName } from '../companion/avatar.js';
import { Conversations } from '../conversations/conversations.js';
import { openDatabaseDir, type Database } from '../db/open.js';
import type { HostEvents } from '../events/events.js';
import type { SettingsStore } from '../settings/settings.js';
import {
  COPY_SUFFIX,
  contentCounts,
  FILE_SOURCES,
  filesPath,
  placeFile,
  nightlyManifestDir,
  MANIFEST_SUFFIX,
  readManifest,
  removeCopy,
  SCHEMA_VERSION,
  sweepOrphanFiles,
  tableCounts,
  writeCopy,
  type CopyManifest,
} from './copies.js';
import { pausePoint } from './pause.js';
import {
  BEFORE_PREFIX,
  FILE_FOLDERS,
  FILES_SUFFIX,
  RESTORING_PREFIX,
  revertSwitch,
  stamp,
  switchDatabase,
  writeFileAtomic,
  type FileFolder,
  type SwitchJournal,
} from './switch.js';

export const NIGHTLY_DIR = 'snapshots';
export const OWN_DIR = 'backups';
const NIGHTLY_NAME = /^(\d{4}-\d{2}-\d{2})-run(\d+)\.tar\.gz$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A schedule's copy is due this long before a whole day (week) has passed, so it does not drift later each day. */
const SLACK_MS = 60 * 60 * 1000;

export interface BackupServiceDeps {
  db: Database;
  dataDir: string;
  settings: SettingsStore;
  events: HostEvents;
  log: Log;
  now: () => Date;
  version: string;
  /**
   * Closes the host's database and services, runs `swap`, and opens the host again on whatever `db`
   * then is (`revert` first, if the swapped-in folder will not open). Resolves to the new host's
   * backup service. Given by the composition root; without it restore is refused.
   */
  switchData?: (swap: () => void, revert: () => void) => Promise<BackupService>;
  /** Free bytes on the data folder's disk (tests of a full disk). */
  freeBytes?: (dir: string) => number;
}

export interface BackupServiceOptions {
  /** How often the schedule is checked (ms); 0 turns the timer off (tests call tick()). Default 10 min. */
  tickMs?: number;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += dirBytes(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

function diskFree(dir: string): number {
  const s = fs.statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

const MB = 1024 * 1024;

/** Why a folder cannot take copies now, in words; null when it can. */
export function folderProblem(folder: string): string | null {
  if (!path.isAbsolute(folder)) return `“${folder}” is not a full folder path (it should start at the top of a disk, like /Volumes/Backup or D:\\Backups).`;
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(folder);
  } catch {
    return `The folder “${folder}” is not there (is the disk plugged in?).`;
  }
  if (!stat.isDirectory()) return `“${folder}” is a file, not a folder.`;
  try {
    fs.accessSync(folder, fs.constants.W_OK);
  } catch {
    return `Anima may not write into “${folder}”.`;
  }
  return null;
}

function kindFromName(name: string, where: 'data' | 'folder', sub?: string): BackupKind {
  if (sub === NIGHTLY_DIR || NIGHTLY_NAME.test(name)) return 'nightly';
  if (name.includes('-before-restore')) return 'before-restore';
  if (where === 'folder' && name.includes('-scheduled')) return 'scheduled';
  return 'manual';
}

/** The copies in one folder: each `.tar.gz` with what its manifest (or its name and date) says. */
function copiesIn(dir: string, where: 'data' | 'folder', idPrefix: string, sub?: string, manifestDir?: string): BackupCopy[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: BackupCopy[] = [];
  for (const name of names) {
    if (!name.endsWith(COPY_SUFFIX) || name.startsWith('.')) continue;
    const file = path.join(dir, name);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      continue;
    }
    if (!stat.isFile()) continue;
    const m = readManifest(file, manifestDir);
    const nightly = NIGHTLY_NAME.exec(name);
    out.push({
      id: `${idPrefix}${name}`,
      where,
      kind: m?.kind ?? kindFromName(name, where, sub),
      name,
      createdAt: m?.createdAt ?? stat.mtime.toISOString(),
      bytes: stat.size,
      sleepDay: m?.sleepDay ?? nightly?.[1] ?? null,
      runId: m?.runId ?? (nightly ? Number(nightly[2]) : null),
      counts: m?.counts ?? null,
      schemaVersion: m?.schemaVersion ?? null,
      images: m?.files ? { files: m.files.attachments.length + m.files.companion.length, bytes: m.files.bytes } : null,
    });
  }
  return out;
}

/** The picture files in a copy's (or kept folder's) `.files` folder, with their inode, or null when it has none. */
function pictureFiles(dir: string): { bytes: number; key: string }[] | null {
  if (!fs.existsSync(dir)) return null;
  const out: { bytes: number; key: string }[] = [];
  for (const folder of FILE_FOLDERS) {
    const sub = path.join(dir, folder);
    for (const f of FILE_SOURCES[folder].list(sub)) {
      const stat = fs.statSync(path.join(sub, f.name), { throwIfNoEntry: false });
      if (stat) out.push({ bytes: stat.size, key: `${stat.dev}:${stat.ino}` });
    }
  }
  return out;
}

const sameCounts = (a: BackupCounts, b: BackupCounts) => a.conversations === b.conversations && a.messages === b.messages && a.memories === b.memories;

interface Located {
  copy: BackupCopy;
  path: string;
  manifest: CopyManifest | null;
  /** Where its pictures are (a `.files` folder, which may not exist). */
  files: string;
}

export class BackupService {
  private timer: ReturnType<typeof setInterval> | undefined;
  private first: ReturnType<typeof setTimeout> | undefined;
  private running: BackupProgress | null = null;
  private work: Promise<unknown> | null = null;
  private closed = false;
  private lastFolderWarning: string | null = null;
  /** Set while this host closes for a restore's switch: closing must not wait for that restore. */
  private switchingOut = false;

  constructor(
    private readonly deps: BackupServiceDeps,
    private readonly opts: BackupServiceOptions = {},
  ) {}

  get ownDir(): string {
    return path.join(this.deps.dataDir, OWN_DIR);
  }

  start(): void {
    this.sweepOrphanPictures();
    const every = this.opts.tickMs ?? 10 * 60_000;
    if (every <= 0 || this.timer) return;
    const tick = () => void this.tick().catch((err: Error) => this.deps.log('warn', `backup schedule: ${err.message}`));
    this.timer = setInterval(tick, every);
    this.timer.unref();
    // Not at the very start: the host has enough to do then.
    this.first = setTimeout(tick, Math.min(every, 60_000));
    this.first.unref();
  }

  /**
   * Picture folders left without their copy (a copy removed by hand, a kill between the two removals)
   * go at start: nothing else would ever list or remove them. The person's own folder is swept when
   * a copy is next written there (it may be an unplugged disk now).
   */
  private sweepOrphanPictures(): void {
    const nightly = path.join(this.deps.dataDir, NIGHTLY_DIR);
    const places: { copies: string; pictures: string }[] = [
      { copies: nightly, pictures: nightlyManifestDir(nightly) },
      { copies: this.ownDir, pictures: this.ownDir },
    ];
    for (const { copies, pictures } of places) {
      try {
        sweepOrphanFiles(copies, pictures);
      } catch (err) {
        this.deps.log('warn', `backups: leftover pictures in ${pictures} not removed: ${(err as Error).message}`);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.first) clearTimeout(this.first);
    this.timer = undefined;
    if (!this.switchingOut) await this.work?.catch(() => {});
  }

  private async backupSettings(): Promise<BackupSettings> {
    return (await this.deps.settings.get()).backups;
  }

  /** Every copy, newest first. */
  async list(): Promise<BackupCopy[]> {
    const { dataDir } = this.deps;
    const { folder } = await this.backupSettings();
    const copies = [
      ...copiesIn(path.join(dataDir, NIGHTLY_DIR), 'data', `data:${NIGHTLY_DIR}/`, NIGHTLY_DIR, nightlyManifestDir(path.join(dataDir, NIGHTLY_DIR))),
      ...copiesIn(this.ownDir, 'data', `data:${OWN_DIR}/`),
      ...(folder && folderProblem(folder) === null ? copiesIn(folder, 'folder', 'folder:') : []),
    ];
    for (const name of fs.readdirSync(dataDir)) {
      if (!name.startsWith(BEFORE_PREFIX) || name.endsWith(FILES_SUFFIX)) continue;
      const dir = path.join(dataDir, name);
      if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      const m = readManifest(dir);
      copies.push({
        id: `previous:${name}`,
        where: 'previous',
        kind: 'before-restore',
        name,
        createdAt: m?.createdAt ?? fs.statSync(dir).mtime.toISOString(),
        bytes: dirBytes(dir),
        sleepDay: null,
        runId: null,
        counts: m?.counts ?? null,
        schemaVersion: m?.schemaVersion ?? null,
        images: null,
      });
    }
    copies.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.name < b.name ? 1 : -1));
    this.countPictures(copies, folder);
    return copies;
  }

  /** Where a listed copy's pictures are (whether or not it has any). */
  private filesDirOf(copy: BackupCopy, folder: string | null): string {
    const { dataDir } = this.deps;
    if (copy.where === 'previous') return path.join(dataDir, copy.name + FILES_SUFFIX);
    if (copy.where === 'folder') return filesPath(path.join(folder!, copy.name));
    const file = path.join(dataDir, copy.id.slice('data:'.length));
    return filesPath(file, copy.kind === 'nightly' ? nightlyManifestDir(path.dirname(file)) : undefined);
  }

  /**
   * Adds each copy's pictures to its size, each file once: a picture that is a hard link to the
   * data folder's own file, or to one a newer copy in the list already counted, costs nothing more.
   * A kept folder's pictures (moved there, not linked) are counted like the rest.
   */
  private countPictures(copies: BackupCopy[], folder: string | null): void {
    const seen = new Set<string>();
    const live = pictureFiles(this.deps.dataDir) ?? [];
    for (const f of live) seen.add(f.key);
    for (const copy of copies) {
      const files = pictureFiles(this.filesDirOf(copy, folder));
      if (!files) continue;
      if (copy.where === 'previous' || !copy.images) copy.images = { files: files.length, bytes: files.reduce((n, f) => n + f.bytes, 0) };
      for (const f of files) {
        if (seen.has(f.key)) continue;
        seen.add(f.key);
        copy.bytes += f.bytes;
      }
    }
  }

  async state(): Promise<BackupsState> {
    const settings = await this.backupSettings();
    const copies = await this.list();
    const scheduled = copies.filter((c) => c.where === 'folder' && c.kind === 'scheduled');
    const last = scheduled[0]?.createdAt ?? null;
    const interval = settings.schedule === 'daily' ? DAY_MS : 7 * DAY_MS;
    const next =
      settings.schedule === 'off' || !settings.folder
        ? null
        : new Date(Math.max(this.deps.now().getTime(), last ? Date.parse(last) + interval - SLACK_MS : 0)).toISOString();
    return {
      copies,
      settings,
      folderProblem: settings.folder ? folderProblem(settings.folder) : null,
      nextScheduledAt: next,
      lastScheduledAt: last,
      running: this.running,
    };
  }

  async setFolder(folder: string | null): Promise<BackupsState> {
    const current = await this.backupSettings();
    if (folder !== null) {
      const problem = folderProblem(folder);
      if (problem) throw new ApiError('invalid_input', problem, 'folder');
      const probe = path.join(folder, `.anima-write-test-${process.pid}`);
      try {
        fs.writeFileSync(probe, 'ok');
        fs.rmSync(probe, { force: true });
      } catch (err) {
        throw new ApiError('invalid_input', `Anima could not write into “${folder}”: ${(err as Error).message}`, 'folder');
      }
      folder = path.resolve(folder);
    }
    await this.deps.settings.update({ backups: { ...current, folder, schedule: folder === null ? 'off' : current.schedule } });
    return this.state();
  }

  async setSchedule(patch: { schedule?: BackupSettings['schedule']; keep?: number }): Promise<BackupsState> {
    const current = await this.backupSettings();
    if (patch.schedule && patch.schedule !== 'off' && !current.folder) {
      throw new ApiError('invalid_input', 'Choose a folder for the copies first: the schedule writes them there.', 'schedule');
    }
    await this.deps.settings.update({ backups: { ...current, ...patch } });
    return this.state();
  }

  private progress(p: Omit<BackupProgress, 'error'> & { error?: string | null }): void {
    const event: BackupProgress = { ...p, error: p.error ?? null };
    this.running = p.phase === 'done' || p.phase === 'failed' ? null : event;
    this.deps.events.emit('backups.progress', event);
  }

  /** One copy or restore at a time: a second is refused while the first runs. */
  private exclusive<T>(operation: BackupProgress['operation'], run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ApiError('conflict', 'Anima is closing.'));
    if (this.work) {
      return Promise.reject(new ApiError('conflict', this.running?.operation === 'restore' ? 'A restore is under way.' : 'A copy is being written right now.'));
    }
    this.running = { operation, phase: operation === 'backup' ? 'dumping' : 'unpacking', done: 0, total: 1, error: null };
    const work = run().finally(() => {
      this.work = null;
      this.running = null;
    });
    this.work = work;
    return work;
  }

  private copyName(kind: BackupKind, at: Date, where: 'data' | 'folder'): string {
    return `${where === 'folder' ? 'anima-' : ''}${stamp(at)}-${kind}${COPY_SUFFIX}`;
  }

  private async write(kind: BackupKind, where: 'data' | 'folder' | 'both'): Promise<BackupCopy[]> {
    const { db, now, version } = this.deps;
    const settings = await this.backupSettings();
    const dirs: { dir: string; where: 'data' | 'folder' }[] = [];
    if (where !== 'folder') dirs.push({ dir: this.ownDir, where: 'data' });
    if (where !== 'data') {
      if (!settings.folder) throw new ApiError('invalid_input', 'There is no backup folder chosen yet.', 'where');
      const problem = folderProblem(settings.folder);
      if (problem) throw new ApiError('invalid_input', problem, 'where');
      dirs.push({ dir: settings.folder, where: 'folder' });
    }
    const at = now();
    const out: BackupCopy[] = [];
    // One dump per place (the names differ: the data folder's copies are the app's own, the person's
    // folder may hold copies of several data folders). The dump is what costs; places are one or two.
    for (const [i, d] of dirs.entries()) {
      const name = this.copyName(kind, at, d.where);
      const written = await writeCopy(db, [d.dir], name, {
        kind,
        createdAt: at,
        appVersion: version,
        dataDir: this.deps.dataDir,
        onProgress: (phase, done, total) =>
          kind !== 'before-restore' && this.progress({ operation: 'backup', phase, done: i * total + done, total: dirs.length * total }),
      });
      out.push({
        id: d.where === 'data' ? `data:${OWN_DIR}/${name}` : `folder:${name}`,
        where: d.where,
        kind,
        name,
        createdAt: written.manifest.createdAt,
        bytes: written.bytes,
        sleepDay: null,
        runId: null,
        counts: written.manifest.counts,
        schemaVersion: written.manifest.schemaVersion,
        images: written.manifest.files
          ? { files: written.manifest.files.attachments.length + written.manifest.files.companion.length, bytes: written.manifest.files.bytes }
          : null,
      });
    }
    return out;
  }

  /** "Back up now": a copy into the data folder's copies, the chosen folder, or both. */
  makeNow(where: 'data' | 'folder' | 'both'): Promise<BackupCopy[]> {
    return this.exclusive('backup', async () => {
      try {
        const copies = await this.write('manual', where);
        this.progress({ operation: 'backup', phase: 'done', done: 1, total: 1 });
        return copies;
      } catch (err) {
        this.progress({ operation: 'backup', phase: 'failed', done: 0, total: 1, error: (err as Error).message });
        throw err;
      }
    });
  }

  /** The schedule: a copy into the chosen folder when a day (a week) has passed since its last one. */
  async tick(): Promise<BackupCopy | null> {
    if (this.closed || this.work) return null;
    const settings = await this.backupSettings();
    if (!settings.folder || settings.schedule === 'off') return null;
    const problem = folderProblem(settings.folder);
    if (problem) {
      if (problem !== this.lastFolderWarning) this.deps.log('warn', `backup schedule: no copy now — ${problem}`);
      this.lastFolderWarning = problem;
      return null;
    }
    this.lastFolderWarning = null;
    const state = await this.state();
    if (state.nextScheduledAt && Date.parse(state.nextScheduledAt) > this.deps.now().getTime()) return null;
    return this.exclusive('backup', async () => {
      const [copy] = await this.write('scheduled', 'folder');
      this.progress({ operation: 'backup', phase: 'done', done: 1, total: 1 });
      // Retention: the schedule's own copies beyond `keep` go, oldest first; the person's never.
      const scheduled = copiesIn(settings.folder!, 'folder', 'folder:')
        .filter((c) => c.kind === 'scheduled')
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
      for (const old of scheduled.slice(settings.keep)) removeCopy(path.join(settings.folder!, old.name));
      return copy ?? null;
    });
  }

  /** Where a listed copy is on disk: a file, or (previous) a whole database folder. Ids never carry a path. */
  private async locate(id: string): Promise<Located> {
    const copy = (await this.list()).find((c) => c.id === id);
    if (!copy) throw new ApiError('not_found', 'That copy is no longer there.', 'id');
    const { dataDir } = this.deps;
    const folder = (await this.backupSettings()).folder;
    const where =
      copy.where === 'previous'
        ? path.join(dataDir, copy.name)
        : copy.where === 'folder'
          ? path.join(folder!, copy.name)
          : path.join(dataDir, id.slice('data:'.length));
    const manifestDir = copy.where === 'data' && copy.kind === 'nightly' ? nightlyManifestDir(path.dirname(where)) : undefined;
    return { copy, path: where, manifest: readManifest(where, manifestDir), files: this.filesDirOf(copy, folder) };
  }

  /**
   * Restores a copy: unpack into a new folder and prove it (open, migrate, read every table, compare
   * with its manifest), then copy the current state, then switch. A copy that fails any check is
   * refused with the reason and nothing is changed.
   */
  restore(id: string): Promise<RestoreResult> {
    return this.exclusive('restore', async () => {
      try {
        return await this.restoreNow(id);
      } catch (err) {
        this.progress({ operation: 'restore', phase: 'failed', done: 0, total: 5, error: (err as Error).message });
        throw err;
      }
    });
  }

  private async restoreNow(id: string): Promise<RestoreResult> {
    const { dataDir, switchData } = this.deps;
    if (!switchData) throw new ApiError('conflict', 'This Anima cannot switch its data while running.');
    const source = await this.locate(id);
    const ts = stamp(this.deps.now());
    const restoring = `${RESTORING_PREFIX}${ts}`;
    const restoringDir = path.join(dataDir, restoring);
    const total = 5;
    const step = (phase: BackupProgress['phase'], done: number) => this.progress({ operation: 'restore', phase, done, total });

    step('unpacking', 0);
    let counts: BackupCounts;
    let files: FileFolder[];
    try {
      const verified = await this.unpackAndVerify(source, restoringDir, (phase) => step(phase, phase === 'unpacking' ? 0 : 1));
      counts = verified.counts;
      files = this.prepareFiles(source, restoringDir + FILES_SUFFIX, verified.imageIds);
    } catch (err) {
      fs.rmSync(restoringDir, { recursive: true, force: true });
      fs.rmSync(restoringDir + FILES_SUFFIX, { recursive: true, force: true });
      const reason = err instanceof ApiError ? err.message : (err as Error).message;
      throw new ApiError('invalid_input', `This copy cannot be restored: ${reason} Nothing was changed.`, 'id');
    }
    pausePoint('verified');

    // The current state, copied before anything is switched (the restore's first way back).
    step('safety-copy', 2);
    let safety: BackupCopy;
    try {
      [safety] = (await this.write('before-restore', 'data')) as [BackupCopy];
    } catch (err) {
      fs.rmSync(restoringDir, { recursive: true, force: true });
      fs.rmSync(restoringDir + FILES_SUFFIX, { recursive: true, force: true });
      throw new ApiError('internal', `The copy of your current data could not be written (${(err as Error).message}), so nothing was restored or changed.`);
    }
    pausePoint('safety-copy');

    // The second way back: the database folder itself, renamed, not deleted. Its manifest is the safety copy's.
    const journal: SwitchJournal = { restoring, before: `${BEFORE_PREFIX}${ts}`, startedAt: this.deps.now().toISOString(), files };
    const safetyManifest = readManifest(path.join(this.ownDir, safety.name));
    if (safetyManifest) writeFileAtomic(path.join(dataDir, journal.before) + MANIFEST_SUFFIX, JSON.stringify(safetyManifest, null, 2));
    const carried = await this.backupSettings();
    step('switching', 3);
    this.switchingOut = true;
    const next = await switchData(
      () => switchDatabase(dataDir, journal),
      () => revertSwitch(dataDir, journal),
    );
    // The folder and schedule belong to this computer, not to the copy: they stay as they were.
    await next.afterRestore(carried);
    const restored = { ...source.copy };
    return { restored, safetyCopy: safety, previous: journal.before, counts };
  }

  /** Called on the host opened after a switch. */
  async afterRestore(backups: BackupSettings): Promise<void> {
    await this.deps.settings.update({ backups });
    this.progress({ operation: 'restore', phase: 'done', done: 5, total: 5 });
  }

  /**
   * Room for the unpacked copy, the copy of the current state (at most the database's own size) and
   * the new database's first writes; refused in words before anything is written.
   */
  private checkRoom(unpackedBytes: number): void {
    const { dataDir } = this.deps;
    const needed = unpackedBytes + dirBytes(path.join(dataDir, 'db')) + 64 * MB;
    const free = (this.deps.freeBytes ?? diskFree)(dataDir);
    if (free < needed) {
      throw new Error(`there is not enough room on the disk: about ${Math.ceil(needed / MB)} MB are needed and ${Math.floor(free / MB)} MB are free.`);
    }
  }

  /** Unpacks (or copies) into `dir`, opens it, migrates it, reads every table; returns what it holds. */
  private async unpackAndVerify(
    source: Located,
    dir: string,
    phase: (p: 'unpacking' | 'verifying') => void,
  ): Promise<{ counts: BackupCounts; imageIds: Set<string> }> {
    if (source.manifest && source.manifest.schemaVersion > SCHEMA_VERSION) {
      throw new Error(`it was written by a newer Anima (schema ${source.manifest.schemaVersion}, this one knows ${SCHEMA_VERSION}); update Anima first.`);
    }
    let template: Blob | undefined;
    if (source.copy.where === 'previous') {
      if (!fs.existsSync(path.join(source.path, 'PG_VERSION'))) throw new Error('the folder holds no database.');
      this.checkRoom(dirBytes(source.path));
      fs.cpSync(source.path, dir, { recursive: true });
    } else {
      const bytes = fs.readFileSync(source.path);
      if (source.manifest && source.manifest.bytes !== bytes.length) {
        throw new Error(`the file is ${bytes.length} bytes, but ${source.manifest.bytes} were written — it was cut short or changed.`);
      }
      let tar: Buffer;
      try {
        tar = gunzipSync(bytes);
      } catch (err) {
        throw new Error(`the file is damaged or cut short (${(err as Error).message}).`);
      }
      if (!tar.includes('PG_VERSION')) throw new Error('the file is not a copy of an Anima database.');
      template = new Blob([bytes]);
      this.checkRoom(tar.length);
    }
    let db: Database | undefined;
    try {
      db = await openDatabaseDir(dir, {
        template,
        // A copy that did not really load would leave PostgreSQL's empty initial database here: no tables.
        beforeMigrate: async (opened) => {
          pausePoint('unpacked');
          phase('verifying');
          const n = (await opened.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_catalog.pg_tables WHERE schemaname = 'public'`)).rows[0]!.n;
          if (n === 0) throw new Error('the file unpacked to an empty database.');
        },
      });
      const tables = await tableCounts(db);
      const { counts } = await contentCounts(db, tables);
      const recorded = source.manifest?.counts;
      if (recorded && !sameCounts(recorded, counts)) {
        throw new Error(
          `it unpacked to ${counts.conversations} conversations, ${counts.messages} messages and ${counts.memories} memories, but ${recorded.conversations}, ${recorded.messages} and ${recorded.memories} were copied.`,
        );
      }
      // The pictures its messages show (every version, the trash too): each must come back with it.
      const imageIds = await new Conversations(db).imageIdsInUse();
      await db.close();
      db = undefined;
      return { counts, imageIds };
    } catch (err) {
      await db?.close().catch(() => {});
      if (err instanceof Error && /newer Anima/.test(err.message)) throw new Error(err.message.replace(/; nothing was changed\.?$/i, '.'));
      throw err instanceof Error && !err.message.startsWith('the ') && !err.message.startsWith('it ')
        ? new Error(`it would not open as a database (${err.message}).`)
        : err;
    }
  }

  /**
   * Proves a copy's pictures and builds them, linked, in `target` (beside the unpacked database).
   * Returns the folders the switch swaps: none for a copy without pictures (the database only; the
   * pictures here stay). Refused in words, with nothing written elsewhere, when a picture the
   * restored messages show is missing or its bytes do not give its name, or a companion picture
   * does not match its recorded SHA-256. A picture the messages show that the copy lacks is taken
   * from the data folder when the same content is there (the names are the content's hash).
   */
  private prepareFiles(source: Located, target: string, imageIds: Set<string>): FileFolder[] {
    const listed = source.manifest?.files;
    if (!fs.existsSync(source.files)) {
      if (listed && listed.attachments.length + listed.companion.length > 0) {
        throw new Error(`the pictures it holds (${listed.attachments.length + listed.companion.length} files) are no longer beside it.`);
      }
      return [];
    }
    const live = attachmentsDir(this.deps.dataDir);
    const plan: { folder: FileFolder; name: string; from: string }[] = [];
    const damaged: string[] = [];
    const missing: string[] = [];
    for (const folder of FILE_FOLDERS) {
      const dir = path.join(source.files, folder);
      const have = new Map(FILE_SOURCES[folder].list(dir).map((f) => [f.name, f.bytes]));
      const recorded = new Map<string, { bytes: number; sha256?: string }>(
        (folder === 'attachments' ? listed?.attachments : listed?.companion)?.map((f) => [f.name, f]) ?? [],
      );
      for (const [name, bytes] of have) {
        const file = path.join(dir, name);
        const r = recorded.get(name);
        if (r && r.bytes !== bytes) damaged.push(name);
        else if (folder === 'companion') {
          const content = fs.readFileSync(file);
          if (!avatarMatchesName(name, content) || (r?.sha256 && r.sha256 !== createHash('sha256').update(content).digest('hex'))) damaged.push(name);
          else plan.push({ folder, name, from: file });
        } else if (imageIds.has(name) && !imageMatchesName(name, fs.readFileSync(file))) damaged.push(name);
        else plan.push({ folder, name, from: file });
      }
      for (const name of recorded.keys()) if (!have.has(name) && folder === 'companion') missing.push(name);
    }
    for (const id of imageIds) {
      if (plan.some((p) => p.folder === 'attachments' && p.name === id) || damaged.includes(id)) continue;
      const here = path.join(live, id);
      if (fs.existsSync(here) && imageMatchesName(id, fs.readFileSync(here))) plan.push({ folder: 'attachments', name: id, from: here });
      else missing.push(id);
    }
    const few = (names: string[]) => names.slice(0, 3).join(', ') + (names.length > 3 ? ` and ${names.length - 3} more` : '');
    if (damaged.length > 0)
      throw new Error(`${damaged.length} of the pictures it holds are damaged (their bytes are not what their names say): ${few(damaged)}.`);
    if (missing.length > 0) throw new Error(`${missing.length} of the pictures its messages show are missing from it: ${few(missing)}.`);
    // Pictures from another disk (the person's folder) are copied, not linked: room for them first.
    const here = fs.statSync(this.deps.dataDir).dev;
    const copying = plan.reduce((n, p) => {
      const stat = fs.statSync(p.from);
      return stat.dev === here ? n : n + stat.size;
    }, 0);
    if (copying > 0) {
      const free = (this.deps.freeBytes ?? diskFree)(this.deps.dataDir);
      if (free < copying + 64 * MB) {
        throw new Error(
          `there is not enough room on the disk for its pictures: about ${Math.ceil(copying / MB) + 64} MB are needed and ${Math.floor(free / MB)} MB are free.`,
        );
      }
    }
    fs.rmSync(target, { recursive: true, force: true });
    for (const folder of FILE_FOLDERS) fs.mkdirSync(path.join(target, folder), { recursive: true, mode: 0o700 });
    for (const p of plan) {
      if (!placeFile([p.from], path.join(target, p.folder, p.name))) throw new Error(`the picture ${p.name} could not be put in place.`);
    }
    return [...FILE_FOLDERS];
  }
}
