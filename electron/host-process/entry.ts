// Entry of the utility process that runs the host (utilityProcess.fork in main). PGlite is WASM and
// single-threaded: here a long query cannot freeze the window. This file never imports `electron`;
// Electron gives a utility process `process.parentPort` instead.
import { createHost } from '../host/index.js';
import { runHostProcess, type ParentPortLike } from './run.js';
import type { Log } from './port-server.js';

const log: Log = (level, message) => {
  const line = `[host] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.info(line);
};

const parentPort = (process as unknown as { parentPort?: ParentPortLike | null }).parentPort;
if (!parentPort) {
  console.error('host-process: started outside an Electron utility process; use `node dist/cli.mjs serve` instead.');
  process.exit(1);
}

process.on('unhandledRejection', (reason) => {
  log('error', `unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
});

runHostProcess({ parentPort, createHost, log, exit: (code) => process.exit(code) });
