// Settings → Models → memory search through the model server's embedding model, as a person sees it:
// the real app in browser mode, a connection to the loopback fake server, whose /v1/embeddings answers
// with hashed bag-of-words vectors (fake-llm/embeddings.ts). Choosing "Your model server" with a model
// from the server's list, the backfill, search by meaning, the server gone (the status line says search
// is paused and by words) and back. Screenshots in English/light and Chinese/dark.
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp, dismissToasts } from './app.js';
import { serveEmbeddings, type FakeEmbeddings } from './fake-llm/embeddings.js';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import type { Page } from '@playwright/test';

const MODEL = 'nomic-embed-text';
const MEMORIES = [
  'The person plays the cello on Sundays.',
  'The person’s sister lives in Porto near the river.',
  'The kettle in the kitchen whistles loudly every morning.',
];
/** The sister memory in other words (the fake's synonyms): found by meaning, not by words. */
const SISTER_QUERY = 'Which sibling dwells beside a waterway?';

let fake: FakeLlm;
let served: FakeEmbeddings;
let app: RunningApp | null = null;

test.beforeAll(async () => {
  fake = await startFakeLlm();
  fake.models = ['fake-model', MODEL, 'llama3.2'];
  served = serveEmbeddings(fake, { models: [MODEL] });
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async ({}, testInfo) => {
  if (app && testInfo.status !== testInfo.expectedStatus) console.log(`app output:\n${app.output()}`);
  await app?.stop('SIGTERM');
  app = null;
});

/** Scrolls the settings pane (only it) to put `testId` at its top. */
async function scrollPaneTo(page: Page, testId: string): Promise<void> {
  await dismissToasts(page);
  await page.getByTestId(testId).evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 24;
  });
}

test('memory search through the model server: choose it, backfill, search by meaning, server gone and back', async ({ page }) => {
  test.setTimeout(240_000);
  app = await startApp(newDataDir());
  const a = app;
  await callApi(a, 'settings.update', { onboarded: true, theme: 'light', language: 'en', memory: { vectorWeight: 0.5 } });
  await callApi(a, 'providers.save', { kind: 'openai-compatible', name: 'Ollama on this computer', baseUrl: fake.baseUrl, model: 'fake-model' });
  for (const content of MEMORIES) await callApi(a, 'memories.create', { type: 'world', content });

  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').click();
  const source = page.getByTestId('search-source');
  await expect(source).toBeVisible();
  await expect(source).toHaveAttribute('data-source', 'words');
  // No model on this device yet: that choice says what it needs.
  await expect(page.getByTestId('search-source-device').locator('input')).toBeDisabled();

  await page.getByTestId('search-source-server').locator('input').check();
  const form = page.getByTestId('search-server-form');
  await expect(form).toBeVisible();
  // The server's own list, embedding models first.
  await expect(form).toContainText('3 models your server lists');
  const listed = await form.locator('datalist option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));
  expect(listed[0]).toBe(MODEL);

  // A model the server does not have: refused in its words, nothing saved.
  await page.getByTestId('search-server-model').fill('no-such-model');
  await page.getByTestId('search-server-use').click();
  await expect(form.getByRole('alert')).toContainText('no-such-model');
  expect((await callApi(a, 'settings.get')).models.serverEmbedding ?? null).toBeNull();

  await page.getByTestId('search-server-model').fill(MODEL);
  await page.getByTestId('search-server-use').click();
  await expect(source).toHaveAttribute('data-source', 'server');
  const hint = page.getByTestId('search-hint');
  await expect(hint).toHaveAttribute('data-kind', 'meaning');
  await expect(hint).toContainText(`with ${MODEL} on your model server (Ollama on this computer)`);
  await expect(page.getByTestId('search-source-server')).toContainText(`Your model server (${MODEL})`);
  expect(served.served.openai).toBeGreaterThanOrEqual(MEMORIES.length);

  // Search by meaning finds the sister memory from words none of which it contains.
  await expect
    .poll(async () => (await callApi(a, 'recall.search', { query: SISTER_QUERY, sources: ['semantic'] })).map((h: { text: string }) => h.text), {
      timeout: 60_000,
    })
    .toEqual([MEMORIES[1]]);

  await scrollPaneTo(page, 'memory-search');
  await shot(page, 'embeddings-server-ready');

  // The server goes away: a new memory waits, search is by words, and the status line says so.
  served.mode = 'close';
  await callApi(a, 'memories.create', { type: 'world', content: 'The person’s sister visits every spring.' });
  await expect(hint).toHaveAttribute('data-kind', 'paused');
  await expect(hint).toContainText('Search by meaning is paused: your model server isn’t answering — searching by words');
  await scrollPaneTo(page, 'memory-search');
  await shot(page, 'embeddings-server-paused');

  await callApi(a, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(hint).toContainText('按意思搜索已暂停');
  await scrollPaneTo(page, 'memory-search');
  await shot(page, 'embeddings-server-paused-zh-dark');

  // Back: the queue goes on by itself and the new memory gets its vector.
  served.mode = 'ok';
  await expect(hint).toHaveAttribute('data-kind', 'meaning', { timeout: 90_000 });
  await expect(hint).toContainText(`你模型服务器（Ollama on this computer）上的 ${MODEL}`);
  await expect(source).toHaveAttribute('data-source', 'server');
  await scrollPaneTo(page, 'memory-search');
  await shot(page, 'embeddings-server-ready-zh-dark');
  await expect.poll(async () => (await callApi(a, 'models.embeddingStatus')).queued, { timeout: 60_000 }).toBe(0);

  // Words only again: the choice clears, the line goes back to words.
  await page.getByTestId('search-source-words').locator('input').check();
  await expect(source).toHaveAttribute('data-source', 'words');
  expect((await callApi(a, 'settings.get')).models.serverEmbedding).toBeNull();
});
