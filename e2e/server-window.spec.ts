// Settings → Models says what each connection's server itself said: a window smaller than the
// setting ("This server gives 4,096 tokens; I'll fit the conversation into that"), and an
// OpenAI-compatible connection that turns out to be Ollama is offered Ollama's own API — one click,
// the name and model kept. Two loopback fake servers, one speaking Ollama, one llama.cpp.
// Screenshots in English and light, Chinese and dark.
import { startFakeLlm, type FakeLlm, type FakeResponse } from './fake-llm/server.js';
import { ollamaThinkingReply, serveOllama, type FakeOllama } from './fake-llm/ollama.js';
import { serveLlamaCpp } from './fake-llm/servers.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let ollama: FakeLlm;
let ollamaKnobs: FakeOllama;
let llamaCpp: FakeLlm;

test.beforeEach(async () => {
  [ollama, llamaCpp] = await Promise.all([startFakeLlm(), startFakeLlm()]);
  ollama.models = ['llama3.2:latest'];
  // Loaded with 4,096 tokens of context (what its /v1 route runs with); the model was made for 4,096 too.
  ollamaKnobs = serveOllama(ollama, {
    loaded: { 'llama3.2:latest': 4096 },
    defaults: { contextLength: 4096, capabilities: ['completion', 'tools'], family: 'llama' },
  });
  llamaCpp.models = ['qwen2.5-7b-instruct'];
  serveLlamaCpp(llamaCpp, { nCtx: 4096 });
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  await Promise.all([ollama.close(), llamaCpp.close()]);
});

test('a smaller server window is said, and Ollama behind /v1 is offered its own API', async ({ page }) => {
  test.setTimeout(180_000);
  const viaV1 = await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Ollama', baseUrl: ollama.baseUrl, model: 'llama3.2:latest' });
  expect(viaV1.server).toMatchObject({ software: 'ollama', contextTokens: 4096 });
  await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'llama.cpp', baseUrl: llamaCpp.baseUrl, model: 'qwen2.5-7b-instruct' });

  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  const cards = page.getByTestId('provider-item');
  await expect(cards).toHaveCount(2);
  const ollamaCard = cards.filter({ hasText: 'llama3.2:latest' });
  const llamaCard = cards.filter({ hasText: 'qwen2.5-7b-instruct' });
  await expect(ollamaCard.getByTestId('provider-window-note')).toHaveText('This server gives 4,096 tokens; I’ll fit the conversation into that.');
  await expect(llamaCard.getByTestId('provider-window-note')).toHaveText('This server gives 4,096 tokens; I’ll fit the conversation into that.');
  await expect(ollamaCard.getByTestId('provider-ollama-offer')).toContainText('This server is Ollama.');
  await expect(llamaCard.getByTestId('provider-ollama-offer')).toHaveCount(0);
  await shot(page, 'settings-models-server-window');

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(ollamaCard.getByTestId('provider-window-note')).toHaveText('这台服务器提供 4,096 个 token 的上下文，我会把对话控制在这个范围内。');
  await expect(ollamaCard.getByTestId('provider-ollama-switch')).toHaveText('改用 Ollama 自己的接口');
  await shot(page, 'settings-models-server-window-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });

  // One click: the native kind at the server's root, with the same name and model.
  await ollamaCard.getByTestId('provider-ollama-switch').click();
  await expect(page.getByTestId('toast').filter({ hasText: '“Ollama” now uses Ollama’s own API.' })).toBeVisible();
  await expect(ollamaCard.getByTestId('provider-ollama-offer')).toHaveCount(0);
  await expect(ollamaCard).toContainText('Ollama · llama3.2:latest');
  const [switched] = (await callApi(app, 'providers.list')) as { kind: string; name: string; model: string; baseUrl: string }[];
  expect(switched).toMatchObject({ kind: 'ollama', name: 'Ollama', model: 'llama3.2:latest', baseUrl: ollama.url });

  // The connection test says what the server gives the chosen model.
  await ollamaCard.getByTestId('provider-edit').click();
  await page.getByTestId('provider-test').click();
  await expect(page.getByTestId('provider-test-result')).toContainText('The server gives this model 4,096 tokens of context.');
});

test('while the server loads the model, the reply says so in words', async ({ page }) => {
  test.setTimeout(180_000);
  ollamaKnobs.loaded = {}; // not loaded: Ollama loads it on this request and sends nothing meanwhile
  const connection = await callApi(app, 'providers.save', { kind: 'ollama', name: 'Ollama', baseUrl: ollama.url, model: 'llama3.2:latest' });
  await callApi(app, 'settings.update', { chatProviderId: connection.id });
  // A blank line at once, the reply eight seconds later (the load).
  const reply = ollamaThinkingReply('', 'Hello from your server.', 'llama3.2:latest') as Extract<FakeResponse, { kind: 'raw' }>;
  ollama.script({ ...reply, writes: ['\n', reply.writes.join('')], delayMs: 8000 });
  await page.goto(app.url);
  await page.getByTestId('chat-input').fill('Good morning!');
  await page.getByTestId('send-button').click();
  const loading = page.getByTestId('loading-model');
  await expect(loading).toHaveText('Loading the model on your server… (the first reply after a pause can take a while)');
  await shot(page, 'chat-server-loading');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(loading).toHaveText('服务器正在加载模型…（停用一阵之后的第一条回复可能要等一会儿）');
  await shot(page, 'chat-server-loading-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  const answer = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await expect(answer).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(answer).toContainText('Hello from your server.');
  await expect(loading).toHaveCount(0);
});
