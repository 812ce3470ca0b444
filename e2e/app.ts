// Starts the real app in browser mode (`node dist/cli.mjs serve`) as its own process, as a person
// would with `npm run serve`, on a data folder of the test's own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';

export interface RunningApp {
  url: string;
  origin: string;
  token: string;
  dataDir: string;
  process: ChildProcess;
  output: () => string;
  /** SIGTERM (a clean quit) or SIGKILL (a crash); resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

// The first loopback URL the app prints must be this one, with its token.
const URL_LINE = /^Anima is running at (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+))/m;

export function newDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-'));
}

/**
 * `args`: more `anima serve` options (e.g. --listen); `readyWhen`: further lines its output must hold
 * before the app counts as started (the loopback URL line is always awaited).
 */
export async function startApp(
  dataDir: string,
  env: Record<string, string> = {},
  { args = [], readyWhen = [] }: { args?: string[]; readyWhen?: RegExp[] } = {},
): Promise<RunningApp> {
  const child = spawn(process.execPath, ['dist/cli.mjs', 'serve', '--no-open', '--data-dir', dataDir, ...args], {
    env: { ...process.env, CI: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // no test holds it yet, so nothing else would ever stop it
      reject(new Error(`the app did not start within 60 s:\n${output}`));
    }, 60_000);
    const check = () => {
      const m = output.match(URL_LINE);
      if (m && readyWhen.every((line) => line.test(output))) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the app exited with ${code} before listening:\n${output}`));
    });
  });

  return {
    url: match[1]!,
    origin: `http://127.0.0.1:${match[2]}`,
    token: match[3]!,
    dataDir,
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Calls the app's API as the page would (tests use it to set up state quickly). */
// The result is JSON of whatever shape the method returns; tests assert on it.
export async function callApi(app: RunningApp, method: string, input: unknown = {}): Promise<any> {
  const res = await fetch(`${app.origin}/api/call/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  if (!res.ok) throw new Error(`${method}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** One conversation e2e/seed-conversations.ts wrote: a session of the fixture on its own past day. */
export interface SeededConversation {
  conversationId: string;
  day: string;
  messages: number;
}

/**
 * Past conversations written into `dataDir` through the app's own write path before the app starts
 * (e2e/seed-conversations.ts): the first `sessions` sessions of a LoCoMo-shaped `fixture`, at most
 * `turns` turns each. Returns what it wrote.
 */
export function seedConversations(dataDir: string, opts: { fixture: string; sessions: number; turns: number }): SeededConversation[] {
  const script = ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'e2e/seed-conversations.ts'];
  const args = ['--data-dir', dataDir, '--fixture', opts.fixture, '--sessions', String(opts.sessions), '--turns', String(opts.turns)];
  const result = spawnSync(process.execPath, [...script, ...args], { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`seeding failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as SeededConversation[];
}

export const SHOTS = path.resolve('e2e', 'screenshots');

/** A screenshot for people to look at, with animations finished so a fade-in is not caught half-way. */
export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}

/**
 * Closes every toast, so a screenshot or a click is not covered by one. One at a time from the top:
 * closing one renumbers the rest, and a toast may also leave by itself meanwhile.
 */
export async function dismissToasts(page: Page): Promise<void> {
  while ((await page.locator('.toast-close').count()) > 0)
    await page
      .locator('.toast-close')
      .first()
      .click({ timeout: 5_000 })
      .catch(() => {});
  await expect(page.getByTestId('toast')).toHaveCount(0);
}

// ---- Content-Security-Policy violations fail the test -----------------------------------------

/**
 * Every CSP violation on `page`, as the browser reports it: the `securitypolicyviolation` event in
 * each document (directive, what was blocked, where) and Chromium's console error for the same.
 */
export async function watchCsp(page: Page): Promise<() => string[]> {
  const violations: string[] = [];
  await page.exposeFunction('__animaCspViolation', (report: string) => violations.push(report));
  // A string: the root tsconfig has no DOM types, and this runs in the page, before its own scripts.
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
    window.__animaCspViolation(e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber + ' ' + e.sample);
  });`);
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  return () => [...violations];
}

/**
 * `test` with every page watched: a test that ends with a CSP violation on its page fails, naming
 * it (an inline <style> a library injects, a style="" attribute in HTML, a script from elsewhere).
 */
export const test = base.extend<{ page: Page }>({
  page: async ({ page }, use) => {
    const violations = await watchCsp(page);
    await use(page);
    expect(violations(), 'Content-Security-Policy violations on the page').toEqual([]);
  },
});
export { expect };
