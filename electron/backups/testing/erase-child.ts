// A host in a process of its own, for the erase drill: a SIGKILL cannot be imitated in-process.
//   ANIMA_RESTORE_PAUSE_AT=<point> node --import tsx --import ./scripts/register-sql.mjs \
//     electron/backups/testing/erase-child.ts DATA_DIR [TEMPLATE]
// Opens the data folder with createHost, prints "ready", erases everything and prints "erased" (or
// "refused <message>"). With a pause point set, the erase prints "restore-paused <point>" there and
// blocks (backups/erase.ts, backups/pause.ts), so the test kills it exactly at that point.
import fs from 'node:fs';
import { createHost } from '../../host/index.js';

const [dataDir, templatePath] = process.argv.slice(2);
if (!dataDir) {
  console.error('usage: erase-child.ts DATA_DIR [TEMPLATE]');
  process.exit(2);
}
// Written synchronously: the test may kill this process the moment it reads a line.
const say = (line: string) => fs.writeSync(1, `${line}\n`);

const host = await createHost({
  dataDir,
  template: templatePath ? new Blob([fs.readFileSync(templatePath)]) : undefined,
  detectLocalServers: false,
  sleep: { tickMs: 0 },
  backups: { tickMs: 0 },
  log: (level, message) => say(`log ${level} ${message.replace(/\n/g, ' ')}`),
});
say('ready');
try {
  await host.api['app.eraseEverything']({ confirm: 'erase' });
  say('erased');
} catch (err) {
  say(`refused ${(err as Error).message}`);
}
await host.close();
process.exit(0);
