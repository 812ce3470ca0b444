// The reliability suite's short run inside the unit suite: a few kill -9 cycles with the
// acknowledged-writes ledger, and a short bridge fuzz, against the app started from source (so it
// tests the code as it is, built or not). The full run is `npm run test:reliability`.
import { describe, expect, it } from 'vitest';
import { ApiError, parseInput } from '../../shared/api.js';
import { runFuzz } from './fuzz.js';
import { runKillLoop } from './kill-loop.js';
import { writeReport } from './harness.js';
import { verdicts } from './verdicts.js';

const CYCLES = Number(process.env.RELIABILITY_CYCLES ?? 5);
const REQUESTS = Number(process.env.RELIABILITY_REQUESTS ?? 150);

describe('reliability, short run', () => {
  it(`kill -9 at random moments ${CYCLES} times: no acknowledged write lost, every restart comes up`, { timeout: 900_000 }, async () => {
    const report = { cyclesPlanned: CYCLES, ...(await runKillLoop({ cycles: CYCLES, entry: 'source' })) };
    writeReport('kill-short', report);
    expect(report.problems).toEqual([]);
    expect(verdicts('kill', report)).toEqual([]);
    expect(report.acknowledgedWrites).toBeGreaterThan(0);
  });

  it(`fuzzes the bridge with ${REQUESTS} payloads derived from the schemas: no 5xx, refusals change nothing`, { timeout: 900_000 }, async () => {
    const report = await runFuzz({ requests: REQUESTS, entry: 'source' });
    writeReport('fuzz-short', { ...report });
    expect(report.problems).toEqual([]);
    expect(verdicts('fuzz', { ...report })).toEqual([]);
    expect(report.refused).toBeGreaterThan(0);
    expect(report.accepted).toBeGreaterThan(0);
  });

  it('a body nested 50,000 levels deep is refused as invalid input, not a 500', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    let thrown: unknown;
    try {
      parseInput('app.info', deep);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).code).toBe('invalid_input');
  });
});
