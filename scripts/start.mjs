#!/usr/bin/env node
// `npm start` (after the build): open the desktop window when Electron can run here, otherwise —
// or when Electron dies at once — run the same app in browser mode, saying why in one line.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BROWSER = 'so Anima opens in your browser instead.';
/** An Electron that cannot start (missing libraries, no GPU, sandbox setup) fails within this. */
const EARLY_EXIT_MS = 5_000;

/** The Electron executable, or the reason there is none. */
function findElectron() {
  const require = createRequire(path.join(root, 'package.json'));
  try {
    require.resolve('electron');
  } catch {
    return { reason: `Electron is not installed (its download was not possible), ${BROWSER}` };
  }
  let binary;
  try {
    // In plain Node the package exports the binary's path, and throws when the download never finished.
    binary = require('electron');
  } catch {
    return { reason: `Electron's download did not finish (the package has no binary), ${BROWSER}` };
  }
  if (typeof binary !== 'string' || !existsSync(binary)) {
    return { reason: `Electron's binary is missing from node_modules/electron, ${BROWSER}` };
  }
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { reason: `There is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set), ${BROWSER}` };
  }
  if (!existsSync(path.join(root, 'dist', 'electron', 'main.cjs'))) {
    return { reason: `The desktop build is missing (dist/electron/main.cjs; run npm run build), ${BROWSER}` };
  }
  return { binary };
}

let child = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    else process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

function exitCodeOf(code, signal) {
  if (code !== null) return code;
  return signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1;
}

function runBrowserMode(reason) {
  console.log(reason);
  const cli = path.join(root, 'dist', 'cli.mjs');
  child = spawn(process.execPath, [cli, 'serve', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(exitCodeOf(code, signal)));
}

function runElectron(binary) {
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE; // set by some tools; it would make Electron behave as plain Node
  const startedAt = Date.now();
  child = spawn(binary, [root], { cwd: root, stdio: 'inherit', env });
  child.on('error', (err) => {
    child = null;
    runBrowserMode(`Electron could not be started (${err.message}), ${BROWSER}`);
  });
  child.on('exit', (code, signal) => {
    const early = Date.now() - startedAt < EARLY_EXIT_MS;
    if (early && code !== 0 && signal === null) {
      child = null;
      runBrowserMode(`Electron exited at once with code ${code} (see above), ${BROWSER}`);
      return;
    }
    process.exit(exitCodeOf(code, signal));
  });
}

const found = findElectron();
if (found.binary) runElectron(found.binary);
else runBrowserMode(found.reason);
