// A connection's generation settings: set in Settings → Models (the provider form's "How replies
// are written"), refused in words when out of range, and carried by the next chat request as the
// loopback fake server reads it. Screenshots of the form in English and light, Chinese and dark.
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let fake: FakeLlm;

test.beforeEach(async () => {
  fake = await startFakeLlm();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  await fake.close();
});

test('generation settings set in the form reach the next chat request', async ({ page }) => {
  test.setTimeout(180_000);
  const connection = await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake server', baseUrl: fake.baseUrl, model: 'fake-model' });
  await callApi(app, 'settings.update', { chatProviderId: connection.id });

  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  await page.getByTestId('provider-item').getByTestId('provider-edit').click();
  const section = page.getByTestId('generation-settings');
  await expect(section).not.toHaveAttribute('open', ''); // folded while nothing is set
  await section.locator('summary').click();

  // Out of range: said beside the field, and nothing is sent.
  await page.getByTestId('generation-temperature').fill('3');
  await page.getByTestId('generation-stop').fill('END\nUser:');
  await page.getByTestId('provider-save').click();
  await expect(page.getByTestId('generation-temperature-problem')).toHaveText('The temperature must be a number from 0 to 2.');
  expect((await callApi(app, 'providers.list'))[0].generation).toEqual({ temperature: null, topP: null, maxTokens: null, stop: [] });

  await page.getByTestId('generation-temperature').fill('0.4');
  await page.getByTestId('generation-top-p').fill('0.85');
  await page.getByTestId('generation-max-tokens').fill('256');
  await expect(page.getByTestId('generation-temperature-problem')).toHaveCount(0);
  await section.scrollIntoViewIfNeeded();
  await shot(page, 'settings-generation');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(section.locator('summary')).toContainText('回复的生成方式');
  await section.scrollIntoViewIfNeeded();
  await shot(page, 'settings-generation-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(section.locator('summary')).toContainText('How replies are written');
  await page.getByTestId('provider-save').click();
  await expect(page.getByTestId('provider-form')).toHaveCount(0);
  expect((await callApi(app, 'providers.list'))[0].generation).toEqual({ temperature: 0.4, topP: 0.85, maxTokens: 256, stop: ['END', 'User:'] });

  // The next chat request carries them in the OpenAI-compatible fields.
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('chat-input').fill('Tell me about your morning.');
  await page.getByTestId('send-button').click();
  const answer = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await expect(answer).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  const sent = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body as Record<string, unknown>;
  expect(sent).toMatchObject({ temperature: 0.4, top_p: 0.85, max_tokens: 256, stop: ['END', 'User:'] });

  // Reset: back to the server's defaults, and the next request carries none of them.
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  await page.getByTestId('provider-item').getByTestId('provider-edit').click();
  await expect(page.getByTestId('generation-settings')).toHaveAttribute('open', '');
  await page.getByTestId('generation-reset').click();
  await page.getByTestId('provider-save').click();
  await expect(page.getByTestId('provider-form')).toHaveCount(0);
  expect((await callApi(app, 'providers.list'))[0].generation).toEqual({ temperature: null, topP: null, maxTokens: null, stop: [] });
  const asked = fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('chat-input').fill('And now?');
  await page.getByTestId('send-button').click();
  await expect(page.locator('[data-testid="message"][data-role="assistant"]').last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect.poll(() => fake.requests.filter((r) => r.path === '/v1/chat/completions').length, { timeout: 60_000 }).toBeGreaterThan(asked);
  await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toHaveCount(2, { timeout: 60_000 });
  await expect(page.locator('[data-testid="message"][data-role="assistant"]').last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  const after = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body as Record<string, unknown>;
  for (const field of ['temperature', 'top_p', 'max_tokens', 'stop']) expect(after).not.toHaveProperty(field);
});
