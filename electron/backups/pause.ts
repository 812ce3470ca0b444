// A test hook for the restore drill: with ANIMA_RESTORE_PAUSE_AT=<point> set, a restore reaching that
// named point prints "restore-paused <point>" and blocks its thread, so a test can kill the process
// exactly there (a SIGKILL cannot be imitated in-process). Without the variable it does nothing.
import fs from 'node:fs';

export type PausePoint = 'unpacked' | 'verified' | 'safety-copy' | 'journal-written' | 'files-aside' | 'between-renames' | 'files-in' | 'renamed';

export function pausePoint(point: PausePoint): void {
  if (process.env.ANIMA_RESTORE_PAUSE_AT !== point) return;
  // Written synchronously: the test may kill this process the moment it reads the line.
  fs.writeSync(1, `restore-paused ${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300_000);
}
