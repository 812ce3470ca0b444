// The one moment a restore touches the person's data: two renames in the data folder, `db` →
// `db.before-restore-<ts>` and the proven copy `db.restoring-<ts>` → `db`. A small journal
// (`restore.json`) is written before the first rename, so that a process killed between them is
// finished — or undone — the next time anything opens the folder (db/open.ts calls
// finishInterruptedSwitch first). The old folder is never deleted: it stays as the way back.
// Nothing here imports the rest of the app: the database opener calls it.
import fs from 'node:fs';
import path from 'node:path';
import { pausePoint } from './pause.js';

export const JOURNAL_FILE = 'restore.json';
export const RESTORING_PREFIX = 'db.restoring-';
export const BEFORE_PREFIX = 'db.before-restore-';

export interface SwitchJournal {
  /** The proven copy's folder name, beside `db`. */
  restoring: string;
  /** What `db` is renamed to. */
  before: string;
  startedAt: string;
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
    if (safe(j.restoring, RESTORING_PREFIX) && safe(j.before, BEFORE_PREFIX)) return j as SwitchJournal;
  } catch {
    // No journal (the usual case), or one that is not ours: nothing to finish.
  }
  return null;
}

/**
 * Swaps the proven copy in. The database must be closed. Every step is a rename on one file system;
 * the journal says what was meant, so finishInterruptedSwitch can complete it after a kill.
 */
export function switchDatabase(dataDir: string, journal: SwitchJournal): void {
  const db = path.join(dataDir, 'db');
  writeFileAtomic(path.join(dataDir, JOURNAL_FILE), JSON.stringify(journal));
  pausePoint('journal-written');
  fs.renameSync(db, path.join(dataDir, journal.before));
  fsyncDir(dataDir);
  pausePoint('between-renames');
  fs.renameSync(path.join(dataDir, journal.restoring), db);
  fsyncDir(dataDir);
  pausePoint('renamed');
  fs.rmSync(path.join(dataDir, JOURNAL_FILE), { force: true });
  fsyncDir(dataDir);
}

/**
 * Puts the folder the restore replaced back as `db` (the restored one is kept beside it, renamed
 * `db.restoring-…-failed`): for a restored database that would not open after the switch.
 */
export function revertSwitch(dataDir: string, journal: SwitchJournal): void {
  const db = path.join(dataDir, 'db');
  const before = path.join(dataDir, journal.before);
  if (!fs.existsSync(before)) return;
  if (fs.existsSync(db)) fs.renameSync(db, path.join(dataDir, `${journal.restoring}-failed`));
  fs.renameSync(before, db);
  fsyncDir(dataDir);
}

export type SwitchRecovery = 'none' | 'completed' | 'undone' | 'cleaned';

/**
 * Finishes what a killed restore left. With a journal: `db` missing and the proven copy there →
 * the second rename is done now (completed); `db` missing and only the old folder there → it goes
 * back (undone); `db` present → the switch never began, or ended. Then any `db.restoring-*` left
 * (a copy being unpacked or checked when the process died) is removed: it is only ever a copy of
 * a backup file that is still there. The old data is never touched.
 */
export function finishInterruptedSwitch(dataDir: string, log?: (message: string) => void): SwitchRecovery {
  if (!fs.existsSync(dataDir)) return 'none';
  let outcome: SwitchRecovery = 'none';
  const db = path.join(dataDir, 'db');
  const journal = readJournal(dataDir);
  if (journal) {
    const restoring = path.join(dataDir, journal.restoring);
    const before = path.join(dataDir, journal.before);
    if (!fs.existsSync(db) && fs.existsSync(restoring)) {
      fs.renameSync(restoring, db);
      outcome = 'completed';
      log?.(`finished a restore that was interrupted: ${journal.before} holds the data from before it`);
    } else if (!fs.existsSync(db) && fs.existsSync(before)) {
      fs.renameSync(before, db);
      outcome = 'undone';
      log?.('undid a restore that was interrupted: the data from before it is back');
    }
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
