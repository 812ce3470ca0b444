// The desktop app for real: Electron main, the sandboxed preload, the host in its utility process
// and the renderer over app://. Skipped, with the reason printed, where Electron cannot run (its
// binary could not be downloaded, or there is no display).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, expect, test, type Page } from '@playwright/test';
import { startFakeLlm } from './fake-llm/server.js';
import type { AnimaBridge } from '../shared/bridge.js';

/** What the page's global scope holds, seen from this Node-typed file. */
interface PageGlobals {
  anima?: AnimaBridge;
  require?: unknown;
  process?: unknown;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mainBundle = path.join(root, 'dist', 'electron', 'main.cjs');

function whyElectronCannotRun(): string | null {
  const require = createRequire(path.join(root, 'package.json'));
  let binary: unknown;
  try {
    // In plain Node the package exports the binary's path; it throws when the download never finished.
    binary = require('electron');
  } catch {
    return 'Electron is not installed here (its binary could not be downloaded), so the desktop app was not tested.';
  }
  if (typeof binary !== 'string' || !existsSync(binary)) {
    return "Electron's binary is missing from node_modules/electron, so the desktop app was not tested.";
  }
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return 'There is no display (DISPLAY/WAYLAND_DISPLAY unset; try xvfb-run), so the desktop app was not tested.';
  }
  if (!existsSync(mainBundle)) return 'dist/electron/main.cjs is missing: run `npm run build` first.';
  return null;
}

test('the desktop app opens its window with the bridge to the host', async () => {
  const reason = whyElectronCannotRun();
  if (reason) console.log(reason);
  test.skip(reason !== null, reason ?? '');

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-electron-'));
  const app = await electron.launch({
    // The project dir, so Electron reads package.json and starts its `main`: dist/electron/main.cjs.
    args: [
      root,
      // Chromium refuses to run as root with its OS sandbox (CI containers); renderer isolation stays.
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    ],
    env: { ...process.env, ANIMA_DATA_DIR: dataDir, ELECTRON_ENABLE_LOGGING: '1' },
    timeout: 60_000,
  });
  try {
    const page = await app.firstWindow();
    await page.waitForLoadState('domcontentloaded');
    expect(page.url()).toMatch(/^app:\/\/anima\//);

    // The app shell rendered (the boot screen, onboarding or the chat view all live in <main>).
    await expect(page.locator('#root main')).toBeVisible();

    // The preload exposed exactly the bridge, and the page itself has no Node.
    const surface = await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      return { bridge: Object.keys(w.anima ?? {}).sort(), require: typeof w.require, process: typeof w.process };
    });
    expect(surface).toEqual({ bridge: ['invoke', 'onEvent', 'openExternal'], require: 'undefined', process: 'undefined' });

    // A call crosses the MessagePort to the host in the utility process and back.
    const reply = await page.evaluate(() => (globalThis as unknown as PageGlobals).anima!.invoke('app.info', {}));
    expect(reply).toMatchObject({ ok: true, value: { mode: 'electron', dataDir } });

    // Links outside the app are refused by main before anything opens.
    const refused = await page.evaluate(() =>
      (globalThis as unknown as PageGlobals).anima!.openExternal('file:///etc/passwd').then(
        () => 'opened',
        () => 'refused',
      ),
    );
    expect(refused).toBe('refused');
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the desktop app chats with a model and keeps the conversation across a restart', async () => {
  const reason = whyElectronCannotRun();
  test.skip(reason !== null, reason ?? '');

  const fake = await startFakeLlm();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-electron-'));
  const launch = () =>
    electron.launch({
      args: [root, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
      env: { ...process.env, ANIMA_DATA_DIR: dataDir },
      timeout: 60_000,
    });
  const invoke = (page: Page, method: string, input: unknown) =>
    page.evaluate(([m, i]) => (globalThis as unknown as PageGlobals).anima!.invoke(m as string, i), [method, input] as const);
  try {
    let app = await launch();
    let page = await app.firstWindow();
    await expect(page.locator('#root main')).toBeVisible();
    await invoke(page, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await invoke(page, 'settings.update', { onboarded: true });
    await page.reload();
    await page.getByTestId('new-conversation').click();
    fake.script({ kind: 'text', text: 'Hello from the desktop.', chunks: 4, chunkDelayMs: 50 });
    await page.getByTestId('chat-input').fill('Hi from Electron');
    await page.getByTestId('chat-input').press('Enter');
    const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
    await expect(reply).toHaveAttribute('data-status', 'complete');
    await expect(reply).toContainText('Hello from the desktop.');
    await app.close();

    app = await launch();
    page = await app.firstWindow();
    await page.getByTestId('conversation-item').first().click();
    await expect(page.locator('[data-testid="message"][data-role="user"]').first()).toContainText('Hi from Electron');
    await app.close();
  } finally {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
