#!/usr/bin/env node
// Electron's binary cannot always be downloaded (offline CI, restricted networks), and then npm leaves
// the whole optional `electron` package out — including electron.d.ts. The types are plain text in
// the npm tarball, so fetch just that file from the registry to type-check against the real API.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const installed = path.join(root, 'node_modules', 'electron', 'electron.d.ts');
const cacheDir = path.join(root, '.cache', 'electron-types');
const target = path.join(cacheDir, 'electron.d.ts');
const stamp = path.join(cacheDir, 'version');

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const version = pkg.optionalDependencies?.electron ?? pkg.devDependencies?.electron;
if (!version) fail('package.json pins no electron version (optionalDependencies.electron).');

if (existsSync(installed)) {
  // An installed package wins, but tsconfig points at the cache: keep one path for both cases.
  writeTypes(readFileSync(installed));
} else if (!(existsSync(target) && readIfExists(stamp) === version)) {
  writeTypes(fetchFromRegistry(version));
}

function fetchFromRegistry(spec) {
  mkdirSync(cacheDir, { recursive: true });
  for (const old of readdirSync(cacheDir)) if (old.endsWith('.tgz')) rmSync(path.join(cacheDir, old));
  try {
    // The npm CLI ships with Node; on Windows it is a .cmd file, which needs a shell.
    execFileSync('npm', ['pack', `electron@${spec}`, '--silent', '--pack-destination', cacheDir], {
      cwd: cacheDir,
      stdio: ['ignore', 'ignore', 'inherit'],
      shell: process.platform === 'win32',
    });
  } catch {
    fail(`could not fetch electron@${spec} from the npm registry for its type definitions.`);
  }
  const tgz = readdirSync(cacheDir).find((f) => f.endsWith('.tgz'));
  if (!tgz) fail('npm pack produced no tarball.');
  const file = extractFromTar(gunzipSync(readFileSync(path.join(cacheDir, tgz))), 'package/electron.d.ts');
  rmSync(path.join(cacheDir, tgz));
  if (!file) fail(`electron@${spec} has no electron.d.ts.`);
  return file;
}

/** Enough of the ustar format for an npm tarball: 512-byte headers, sizes in octal. */
function extractFromTar(tar, wanted) {
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    const name = cString(header.subarray(0, 100));
    if (!name) return null;
    const prefix = cString(header.subarray(345, 500));
    const size = parseInt(cString(header.subarray(124, 136)).trim() || '0', 8);
    const full = prefix ? `${prefix}/${name}` : name;
    const start = offset + 512;
    if (full === wanted) return tar.subarray(start, start + size);
    offset = start + Math.ceil(size / 512) * 512;
  }
  return null;
}

function cString(bytes) {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

function writeTypes(contents) {
  mkdirSync(cacheDir, { recursive: true });
  if (readIfExists(target) !== contents.toString('utf8')) writeFileSync(target, contents);
  writeFileSync(stamp, version);
}

function readIfExists(file) {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

function fail(message) {
  console.error(`electron-types: ${message}`);
  process.exit(1);
}
