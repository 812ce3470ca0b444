// "Read my imported history" as a person meets it: after a ChatGPT export over ten days is imported,
// Settings → Memory offers to read it ("You brought in … I can read them day by day …"); once asked,
// the first pass reads a week of it against the loopback model and the card shows the days read of
// the total; Pause stops it. Screenshots in English and light, Chinese and dark.
import type { Page } from '@playwright/test';
import { addTurns, exportBytes, readChatGpt, type Turn } from '../electron/imports/testing/chatgpt-grow.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { sleepResponder } from './fake-llm/sleep-responder.js';

let app: RunningApp;
let fake: FakeLlm;

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async () => {
  await app?.stop('SIGTERM');
});

/** The fixture's photosynthesis talk of 2025-06-21, carried on over the nine days after it. */
function tenDays(): Buffer {
  const topics = [
    'basil on the balcony',
    'a trip to Porto',
    'learning Portuguese verbs',
    'my sister Lena',
    'a new bike',
    'the pottery class',
    'a leaking window',
    'a book on tides',
    'the night market',
  ];
  const turns: Turn[] = topics.flatMap((topic, i) => {
    const day = new Date(Date.UTC(2025, 5, 22 + i, 18));
    return [
      { role: 'user' as const, text: `Today was mostly about ${topic}.`, at: day },
      { role: 'assistant' as const, text: `Tell me more about ${topic}.`, at: new Date(day.getTime() + 60_000) },
    ];
  });
  return exportBytes([addTurns(readChatGpt('openwebui-importer-gpt_example.json')[0]!, turns)]);
}

async function importFile(bytes: Buffer): Promise<void> {
  const { uploadId } = await callApi(app, 'imports.upload', { name: 'conversations.json', size: bytes.length, offset: 0, data: bytes.toString('base64') });
  const preview = await callApi(app, 'imports.preview', { uploadId });
  await callApi(app, 'imports.apply', { previewId: preview.previewId });
  await expect.poll(async () => (await callApi(app, 'imports.status'))?.state, { timeout: 60_000 }).toBe('done');
}

async function openSleepSettings(page: Page): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-memory').click();
  const card = page.getByTestId('imported-history');
  await expect(card).toBeVisible();
  await card.evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 80;
  });
}

test('Settings offers to read the imported history, shows the days read, and pauses', async ({ page }) => {
  test.setTimeout(240_000);
  app = await startApp(newDataDir());
  await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await callApi(app, 'settings.update', { onboarded: true, timeZone: 'UTC', sleep: { auto: false } });
  fake.respond = sleepResponder({ delayMs: 1500 });
  await importFile(tenDays());

  await page.goto(app.url);
  await openSleepSettings(page);
  const card = page.getByTestId('imported-history');
  await expect(card).toHaveAttribute('data-state', 'unread');
  await expect(card).toContainText(/You brought in \d+ messages in Jun 2025\./);
  await expect(card).toContainText('I can read them day by day in the background');
  await shot(page, 'imported-history-offer');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(card).toContainText(/你带来了2025年6月的 \d+ 条消息。我可以/);
  await shot(page, 'imported-history-offer-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });

  // Asked: the first pass reads the oldest week; the card follows it live.
  await page.getByTestId('imported-history-start').click();
  await expect(card).toHaveAttribute('data-state', 'reading');
  // "Reading now…" lasts as long as the first pass: on a quick machine it may be over before a look.
  await expect(page.getByTestId('imported-history-why')).toContainText(/Reading now…|The next days come in a minute or so/);
  await expect(card).toContainText('7 of 10 days read', { timeout: 120_000 });
  await expect(page.getByTestId('imported-history-why')).toContainText('The next days come in a minute or so');
  await shot(page, 'imported-history-progress');

  // Paused: said so, and "Go on reading" instead of Pause.
  await page.getByTestId('imported-history-pause').click();
  await expect(card).toHaveAttribute('data-state', 'paused');
  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(card).toContainText('已读 7 / 10 天');
  await expect(card).toContainText('已暂停');
  await shot(page, 'imported-history-paused-zh-dark');
  const status = await callApi(app, 'sleep.importedHistory');
  expect(status).toMatchObject({ state: 'paused', daysRead: 7, daysTotal: 10 });
  // The diary holds the days read, on their own dates.
  const days = (await callApi(app, 'diary.days', { limit: 30 })).map((d: { day: string }) => d.day);
  expect(days).toContain('2025-06-21');
  expect(days).toContain('2025-06-27');
  expect(days).not.toContain('2025-06-28');
});
