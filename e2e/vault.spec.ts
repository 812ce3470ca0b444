// The vault folder as a person uses it: Settings → Data → Vault folder. Choose a folder and sync:
// the memories appear there as files. Edit one, add one, drop in a note of your own; "Preview
// changes" lists what a sync would do and changes nothing; "Sync now" does it, and Memories shows
// the edit. Screenshots in English and light, Chinese and dark.
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let vault: string;

test.beforeEach(async () => {
  app = await startApp(newDataDir());
  vault = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-vault-'));
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  fs.rmSync(vault, { recursive: true, force: true });
});

async function scrollToPanel(page: Page): Promise<void> {
  await page.getByTestId('vault-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

test('choose a folder, preview the files’ changes, sync them into memory', async ({ page }) => {
  test.setTimeout(180_000);
  const tea = await callApi(app, 'memories.create', { type: 'preference', content: 'The person drinks green tea every morning.' });
  await callApi(app, 'memories.create', { type: 'world', content: 'The person’s sister lives in Lisbon.' });
  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await scrollToPanel(page);

  await page.getByTestId('vault-folder-input').fill(vault);
  await page.getByTestId('vault-folder-save').click();
  await page.getByTestId('vault-sync').click();
  await expect(page.getByTestId('vault-report')).toContainText('2 files written');
  const teaFile = path.join(vault, 'memories', 'preference', fs.readdirSync(path.join(vault, 'memories', 'preference'))[0]!);
  expect(fs.readFileSync(teaFile, 'utf8')).toContain(`id: ${tea.memory.id}`);

  // The person's own edits in the folder.
  fs.writeFileSync(teaFile, fs.readFileSync(teaFile, 'utf8').replace('green tea every morning', 'green tea every morning, no sugar'));
  fs.mkdirSync(path.join(vault, 'memories', 'experience'), { recursive: true });
  fs.writeFileSync(path.join(vault, 'memories', 'experience', 'walk.md'), 'The person walked the Camino de Santiago in 2019.\n');
  fs.writeFileSync(path.join(vault, 'shopping.txt'), 'eggs, flour\n');
  fs.writeFileSync(path.join(vault, 'memories', 'world', 'broken.md'), '---\ntype: world\nno colon here\n---\n\nSomething.\n');
  const before = fs.readFileSync(teaFile, 'utf8');

  await page.getByTestId('vault-preview').click();
  const preview = page.getByTestId('vault-preview-report');
  await expect(preview).toContainText('nothing has been changed');
  await expect(preview.getByTestId('vault-changes')).toContainText('no sugar');
  await expect(preview.getByTestId('vault-changes')).toContainText('Camino de Santiago');
  await expect(preview.getByTestId('vault-ignored')).toContainText('shopping.txt');
  await expect(preview.getByTestId('vault-ignored')).toContainText('Frontmatter cannot be read');
  expect(fs.readFileSync(teaFile, 'utf8')).toBe(before);
  expect((await callApi(app, 'memories.get', { id: tea.memory.id })).memory.content).toBe('The person drinks green tea every morning.');
  await scrollToPanel(page);
  await shot(page, 'vault-preview');

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(preview).toContainText('还什么都没改');
  await scrollToPanel(page);
  await shot(page, 'vault-preview-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(preview).toContainText('nothing has been changed');

  await page.getByTestId('vault-sync').click();
  const done = page.getByTestId('vault-report');
  await expect(done.getByTestId('vault-changes')).toContainText('Edited');
  await expect(done.getByTestId('vault-changes')).toContainText('New memory');
  await expect(done).toContainText('can be undone');
  expect((await callApi(app, 'memories.get', { id: tea.memory.id })).memory.content).toBe('The person drinks green tea every morning, no sugar.');
  expect(fs.readFileSync(path.join(vault, 'shopping.txt'), 'utf8')).toBe('eggs, flour\n');

  // Kept in step: the switch is saved.
  await page.getByTestId('vault-keep-in-step').click();
  await expect(page.getByTestId('vault-keep-in-step')).toBeChecked();
  await expect.poll(async () => (await callApi(app, 'vault.status')).settings.keepInStep).toBe(true);
});
