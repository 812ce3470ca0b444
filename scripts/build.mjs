#!/usr/bin/env node
// Builds everything `npm start`, `npm run serve` and electron-builder need into dist/:
//   dist/renderer/            the React app (Vite)
//   dist/electron/main.cjs    Electron main           dist/electron/preload.cjs   sandboxed preload
//   dist/electron/host-process.mjs   the host in Electron's utility process
//   dist/cli.mjs              headless commands (browser mode)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rel = (p) => path.relative(root, p) || '.';
const started = Date.now();

async function buildRenderer() {
  const configFile = path.join(root, 'renderer', 'vite.config.ts');
  const { build } = await import('vite');
  const t = Date.now();
  await build({ configFile, logLevel: 'warn' });
  console.log(`built dist/renderer/ (${Date.now() - t} ms)`);
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // node_modules stay external: PGlite finds its .wasm/.data beside its own module, native modules
  // must be loaded from disk, and electron-builder ships production node_modules anyway.
  packages: 'external',
  sourcemap: 'linked',
  // Migrations are .sql files imported as text.
  loader: { '.sql': 'text' },
  // The version is baked in: package.json is not beside a bundle (electron/host/version.ts).
  define: { ANIMA_BUILD_VERSION: JSON.stringify(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version) },
  logLevel: 'warning',
  absWorkingDir: root,
};

const artifacts = [
  { entry: 'electron/main/main.ts', outfile: 'dist/electron/main.cjs', format: 'cjs', external: ['electron'] },
  {
    entry: 'electron/main/preload.ts',
    outfile: 'dist/electron/preload.cjs',
    format: 'cjs',
    // A sandboxed preload can require nothing but `electron` (and a few polyfilled builtins): every
    // other import — shared code included — is bundled in.
    packages: 'bundle',
    external: ['electron'],
    platform: 'browser',
    target: 'chrome130',
  },
  { entry: 'electron/host-process/entry.ts', outfile: 'dist/electron/host-process.mjs', format: 'esm' },
  // The on-device embedding model's worker thread; electron/embed/embedder.ts finds it beside the bundle.
  { entry: 'electron/embed/embed-worker.ts', outfile: 'dist/electron/embed-worker.mjs', format: 'esm' },
  // The local chat model's worker thread; electron/llm/local.ts finds it the same way.
  { entry: 'electron/llm/local-worker.ts', outfile: 'dist/electron/local-worker.mjs', format: 'esm' },
  {
    entry: 'electron/cli.ts',
    outfile: 'dist/cli.mjs',
    format: 'esm',
    banner: { js: '#!/usr/bin/env node' },
  },
];

async function buildOne({ entry, outfile, ...options }) {
  const t = Date.now();
  await esbuild.build({ ...common, ...options, entryPoints: [entry], outfile });
  console.log(`built ${outfile} (${Date.now() - t} ms)`);
}

try {
  // esbuild is fast and independent of Vite; run them side by side.
  await Promise.all([buildRenderer(), ...artifacts.map(buildOne)]);
  console.log(`build done in ${Date.now() - started} ms (${rel(path.join(root, 'dist'))}/)`);
} catch (err) {
  // esbuild and Vite have already printed the details.
  console.error(`build failed: ${String(err?.message ?? err).split('\n')[0]}`);
  process.exit(1);
}
