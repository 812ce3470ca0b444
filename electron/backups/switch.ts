// The one moment a restore touches the person's data: renames in the data folder, `db` →
// `db.before-restore-<ts>` and the proven copy `db.restoring-<ts>` → `db`; with a copy that holds
// the pictures, first the current `attachments/` and `companion/` go aside into
// `db.before-restore-<ts>.files/`, and the copy's (proven, in `db.restoring-<ts>.files/`) come in
// before the database does. A small journal (`restore.json`) is written before the first rename, so
// that a process killed between them is finished — or undone — the next time anything opens the
// folder (db/open.ts calls finishInterruptedSwitch first). The old folders are never deleted: they
// stay as the way back. Nothing here imports the rest of the app: the database opener calls it.
import fs from 'node:fs';
import path from 'node:path';
import { pausePoint } from './pause.js';

export const JOURNAL_FILE = 'restore.json';
export const RESTORING_PREFIX = 'db.restoring-';
export const BEFORE_PREFIX = 'db.before-restore-';
/** Beside `db.restoring-<ts>` and `db.before-restore-<ts>`: the picture folders that go with them. */
export const FILES_SUFFIX = '.files';
/** The folders of the data folder a switch may carry besides `db` (attachments/store.ts, companion/avatar.ts). */
export const FILE_FOLDERS = ['attachments', 'companion'] as const;
export type FileFolder = (typeof FILE_FOLDERS)[number];

export interface SwitchJournal {
  /** The proven copy's folder name, beside `db`. */
  restoring: string;
  /** What `db` is renamed to. */
  before: string;
  startedAt: string;
  /**
   * The picture folders this switch swaps too (from `<restoring>.files/`; the current ones go to
   * `<before>.files/`). Absent or empty: the database alone (a copy made before copies held them;
   * the pictures here stay as they are).
   */
  files?: FileFolder[];
}

/** "2026-12-05T05:42:00.123Z" → "20261205-054200-123": sorts by time, safe in any file system. */
export function stamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').replace(/Z$/, '');
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Not every file system lets a folder be synced (Windows); the renames are still atomic there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes a file aside, syncs it and renames it into place: a kill leaves the old file or the new, never half. */
export function writeFileAtomic(file: string, body: string | Uint8Array): void {
  const tmp = `${file}.partial`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    if (typeof body === 'string') fs.writeSync(fd, body);
    else fs.writeSync(fd, body);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

function readJournal(dataDir: string): SwitchJournal | null {
  try {
    const j = JSON.parse(fs.readFileSync(path.join(dataDir, JOURNAL_FILE), 'utf8')) as Partial<SwitchJournal>;
    const safe = (name: unknown, prefix: string) => typeof name === 'string' && name.startsWith(prefix) && !name.includes('/') && !name.includes('\\');
    if (safe(j.restoring, RESTORING_PREFIX) && safe(j.before, BEFORE_PREFIX)) {
      const files = Array.isArray(j.files) ? FILE_FOLDERS.filter((f) => j.files!.includes(f)) : [];
      return { ...(j as SwitchJournal), files };
    }
  } catch {
    // No journal (the usual case), or one that is not ours: nothing to finish.
  }
  return null;
}

const exists = (p: string) => fs.existsSync(p);

/** Moves each folder named that is at `from` and not at `to`; true when any moved. */
function moveFolders(names: readonly FileFolder[], from: string, to: string): boolean {
  let moved = false;
  for (const name of names) {
    if (!exists(path.join(from, name)) || exists(path.join(to, name))) continue;
    fs.mkdirSync(to, { recursive: true, mode: 0o700 });
    fs.renameSync(path.join(from, name), path.join(to, name));
    moved = true;
  }
  return moved;
}

/** Removes a folder only when nothing is left in it. */
function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Not empty, or not there: either way it stays as it is.
  }
}

/**
 * Swaps the proven copy in. The database must be closed. Every step is a rename on one file system;
 * the journal says what was meant, so finishInterruptedSwitch can complete it after a kill. The
 * order: the current picture folders aside, `db` aside, the copy's picture folders in, the copy's
 * database in — so `db` present with the proven folder still there means "not begun" (undone at the
 * next start), and `db` missing means "the rest of it is to do" (finished at the next start).
 */
export function switchDatabase(dataDir: string, journal: SwitchJournal): void {
  const db = path.join(dataDir, 'db');
  const files = journal.files ?? [];
  writeFileAtomic(path.join(dataDir, JOURNAL_FILE), JSON.stringify(journal));
  pausePoint('journal-written');
  // Made even when there is nothing to set aside: the kept folder then says it had no pictures
  // (not that it is from before copies held them).
  if (files.length > 0) fs.mkdirSync(path.join(dataDir, journal.before + FILES_SUFFIX), { recursive: true, mode: 0o700 });
  if (moveFolders(files, dataDir, path.join(dataDir, journal.before + FILES_SUFFIX))) {
    fsyncDir(dataDir);
    pausePoint('files-aside');
  }
  fs.renameSync(db, path.join(dataDir, journal.before));
  fsyncDir(dataDir);
  pausePoint('between-renames');
  if (moveFolders(files, path.join(dataDir, journal.restoring + FILES_SUFFIX), dataDir)) {
    fsyncDir(dataDir);
    pausePoint('files-in');
  }
  fs.renameSync(path.join(dataDir, journal.restoring), db);
  fsyncDir(dataDir);
  pausePoint('renamed');
  removeIfEmpty(path.join(dataDir, journal.restoring + FILES_SUFFIX));
  fs.rmSync(path.join(dataDir, JOURNAL_FILE), { force: true });
  fsyncDir(dataDir);
}

/**
 * Puts the folders the restore replaced back (the restored ones are kept beside them, renamed
 * `db.restoring-…-failed` and `db.restoring-….files-failed`): for a restored database that would not
 * open after the switch.
 */
export function revertSwitch(dataDir: string, journal: SwitchJournal): void {
  const db = path.join(dataDir, 'db');
  const before = path.join(dataDir, journal.before);
  if (!fs.existsSync(before)) return;
  const files = journal.files ?? [];
  if (files.length > 0) {
    for (const name of files) {
      if (!exists(path.join(before + FILES_SUFFIX, name))) continue;
      if (exists(path.join(dataDir, name))) moveFolders([name], dataDir, path.join(dataDir, `${journal.restoring}${FILES_SUFFIX}-failed`));
      moveFolders([name], before + FILES_SUFFIX, dataDir);
    }
    removeIfEmpty(before + FILES_SUFFIX);
  }
  if (fs.existsSync(db)) fs.renameSync(db, path.join(dataDir, `${journal.restoring}-failed`));
  fs.renameSync(before, db);
  fsyncDir(dataDir);
}

export type SwitchRecovery = 'none' | 'completed' | 'undone' | 'cleaned';

/**
 * Finishes what a killed restore left. With a journal: `db` missing and the proven copy there →
 * the copy's picture folders still to come and the last rename are done now (completed); `db`
 * missing and only the old folder there → it goes back, with the picture folders set aside (undone);
 * `db` present and the proven copy still there → the switch had not reached the database: picture
 * folders already set aside go back (undone); `db` present and no proven copy → it ended. Then any
 * `db.restoring-*` left (a copy being unpacked or checked when the process died, with its pictures)
 * is removed: it is only ever a copy of a backup that is still there. The old data is never touched.
 */
export function finishInterruptedSwitch(dataDir: string, log?: (message: string) => void): SwitchRecovery {
  if (!fs.existsSync(dataDir)) return 'none';
  let outcome: SwitchRecovery = 'none';
  const db = path.join(dataDir, 'db');
  const journal = readJournal(dataDir);
  if (journal) {
    const restoring = path.join(dataDir, journal.restoring);
    const before = path.join(dataDir, journal.before);
    const files = journal.files ?? [];
    let undone = false;
    if (!fs.existsSync(db) && fs.existsSync(restoring)) {
      moveFolders(files, restoring + FILES_SUFFIX, dataDir);
      fs.renameSync(restoring, db);
      outcome = 'completed';
      log?.(`finished a restore that was interrupted: ${journal.before} holds the data from before it`);
    } else if (!fs.existsSync(db) && fs.existsSync(before)) {
      moveFolders(files, before + FILES_SUFFIX, dataDir);
      fs.renameSync(before, db);
      outcome = 'undone';
      undone = true;
      log?.('undid a restore that was interrupted: the data from before it is back');
    } else if (fs.existsSync(db) && fs.existsSync(restoring)) {
      undone = true;
      if (moveFolders(files, before + FILES_SUFFIX, dataDir)) {
        outcome = 'undone';
        log?.('undid a restore that was interrupted before its database was switched: the pictures from before it are back');
      }
    }
    // Emptied by an undo: nothing of it is kept (a finished switch keeps it, even empty, with its folder).
    if (undone) removeIfEmpty(before + FILES_SUFFIX);
    fsyncDir(dataDir);
    fs.rmSync(path.join(dataDir, JOURNAL_FILE), { force: true });
  }
  for (const name of fs.readdirSync(dataDir)) {
    if (!name.startsWith(RESTORING_PREFIX) || name.endsWith('-failed')) continue;
    fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    if (outcome === 'none') outcome = 'cleaned';
  }
  fs.rmSync(path.join(dataDir, `${JOURNAL_FILE}.partial`), { force: true });
  return outcome;
}
