// Browser mode keeps its address per data folder: the server restarts on the same folder with the
// same port and token, and a tab left open comes back by itself — no reload — and can chat again.
// "Reset the browser link" in Settings → Data moves this tab to a new link and refuses the old one.
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let fake: FakeLlm;

test.beforeEach(async () => {
  fake = await startFakeLlm();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
  const connection = await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake server', baseUrl: fake.baseUrl, model: 'fake-model' });
  await callApi(app, 'settings.update', { chatProviderId: connection.id });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  await fake.close();
});

const replies = (page: import('@playwright/test').Page) => page.locator('[data-testid="message"][data-role="assistant"]');

test('after a restart on the same folder, the open tab reconnects by itself and chats again', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto(app.url);
  await page.getByTestId('chat-input').fill('Good evening!');
  await page.getByTestId('send-button').click();
  await expect(replies(page).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  // A mark on this page: gone if anything reloaded it.
  await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));

  const { url, dataDir } = app;
  await app.stop('SIGTERM');
  await expect(page.getByTestId('reconnecting')).toBeVisible({ timeout: 30_000 });
  await shot(page, 'chat-reconnecting');

  app = await startApp(dataDir);
  expect(app.url).toBe(url); // same port, same token
  await expect(page.getByTestId('reconnecting')).toHaveCount(0, { timeout: 60_000 });
  expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).toBe(true);

  const asked = fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
  await page.getByTestId('chat-input').fill('Still there?');
  await page.getByTestId('send-button').click();
  await expect(replies(page)).toHaveCount(2, { timeout: 60_000 });
  await expect(replies(page).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  const last = fake.requests.filter((r) => r.path === '/v1/chat/completions');
  expect(last.length).toBeGreaterThan(asked);
  expect(JSON.stringify(last.at(-1)!.body)).toContain('Still there?');
});

test('resetting the browser link moves this tab to the new link and refuses the old one', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  const panel = page.getByTestId('browser-link-panel');
  await panel.scrollIntoViewIfNeeded();
  await panel.getByTestId('browser-link-reset').click();
  await shot(page, 'settings-browser-link');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(panel).toContainText('重置链接');
  await shot(page, 'settings-browser-link-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(panel).toContainText('Reset the link');

  const old = app.token;
  // The tab opens the new link: a navigation.
  await Promise.all([page.waitForEvent('load', { timeout: 60_000 }), panel.getByTestId('browser-link-reset-confirm').click()]);
  // The tab opened the new link: it works, and the old token is refused.
  await expect(page.getByTestId('nav-settings')).toBeVisible({ timeout: 60_000 });
  const held = () =>
    page
      .evaluate(() => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('anima.token'))
      .catch(() => old); // mid-navigation: not yet
  await expect.poll(held, { timeout: 30_000 }).not.toBe(old);
  const fresh = (await page.evaluate(() =>
    (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('anima.token'),
  ))!;
  const refused = await fetch(`${app.origin}/api/call/app.info`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${old}`, 'Content-Type': 'application/json' },
    body: '{}',
  });
  expect(refused.status).toBe(401);
  expect(await callApi({ ...app, token: fresh }, 'app.info')).toMatchObject({ mode: 'browser' });
});
