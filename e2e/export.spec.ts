// Settings → Data → Export, as a person uses it: the real app in browser mode on a lived-in folder
// (20,000 messages, memories and a diary, built before the app starts). Export shows its progress,
// ends with the file's name, size and place, the zip is really there and its link downloads it; in
// Chinese and dark, Stop ends an export with nothing left behind, and a second one completes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { callApi, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp | null = null;
let folder: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(() => {
  // The app's own bench builds the folder: LoCoMo text bulk-loaded as the recall bench does.
  folder = newDataDir();
  execFileSync(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'bench/import.ts', '--generate', '20000', '--folder', folder, '--build-only'],
    { stdio: 'pipe', timeout: 240_000 },
  );
});

test.afterEach(async ({}, testInfo) => {
  if (app && testInfo.status !== testInfo.expectedStatus) console.log(`app output:\n${app.output()}`);
  await app?.stop('SIGTERM');
  app = null;
});
test.afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

async function openData(page: Page, a: RunningApp): Promise<void> {
  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('export-panel')).toBeVisible();
  await page.getByTestId('export-panel').evaluate((el) => {
    const pane = el.closest('.settings-content');
    if (pane) pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

const exportsOf = (a: RunningApp) => (fs.existsSync(path.join(a.dataDir, 'exports')) ? fs.readdirSync(path.join(a.dataDir, 'exports')).sort() : []);

test('Export: progress, then the file with its size and place (English, light)', async ({ page }) => {
  test.setTimeout(300_000);
  app = await startApp(folder);
  await callApi(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  await openData(page, app);

  await page.getByTestId('export-start').click();
  const running = page.getByTestId('export-running');
  await expect(running).toBeVisible();
  const bar = running.getByRole('progressbar', { name: 'Export progress' });
  await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 60_000 }).toBeGreaterThan(0);
  await shot(page, 'export-running');

  const done = page.getByTestId('export-done');
  await expect(done).toBeVisible({ timeout: 240_000 });
  const files = exportsOf(app);
  expect(files).toEqual([expect.stringMatching(/^anima-export-\d{4}-\d{2}-\d{2}-\d{6}\.zip$/)]);
  const file = files[0]!;
  await expect(done).toContainText(`Saved ${file} (`);
  await expect(done).toContainText('20,000 messages');
  await expect(page.getByTestId('export-path')).toHaveText(path.join(app.dataDir, 'exports', file));
  const zip = fs.readFileSync(path.join(app.dataDir, 'exports', file));
  expect(zip.subarray(0, 4).toString('hex')).toBe('504b0304');
  await shot(page, 'export-done');

  // Browser mode: the link beside the path downloads that very file.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-download').click()]);
  expect(download.suggestedFilename()).toBe(file);
  expect(fs.readFileSync(await download.path()).equals(zip)).toBe(true);
});

test('Export: Stop leaves nothing, the next one completes (Chinese, dark)', async ({ page }) => {
  test.setTimeout(300_000);
  app = await startApp(folder);
  await callApi(app, 'settings.update', { onboarded: true, theme: 'dark', language: 'zh-CN' });
  const before = exportsOf(app);
  await openData(page, app);

  await page.getByTestId('export-start').click();
  const running = page.getByTestId('export-running');
  await expect(running).toBeVisible();
  await expect(running).toContainText('%');
  await shot(page, 'export-running-zh-dark');
  await page.getByTestId('export-cancel').click();
  await expect(page.getByTestId('export-cancelled')).toHaveText('导出已停止，没有保存任何文件。', { timeout: 60_000 });
  expect(exportsOf(app)).toEqual(before);

  await page.getByTestId('export-start').click();
  const done = page.getByTestId('export-done');
  await expect(done).toBeVisible({ timeout: 240_000 });
  await expect(done).toContainText('20,000 条消息');
  expect(exportsOf(app)).toHaveLength(before.length + 1);
  expect(exportsOf(app).filter((f) => f.endsWith('.partial'))).toEqual([]);
  await shot(page, 'export-done-zh-dark');
});
