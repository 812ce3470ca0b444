// Headless commands. `serve` runs the whole app in browser mode: the host plus the HTTP + SSE
// bridge on 127.0.0.1, printing the one URL (with its per-run token) to open.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiError } from '../shared/api.js';
import { defaultDataDir } from './host/data-dir.js';
import { createHost } from './host/index.js';
import { startServer } from './serve/server.js';

const USAGE = `Usage: anima serve [--port N] [--data-dir DIR] [--no-open]

  serve     Run Anima in your browser: prints the address to open.
            --port       port on 127.0.0.1 (default: a free one, or ANIMA_PORT)
            --data-dir   where the companion's data lives (default: ANIMA_DATA_DIR or your app-data folder)
            --no-open    do not try to open a browser window`;

/** The built renderer: next to this bundle (dist/renderer), or dist/ at the repo root when run from source. */
function findStaticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [process.env.ANIMA_STATIC_DIR, path.join(here, 'renderer'), path.join(here, '..', 'dist', 'renderer')];
  for (const dir of candidates) {
    if (dir && fs.existsSync(path.join(dir, 'index.html'))) return dir;
  }
  throw new Error('The app page is not built yet. Run `npm run build` first (npm start and npm run serve do this for you).');
}

function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // Printing the address is enough; opening a window is a courtesy.
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      'no-open': { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port ?? process.env.ANIMA_PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, not “${values.port}”.`);
  const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : defaultDataDir();
  const staticDir = findStaticDir();

  // Quiet unless debugging: the address line below must be the first URL a person (or a script) sees.
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    if (level === 'info' && !process.env.ANIMA_DEBUG) return;
    (level === 'error' ? console.error : console.warn)(`[anima ${level}] ${message}`);
  };
  const host = await createHost({ dataDir, mode: 'browser', log });
  const server = await startServer({ host, staticDir, port, log });
  console.log(`Anima is running at ${server.url}`);
  console.log(`Your companion's data is in ${dataDir}. Press Ctrl+C to stop.`);
  if (!values['no-open'] && !process.env.CI) openBrowser(server.url);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\nStopping Anima (${signal})…`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await server.close().catch(() => {});
    await host.close().catch((err: Error) => console.error(err.message));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'serve':
      return serve(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      console.error(`Unknown command “${command}”.\n\n${USAGE}`);
      process.exit(2);
  }
}

main().catch((err: unknown) => {
  // Known failures (a locked data folder, an unbuilt app) are sentences for a person, not stack traces.
  console.error(err instanceof ApiError || err instanceof Error ? `Anima could not start: ${err.message}` : err);
  process.exit(1);
});
