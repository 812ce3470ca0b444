import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Migrations are .sql files imported as text, as esbuild's text loader does in the build.
  plugins: [
    {
      name: 'sql-as-text',
      transform(code, id) {
        return id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined;
      },
    },
  ],
  test: {
    include: [
      'electron/**/*.test.ts',
      'shared/**/*.test.ts',
      'renderer/**/*.test.{ts,tsx}',
      'scripts/**/*.test.ts',
      'build/**/*.test.ts',
      'e2e/fake-llm/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    globalSetup: ['electron/testing/global-setup.ts'],
    // PGlite is WASM and memory-hungry: two workers on a two-core machine.
    pool: 'forks',
    maxWorkers: 2,
    // Bounds for hangs, not speed checks (speed is measured in the benchmarks): the suite has to
    // pass on two shared cores beside a CPU hog, where everything runs five to ten times slower.
    // A test waits for what it expects with PATIENCE_MS (electron/testing/patience.ts), well inside these.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // expect.poll waits for a condition: as patient as PATIENCE_MS.
    expect: { poll: { timeout: 60_000 } },
  },
});
