// The reliability suite in one command: npm run test:reliability (builds first, then runs every part
// at full size against dist/cli.mjs). Each part writes test/reliability/reports/<part>.json and
// prints a summary line; the exit code is 1 when any part found a failure.
//   node --import tsx --import ./scripts/register-sql.mjs test/reliability/run.ts \
//     [--parts kill,fuzz,streams,secrets,locks] [--cycles 200] [--requests 1500] [--entry dist|source] [--seed N] [--quick]
import { parseArgs } from 'node:util';
import { writeReport, type Entry } from './harness.js';
import { runKillLoop } from './kill-loop.js';
import { runFuzz } from './fuzz.js';
import { runLockCases } from './locks.js';
import { runSecretCorpus } from './secrets.js';
import { runStreamCorpus } from './streams.js';
import { verdicts } from './verdicts.js';

const { values } = parseArgs({
  options: {
    parts: { type: 'string', default: 'locks,streams,secrets,fuzz,kill' },
    cycles: { type: 'string', default: '200' },
    requests: { type: 'string', default: '1500' },
    entry: { type: 'string', default: 'dist' },
    seed: { type: 'string' },
    /** Leaves out the slow stream cases (a keep-alive flood takes twice the model timeout, 2 minutes). */
    quick: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const entry = values.entry as Entry;
const seed = values.seed === undefined ? undefined : Number(values.seed);
const log = values.verbose
  ? (line: string) => console.log(line)
  : (line: string) => (line.startsWith('cycle') ? process.stdout.write(`\r${line}   `) : undefined);
const parts = values.parts.split(',');
let failed = false;

for (const part of parts) {
  const t0 = Date.now();
  console.log(`[reliability] ${part}…`);
  let report: Record<string, unknown>;
  switch (part) {
    case 'kill':
      report = {
        cyclesPlanned: Number(values.cycles),
        ...(await runKillLoop({
          cycles: Number(values.cycles),
          entry,
          seed,
          log,
          onCycle: (so) => writeReport('kill', { cyclesPlanned: Number(values.cycles), ...so, running: true }, { quiet: true }),
        })),
      };
      process.stdout.write('\n');
      break;
    case 'fuzz':
      report = { ...(await runFuzz({ requests: Number(values.requests), entry, seed, log })) };
      break;
    case 'streams':
      report = { ...(await runStreamCorpus({ entry, quick: values.quick, log })) };
      break;
    case 'secrets':
      report = { ...(await runSecretCorpus({ entry, log })) };
      break;
    case 'locks':
      report = { ...(await runLockCases({ entry, log })) };
      break;
    default:
      console.error(`unknown part ${part}`);
      process.exit(2);
  }
  const failures = verdicts(part, report);
  report.failures = failures;
  report.ok = failures.length === 0;
  report.elapsedS ??= Math.round((Date.now() - t0) / 1000);
  writeReport(part, report);
  for (const f of failures) console.log(`  FAIL ${part}: ${f}`);
  if (failures.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
