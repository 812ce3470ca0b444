// Settings → Data → Storage in browser mode, against a throwaway PostgreSQL cluster (Debian's
// binaries, as the unit tests use; skipped, saying why, without them): turn on "Keep my data on a
// PostgreSQL server", type the URL with a password, Test shows the version, pg_trgm and pgvector and
// what the database holds; "Use this server" says it applies on the next start and how to move the
// data; the password is not in the choice file; after a restart the app runs on the server, and
// turning it off goes back to the folder on the next start. Screenshots in both languages and themes.
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { NO_POSTGRES_REASON, postgresBin, startCluster, type PostgresCluster } from '../electron/testing/postgres.js';
import { callApi, dismissToasts, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const SECRET = 'hunter2-not-for-logs';
const bin = postgresBin();
let cluster: PostgresCluster | undefined;
let app: RunningApp | undefined;
let dataDir: string;

test.beforeAll(async () => {
  if (bin) cluster = await startCluster(bin);
});
test.afterAll(() => cluster?.stop());
test.afterEach(async () => {
  await app?.stop('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function scrollToPanel(page: Page): Promise<void> {
  await dismissToasts(page);
  await page.getByTestId('storage-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

async function openData(page: Page): Promise<void> {
  await page.goto(app!.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('storage-now')).toBeVisible();
}

test('keep the data on a PostgreSQL server: Test, choose, applied on the next start, and back', async ({ page }) => {
  test.skip(!bin, NO_POSTGRES_REASON);
  test.setTimeout(240_000);
  const admin = new pg.Client({ connectionString: cluster!.url() });
  await admin.connect();
  await admin.query('CREATE DATABASE anima_e2e');
  await admin.end();
  const url = `postgres://postgres:${SECRET}@127.0.0.1:${cluster!.port}/anima_e2e`;
  const shown = `postgres://postgres@127.0.0.1:${cluster!.port}/anima_e2e`;

  dataDir = newDataDir();
  app = await startApp(dataDir);
  await callApi(app, 'settings.update', { onboarded: true });
  await openData(page);
  await expect(page.getByTestId('storage-now')).toContainText('in this data folder');

  await page.getByTestId('storage-use-server').check();
  await page.getByTestId('storage-url').fill(url);
  await page.getByTestId('storage-test').click();
  const probe = page.getByTestId('storage-probe');
  await expect(probe).toContainText('PostgreSQL 15');
  await expect(probe).toContainText('pg_trgm available');
  await expect(probe).toContainText('No pgvector: search by meaning is unavailable on this server');
  await expect(probe).toContainText('The database is empty');
  await scrollToPanel(page);
  await shot(page, 'storage-test');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(probe).toContainText('没有 pgvector');
  await scrollToPanel(page);
  await shot(page, 'storage-test-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });

  await page.getByTestId('storage-choose').click();
  const restart = page.getByTestId('storage-restart');
  await expect(restart).toContainText('Anima uses this server from its next start');
  await expect(restart).toContainText(`anima migrate-store --from "${dataDir}" --to ${shown}`);
  await expect(page.getByTestId('storage-url')).toHaveValue(shown);
  const file = fs.readFileSync(path.join(dataDir, 'database.json'), 'utf8');
  expect(file).toContain(shown);
  expect(file).not.toContain(SECRET);
  await scrollToPanel(page);
  await shot(page, 'storage-chosen');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(restart).toContainText('下次启动时开始使用这台服务器');
  await scrollToPanel(page);
  await shot(page, 'storage-chosen-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await callApi(app, 'conversations.create', { title: 'In the folder' });

  // The next start runs on the server (a fresh database there: the folder's conversation is not in it).
  await app.stop('SIGTERM');
  app = await startApp(dataDir);
  expect(app.output()).not.toContain(SECRET);
  await callApi(app, 'settings.update', { onboarded: true });
  expect((await callApi(app, 'conversations.list', {})).map((c: { title: string }) => c.title)).not.toContain('In the folder');
  await openData(page);
  await expect(page.getByTestId('storage-now')).toContainText('on the PostgreSQL server');
  await expect(page.getByTestId('storage-now')).not.toContainText(SECRET);
  await expect(page.getByTestId('storage-restart')).toHaveCount(0);
  // Testing what Settings shows (no password in it) uses the stored one.
  await page.getByTestId('storage-test').click();
  await expect(page.getByTestId('storage-probe')).toContainText('The database holds Anima’s data');
  await scrollToPanel(page);
  await shot(page, 'storage-on-server');

  // Off again: the folder from the next start, its conversation still there.
  await page.getByTestId('storage-use-server').uncheck();
  await expect(page.getByTestId('storage-restart')).toContainText('Anima uses this data folder again from its next start');
  expect(fs.existsSync(path.join(dataDir, 'database.json'))).toBe(false);
  await app.stop('SIGTERM');
  app = await startApp(dataDir);
  expect((await callApi(app, 'conversations.list', {})).map((c: { title: string }) => c.title)).toContain('In the folder');
});
