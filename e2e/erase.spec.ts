// Erase everything as a person uses it: the danger zone at the bottom of Settings → Data says what
// goes and what stays; the red button stays asleep until the word shown is typed; erasing leaves a
// fresh companion (onboarding again) and the data folder holding only the new database and the lock.
// Screenshots in English and light, Chinese and dark.
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let dataDir: string;

test.beforeEach(async () => {
  dataDir = newDataDir();
  app = await startApp(dataDir);
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
});

async function openErase(page: Page): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('erase-panel')).toBeVisible();
  await scrollToPanel(page);
}

async function scrollToPanel(page: Page): Promise<void> {
  await page.getByTestId('erase-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

test('the button wakes only for the word shown; erasing leaves a fresh companion', async ({ page }) => {
  test.setTimeout(180_000);
  await callApi(app, 'conversations.create', { title: 'Allotment plans' });
  await callApi(app, 'memories.create', { type: 'preference', content: 'The person grows runner beans every spring.' });
  await callApi(app, 'backups.makeNow', { where: 'data' });
  await page.goto(app.url);
  await openErase(page);
  const panel = page.getByTestId('erase-panel');
  const input = page.getByTestId('erase-input');
  const button = page.getByTestId('erase-button');
  await expect(panel).toContainText('copies in your own backup folder');
  await expect(button).toBeDisabled();
  await input.fill('eras');
  await expect(button).toBeDisabled();
  await shot(page, 'erase-panel');

  // Chinese and dark: the word to type is the Chinese one.
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(panel).toContainText('清除全部数据');
  await input.fill('清除');
  await expect(button).toBeEnabled();
  await shot(page, 'erase-panel-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(panel).toContainText('Erase everything');

  // By keyboard: the word, then Enter in the field.
  await input.fill('erase');
  await expect(button).toBeEnabled();
  await input.press('Enter');
  // What went is said; "Start again" (focused) opens onboarding.
  const done = page.getByTestId('erase-done');
  await expect(done).toContainText('Removed with it from the data folder: 1 safety copy and 0 exports.', { timeout: 120_000 });
  // The panels above read the fresh folder again: no copy is listed any more.
  await expect(page.getByTestId('backups-empty')).toBeVisible();
  await scrollToPanel(page);
  await shot(page, 'erase-done');
  await expect(page.getByTestId('erase-start-again')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('onboarding')).toBeVisible();
  expect((await callApi(app, 'conversations.list')).length).toBe(0);
  expect((await callApi(app, 'memories.list')).items.length).toBe(0);
  // Only the fresh database, the lock, and the browser link this tab goes on using (its port and
  // token are how the window reaches the app, not anything the person said).
  expect(fs.readdirSync(dataDir).sort()).toEqual(['anima.lock', 'browser-link.json', 'db']);
});
