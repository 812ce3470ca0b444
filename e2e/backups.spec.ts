// Backups as a person uses them: Settings → Data → Backups lists the copies with what they hold,
// "Back up now" adds one, Restore says what it will do before doing it, and afterwards the window
// shows the restored data and the list holds the state before it (the way back). In both languages
// and both themes.
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';
import { solidPng } from './fake-llm/images.js';

let app: RunningApp;

test.beforeEach(async () => {
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
});

async function openBackups(page: Page): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('backups-panel')).toBeVisible();
  await page.getByTestId('backups-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

test('back up now, restore with a confirmation, and the state before it stays listed', async ({ page }) => {
  test.setTimeout(240_000);
  await callApi(app, 'conversations.create', { title: 'Allotment plans' });
  await callApi(app, 'memories.create', { type: 'preference', content: 'The person grows runner beans every spring.' });
  // The companion's picture: copies keep it too.
  await callApi(app, 'self.setAvatar', { image: `data:image/png;base64,${solidPng(16, 16).toString('base64')}` });
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-backup-folder-'));
  await page.goto(app.url);
  await openBackups(page);
  await expect(page.getByTestId('backups-empty')).toBeVisible();

  // Back up now: the copy is listed with what it holds.
  await page.getByTestId('backups-make-now').click();
  const items = page.getByTestId('backup-item');
  await expect(items).toHaveCount(1);
  await expect(items.first()).toContainText('Made by you');
  await expect(items.first()).toContainText('1 conversation, 0 messages, 1 memory · with 1 picture');

  // The person's own folder, with a daily schedule.
  await page.getByTestId('backups-folder-input').fill(path.join(folder, 'missing'));
  await page.getByTestId('backups-folder-save').click();
  await expect(page.getByRole('alert')).toBeVisible();
  await page.getByTestId('backups-folder-input').fill(folder);
  await page.getByTestId('backups-folder-save').click();
  await expect(page.getByTestId('backups-schedule')).toBeVisible();
  await page.getByTestId('backups-schedule').selectOption('daily');
  await expect.poll(async () => (await callApi(app, 'backups.list')).settings.schedule).toBe('daily');
  await page.getByTestId('backups-make-folder').click();
  await expect(items).toHaveCount(2);
  await expect(page.getByTestId('backup-list')).toContainText('in your backup folder');

  // Life goes on: another conversation after the copies.
  await callApi(app, 'conversations.create', { title: 'Lofoten trip' });
  await shot(page, 'backups-list');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.getByTestId('backups-panel')).toContainText('立即备份');
  await expect(items.first()).toContainText('条记忆');
  await shot(page, 'backups-list-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });

  // Restore the copy in the data folder, by keyboard: the confirmation says what happens first.
  const copy = items.filter({ hasText: 'in your data folder' });
  await copy.getByTestId('backup-restore').focus();
  await page.keyboard.press('Enter');
  const confirm = page.getByTestId('backup-confirm');
  await expect(confirm).toContainText('First I save a copy of everything as it is now');
  await shot(page, 'backups-confirm');
  await expect(page.getByTestId('backup-confirm-restore')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('backups-restored')).toContainText('Restored: 1 conversation, 0 messages, 1 memory.', { timeout: 120_000 });
  await expect(items.filter({ hasText: 'Data folder as it was before restoring' })).toHaveCount(1);
  await expect(items.filter({ hasText: 'Before a restore' })).toHaveCount(1);
  await shot(page, 'backups-restored');

  // The window shows the restored data: the later conversation is gone from the list.
  await page.getByTestId('nav-chat').click();
  await expect(page.getByTestId('conversation-item').filter({ hasText: 'Allotment plans' })).toHaveCount(1);
  await expect(page.getByTestId('conversation-item').filter({ hasText: 'Lofoten trip' })).toHaveCount(0);
  // The folder setting belongs to this computer and survived the restore.
  expect((await callApi(app, 'backups.list')).settings).toMatchObject({ folder, schedule: 'daily' });
  fs.rmSync(folder, { recursive: true, force: true });
});
