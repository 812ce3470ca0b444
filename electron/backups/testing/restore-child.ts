// A host in a process of its own, for the restore drill: a SIGKILL cannot be imitated in-process.
//   ANIMA_RESTORE_PAUSE_AT=<point> node --import tsx --import ./scripts/register-sql.mjs \
//     electron/backups/testing/restore-child.ts DATA_DIR COPY_ID
// Opens the data folder with createHost, prints "ready", restores the copy and prints "restored"
// (or "refused <message>"). With a pause point set, the restore prints "restore-paused <point>" there
// and blocks (backups/pause.ts), so the test kills it exactly at that point.
import fs from 'node:fs';
import { createHost } from '../../host/index.js';

const [dataDir, copyId] = process.argv.slice(2);
if (!dataDir || !copyId) {
  console.error('usage: restore-child.ts DATA_DIR COPY_ID');
  process.exit(2);
}
// Written synchronously: the test may kill this process the moment it reads a line.
const say = (line: string) => fs.writeSync(1, `${line}\n`);

const host = await createHost({
  dataDir,
  detectLocalServers: false,
  sleep: { tickMs: 0 },
  backups: { tickMs: 0 },
  log: (level, message) => say(`log ${level} ${message.replace(/\n/g, ' ')}`),
});
say('ready');
try {
  await host.api['backups.restore']({ id: copyId });
  say('restored');
} catch (err) {
  say(`refused ${(err as Error).message}`);
}
await host.close();
process.exit(0);
