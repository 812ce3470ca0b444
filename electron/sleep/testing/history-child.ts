// A host in a process of its own reading imported history, for the test that kills it (SIGKILL) in the
// middle of a call: nothing after a kill runs, so it cannot be imitated in-process.
//   node --import tsx --import ./scripts/register-sql.mjs electron/sleep/testing/history-child.ts DATA_DIR
// The folder already holds the import and a model connection. It asks for the catch-up (a day a pass,
// the timer every 200 ms) and prints "history READ TOTAL ACTIVE" for each sleep.history event.
import fs from 'node:fs';
import { createHost } from '../../host/index.js';

const [dataDir] = process.argv.slice(2);
if (!dataDir) {
  console.error('usage: history-child.ts DATA_DIR');
  process.exit(2);
}
// Written synchronously: the test may kill this process the moment it reads a line.
const say = (line: string) => fs.writeSync(1, `${line}\n`);

const host = await createHost({
  dataDir,
  detectLocalServers: false,
  sleep: { tickMs: 0 },
  history: { tickMs: 200, idleMs: 0, daysPerPass: 1 },
  // A call the test leaves hanging must still be hanging when the test gets round to the kill.
  providerTimeoutMs: 300_000,
  log: () => {},
});
host.on((event, payload) => {
  if (event === 'sleep.history') say(`history ${payload.daysRead} ${payload.daysTotal} ${payload.active}`);
});
const status = await host.api['sleep.readImportedHistory']({ action: 'start' });
say(`started ${status.daysRead} ${status.daysTotal}`);
