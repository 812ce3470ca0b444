// Settings → Data → "Erase everything": the person typed the word shown, so everything Anima keeps
// in the data folder goes and a fresh, empty companion starts (settings at their defaults, onboarding
// again). There is no safety copy first — the person asked for their data to be gone — but there is
// never a mix either: a fresh database is created and migrated beside `db`, swapped in the way a
// restore swaps (switch.ts: journal, two renames, the host rebuilt on it), and only then are the old
// database folder and the rest removed. A small journal of our own (`erase.json`, written before the
// swap) lets the next start finish the removal after a kill, or drop the erase if the swap never began.
//
// Removed from the data folder:  db (the old one), db.before-restore-* (a restore's undo) and their
//   manifests, failed restore folders, snapshots/ (nightly copies), backups/ (copies made here and
//   before each restore), exports/ (exported archives), companion/ (its picture), attachments/ (the pictures attached in chat), the saved API keys (secrets.json in the
//   desktop app, secrets-browser.json in browser mode, and any unreadable copy of them).
// Not touched: the person's own backup folder (only the setting naming it is reset), downloaded
//   on-device models (models/: program files, nothing of the person), the lock file.
// An import's upload lives only in the host's memory: closing the services for the swap drops it.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import { ERASE_WORDS, type EraseResult } from '../../shared/api/app.js';
import type { Log } from '../../shared/log.js';
import { openDatabaseDir } from '../db/open.js';
import type { SettingsStore } from '../settings/settings.js';
import { SECRETS_FILE } from '../settings/secrets.js';
import { COPY_SUFFIX, MANIFEST_SUFFIX } from './copies.js';
import type { BackupService } from './service.js';
import { NIGHTLY_DIR, OWN_DIR } from './service.js';
import {
  BEFORE_PREFIX,
  FILES_SUFFIX,
  finishInterruptedSwitch,
  JOURNAL_FILE,
  RESTORING_PREFIX,
  revertSwitch,
  stamp,
  switchDatabase,
  writeFileAtomic,
  type SwitchJournal,
} from './switch.js';

export const ERASE_JOURNAL = 'erase.json';
/** archive/exports.ts writes here (this room does not import the archive's). */
const EXPORTS_DIR = 'exports';
/** companion/avatar.ts keeps the companion's picture here. */
const COMPANION_DIR = 'companion';
/** attachments/store.ts keeps the images attached in chat here. */
const ATTACHMENTS_DIR = 'attachments';
/** The desktop app's OS-encrypted key file (host-process/os-encrypted-secrets.ts), beside the browser-mode one. */
const DESKTOP_SECRETS_FILE = 'secrets.json';

interface EraseJournal extends SwitchJournal {
  /** True once the fresh database is `db`; before that, a start finds the switch done by `before` being there. */
  switched: boolean;
  /** The person's own backup folder: never removed, even if it was chosen inside the data folder. */
  backupFolder: string | null;
}

/** A test hook like pause.ts's, for the erase drill: prints "restore-paused <point>" and blocks there. */
function erasePause(point: 'erase-fresh' | 'erase-deleting'): void {
  if (process.env.ANIMA_RESTORE_PAUSE_AT !== point) return;
  fs.writeSync(1, `restore-paused ${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300_000);
}

/** Whether what the person typed is the word shown (in either language). */
export function isEraseWord(typed: string): boolean {
  const word = typed.trim().toLowerCase();
  return Object.values(ERASE_WORDS).some((w) => w.toLowerCase() === word);
}

const isSecretsFile = (name: string) =>
  [SECRETS_FILE, DESKTOP_SECRETS_FILE].some((f) => name === f || name.startsWith(`${f}.`) || name.startsWith(`${f.replace(/\.json$/, '')}.`));

function countFiles(dir: string, suffix: string): number {
  try {
    return fs.readdirSync(dir).filter((n) => n.endsWith(suffix) && !n.startsWith('.')).length;
  } catch {
    return 0;
  }
}

/** Everything the erase removes besides the old database, by name in the data folder. */
function erasedNames(dataDir: string, journal: EraseJournal): string[] {
  const names: string[] = [];
  for (const name of fs.readdirSync(dataDir)) {
    if (
      name === journal.before ||
      name.startsWith(BEFORE_PREFIX) ||
      (name.startsWith(RESTORING_PREFIX) && name.endsWith('-failed')) ||
      name === NIGHTLY_DIR ||
      name === OWN_DIR ||
      name === EXPORTS_DIR ||
      name === COMPANION_DIR ||
      name === ATTACHMENTS_DIR ||
      name === JOURNAL_FILE ||
      name === `${JOURNAL_FILE}.partial` ||
      isSecretsFile(name)
    ) {
      names.push(name);
    }
  }
  // The old database first: it is what the person most wants gone.
  return names.sort((a, b) => (a === journal.before ? -1 : b === journal.before ? 1 : 0));
}

const inside = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Removes what the erase removes; returns the names that would not go (the journal stays for them). */
function removeErased(dataDir: string, journal: EraseJournal, log?: Log): string[] {
  const left: string[] = [];
  const folder = journal.backupFolder ? path.resolve(journal.backupFolder) : null;
  for (const name of erasedNames(dataDir, journal)) {
    const full = path.join(dataDir, name);
    // The person's own folder is theirs, wherever they put it.
    if (folder && inside(folder, full)) continue;
    try {
      fs.rmSync(full, { recursive: true, force: true });
    } catch (err) {
      left.push(name);
      log?.('warn', `erase: could not remove ${name} yet (${(err as Error).message}); the next start tries again`);
    }
    if (name === journal.before) erasePause('erase-deleting');
  }
  if (left.length === 0) fs.rmSync(path.join(dataDir, ERASE_JOURNAL), { force: true });
  return left;
}

function readEraseJournal(dataDir: string): EraseJournal | null {
  try {
    const j = JSON.parse(fs.readFileSync(path.join(dataDir, ERASE_JOURNAL), 'utf8')) as Partial<EraseJournal>;
    const safe = (name: unknown, prefix: string) => typeof name === 'string' && name.startsWith(prefix) && !name.includes('/') && !name.includes('\\');
    if (safe(j.restoring, RESTORING_PREFIX) && safe(j.before, BEFORE_PREFIX)) {
      return { ...(j as EraseJournal), switched: j.switched === true, backupFolder: typeof j.backupFolder === 'string' ? j.backupFolder : null };
    }
  } catch {
    // No erase was under way (the usual case).
  }
  return null;
}

export type EraseRecovery = 'none' | 'completed' | 'dropped';

/**
 * Called at start, before the database opens: finishes an erase a kill interrupted. Once the fresh
 * database had been swapped in (or the swap is finished now from its journal), the removal is done
 * again to the end; if the swap never began, the old data is still `db` and the erase is dropped.
 */
export function finishInterruptedErase(dataDir: string, log?: Log): EraseRecovery {
  const journal = readEraseJournal(dataDir);
  if (!journal) {
    fs.rmSync(path.join(dataDir, `${ERASE_JOURNAL}.partial`), { force: true });
    return 'none';
  }
  finishInterruptedSwitch(dataDir, (m) => log?.('info', m));
  const switched = journal.switched || fs.existsSync(path.join(dataDir, journal.before));
  if (!switched) {
    fs.rmSync(path.join(dataDir, ERASE_JOURNAL), { force: true });
    log?.('warn', 'An erase was interrupted before it began: your data is as it was. Erase again in Settings → Data if you still want to.');
    return 'dropped';
  }
  const left = removeErased(dataDir, journal, log);
  log?.('warn', `finished an erase that was interrupted${left.length ? ` (still left: ${left.join(', ')})` : ''}`);
  return 'completed';
}

export interface EraseDeps {
  dataDir: string;
  settings: SettingsStore;
  backups: BackupService;
  log: Log;
  now: () => Date;
  /** A migrated database to start from instead of initdb (tests; the host's own template). */
  template?: Blob | File;
  /** The host's folder switch (the one a restore uses); without it erasing is refused. */
  switchData?: (swap: () => void, revert: () => void) => Promise<BackupService>;
}

export class EraseEverything {
  private running: Promise<EraseResult> | null = null;

  constructor(private readonly deps: EraseDeps) {}

  /** One erase at a time: a second call while one runs is refused (the first one answers). */
  erase(confirm: string): Promise<EraseResult> {
    if (this.running) return Promise.reject(new ApiError('conflict', 'Everything is being erased already.'));
    const run = this.eraseNow(confirm).finally(() => (this.running = null));
    this.running = run;
    return run;
  }

  private async eraseNow(confirm: string): Promise<EraseResult> {
    const { dataDir, switchData, log } = this.deps;
    if (!isEraseWord(confirm)) {
      throw new ApiError(
        'invalid_input',
        `To erase everything, type the word “${ERASE_WORDS.en}” (or “${ERASE_WORDS['zh-CN']}”) exactly as shown. Nothing was erased.`,
        'confirm',
      );
    }
    if (!switchData) throw new ApiError('conflict', 'This Anima cannot replace its data while running. Nothing was erased.');
    const running = (await this.deps.backups.state()).running;
    if (running) {
      throw new ApiError(
        'conflict',
        `${running.operation === 'restore' ? 'A restore' : 'A backup'} is under way; erase once it has finished. Nothing was erased.`,
      );
    }
    const backupFolder = (await this.deps.settings.get()).backups.folder;
    const ts = stamp(this.deps.now());
    const journal: EraseJournal = {
      restoring: `${RESTORING_PREFIX}${ts}`,
      before: `${BEFORE_PREFIX}${ts}`,
      startedAt: this.deps.now().toISOString(),
      switched: false,
      backupFolder,
    };
    const freshDir = path.join(dataDir, journal.restoring);

    // The fresh database, made and migrated beside the current one; the current one is untouched.
    try {
      const fresh = await openDatabaseDir(freshDir, { template: this.deps.template });
      await fresh.close();
    } catch (err) {
      fs.rmSync(freshDir, { recursive: true, force: true });
      throw new ApiError('internal', `A fresh data folder could not be made (${(err as Error).message}). Nothing was erased.`);
    }
    erasePause('erase-fresh');

    // What will go, counted now for the person to read afterwards.
    const names = fs.readdirSync(dataDir);
    const result: EraseResult = {
      safetyCopies: countFiles(path.join(dataDir, NIGHTLY_DIR), COPY_SUFFIX) + countFiles(path.join(dataDir, OWN_DIR), COPY_SUFFIX),
      // A kept folder's pictures (`….files`) are part of it, not another one.
      previousData: names.filter((n) => n.startsWith(BEFORE_PREFIX) && !n.endsWith(MANIFEST_SUFFIX) && !n.endsWith(FILES_SUFFIX)).length,
      exports: countFiles(path.join(dataDir, EXPORTS_DIR), '.zip'),
      keys: names.some(isSecretsFile),
      backupFolder,
      left: [],
    };

    writeFileAtomic(path.join(dataDir, ERASE_JOURNAL), JSON.stringify(journal));
    try {
      await switchData(
        () => switchDatabase(dataDir, journal),
        () => revertSwitch(dataDir, journal),
      );
    } catch (err) {
      // The fresh folder would not open after the swap: the old one was put back as `db`.
      fs.rmSync(path.join(dataDir, ERASE_JOURNAL), { force: true });
      fs.rmSync(path.join(dataDir, `${journal.restoring}-failed`), { recursive: true, force: true });
      throw new ApiError('internal', `The fresh data folder would not open (${(err as Error).message}); your data is as it was. Nothing was erased.`);
    }
    writeFileAtomic(path.join(dataDir, ERASE_JOURNAL), JSON.stringify({ ...journal, switched: true }));
    result.left = removeErased(dataDir, journal, log);
    log('info', 'erased everything in the data folder: a fresh companion starts');
    return result;
  }
}
