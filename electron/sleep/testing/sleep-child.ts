// A host in a process of its own, for tests that kill it in the middle of a sleep cycle: a SIGKILL
// cannot be imitated in-process (nothing after it runs — no finally, no close, no lock release).
//   node --import tsx --import ./scripts/register-sql.mjs electron/sleep/testing/sleep-child.ts DATA_DIR BASE_URL \
//     [--model NAME] [--context N] [--hold-snapshot]
// It opens an already seeded data folder with createHost, saves the loopback model at BASE_URL as the
// connection (under the model name given, so the test's fake server can tell processes apart), starts "sleep now" and prints a line per event: "progress RUN STEP STATUS", then
// "finished RUN STATUS". --hold-snapshot blocks the snapshot step (synchronously, before it dumps
// anything) after printing "snapshot-held", so the test can kill the process inside that step.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createHost } from '../../host/index.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { model: { type: 'string', default: 'fake-model' }, context: { type: 'string' }, 'hold-snapshot': { type: 'boolean' } },
});
const [dataDir, baseUrl] = positionals;
if (!dataDir || !baseUrl) {
  console.error('usage: sleep-child.ts DATA_DIR BASE_URL [--model NAME] [--context N] [--hold-snapshot]');
  process.exit(2);
}

// Written synchronously: the test may kill this process the moment it reads a line.
const say = (line: string) => fs.writeSync(1, `${line}\n`);

const holdSnapshot = () => {
  say('snapshot-held');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300_000);
  return Number.MAX_SAFE_INTEGER;
};

const host = await createHost({
  dataDir,
  detectLocalServers: false,
  sleep: { tickMs: 0 },
  // A call the test leaves hanging must still be hanging when the test gets round to the kill.
  providerTimeoutMs: 300_000,
  log: (level, message) => say(`log ${level} ${message.replace(/\n/g, ' ')}`),
  ...(values['hold-snapshot'] ? { freeBytes: holdSnapshot } : {}),
});
host.on((event, payload) => {
  if (event === 'sleep.progress') say(`progress ${payload.runId} ${payload.stepId} ${payload.status}`);
  if (event === 'sleep.finished') {
    say(`finished ${payload.runId} ${payload.status}`);
    // Not expected in a kill test; leave cleanly so a test that went wrong does not leave a process behind.
    void host.close().then(() => process.exit(0));
  }
});
await host.api['providers.save']({
  kind: 'openai-compatible',
  name: 'fake',
  baseUrl,
  model: values.model,
  ...(values.context ? { contextTokens: Number(values.context) } : {}),
});
const started = await host.api['sleep.now']({});
say(`started ${started.runId} ${started.sleepDay}`);
