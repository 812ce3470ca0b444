// A memory's history says why in the window's language: a new value for the same thing (the host's own
// reason, kept as a code) reads in English and in Chinese; in both themes.
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;

test.beforeEach(async () => {
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
});

test('the history words the host’s reasons per language', async ({ page }) => {
  const old = (await callApi(app, 'memories.create', { type: 'world', content: 'Sam lives in Lisbon.' })).memory;
  const moved = await callApi(app, 'memories.create', { type: 'world', content: 'Sam lives in Porto.' });
  expect(moved.superseded).toBe(old.id);

  const open = async () => {
    await page.goto(app.url);
    await page.getByTestId('nav-memories').click();
    await page.getByTestId('memory-card').filter({ hasText: 'Porto' }).click();
    await expect(page.getByTestId('memory-history')).toBeVisible();
  };
  for (const [language, theme, words] of [
    ['en', 'light', `a new value for the same thing — it replaces memory #${old.id}`],
    ['en', 'dark', `a new value for the same thing — it replaces memory #${old.id}`],
    ['zh-CN', 'light', `同一件事有了新的值——它取代了记忆 #${old.id}`],
    ['zh-CN', 'dark', `同一件事有了新的值——它取代了记忆 #${old.id}`],
  ] as const) {
    await callApi(app, 'settings.update', { language, theme });
    await open();
    await expect(page.getByTestId('memory-history')).toContainText(words);
    await expect(page.getByTestId('memory-history')).not.toContainText('the same slot');
    await page.getByTestId('memory-history').scrollIntoViewIfNeeded();
    await shot(page, `memory-history-reason-${language === 'en' ? 'en' : 'zh'}-${theme}`);
  }
});
