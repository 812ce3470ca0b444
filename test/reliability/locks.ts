// Part 5: the data folder's lock, against the real app. A lock left by a dead process, by a pid now
// reused by another process (a container's pid 1, a reboot), or unreadable, must not keep a person
// out: the app starts. A lock path that is a folder is refused with its own message and left alone;
// a live app holding the folder keeps it (the second start is refused, the first still answers).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, newDataDir, spawnApp, type Entry } from './harness.js';

const LOCK_FILE = 'anima.lock';

export interface LockReport {
  cases: number;
  passed: number;
  results: { name: string; ok: boolean; detail: string }[];
  elapsedS: number;
}

interface LockCase {
  name: string;
  /** Prepares the data folder's lock before the start. */
  prepare(dataDir: string): void;
  /** 'start': the app must come up; else the start must be refused with a message matching this. */
  expect: 'start' | RegExp;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const lockBody = (info: Record<string, unknown>) => JSON.stringify({ hostname: os.hostname(), startedAt: '2026-01-01T00:00:00.000Z', ...info });
const bootedAt = () => Math.round((Date.now() - os.uptime() * 1000) / 1000) * 1000;

export const LOCK_CASES: LockCase[] = [
  { name: 'dead pid', prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), lockBody({ pid: deadPid() })), expect: 'start' },
  {
    name: 'reused pid (a live process that did not write it)',
    prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), lockBody({ pid: process.pid, bootedAt: bootedAt(), processStart: '1' })),
    expect: 'start',
  },
  {
    name: 'pid 1 before a reboot',
    prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), lockBody({ pid: 1, bootedAt: bootedAt() - 86_400_000 })),
    expect: 'start',
  },
  { name: 'garbage', prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), Buffer.from([0x00, 0xff, 0x7b, 0x22, 0x70, 0x69, 0x64])), expect: 'start' },
  { name: 'empty file', prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), ''), expect: 'start' },
  { name: 'JSON of the wrong shape', prepare: (d) => fs.writeFileSync(path.join(d, LOCK_FILE), '{"pid":"1","hostname":42}'), expect: 'start' },
  { name: 'a directory', prepare: (d) => fs.mkdirSync(path.join(d, LOCK_FILE)), expect: /is a folder/ },
];

export async function runLockCases(opts: { entry: Entry; log?: (line: string) => void }): Promise<LockReport> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const report: LockReport = { cases: 0, passed: 0, results: [], elapsedS: 0 };
  const record = (name: string, ok: boolean, detail: string) => {
    report.cases++;
    if (ok) report.passed++;
    report.results.push({ name, ok, detail });
    log(`  lock / ${name}: ${ok ? 'ok' : 'FAIL'} (${detail.slice(0, 120)})`);
  };

  for (const c of LOCK_CASES) {
    const dataDir = newDataDir('anima-rel-lock-');
    c.prepare(dataDir);
    const proc = spawnApp(dataDir, opts.entry);
    try {
      const app = await proc.ready;
      const info = await call(app, 'app.info', {});
      if (c.expect === 'start') record(c.name, info.status === 200, `started, app.info ${info.status}`);
      else record(c.name, false, `started although it should have been refused`);
    } catch (err) {
      const out = proc.output();
      if (c.expect === 'start') record(c.name, false, `did not start: ${String(err).slice(0, 300)}`);
      else {
        const leftAlone = c.name !== 'a directory' || fs.statSync(path.join(dataDir, LOCK_FILE)).isDirectory();
        record(c.name, c.expect.test(out) && leftAlone && !/\n\s+at /.test(out), `refused: ${out.trim().slice(0, 200)}`);
      }
    } finally {
      await proc.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  // A live holder keeps the folder: the second start is refused in words, the first keeps answering.
  const dataDir = newDataDir('anima-rel-lock-');
  const first = spawnApp(dataDir, opts.entry);
  try {
    const app = await first.ready;
    const second = spawnApp(dataDir, opts.entry);
    const refused = await second.ready.then(
      () => false,
      () => /already open/.test(second.output()),
    );
    await second.stop();
    const still = await call(app, 'app.info', {});
    record('a live app holds it', refused && still.status === 200, `second start: ${second.output().trim().slice(0, 160)}; first app.info ${still.status}`);
  } catch (err) {
    record('a live app holds it', false, String(err).slice(0, 300));
  } finally {
    await first.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  report.elapsedS = Math.round((Date.now() - started) / 1000);
  return report;
}
