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
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
