// One live host per data directory: two PGlite instances on the same files would corrupt them.
// The lock is a small JSON file created exclusively. A lock whose process is gone (kill -9, power
// loss) is stale and taken over, so a crash never locks a person out of their own data. A live
// process is the holder only if it is the same process that wrote the lock: after a reboot, or in a
// container that starts every run as pid 1, the pid alone is reused by someone else.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';

interface LockInfo {
  pid: number;
  hostname: string;
  startedAt: string;
  /** When the machine booted (ms since 1970, to the second), to notice a reboot. */
  bootedAt?: number;
  /** Linux: the holder's start time in clock ticks after boot (/proc/PID/stat field 22), to notice a reused pid. */
  processStart?: string;
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export const LOCK_FILE = 'anima.lock';

/** Lock files this process holds now: its own pid in a lock file is only "this process" if it is one of these. */
const heldHere = new Set<string>();

const bootedAt = () => Math.round((Date.now() - os.uptime() * 1000) / 1000) * 1000;

/** The kernel's start time of a process (Linux), or undefined where /proc does not tell. */
function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the name) is in parentheses and may hold spaces: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Is the process that wrote this lock (not just some process with its pid) still running here? */
function holderRuns(file: string, holder: LockInfo): boolean {
  if (holder.pid === process.pid) return heldHere.has(file);
  // Booted since the lock was written (a minute's slack for clock adjustments): every pid is new.
  if (holder.bootedAt !== undefined && Math.abs(holder.bootedAt - bootedAt()) > 60_000) return false;
  if (!isAlive(holder.pid)) return false;
  const start = holder.processStart === undefined ? undefined : processStart(holder.pid);
  return start === undefined || start === holder.processStart;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else — still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid === 'number' && typeof info.hostname === 'string') return info as LockInfo;
  } catch {
    // Unreadable or half-written: treated as stale below.
  }
  return undefined;
}

/**
 * Takes the data directory's lock or throws ApiError('data_dir_locked').
 * `onStale` is told when a dead process's lock was taken over.
 */
export function acquireLock(dataDir: string, onStale?: (previous: LockInfo | undefined) => void): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  const mine: LockInfo = {
    pid: process.pid,
    hostname: os.hostname(),
    startedAt: new Date().toISOString(),
    bootedAt: bootedAt(),
    processStart: processStart(process.pid),
  };
  const body = JSON.stringify(mine);

  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, body, { flag: 'wx', mode: 0o600 });
      heldHere.add(file);
      return makeLock(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
      throw new ApiError('data_dir_locked', `${file} is a folder, not Anima's lock file. Move it out of the data folder, then start Anima again.`);
    }
    const holder = readLock(file);
    // A lock from another machine (a synced folder) cannot be checked: respect it.
    const live = holder && (holder.hostname !== mine.hostname || holderRuns(file, holder));
    if (live) {
      const where = holder.pid === process.pid ? 'this process' : `process ${holder.pid}`;
      throw new ApiError(
        'data_dir_locked',
        `Anima is already open with this data folder (${where} on ${holder.hostname}, since ${holder.startedAt}). ` +
          `Close the other window first, or start with a different ANIMA_DATA_DIR.`,
      );
    }
    // Stale: remove and retry the exclusive create, so two starters racing for it cannot both win.
    onStale?.(holder);
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // Someone else removed it first; the next exclusive create decides.
    }
  }
  throw new ApiError('data_dir_locked', 'Could not take the data folder lock; another Anima is starting at the same time.');
}

function makeLock(file: string): DataDirLock {
  let released = false;
  return {
    path: file,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(file);
      const holder = readLock(file);
      if (holder?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}
