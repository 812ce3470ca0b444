// The layout as rules: which folder may import which. Run: npm run lint:layout
// (Which folder may name which database table is checked by scripts/check-sql-owners.mjs: imports cannot show it.)

/** Test code: unit tests, Playwright specs and the test-support folders (fixtures, fakes, the generated test models). */
const TEST = '(^|/)testing/|\\.(test|spec)\\.[cm]?[jt]sx?$';

/** What under electron/ wires the rooms together or starts a process (and the CLI); everything else under electron/ is a domain room. */
const WIRING = '^electron/(host|main|host-process|serve)/|^electron/cli\\.ts$';

/** The electron package, installed (node_modules/electron) or not (this machine has no Electron binary: the bare name stays unresolved). */
const ELECTRON_PACKAGE = ['^electron$', '^electron/(main|renderer|common|utility)$', '(^|/)node_modules/electron/'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle (type-only imports included) ties the rooms in it into one: none can be read, tested or moved alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'electron-only-in-main',
      severity: 'error',
      comment: 'Only electron/main/ runs inside Electron; the rest must also run under plain Node (serve, CLI, unit tests).',
      // scripts/start.mjs and the Electron e2e spec require('electron') only for the path of the binary they launch.
      from: { pathNot: ['^electron/main/', '^(scripts|e2e)/'] },
      to: { path: ELECTRON_PACKAGE },
    },
    {
      name: 'renderer-not-to-backend',
      severity: 'error',
      comment: 'The renderer talks to the backend only through the API in shared/; importing electron/ would bundle the host into the page.',
      from: { path: '^renderer/' },
      to: { path: '^electron/' },
    },
    {
      name: 'renderer-not-to-node',
      severity: 'error',
      comment: 'Renderer code runs in a sandboxed page without Node; its tests and the Vite config run in Node and may use builtins.',
      from: { path: '^renderer/', pathNot: [TEST, '^renderer/vite\\.config\\.ts$'] },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'shared-not-to-app',
      severity: 'error',
      comment: 'shared/ is the contract both sides import: if it imported either side, each would pull in the other.',
      from: { path: '^shared/' },
      to: { path: '^(electron|renderer)/' },
    },
    {
      name: 'shared-not-to-node',
      severity: 'error',
      comment: 'The renderer bundles shared/ into a page without Node, so shared/ must not need Node builtins.',
      from: { path: '^shared/', pathNot: TEST },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'rooms-not-to-host',
      severity: 'error',
      comment: 'electron/host/ is the composition root: rooms are handed what they need, they never reach back into the wiring.',
      from: { path: '^electron/', pathNot: [WIRING, TEST] },
      to: { path: '^electron/host/' },
    },
    {
      name: 'stores-not-to-views',
      severity: 'error',
      comment: 'Stores hold state for the views; a store importing a view or the app shell turns the layering upside down.',
      from: { path: '^renderer/stores/' },
      to: { path: '^renderer/(views|app)/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'Production code must not ship or depend on tests, fakes or test fixtures; only tests, bench/, e2e/ and test/ may use them.',
      from: { pathNot: [TEST, '^bench/', '^e2e/', '^test/'] },
      to: { path: TEST },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'A relative import that resolves to no file is a typo or a file that moved without its importers.',
      from: {},
      // Vite's suffixed imports (./x.ts?worker, ?url, ?raw) are the bundler's to resolve, not ours.
      to: { couldNotResolve: true, path: '^\\.', pathNot: '\\?' },
    },
  ],
  options: {
    doNotFollow: { path: '(^|/)node_modules/' },
    exclude: { path: ['(^|/)node_modules/', '^dist/', '^release/', '^\\.cache/', '(^|/)testing/models/'] },
    // See `import type` too, so type-only cycles count (they still tangle the rooms).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
