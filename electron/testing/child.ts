// A TypeScript script in a Node process of its own, for the kill drills: its stdout is read line by
// line so a test can wait until the script says it reached a point, and then kill it with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(import.meta.dirname, '..', '..');

export interface ScriptChild {
  process: ChildProcess;
  /** Resolves once the process has exited (killed or not). */
  exited: Promise<void>;
  /**
   * The first stdout line matching `pattern`; rejects, with everything the child printed, when the
   * child exits first or after the spawn's `waitMs`.
   */
  waitFor(pattern: RegExp, what?: string): Promise<RegExpMatchArray>;
  /** SIGKILL, then wait until the process has exited and been reaped. */
  kill(): Promise<void>;
}

export interface ScriptChildOptions {
  /** Added to this process's environment (ANIMA_DEBUG is always cleared: its output is not a line protocol). */
  env?: Record<string, string>;
  /** Longest wait for a line or for the exit after a kill. Children boot tsx and PGlite on a busy machine: long. */
  waitMs?: number;
}

/** Runs `script` (a path to a .ts file) with tsx and the repository's SQL loader, from the repository root. */
export function spawnScript(script: string, args: string[], { env = {}, waitMs = 300_000 }: ScriptChildOptions = {}): ScriptChild {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-sql.mjs', script, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ANIMA_DEBUG: '', ...env },
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  let gone = false;
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      wake();
      resolve();
    }),
  );
  const said = () => `\n--- child stdout ---\n${lines.join('\n')}\n--- child stderr ---\n${stderr}`;

  const waitFor = (pattern: RegExp, what = String(pattern)) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timed out after ${waitMs / 1000} s waiting for ${what}${said()}`)), waitMs);
      const done = (result: RegExpMatchArray | Error) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const check = () => {
        const match = lines.map((l) => pattern.exec(l)).find((m) => m !== null);
        if (match) done(match);
        else if (gone) done(new Error(`the child exited before ${what}${said()}`));
      };
      waiters.add(check);
      check();
    });

  return {
    process: child,
    exited,
    waitFor,
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the killed child did not exit within ${waitMs / 1000} s`)), waitMs);
        void exited.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
