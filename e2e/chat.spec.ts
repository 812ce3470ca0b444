// A newcomer's path, end to end: the real app in browser mode (its own process, real PGlite on
// disk), Chromium driving the real UI, and a loopback fake model server speaking the OpenAI wire
// protocol. Screenshots of every view go to e2e/screenshots/.
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { callApi as api, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let fake: FakeLlm;
const apps: RunningApp[] = [];

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.stop('SIGTERM')));
});

async function launch(dataDir: string): Promise<RunningApp> {
  const app = await startApp(dataDir);
  apps.push(app);
  return app;
}

/** Connect the fake model and skip onboarding, for tests about something else. */
async function connectedApp(dataDir = newDataDir()): Promise<RunningApp> {
  const app = await launch(dataDir);
  await api(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await api(app, 'settings.update', { onboarded: true });
  return app;
}

const assistant = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const user = (page: Page) => page.locator('[data-testid="message"][data-role="user"]');

test('a newcomer connects a model, chats, and finds the conversation after a restart', async ({ page }) => {
  const dataDir = newDataDir();
  let app = await launch(dataDir);

  await page.goto(app.url);
  await expect(page.getByTestId('onboarding')).toBeVisible();
  // The token is taken from the address bar and kept out of it.
  await expect(page).not.toHaveURL(/token=/);
  await shot(page, 'onboarding-1-welcome');
  await page.getByTestId('onboarding-start').click();

  await page.getByTestId('provider-kind').selectOption('openai-compatible');
  await page.getByTestId('provider-base-url').fill(fake.baseUrl);
  await page.getByTestId('provider-model').fill('fake-model');
  await page.getByTestId('provider-test').click();
  await expect(page.getByTestId('provider-test-result')).toHaveAttribute('data-ok', 'true');
  await shot(page, 'onboarding-2-connect');
  await page.getByTestId('provider-save').click();

  await expect(page.getByTestId('onboarding-finish')).toBeVisible();
  await shot(page, 'onboarding-3-meet');
  await page.getByTestId('onboarding-finish').click();

  const input = page.getByTestId('chat-input');
  await expect(input).toBeFocused();
  const reply = 'Hello Sam — it is good to meet you. I will keep our first conversation safe.';
  fake.script({ kind: 'text', text: reply, chunks: 10, chunkDelayMs: 150 });
  await input.fill('Hi! I am Sam, and I just planted tomatoes.');
  await input.press('Enter');

  await expect(user(page).last()).toContainText('I just planted tomatoes');
  // Streaming: the reply is visible while still being written, then completes.
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'streaming');
  await expect(assistant(page).last()).toContainText('Hello Sam');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(assistant(page).last()).toContainText(reply);
  await expect(input).toBeFocused();
  await expect(page.getByTestId('conversation-item').first()).toContainText('Hi! I am Sam');
  await shot(page, 'chat');

  // Every view, as a person would click through them.
  for (const view of ['diary', 'dreams', 'graph', 'pins', 'memories', 'sleep', 'settings']) {
    await page.getByTestId(`nav-${view}`).click();
    await page.waitForTimeout(150);
    await shot(page, `view-${view}`);
  }
  for (const section of ['companion', 'memory', 'data']) {
    const tab = page.getByTestId(`settings-${section}`);
    if (await tab.count()) {
      await tab.first().click();
      await page.waitForTimeout(100);
      await shot(page, `settings-${section}`);
    }
  }

  // Restart the whole app: the conversation is still there.
  await app.stop('SIGTERM');
  apps.splice(apps.indexOf(app), 1);
  app = await launch(dataDir);
  await page.goto(app.url);
  await expect(page.getByTestId('onboarding')).toHaveCount(0);
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('conversation-item').first().click();
  await expect(user(page)).toHaveCount(1);
  await expect(user(page).first()).toContainText('I just planted tomatoes');
  await expect(assistant(page).first()).toContainText(reply);
  await shot(page, 'chat-after-restart');
});

test('a crash in the middle of a reply loses nothing that was acknowledged', async ({ page }) => {
  const dataDir = newDataDir();
  let app = await connectedApp(dataDir);
  await page.goto(app.url);
  await page.getByTestId('new-conversation').click();
  fake.script({ kind: 'text', text: 'Once upon a time there was a gardener who talked to her tomatoes every single morning.', chunks: 20, chunkDelayMs: 250 });
  await page.getByTestId('chat-input').fill('Tell me a long story.');
  await page.getByTestId('send-button').click();
  await expect(assistant(page).last()).toContainText('Once upon');
  await page.waitForTimeout(600); // let the growing text reach the disk (saved every 250 ms)

  await app.stop('SIGKILL');
  apps.splice(apps.indexOf(app), 1);
  app = await launch(dataDir); // the dead process's lock is stale and taken over
  await page.goto(app.url);
  await page.getByTestId('conversation-item').first().click();
  await expect(user(page).first()).toContainText('Tell me a long story.');
  const partial = assistant(page).first();
  await expect(partial).toHaveAttribute('data-status', 'partial');
  await expect(partial).toContainText('Once upon');
  await expect(page.getByTestId('partial-note')).toBeVisible();
  await shot(page, 'chat-after-crash');
});

test('a provider failure is explained in words, and Stop keeps what was written', async ({ page }) => {
  const app = await connectedApp();
  await page.goto(app.url);
  await page.getByTestId('new-conversation').click();

  fake.script({ kind: 'error', status: 401, file: 'openai-error-401-invalid-api-key.json' });
  await page.getByTestId('chat-input').fill('Are you there?');
  await page.keyboard.press('Enter');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'error');
  await expect(assistant(page).last()).toContainText(/key/i);
  await shot(page, 'chat-error');

  fake.script({ kind: 'text', text: 'Yes, I am here. Let me tell you about the weather, the garden and the week ahead.', chunks: 16, chunkDelayMs: 250 });
  await page.getByTestId('retry').click();
  await expect(assistant(page).last()).toContainText('Yes, I am here');
  await page.getByTestId('stop-button').click();
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'partial');
  await expect(page.getByTestId('partial-note')).toBeVisible();
  const kept = await assistant(page).last().innerText();
  expect(kept).toContain('Yes, I am here');
  await shot(page, 'chat-stopped');

  // An oversized message is refused in words, and nothing of it is cut off behind the person's back.
  const huge = 'word '.repeat(40_001);
  await page.getByTestId('chat-input').fill(huge);
  await expect(page.getByTestId('too-long')).toBeVisible();
  await expect(page.getByTestId('send-button')).toBeDisabled();
  expect(await page.getByTestId('chat-input').inputValue()).toHaveLength(huge.length);
});

test('the API refuses calls without the token; the page itself needs none', async () => {
  const app = await launch(newDataDir());
  // Scripts and people take the first loopback address printed: it must be the one with the token.
  expect(app.output().match(/https?:\/\/(127\.0\.0\.1|localhost)\S*/)?.[0]).toBe(app.url);
  const page = await fetch(`${app.origin}/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<div id="root">');
  const noToken = await fetch(`${app.origin}/api/call/app.info`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  expect(noToken.status).toBe(401);
  const info = await api(app, 'app.info');
  expect(info.mode).toBe('browser');
  expect(info.secretStorage).toBe('owner-only-file');
});
