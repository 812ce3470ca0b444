import { defineConfig } from '@playwright/test';

// Debian's chromium, never a downloaded browser build.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // Bounds for hangs, not speed checks: the specs have to pass on two shared cores beside a CPU hog,
  // where the app and Chromium run several times slower. A passing step costs no more for them.
  timeout: 180_000,
  expect: { timeout: 30_000 },
  workers: 1,
  globalSetup: './e2e/temp-root.ts',
  reporter: [['list']],
  use: {
    launchOptions: {
      executablePath: chromium,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    viewport: { width: 1280, height: 800 },
  },
});
