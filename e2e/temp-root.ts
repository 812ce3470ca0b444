// Every folder a spec makes under the system's temporary folder (the app's data folders, imports,
// vaults, Chromium's profiles) goes into one folder of this run, removed when the run ends: a run
// leaves nothing behind, whether or not each spec cleaned up after itself. The workers are started
// after this setup and inherit TMPDIR, which os.tmpdir() reads.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-run-'));
  // Open to every user, as the system's own is: the PostgreSQL cluster a spec starts runs as its own user.
  fs.chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}
