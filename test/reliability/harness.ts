// What every part of the reliability suite shares: the real app started in browser mode as its own
// process (so kill -9 is a real crash), calls through the HTTP bridge with the per-run token, waiting
// on conditions with a bound, and the JSON report each part writes.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

/** The repository root (this file is test/reliability/harness.ts). */
export const REPO = path.resolve(import.meta.dirname, '..', '..');
export const REPORTS_DIR = path.join(REPO, 'test', 'reliability', 'reports');

/**
 * How the app is started. 'dist' runs the build (`npm run build` first), as `npm run serve` does;
 * 'source' runs electron/cli.ts through tsx, so the unit suite tests the code as it is now.
 */
export type Entry = 'dist' | 'source';

export interface AppEndpoint {
  origin: string;
  token: string;
}

export interface AppProcess {
  child: ChildProcess;
  dataDir: string;
  /** Resolves with the address once the app printed it; rejects if it exited first or took too long. */
  ready: Promise<AppEndpoint>;
  /** Resolves when the process has exited, with how. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** SIGKILL, then wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (a clean quit), SIGKILL after 15 s; waits for the exit. */
  stop(): Promise<void>;
}

const URL_LINE = /Anima is running at http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+)/;

let staticDir: string | undefined;
/** The source entry needs a page to serve; the suite only calls the API, so a stub page is enough. */
function stubStaticDir(): string {
  if (staticDir) return staticDir;
  staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-rel-static-'));
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>\n');
  return staticDir;
}

export function newDataDir(prefix = 'anima-rel-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function spawnApp(dataDir: string, entry: Entry, startTimeoutMs = 180_000): AppProcess {
  const args =
    entry === 'dist'
      ? ['dist/cli.mjs', 'serve', '--no-open', '--port', '0', '--data-dir', dataDir]
      : ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'electron/cli.ts', 'serve', '--no-open', '--port', '0', '--data-dir', dataDir];
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '1' };
  if (entry === 'source') env.ANIMA_STATIC_DIR = stubStaticDir();
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<AppEndpoint>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the app did not start within ${startTimeoutMs / 1000} s:\n${output}`)), startTimeoutMs);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = output.match(URL_LINE);
      if (m) {
        clearTimeout(timer);
        resolve({ origin: `http://127.0.0.1:${m[1]}`, token: m[2]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the app exited (${signal ?? code}) before listening:\n${output}`));
    });
  });
  ready.catch(() => undefined); // a start killed on purpose is not an unhandled rejection
  const done = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    dataDir,
    ready,
    exited,
    output: () => output,
    async kill9() {
      if (!done()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (done()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface CallResult {
  status: number;
  /** Parsed JSON, or the raw text when the body was not JSON. */
  body: any;
}

/**
 * POST /api/call/<method> with the token; never throws for an HTTP status (a network error is status 0).
 * One connection per call (no keep-alive): a reused socket the server just closed would read as "no answer".
 */
export function call(app: AppEndpoint, method: string, input?: unknown, opts: { raw?: string; timeoutMs?: number } = {}): Promise<CallResult> {
  const body = Buffer.from(opts.raw ?? (input === undefined ? '' : JSON.stringify(input)), opts.raw !== undefined ? 'latin1' : 'utf8');
  return new Promise((resolve) => {
    const req = http.request(
      `${app.origin}/api/call/${method}`,
      {
        method: 'POST',
        agent: false,
        headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json', 'Content-Length': body.length },
        timeout: opts.timeoutMs ?? 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => resolve({ status: 0, body: String(err) }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${(opts.timeoutMs ?? 60_000) / 1000} s`)));
    req.on('error', (err) => resolve({ status: 0, body: String(err) }));
    req.end(body);
  });
}

/** Like call, but throws unless the answer is 2xx: for setup and checks. */
export async function must(app: AppEndpoint, method: string, input: unknown = {}): Promise<any> {
  const r = await call(app, method, input);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} → ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  return r.body;
}

/** Polls `check` until it returns a value other than undefined, or throws after timeoutMs. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Points the app at the fake model and turns off what would run on its own (automatic sleep, the nap). */
export async function configure(app: AppEndpoint, baseUrl: string): Promise<string> {
  const providers = (await must(app, 'providers.list')) as { id: string; baseUrl: string }[];
  let provider = providers.find((p) => p.baseUrl === baseUrl);
  provider ??= await must(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl, model: 'fake-model' });
  await must(app, 'settings.update', {
    onboarded: true,
    chatProviderId: provider!.id,
    backgroundProviderId: provider!.id,
    sleep: { auto: false, nap: false },
  });
  return provider!.id;
}

/** Writes test/reliability/reports/<part>.json and prints a one-screen summary. */
export function writeReport(part: string, report: Record<string, unknown>, { quiet = false } = {}): string {
  fs.mkdirSync(REPORTS_DIR, { recursive: true });
  const file = path.join(REPORTS_DIR, `${part}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ part, at: new Date().toISOString(), ...report }, null, 2)}\n`);
  const counts = Object.entries(report)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  if (!quiet) console.log(`[reliability] ${part}: ${counts} (${path.relative(REPO, file)})`);
  return file;
}

/** A seeded pseudo-random source, so a failing run can be repeated with its seed. */
export function random(seed: number): { next(): number; int(n: number): number; pick<T>(list: readonly T[]): T } {
  let s = seed >>> 0 || 1;
  const next = () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (list) => list[Math.floor(next() * list.length)]! };
}
