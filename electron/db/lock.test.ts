import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api.js';
import os from 'node:os';
import { acquireLock, LOCK_FILE } from './lock.js';

const children: ReturnType<typeof spawn>[] = [];
const tempDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'anima-lock-'));

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** Another process holding the lock, as a second Anima would. */
async function holdLockInChild(dataDir: string) {
  const script = `import { acquireLock } from ${JSON.stringify(path.resolve('electron/db/lock.ts'))};
    acquireLock(process.argv[1]); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return child;
}

describe('data folder lock', () => {
  it('refuses a second holder while the first is alive, with a clear message', async () => {
    const dir = tempDataDir();
    const child = await holdLockInChild(dir);
    let error: unknown;
    try {
      acquireLock(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('data_dir_locked');
    expect((error as ApiError).message).toContain(`process ${child.pid}`);
  });

  it('takes over a lock left by a killed process', async () => {
    const dir = tempDataDir();
    const child = await holdLockInChild(dir);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    let staleFrom: number | undefined;
    const lock = acquireLock(dir, (previous) => (staleFrom = previous?.pid));
    expect(staleFrom).toBe(child.pid);
    expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it('treats an unreadable lock file as stale', () => {
    const dir = tempDataDir();
    fs.writeFileSync(path.join(dir, LOCK_FILE), '{half');
    const lock = acquireLock(dir);
    expect(fs.existsSync(lock.path)).toBe(true);
    lock.release();
  });

  it('refuses a second lock in the same process', () => {
    const dir = tempDataDir();
    const lock = acquireLock(dir);
    expect(() => acquireLock(dir)).toThrow(/already open with this data folder \(this process/);
    lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (reused pid)', async () => {
    const dir = tempDataDir();
    const child = await holdLockInChild(dir);
    const file = path.join(dir, LOCK_FILE);
    // The child is alive, but the lock says a process with another start time wrote it.
    const written = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(typeof written.processStart).toBe('string');
    fs.writeFileSync(file, JSON.stringify({ ...written, processStart: '1' }));
    let staleFrom: number | undefined;
    const lock = acquireLock(dir, (previous) => (staleFrom = previous?.pid));
    expect(staleFrom).toBe(child.pid);
    lock.release();
  });

  it('takes over a lock written before the machine booted, even if its pid runs now', () => {
    const dir = tempDataDir();
    const before = Date.now() - os.uptime() * 1000 - 3_600_000;
    fs.writeFileSync(
      path.join(dir, LOCK_FILE),
      JSON.stringify({ pid: 1, hostname: os.hostname(), startedAt: new Date(before).toISOString(), bootedAt: before - 60_000 }),
    );
    const lock = acquireLock(dir);
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over a lock with its own pid that it does not hold (a container restarted as the same pid)', () => {
    const dir = tempDataDir();
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
    const lock = acquireLock(dir);
    expect(() => acquireLock(dir)).toThrow(/this process/);
    lock.release();
  });

  it('says clearly when the lock path is a folder, and leaves the folder alone', () => {
    const dir = tempDataDir();
    fs.mkdirSync(path.join(dir, LOCK_FILE));
    fs.writeFileSync(path.join(dir, LOCK_FILE, 'keep.txt'), 'x');
    expect(() => acquireLock(dir)).toThrow(/is a folder, not Anima's lock file/);
    expect(fs.readFileSync(path.join(dir, LOCK_FILE, 'keep.txt'), 'utf8')).toBe('x');
  });
});
