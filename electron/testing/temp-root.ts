// One temporary folder for a whole test run (vitest's global setup and Playwright's, e2e/temp-root.ts):
// every folder a test makes under the system's temporary folder (data folders, the PostgreSQL cluster,
// browser profiles) goes into it, and it is removed when the run ends, whether or not each test cleaned
// up after itself. The test processes are started after the setup and inherit TMPDIR, which
// os.tmpdir() reads.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Makes the run's folder and points TMPDIR at it; returns what removes it. */
export function runTempRoot(prefix: string): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // Open to every user, as the system's own is: the PostgreSQL cluster runs as its own user.
  fs.chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}
