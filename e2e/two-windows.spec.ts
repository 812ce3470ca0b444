// Two windows on one server (browser mode, the same address and token): both have the same
// conversation open; what is sent in one appears in the other, with its reply, without a reload.
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let fake: FakeLlm;

test.beforeEach(async () => {
  fake = await startFakeLlm();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, companion: { greeting: false } });
  const connection = await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake server', baseUrl: fake.baseUrl, model: 'fake-model' });
  await callApi(app, 'settings.update', { chatProviderId: connection.id });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  await fake.close();
});

const user = (page: Page) => page.locator('[data-testid="message"][data-role="user"]');
const replies = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
/** The words of the person's messages, as shown. */
const said = (page: Page) => user(page).locator('.msg-bubble');

/** Opens the app in `page` with the conversation open, and marks the page: the mark goes if it reloads. */
async function openIn(page: Page, conversationId: string): Promise<void> {
  await page.goto(app.url);
  await page.locator(`[data-testid="conversation-item"][data-id="${conversationId}"] .conv-title`).click();
  await expect(page.getByTestId('chat-input')).toBeVisible();
  await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));
}
const stayed = (page: Page) => page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed === true);

test('a message sent in one window appears in the other without a reload', async ({ page: laptop, context }) => {
  test.setTimeout(240_000);
  const conversation = await callApi(app, 'conversations.create', { title: 'Sofa and desk' });
  const phone = await context.newPage();
  await openIn(laptop, conversation.id);
  await openIn(phone, conversation.id);

  await phone.getByTestId('chat-input').fill('Sent from the phone on the sofa');
  await phone.getByTestId('send-button').click();
  await expect(replies(phone).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });

  // The laptop shows it, and the reply, as they are on the phone.
  await expect(said(laptop)).toHaveText(['Sent from the phone on the sofa'], { timeout: 60_000 });
  await expect(replies(laptop)).toHaveCount(1);
  await expect(replies(laptop).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(replies(laptop).last().locator('.markdown')).toHaveText((await replies(phone).last().locator('.markdown').textContent()) ?? '');

  // And back: the laptop answers, the phone shows it.
  await laptop.getByTestId('chat-input').fill('And this one from the desk');
  await laptop.getByTestId('send-button').click();
  await expect(said(phone)).toHaveText(['Sent from the phone on the sofa', 'And this one from the desk'], { timeout: 60_000 });
  await expect(replies(phone)).toHaveCount(2);
  await expect(replies(phone).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(replies(laptop).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  // Nothing shown twice, nothing reloaded.
  await expect(user(laptop)).toHaveCount(2);
  expect(await stayed(laptop)).toBe(true);
  expect(await stayed(phone)).toBe(true);
  const { messages } = await callApi(app, 'conversations.get', { id: conversation.id });
  expect(messages).toHaveLength(4);

  await shot(laptop, 'two-windows-laptop');
  await shot(phone, 'two-windows-phone');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(laptop.getByTestId('send-button')).toHaveAttribute('aria-label', /发送/);
  await expect(phone.getByTestId('send-button')).toHaveAttribute('aria-label', /发送/);
  await shot(laptop, 'two-windows-laptop-zh-dark');
  await shot(phone, 'two-windows-phone-zh-dark');
});
