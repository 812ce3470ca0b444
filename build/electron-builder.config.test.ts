// Checks the packaging config without packaging: the `files` and `asarUnpack` globs are run through
// electron-builder's own matcher (app-builder-lib, which electron-builder depends on) over a fake
// project tree, so "is main.cjs in the app?" is answered the way a real build would answer it.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const projectDir = path.resolve(here, '..');

interface Config {
  appId: string;
  productName: string;
  electronVersion: string;
  directories: { output: string; buildResources: string };
  files: string[];
  asarUnpack: string[];
  linux: { target: string[]; icon: string };
  mac: { target: string[]; icon: string };
  win: { target: string[]; icon: string };
}
type Filter = (file: string, stat: { isDirectory(): boolean }) => boolean;
interface Matcher {
  createFilter(): Filter;
  readonly patterns: string[];
}
interface FileMatcherModule {
  FileMatcher: new (from: string, to: string, macroExpander: (s: string) => string, patterns: string[]) => Matcher;
  getMainFileMatchers(
    appDir: string,
    destination: string,
    macroExpander: (s: string) => string,
    platformOptions: object,
    platformPackager: object,
    outDir: string,
    isElectronCompile: boolean,
  ): Matcher[];
  getFileMatchers(config: object, name: 'asarUnpack', destination: string, options: object): Matcher[] | null;
  getNodeModuleFileMatcher(
    appDir: string,
    destination: string,
    macroExpander: (s: string) => string,
    platformOptions: object,
    packager: object,
  ): Matcher;
}

const config = require('./electron-builder.config.cjs') as Config;
const pkg = JSON.parse(readFileSync(path.join(projectDir, 'package.json'), 'utf8')) as {
  main: string;
  optionalDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};
const fileMatcher = require('app-builder-lib/out/fileMatcher') as FileMatcherModule;
const identity = (s: string) => s;

/** A project as it looks after `npm run build`: sources, caches and outputs that must stay out. */
const FAKE_TREE = [
  'package.json',
  'dist/electron/main.cjs',
  'dist/electron/main.cjs.map',
  'dist/electron/preload.cjs',
  'dist/electron/host-process.mjs',
  'dist/cli.mjs',
  'dist/renderer/index.html',
  'dist/renderer/assets/index-3f2a1b.js',
  'dist/renderer/assets/index-9c8d7e.css',
  'electron/main.ts',
  'electron/host/index.ts',
  'renderer/main.tsx',
  'shared/api.ts',
  'e2e/electron.spec.ts',
  'build/icon.png',
  'build/electron-builder.config.cjs',
  '.cache/electron-types/electron.d.ts',
  'release/Anima-0.1.0.AppImage',
  'node_modules/zod/package.json',
  'README.md',
  'tsconfig.json',
];

let fakeProject: string;

beforeAll(() => {
  fakeProject = mkdtempSync(path.join(os.tmpdir(), 'anima-builder-'));
  for (const file of FAKE_TREE) {
    mkdirSync(path.dirname(path.join(fakeProject, file)), { recursive: true });
    writeFileSync(path.join(fakeProject, file), file === 'package.json' ? JSON.stringify({ main: pkg.main }) : '');
  }
});
afterAll(() => {
  rmSync(fakeProject, { recursive: true, force: true });
});

/** Walk the tree the way electron-builder does: a directory the filter refuses is not entered. */
function included(root: string, filter: Filter): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      const stat = statSync(file);
      if (!filter(file, stat)) continue;
      if (stat.isDirectory()) walk(file);
      else found.push(path.relative(root, file).split(path.sep).join('/'));
    }
  };
  walk(root);
  return found.sort();
}

function appFiles(): string[] {
  const packager = {
    info: {
      projectDir: fakeProject,
      buildResourcesDir: config.directories.buildResources,
      isPrepackedAppAsar: false,
      config,
      debugLogger: { isEnabled: false },
    },
  };
  const [main] = fileMatcher.getMainFileMatchers(
    fakeProject,
    '/app',
    identity,
    config.linux,
    packager,
    path.join(fakeProject, config.directories.output),
    false,
  );
  return included(fakeProject, main!.createFilter());
}

describe('electron-builder config', () => {
  it('names the app and pins the Electron version from package.json', () => {
    expect(config.appId).toMatch(/^[a-z]+(\.[a-z]+)+$/);
    expect(config.productName).toBe('Anima');
    expect(config.electronVersion).toBe(pkg.optionalDependencies.electron);
    expect(config.electronVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(config.directories.output).toBe('release');
  });

  it('builds AppImage and deb on Linux, dmg on macOS, NSIS on Windows', () => {
    expect(config.linux.target).toEqual(expect.arrayContaining(['AppImage', 'deb']));
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
  });

  it('has an icon large enough for every platform', () => {
    for (const icon of new Set([config.linux.icon, config.mac.icon, config.win.icon])) {
      const png = readFileSync(path.join(projectDir, icon));
      expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
      expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(512); // IHDR width
      expect(png.readUInt32BE(20)).toBeGreaterThanOrEqual(512); // IHDR height
    }
  });

  it('points package.json main at the bundled main process', () => {
    expect(pkg.main).toBe('dist/electron/main.cjs');
  });

  it('ships the built app and nothing else from the project', () => {
    const files = appFiles();
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        pkg.main,
        'dist/electron/preload.cjs',
        'dist/electron/host-process.mjs',
        'dist/renderer/index.html',
        'dist/renderer/assets/index-3f2a1b.js',
        'dist/renderer/assets/index-9c8d7e.css',
      ]),
    );
    for (const excluded of ['electron/main.ts', 'renderer/main.tsx', 'shared/api.ts', 'build/icon.png', 'README.md']) {
      expect(files).not.toContain(excluded);
    }
    expect(files.filter((f) => f.startsWith('.cache/') || f.startsWith('release/') || f.endsWith('.map'))).toEqual([]);
    // node_modules travel by electron-builder's own production-dependency copy, never by these globs.
    expect(files.filter((f) => f.startsWith('node_modules/'))).toEqual([]);
  });

  it('does not filter the files of production dependencies', () => {
    // electron-builder re-applies the exclusions of `files` inside every dependency's own folder,
    // so a careless `!dist/**` would strip PGlite's dist/. Replay that per dependency.
    const packager = { config, debugLogger: { isEnabled: false } };
    const { patterns } = fileMatcher.getNodeModuleFileMatcher(fakeProject, '/app', identity, config.linux, packager);
    if (patterns.length === 0) return; // no exclusions: electron-builder applies no filter at all
    const typical = ['package.json', 'index.js', 'dist/index.js', 'lib/index.cjs', 'bin/napi-v3/linux/x64/binding.node'];
    const special: Record<string, string[]> = {
      '@electric-sql/pglite': ['dist/pglite.wasm', 'dist/pglite.data', 'dist/pg_trgm.tar.gz', 'dist/contrib/pg_trgm.js'],
    };
    for (const dep of Object.keys(pkg.dependencies)) {
      const files = [...typical, ...(special[dep] ?? [])];
      const depDir = path.join(fakeProject, 'node_modules', dep);
      const filter = new fileMatcher.FileMatcher(depDir, `/app/node_modules/${dep}`, identity, patterns).createFilter();
      for (const f of files) expect(filter(path.join(depDir, f), { isDirectory: () => false }), `${dep}/${f}`).toBe(true);
    }
  });

  it('unpacks native modules and the files PGlite reads from disk, and nothing of ours', () => {
    const [matcher] = fileMatcher.getFileMatchers(config, 'asarUnpack', '/app', {
      macroExpander: identity,
      customBuildOptions: config.linux,
      globalOutDir: path.join(fakeProject, 'release'),
      defaultSrc: fakeProject,
    })!;
    const unpack = matcher!.createFilter();
    const isUnpacked = (p: string) => unpack(path.join(fakeProject, p), { isDirectory: () => false });
    for (const p of [
      'node_modules/onnxruntime-node/bin/napi-v3/linux/x64/onnxruntime_binding.node',
      'node_modules/onnxruntime-node/bin/napi-v3/linux/x64/libonnxruntime.so.1',
      'node_modules/@electric-sql/pglite/dist/pglite.wasm',
      'node_modules/@electric-sql/pglite/dist/pglite.data',
      'node_modules/@electric-sql/pglite/dist/initdb.wasm',
      'node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz',
    ]) {
      expect(isUnpacked(p), p).toBe(true);
    }
    for (const p of [
      'dist/electron/main.cjs',
      'dist/electron/host-process.mjs',
      'dist/renderer/index.html',
      'node_modules/@electric-sql/pglite/dist/index.js',
      'node_modules/zod/index.js',
    ]) {
      expect(isUnpacked(p), p).toBe(false);
    }
  });
});
