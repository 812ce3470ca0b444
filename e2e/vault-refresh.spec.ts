// Settings → Data → Vault shows a sync it did not start: the host announces each sync's end
// (vault.changed) — at start, after a night, or from elsewhere (here: another caller of the API) —
// and the open panel takes the new state without a reload.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let vault: string;

test.beforeEach(async () => {
  app = await startApp(newDataDir());
  vault = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-vault-refresh-'));
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  fs.rmSync(vault, { recursive: true, force: true });
});

test('an open vault panel shows a sync that ran elsewhere', async ({ page }) => {
  await callApi(app, 'memories.create', { type: 'world', content: 'The person’s brother keeps bees in Ghent.' });
  await callApi(app, 'vault.configure', { folder: vault, keepInStep: true });
  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  const panel = page.getByTestId('vault-panel');
  await expect(page.getByTestId('vault-folder-input')).toHaveValue(vault);
  await expect(panel.getByTestId('vault-report')).toHaveCount(0);

  await callApi(app, 'vault.sync', {});
  await expect(panel.getByTestId('vault-report')).toContainText('1 file written');
  await panel.evaluate((el) => el.scrollIntoView());
  await shot(page, 'vault-refreshed-by-background-sync');
});
