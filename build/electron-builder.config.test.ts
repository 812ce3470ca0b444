// Checks the packaging config without packaging: the `files` and `asarUnpack` globs are run through
// electron-builder's own matcher (app-builder-lib, which electron-builder depends on) over a fake
// project tree, so "is main.cjs in the app?" is answered the way a real build would answer it; and
// `asarUnpack` over the real installed packages and build output, so a native binary or a file read
// by path that would end up inside the archive fails here rather than in the packaged app. The fuses
// go through electron-builder's own translation to @electron/fuses, so a misspelt one is caught.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  electronFuses: Record<string, boolean>;
  asar: boolean;
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
  getNodeModuleFileMatcher(appDir: string, destination: string, macroExpander: (s: string) => string, platformOptions: object, packager: object): Matcher;
}

const config = require('./electron-builder.config.cjs') as Config;
const pkg = JSON.parse(readFileSync(path.join(projectDir, 'package.json'), 'utf8')) as {
  main: string;
  optionalDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};
const fileMatcher = require('app-builder-lib/out/fileMatcher') as FileMatcherModule;
/** The step of electron-builder that turns `electronFuses` into @electron/fuses' own config. */
const { PlatformPackager } = require('app-builder-lib') as {
  PlatformPackager: { prototype: { generateFuseConfig(fuses: object): Promise<Record<string | number, unknown>> } };
};
/** @electron/fuses as electron-builder resolves it (its FuseV1Options are the wire's indices). */
const fuses = require(require.resolve('@electron/fuses', { paths: [path.dirname(require.resolve('app-builder-lib/package.json'))] })) as {
  FuseV1Options: Record<string, number>;
};
const identity = (s: string) => s;

/** Whether electron-builder would put `file` (relative to `appDir`) in app.asar.unpacked. */
function unpackedIn(appDir: string): (file: string) => boolean {
  const [matcher] = fileMatcher.getFileMatchers(config, 'asarUnpack', '/app', {
    macroExpander: identity,
    customBuildOptions: config.linux,
    globalOutDir: path.join(appDir, 'release'),
    defaultSrc: appDir,
  })!;
  const unpack = matcher!.createFilter();
  return (file) => unpack(path.join(appDir, file), { isDirectory: () => false });
}

/** A project as it looks after `npm run build`: sources, caches and outputs that must stay out. */
const FAKE_TREE = [
  'package.json',
  'dist/electron/main.cjs',
  'dist/electron/main.cjs.map',
  'dist/electron/preload.cjs',
  'dist/electron/host-process.mjs',
  'dist/electron/embed-worker.mjs',
  'dist/electron/local-worker.mjs',
  'dist/cli.mjs',
  'dist/renderer/index.html',
  'dist/renderer/assets/index-3f2a1b.js',
  'dist/renderer/assets/index-9c8d7e.css',
  'electron/main/main.ts',
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

  it("sets Electron's fuses: no run-as-Node, NODE_OPTIONS or --inspect; asar only and validated", async () => {
    // Passed through electron-builder's own translation, so a misspelt key (which electron-builder
    // would silently skip) fails here: every key must come out as a fuse of @electron/fuses.
    const wire = await PlatformPackager.prototype.generateFuseConfig.call({}, config.electronFuses);
    const { FuseV1Options: fuse } = fuses;
    expect(wire).toMatchObject({
      [fuse.RunAsNode!]: false,
      [fuse.EnableNodeOptionsEnvironmentVariable!]: false,
      [fuse.EnableNodeCliInspectArguments!]: false,
      [fuse.EnableEmbeddedAsarIntegrityValidation!]: true,
      [fuse.OnlyLoadAppFromAsar!]: true,
      [fuse.EnableCookieEncryption!]: true,
      [fuse.GrantFileProtocolExtraPrivileges!]: false,
    });
    const set = Object.keys(wire).filter((key) => /^\d+$/.test(key));
    expect(set).toHaveLength(Object.keys(config.electronFuses).length);
    // The one fuse left at Electron's default only picks which V8 snapshot file is loaded.
    expect(Object.keys(config.electronFuses)).not.toContain('loadBrowserProcessSpecificV8Snapshot');
    // asar integrity and only-from-asar mean nothing without an archive.
    expect(config.asar).toBe(true);
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
        'dist/electron/embed-worker.mjs',
        'dist/electron/local-worker.mjs',
        'dist/renderer/index.html',
        'dist/renderer/assets/index-3f2a1b.js',
        'dist/renderer/assets/index-9c8d7e.css',
      ]),
    );
    for (const excluded of ['electron/main/main.ts', 'renderer/main.tsx', 'shared/api.ts', 'build/icon.png', 'README.md']) {
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

  it('unpacks native modules, the files PGlite reads from disk and the model workers, and nothing else of ours', () => {
    const isUnpacked = unpackedIn(fakeProject);
    for (const p of [
      'dist/electron/embed-worker.mjs',
      'dist/electron/local-worker.mjs',
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

// ---- asarUnpack against what is really installed and built --------------------------------------

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readManifest = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
const relative = (file: string) => path.relative(projectDir, file).split(path.sep).join('/');

/** Where Node finds package `name` required from `fromDir`: the nearest node_modules up the tree. */
function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === projectDir || path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The folders of the packages electron-builder ships: package.json's dependencies and, recursively,
 * theirs (optional ones when installed — other platforms' prebuilds are not).
 */
function productionPackages(): string[] {
  const found = new Set<string>();
  const visit = (manifest: Manifest, dir: string) => {
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const dep = packageDir(name, dir);
      if (!dep || found.has(dep)) continue;
      found.add(dep);
      visit(readManifest(dep), dep);
    }
  };
  visit(readManifest(projectDir), projectDir);
  return [...found].sort();
}

/** Files under `dir` (its own, not those of packages nested in its node_modules). */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(file);
      } else found.push(file);
    }
  };
  walk(dir);
  return found;
}

/** Native binaries (bindings and the libraries they load) and the data PGlite and its extensions read by path. */
const READ_FROM_DISK = /\.(node|dll|dylib|so(\.\d+)*|wasm|data|tar\.gz)$/;
/** onnxruntime-web's .wasm serve transformers.js in a browser; in Node it runs onnxruntime-node. */
const BROWSER_ONLY = new Set(['onnxruntime-web']);

describe('asarUnpack, against the installed packages and the build', () => {
  const isUnpacked = unpackedIn(projectDir);
  const packages = productionPackages();
  const installed = (name: string) => packages.find((dir) => relative(dir) === `node_modules/${name}`);

  it('unpacks every native binary and data file the production dependencies ship', () => {
    const files = packages
      .filter((dir) => !BROWSER_ONLY.has(readManifest(dir).name))
      .flatMap(filesUnder)
      .map(relative)
      .filter((file) => READ_FROM_DISK.test(file));
    // The ones this app cannot start without are among them, so the walk did find the real tree.
    const binding = `node_modules/onnxruntime-node/bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`;
    expect(files).toEqual(
      expect.arrayContaining([
        binding,
        'node_modules/@electric-sql/pglite/dist/pglite.wasm',
        'node_modules/@electric-sql/pglite/dist/pglite.data',
        'node_modules/@electric-sql/pglite/dist/initdb.wasm',
        'node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz',
        'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz',
      ]),
    );
    expect(files.filter((file) => !isUnpacked(file))).toEqual([]);
  });

  it("unpacks onnxruntime-node's bin/ whole: the binding loads libonnxruntime from beside it", () => {
    const dir = installed('onnxruntime-node');
    expect(dir, 'onnxruntime-node is a production dependency (of @huggingface/transformers)').toBeDefined();
    const bin = filesUnder(path.join(dir!, 'bin')).map(relative);
    expect(bin.length).toBeGreaterThan(1);
    expect(bin.filter((file) => !isUnpacked(file))).toEqual([]);
  });

  it("unpacks sharp's native packages for every platform when transformers.js depends on sharp", () => {
    const transformers = readManifest(installed('@huggingface/transformers')!);
    if (!transformers.dependencies?.sharp && !transformers.optionalDependencies?.sharp) return;
    const sharp = installed('sharp');
    expect(sharp, 'sharp is installed').toBeDefined();
    // Its binding and libvips come as one optional package per platform, most not installed here.
    const platformPackages = Object.keys(readManifest(sharp!).optionalDependencies ?? {});
    expect(platformPackages.length).toBeGreaterThan(0);
    for (const name of platformPackages) {
      for (const file of ['package.json', 'lib/binding.node', 'lib/libvips-cpp.so.8', 'lib/libvips-cpp.dylib', 'lib/libvips-42.dll']) {
        expect(isUnpacked(`node_modules/${name}/${file}`), `${name}/${file}`).toBe(true);
      }
    }
    // And whatever is installed for this platform, file by file.
    const here = packages.filter((dir) => platformPackages.includes(readManifest(dir).name));
    expect(here.length).toBeGreaterThan(0);
    const files = here.flatMap(filesUnder).map(relative);
    expect(files.filter((file) => !isUnpacked(file))).toEqual([]);
  });

  it('unpacks the model worker bundles the build writes, and no other bundle', () => {
    const build = readFileSync(path.join(projectDir, 'scripts', 'build.mjs'), 'utf8');
    const outfiles = [...build.matchAll(/outfile: '([^']+)'/g)].map((m) => m[1]!);
    // The workers the code starts (worker-script.ts finds each as dist/electron/<name>.mjs).
    const names = ['electron/embed/embedder.ts', 'electron/llm/local.ts'].flatMap((file) =>
      [...readFileSync(path.join(projectDir, file), 'utf8').matchAll(/workerScript\(import\.meta\.url, '([\w-]+)'/g)].map((m) => m[1]!),
    );
    expect(names.sort()).toEqual(['embed-worker', 'local-worker']);
    const workers = names.map((name) => `dist/electron/${name}.mjs`);
    expect(outfiles).toEqual(expect.arrayContaining(workers));
    for (const file of outfiles) expect(isUnpacked(file), file).toBe(workers.includes(file));
    // The build output, when there is one, agrees.
    const dist = path.join(projectDir, 'dist', 'electron');
    if (!existsSync(dist)) return;
    for (const file of readdirSync(dist)
      .filter((f) => /\.(mjs|cjs)$/.test(f))
      .map((f) => `dist/electron/${f}`)) {
      expect(isUnpacked(file), file).toBe(workers.includes(file));
    }
  });
});
