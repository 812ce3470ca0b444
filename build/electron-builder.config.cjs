// electron-builder configuration (npm run dist). CommonJS because electron-builder loads it with require.
const pkg = require('../package.json');

// Electron's binary is an optional dependency that may be absent where this runs, so the version
// cannot be read from node_modules/electron: it comes from the pin in package.json.
const electronVersion = String(pkg.optionalDependencies?.electron ?? '').replace(/^[\^~=v]+/, '');
if (!/^\d+\.\d+\.\d+$/.test(electronVersion)) {
  throw new Error(`package.json must pin an exact electron version in optionalDependencies (found "${electronVersion}")`);
}

/** @type {import('electron-builder').Configuration} */
module.exports = {
  appId: 'app.anima.desktop',
  productName: 'Anima',
  electronVersion,
  directories: { output: 'release', buildResources: 'build' },
  // Only the build output ships (production node_modules are added by electron-builder itself).
  files: ['dist/**/*', '!dist/**/*.map', 'package.json'],
  asar: true,
  // Native code is loaded with dlopen and cannot come from inside an archive, nor can the shared
  // libraries a binding loads from beside itself; PGlite's WASM, data and extension files are read
  // from disk by path, which is faster (and mmap-able) outside it. build/electron-builder.config.test.ts
  // checks these globs against the installed packages and the build output.
  asarUnpack: [
    '**/*.node',
    // onnxruntime-node (transformers.js's runtime): the binding and libonnxruntime beside it, in bin/.
    '**/node_modules/onnxruntime-node/**',
    // sharp (a dependency of transformers.js): its per-platform binding and the libvips it links.
    '**/node_modules/@img/sharp-*/**',
    '**/node_modules/@electric-sql/pglite/dist/**/*.{wasm,data,tar.gz}',
    '**/node_modules/@electric-sql/pglite-pgvector/dist/**/*.tar.gz',
    // pg_dump (the export's anima.sql), a WASM program read from beside its module.
    '**/node_modules/@electric-sql/pglite-tools/dist/**/*.wasm',
    // The model worker threads (scripts/build.mjs), started from a file path: kept on disk as well.
    'dist/electron/*-worker.mjs',
  ],
  // Native dependencies ship N-API prebuilds, which every Electron loads; rebuilding them would
  // need Electron's headers from the network.
  npmRebuild: false,
  // Publishing is a deliberate act, never a side effect of a CI build.
  publish: null,
  // Electron's fuses, flipped in the packaged binary by @electron/fuses (through electron-builder)
  // right before signing; they cannot be changed at run time. Each closes a way to run other code
  // with the app's identity (its keychain entries, its signature, its data). docs/SECURITY.md.
  electronFuses: {
    // ELECTRON_RUN_AS_NODE would turn the binary into plain Node. The host is a utilityProcess,
    // which does not depend on it (only child_process.fork of the main process would).
    runAsNode: false,
    // NODE_OPTIONS / NODE_EXTRA_CA_CERTS could preload code or trust another CA; nothing here sets them.
    enableNodeOptionsEnvironmentVariable: false,
    // --inspect, --inspect-brk and SIGUSR1 would open a debugger on the main process.
    enableNodeCliInspectArguments: false,
    // app.asar is checked against the hash electron-builder embeds (macOS and Windows), and only
    // app.asar is loaded, never an app/ folder beside it: no unvalidated code can be swapped in.
    enableEmbeddedAsarIntegrityValidation: true,
    onlyLoadAppFromAsar: true,
    // Chromium's cookie store encrypted with the OS key, as in Chrome (the app sets no cookies today).
    enableCookieEncryption: true,
    // The page is served from app://anima, never file://, so file:// needs no extra privileges.
    grantFileProtocolExtraPrivileges: false,
  },
  linux: {
    target: ['AppImage', 'deb'],
    icon: 'build/icon.png',
    category: 'Utility',
    executableName: 'anima',
    synopsis: 'A local-first companion with a living memory',
    maintainer: 'Anima contributors',
  },
  mac: {
    target: ['dmg'],
    icon: 'build/icon.png',
    category: 'public.app-category.productivity',
  },
  win: {
    target: ['nsis'],
    icon: 'build/icon.png',
  },
  nsis: {
    oneClick: false,
    perMachine: false,
    allowToChangeInstallationDirectory: true,
  },
};
