// Settings → Data → Import with Anima's own archive, as a person uses it: one Anima (the real app in
// browser mode) holds conversations (a real ChatGPT export imported) and memories, and exports them;
// a fresh Anima is shown the archive's parts before anything is stored (English, light), imports it
// in one piece and finds the conversations and memories; another fresh one shows the same summary in
// Chinese, dark — and once imported, the same archive again is "already here".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { callApi, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const CHATGPT = path.resolve('..', 'shared', 'fixtures', 'imports', 'chatgpt', 'librechat-chatgpt-export.json');

let app: RunningApp | null = null;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-archive-'));
const archiveFile = path.join(scratch, 'anima-export.zip');

test.afterEach(async ({}, testInfo) => {
  if (app && testInfo.status !== testInfo.expectedStatus) console.log(`app output:\n${app.output()}`);
  await app?.stop('SIGTERM');
  app = null;
});
test.afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A lived-in Anima exported: a ChatGPT export imported through the API, two memories, then archive.export. */
async function makeArchive(): Promise<void> {
  if (fs.existsSync(archiveFile)) return;
  const source = await startApp(newDataDir());
  try {
    await callApi(source, 'settings.update', { onboarded: true });
    const bytes = fs.readFileSync(CHATGPT);
    const { uploadId } = await callApi(source, 'imports.upload', { name: 'conversations.json', size: bytes.length, offset: 0, data: bytes.toString('base64') });
    const preview = await callApi(source, 'imports.preview', { uploadId });
    await callApi(source, 'imports.apply', { previewId: preview.previewId });
    await expect.poll(async () => (await callApi(source, 'imports.status'))?.state, { timeout: 60_000 }).toBe('done');
    await callApi(source, 'memories.create', { type: 'preference', content: 'The person likes green tea in the morning.' });
    await callApi(source, 'memories.create', { type: 'experience', content: 'The person moved to Lisbon in 2025.', validFrom: '2025-03-01' });
    const started = await callApi(source, 'archive.export', {});
    await expect.poll(async () => (await callApi(source, 'archive.exportStatus'))?.state, { timeout: 120_000 }).toBe('done');
    fs.copyFileSync(started.path, archiveFile);
  } finally {
    await source.stop('SIGTERM');
  }
}

async function chooseArchive(page: Page, a: RunningApp): Promise<void> {
  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('import-panel')).toBeVisible();
  await page.getByTestId('import-file').setInputFiles(archiveFile);
  await expect(page.getByTestId('import-summary')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('import-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

test('an Anima archive: its parts before anything is stored, then everything in one piece (English, light)', async ({ page }) => {
  test.setTimeout(300_000);
  await makeArchive();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  await chooseArchive(page, app);
  const summary = page.getByTestId('import-summary');
  await expect(summary).toContainText('Anima archive');
  await expect(page.getByTestId('import-summary-line')).toContainText(/\d+ conversations?, \d+ messages?/);
  const parts = page.getByTestId('import-archive-parts');
  await expect(parts.locator('tr[data-part="memories"] td').first()).toHaveText('2');
  await expect(parts.locator('tr[data-part="conversations"]')).toBeVisible();
  await expect(summary).toContainText('stored in one piece');
  await shot(page, 'import-archive-summary');

  await page.getByTestId('import-start').click();
  await expect(page.getByTestId('import-result')).toContainText('with the memories, diary and graph', { timeout: 120_000 });
  await shot(page, 'import-archive-done');
  const memories = await callApi(app, 'memories.list', {});
  expect(JSON.stringify(memories)).toContain('green tea');
  expect((await callApi(app, 'conversations.list', {})).length).toBeGreaterThan(0);

  // The same archive again: everything is here already.
  await page.getByTestId('import-another').click();
  await page.getByTestId('import-file').setInputFiles(archiveFile);
  await expect(page.getByTestId('import-already')).toContainText('Everything in this archive is already here', { timeout: 60_000 });
  await expect(page.getByTestId('import-start')).toHaveCount(0);
});

test('an Anima archive in Chinese, dark: the same summary', async ({ page }) => {
  test.setTimeout(300_000);
  await makeArchive();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'dark', language: 'zh-CN' });
  await chooseArchive(page, app);
  await expect(page.getByTestId('import-summary')).toContainText('Anima 存档');
  await expect(page.getByTestId('import-archive-parts')).toContainText('记忆');
  await shot(page, 'import-archive-summary-zh-dark');
});
