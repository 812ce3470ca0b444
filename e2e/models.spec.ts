// Settings → Models → On this computer, as a person sees it: the real app in browser mode with the
// test models offered (ANIMA_TEST_MODELS=1) and its model host setting pointed at the loopback fake
// Hugging Face host (electron/models/testing/model-host.ts), which serves the generated tiny models
// slowly enough for a download to take several seconds. Download from the keyboard with progress,
// speed and time left; use the model for memory search; cancel and resume; talk with a chat model;
// errors in words; delete with a confirmation; the model host under Advanced; both themes. Search by
// meaning reading what was said before (seeded conversations) with progress, and a damaged model
// explained; a chat with the tiny local model showing its loading line.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { TEST_CHAT_MODEL_ID, TEST_MODEL_ID } from '../electron/models/catalog.js';
import { startModelHost, type FakeModelHost } from '../electron/models/testing/model-host.js';
import { callApi, newDataDir, seedConversations, shot, startApp, type RunningApp, dismissToasts } from './app.js';

const WEIGHTS = 'onnx/model.onnx';

let modelHost: FakeModelHost;
let app: RunningApp | null = null;

test.beforeAll(async () => {
  modelHost = await startModelHost({ root: 'electron/models/testing/models', lifetimeMs: 5 * 60_000 });
});
test.afterAll(async () => {
  await modelHost.close();
});
test.afterEach(async ({}, testInfo) => {
  if (app && testInfo.status !== testInfo.expectedStatus) {
    console.log(`app output:\n${app.output()}\nmodel host requests:\n${modelHost.requests.map((r) => `${r.status} ${r.url} ${r.range ?? ''}`).join('\n')}`);
  }
  await app?.stop('SIGTERM');
  app = null;
  modelHost.clearFaults();
});

const card = (page: Page, id: string): Locator => page.locator(`[data-testid="local-model"][data-id="${id}"]`);

async function openModels(page: Page, a: RunningApp): Promise<void> {
  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  await expect(page.getByTestId('local-models')).toBeVisible();
}

/** Scrolls the settings pane (only it: scrollIntoView would nudge the whole window) to put `testId` at its top. */
async function scrollPaneTo(page: Page, testId: string): Promise<void> {
  await dismissToasts(page);
  await page.getByTestId(testId).evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 24;
  });
}

const scrollToLocalModels = (page: Page) => scrollPaneTo(page, 'local-models');

test('on-device models: download with progress, memory search, cancel and resume, errors, delete, the model host', async ({ page }) => {
  test.setTimeout(180_000);
  // The tiny BERT's weights (133 kB) at 24 kB/s: about five and a half seconds of download.
  modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { bytesPerSecond: 24_000 });
  modelHost.setFault(TEST_CHAT_MODEL_ID, WEIGHTS, { bytesPerSecond: 24_000 });
  app = await startApp(newDataDir(), { ANIMA_TEST_MODELS: '1' });
  const a = app;
  await callApi(a, 'settings.update', { onboarded: true, theme: 'light', models: { host: modelHost.url } });
  await openModels(page, a);

  const bert = card(page, TEST_MODEL_ID);
  const chat = card(page, TEST_CHAT_MODEL_ID);
  await expect(bert).toHaveAttribute('data-state', 'available');
  await expect(bert).toContainText('MIT licence');
  await expect(bert).toContainText('English');
  // Nothing to search by meaning yet: the companion says so in its own words.
  await expect(page.getByTestId('search-hint')).toHaveAttribute('data-kind', 'words');
  await expect(page.getByTestId('search-hint')).toContainText('by the words in them');

  // Download from the keyboard: the progress bar with percent, speed and time left, and Cancel focused.
  await bert.getByTestId('model-download').focus();
  await page.keyboard.press('Enter');
  await expect(bert).toHaveAttribute('data-state', 'downloading');
  const bar = bert.getByRole('progressbar');
  await expect(bar).toHaveAttribute('aria-valuenow', /^([2-9]\d|1\d)$/, { timeout: 20_000 });
  const details = bert.getByTestId('model-progress-details');
  await expect(details).toContainText(/kB of \d+ kB · \d+ kB\/s · \d+ seconds? left/);
  await expect(bert.getByTestId('model-cancel')).toBeFocused();
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-downloading');

  // Installed: its size on disk; the hint offers to use it; using it turns memory search by meaning on.
  await expect(bert).toHaveAttribute('data-state', 'installed', { timeout: 30_000 });
  await expect(bert.getByTestId('model-installed')).toContainText(/Installed · \d+ kB on disk/);
  await expect(page.getByTestId('models-announcer')).toHaveText('Tiny BERT (test) is installed.');
  await expect(page.getByTestId('search-hint')).toHaveAttribute('data-kind', 'ready');
  await expect(bert.getByTestId('model-use-search')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(bert.getByTestId('model-used-search')).toBeVisible();
  // The model loads and reads what is stored; then it spots repeated memories, and search by meaning
  // is the person's switch (off by default until measured with a real model).
  await expect(page.getByTestId('search-hint')).toHaveAttribute('data-kind', 'repeats', { timeout: 30_000 });
  await expect(page.getByTestId('search-hint')).toContainText('search is still by words');
  expect((await callApi(a, 'settings.get')).models.embedding).toBe(TEST_MODEL_ID);
  const meaning = page.getByTestId('search-by-meaning');
  await expect(meaning).not.toBeChecked();
  // The switch follows the saved setting (it flips once the host has it), so click, then wait.
  await meaning.click();
  await expect(meaning).toBeChecked();
  await expect(page.getByTestId('search-hint')).toHaveAttribute('data-kind', 'meaning');
  await expect(page.getByTestId('search-hint')).toContainText('by words and by meaning');
  expect((await callApi(a, 'settings.get')).memory.vectorWeight).toBe(0.5);
  expect(await callApi(a, 'models.embeddingStatus')).toMatchObject({ model: TEST_MODEL_ID, state: 'ready', searching: true });

  // Cancel keeps what arrived; a reload still shows it; Resume continues with a Range request.
  await chat.getByTestId('model-download').click();
  await expect(chat.getByRole('progressbar')).toHaveAttribute('aria-valuenow', /^([2-9]\d|1\d)$/, { timeout: 20_000 });
  await chat.getByTestId('model-cancel').click();
  await expect(chat).toHaveAttribute('data-state', 'partial');
  await expect(chat.getByTestId('model-partial')).toContainText(/Paused with \d+ kB downloaded/);
  await page.reload();
  await page.getByTestId('nav-settings').click();
  await expect(chat).toHaveAttribute('data-state', 'partial');
  modelHost.setFault(TEST_CHAT_MODEL_ID, WEIGHTS, undefined);
  await chat.getByTestId('model-resume').click();
  await expect(chat).toHaveAttribute('data-state', 'installed', { timeout: 30_000 });
  const resumed = modelHost.requestsFor(TEST_CHAT_MODEL_ID, WEIGHTS).filter((r) => r.range);
  expect(resumed.length).toBeGreaterThan(0);

  // A chat model becomes a model connection with one click.
  await chat.getByTestId('model-use-chat').click();
  await expect(page.getByTestId('provider-item')).toHaveCount(1);
  await expect(chat).toContainText('Used by “Tiny chat (test)”');
  await scrollToLocalModels(page);
  await shot(page, 'settings-models');
  await scrollPaneTo(page, 'local-models-chat');
  await shot(page, 'settings-models-chat');

  // Both themes look deliberate.
  await callApi(a, 'settings.update', { theme: 'dark' });
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-dark');

  // Errors in words with a retry: the fake host does not have the real catalogue's models…
  const e5 = card(page, 'Xenova/multilingual-e5-small');
  await e5.getByTestId('model-download').click();
  await expect(e5.locator('.error-note')).toHaveAttribute('data-error-code', 'model_not_found');
  await expect(e5.locator('.error-note')).toContainText('The model host doesn’t have this model.');
  await expect(e5.getByTestId('model-download')).toHaveText(/Try again/);
  // …and a damaged file is thrown away, the model left uninstalled.
  await callApi(a, 'models.delete', { id: TEST_MODEL_ID });
  modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { corrupt: true });
  await expect(bert).toHaveAttribute('data-state', 'available');
  await bert.getByTestId('model-download').click();
  await expect(bert.locator('.error-note')).toHaveAttribute('data-error-code', 'model_integrity');
  await expect(bert.locator('.error-note')).toContainText('damaged');
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-errors');
  modelHost.setFault(TEST_MODEL_ID, WEIGHTS, undefined);
  // The files that did verify are kept, so this continues rather than starts over.
  await bert.getByRole('button', { name: 'Try again' }).click();
  await expect(bert).toHaveAttribute('data-state', 'installed', { timeout: 30_000 });
  await expect(bert.locator('.error-note')).toHaveCount(0);

  // Delete asks first — the bytes cannot come back — and says what stops working.
  await callApi(a, 'settings.update', { theme: 'light' });
  await bert.getByTestId('model-use-search').click();
  await expect(bert.getByTestId('model-used-search')).toBeVisible();
  await bert.getByTestId('model-delete').click();
  const confirm = bert.getByTestId('model-confirm');
  await expect(confirm).toContainText('Delete Tiny BERT (test) from this computer?');
  await expect(confirm).toContainText('go back to searching by words');
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Enter'); // Cancel: nothing happens
  await expect(bert).toHaveAttribute('data-state', 'installed');
  await expect(confirm).toHaveCount(0);
  await bert.getByTestId('model-delete').click();
  await page.keyboard.press('Escape'); // so does Escape
  await expect(confirm).toHaveCount(0);
  await expect(bert.getByTestId('model-delete')).toBeFocused();
  await bert.getByTestId('model-delete').click();
  await bert.getByTestId('model-confirm-delete').click();
  await expect(bert).toHaveAttribute('data-state', 'available');
  await expect(page.getByTestId('search-hint')).toHaveAttribute('data-kind', 'words');
  expect((await callApi(a, 'settings.get')).models.embedding).toBeNull();

  // The model host, under Advanced: a wrong address is explained, a mirror is saved.
  await page.getByTestId('models-advanced').locator('summary').click();
  const hostInput = page.getByTestId('model-host-input');
  await expect(hostInput).toHaveValue(modelHost.url);
  await hostInput.fill('ftp://mirror.example');
  await hostInput.press('Enter');
  await expect(page.getByText('Enter a web address that starts with https://')).toBeVisible();
  await hostInput.fill('https://hf-mirror.com/');
  await hostInput.press('Enter');
  await expect(page.getByText('Saved. The next download uses it.')).toBeVisible();
  expect((await callApi(a, 'settings.get')).models.host).toBe('https://hf-mirror.com');
  await page.getByTestId('model-host-default').click();
  await expect(hostInput).toHaveValue('https://huggingface.co');

  // In Chinese, with a download under way.
  modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { bytesPerSecond: 24_000 });
  await callApi(a, 'settings.update', { language: 'zh-CN', models: { host: modelHost.url } });
  await expect(page.getByTestId('local-models')).toContainText('这台电脑上');
  await bert.getByTestId('model-download').click();
  await expect(bert.getByTestId('model-progress-details')).toContainText(/还剩/, { timeout: 20_000 });
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-zh');
  await bert.getByTestId('model-cancel').click();
  await expect(bert).toHaveAttribute('data-state', 'partial');
});

test('search by meaning: reading what was said with progress, ready, and a model that will not load explained', async ({ page }) => {
  test.setTimeout(180_000);
  // About 1,300 messages from two LoCoMo conversations: enough for the tiny model to take a few seconds.
  const dataDir = newDataDir();
  for (const id of ['41', '43'])
    seedConversations(dataDir, { fixture: path.resolve('..', 'shared', 'bench', 'locomo', 'dev', `${id}.json`), sessions: 40, turns: 100 });
  app = await startApp(dataDir, { ANIMA_TEST_MODELS: '1' });
  const a = app;
  await callApi(a, 'settings.update', { onboarded: true, theme: 'light', models: { host: modelHost.url } });
  await callApi(a, 'models.download', { id: TEST_MODEL_ID });
  await expect
    .poll(async () => (await callApi(a, 'models.list')).find((m: { id: string }) => m.id === TEST_MODEL_ID)?.state, { timeout: 30_000 })
    .toBe('installed');
  await openModels(page, a);

  const bert = card(page, TEST_MODEL_ID);
  const hint = page.getByTestId('search-hint');
  await bert.getByTestId('model-use-search').click();
  // Reading what was said before the model came: a line with a count and a bar; search stays on words meanwhile.
  await expect(hint).toHaveAttribute('data-kind', 'embedding');
  await expect(hint.getByRole('progressbar')).toBeVisible({ timeout: 20_000 });
  await expect(hint).toContainText(/Reading what I remember with Tiny BERT \(test\): [\d,]+ of [\d,]+/);
  await dismissToasts(page);
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-embedding');
  await expect(hint).toHaveAttribute('data-kind', 'repeats', { timeout: 120_000 });
  expect(await callApi(a, 'models.embeddingStatus')).toMatchObject({ model: TEST_MODEL_ID, state: 'ready', error: null });

  // Weights damaged on disk while the app was closed: it says so and goes on searching by words.
  await a.stop('SIGTERM');
  const weights = path.join(dataDir, 'models', ...TEST_MODEL_ID.split('/'), WEIGHTS);
  fs.truncateSync(weights, Math.floor(fs.statSync(weights).size / 3));
  app = await startApp(dataDir, { ANIMA_TEST_MODELS: '1' });
  const b = app;
  await openModels(page, b);
  await expect(hint).toHaveAttribute('data-kind', 'unavailable', { timeout: 30_000 });
  await expect(hint).toContainText('I couldn’t use Tiny BERT (test), so I search by words for now.');
  await scrollToLocalModels(page);
  await shot(page, 'settings-models-unavailable');
});

test('talking with the on-device model: a loading line in place of the dots, then its words', async ({ page }) => {
  app = await startApp(newDataDir(), { ANIMA_TEST_MODELS: '1' });
  const a = app;
  await callApi(a, 'settings.update', { onboarded: true, theme: 'light', models: { host: modelHost.url } });
  await callApi(a, 'models.download', { id: TEST_CHAT_MODEL_ID });
  await expect
    .poll(async () => (await callApi(a, 'models.list')).find((m: { id: string }) => m.id === TEST_CHAT_MODEL_ID)?.state, { timeout: 30_000 })
    .toBe('installed');
  const provider = await callApi(a, 'providers.save', { kind: 'local', name: 'Tiny', baseUrl: '', model: TEST_CHAT_MODEL_ID });
  await callApi(a, 'settings.update', { chatProviderId: provider.id });
  await page.goto(a.url);
  await page.getByTestId('chat-input').fill('Hello there, how are you today?');
  await page.getByTestId('send-button').click();
  // The first reply after a start loads the model in its worker: said in words, not dots that look stuck.
  const loading = page.getByTestId('loading-model');
  await expect(loading).toHaveText('Loading the on-device model… (the first reply after starting can take a while)', { timeout: 10_000 });
  await shot(page, 'chat-local-loading');
  // Then its words (random weights: meaningless ones), and the line is gone.
  const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(loading).toHaveCount(0);
  const [conversation] = await callApi(a, 'conversations.list', {});
  const { messages } = await callApi(a, 'conversations.get', { id: conversation.id });
  expect(messages.map((m: { role: string; status: string }) => [m.role, m.status])).toEqual([
    ['user', 'complete'],
    ['assistant', 'complete'],
  ]);
  expect(messages[1].content.length).toBeGreaterThan(0);
});
