// Settings → Models says what each connection's model can do for Anima — chat, tools, structured
// answers, embeddings, images — and what follows when it cannot; the model choices warn when the
// chat model can't use tools or the background model can't give structured answers. A loopback fake
// Ollama reports each model's capabilities (/api/show); the on-device kind is known to do neither.
// Screenshots in English and light, Chinese and dark.
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { serveOllama } from './fake-llm/ollama.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let app: RunningApp;
let ollama: FakeLlm;

test.beforeEach(async () => {
  ollama = await startFakeLlm();
  ollama.models = ['llama3.2:latest', 'gemma3:1b'];
  serveOllama(ollama, {
    defaults: { contextLength: 131072, capabilities: ['completion', 'tools'], family: 'llama' },
    show: { 'gemma3:1b': { contextLength: 32768, capabilities: ['completion', 'vision'], family: 'gemma3' } },
  });
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  await ollama.close();
});

type Saved = { id: string; abilities: Record<string, string> };

test('each connection says what its model can do, and the choices warn about what follows', async ({ page }) => {
  test.setTimeout(180_000);
  const llama = (await callApi(app, 'providers.save', { kind: 'ollama', name: 'Llama', baseUrl: ollama.url, model: 'llama3.2:latest' })) as Saved;
  expect(llama.abilities).toEqual({ chat: 'yes', tools: 'yes', structured: 'yes', embeddings: 'no', images: 'no' });
  const gemma = (await callApi(app, 'providers.save', { kind: 'ollama', name: 'Small Gemma', baseUrl: ollama.url, model: 'gemma3:1b' })) as Saved;
  expect(gemma.abilities).toMatchObject({ tools: 'no', images: 'yes' });
  const local = (await callApi(app, 'providers.save', { kind: 'local', name: 'On this computer', baseUrl: '', model: 'anima-test/tiny-chat' })) as Saved;
  await callApi(app, 'settings.update', { chatProviderId: llama.id, backgroundProviderId: local.id });

  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  const cards = page.getByTestId('provider-item');
  await expect(cards).toHaveCount(3);
  const llamaCard = cards.filter({ hasText: 'llama3.2:latest' });
  const gemmaCard = cards.filter({ hasText: 'gemma3:1b' });
  const localCard = cards.filter({ hasText: 'On this computer' });

  await expect(llamaCard.getByTestId('ability-tools')).toHaveAttribute('data-value', 'yes');
  await expect(llamaCard.getByTestId('ability-tools')).toHaveText('Toolscan save and recall memories itselfYes');
  await expect(llamaCard.getByTestId('ability-structured')).toHaveText('Structured answerscan sleep: turn the day into memoriesYes');
  await expect(llamaCard.locator('.ability-warning')).toHaveCount(0);

  await expect(gemmaCard.getByTestId('ability-tools')).toHaveAttribute('data-value', 'no');
  await expect(gemmaCard.getByTestId('ability-images')).toHaveAttribute('data-value', 'yes');
  await expect(gemmaCard.getByTestId('ability-warning-tools')).toHaveText(
    'This model can’t use tools, so I’ll remember what you tell me during my naps and at night instead.',
  );
  await expect(gemmaCard.getByTestId('ability-warning-structured')).toHaveCount(0);

  await expect(localCard.getByTestId('ability-structured')).toHaveAttribute('data-value', 'no');
  await expect(localCard.getByTestId('ability-warning-structured')).toHaveText(
    'Its answers at night will be read from plain text, which small models often get wrong.',
  );

  // The choices: the background model (on-device) can't give structured answers; the chat model can use tools.
  await expect(page.getByTestId('background-provider-warning')).toHaveText(
    '“On this computer” can’t give structured answers: its answers at night will be read from plain text, which small models often get wrong.',
  );
  await expect(page.getByTestId('chat-provider-warning')).toHaveCount(0);
  await gemmaCard.scrollIntoViewIfNeeded();
  await shot(page, 'settings-models-abilities');

  // Chatting with the small model: memories come from naps and nights instead.
  await page.getByTestId('chat-provider-select').selectOption(gemma.id);
  await expect(page.getByTestId('chat-provider-warning')).toHaveText(
    '“Small Gemma” can’t use tools, so I’ll remember what you tell me during my naps and at night instead.',
  );
  await page.getByTestId('background-provider-select').scrollIntoViewIfNeeded();
  await shot(page, 'settings-models-abilities-choices');

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(gemmaCard.getByTestId('ability-warning-tools')).toHaveText('这个模型不会使用工具，所以你告诉我的事，我会在小睡和夜里再记下来。');
  await expect(page.getByTestId('background-provider-warning')).toHaveText(
    '“On this computer”给不出结构化回答：它夜里的回答只能从纯文本里读取，小模型常常在这一步出错。',
  );
  await gemmaCard.scrollIntoViewIfNeeded();
  await shot(page, 'settings-models-abilities-zh-dark');
  await page.getByTestId('background-provider-select').scrollIntoViewIfNeeded();
  await shot(page, 'settings-models-abilities-choices-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });

  // Back to the model that can do everything: no warning under the chat choice.
  await page.getByTestId('chat-provider-select').selectOption(llama.id);
  await expect(page.getByTestId('chat-provider-warning')).toHaveCount(0);
});
