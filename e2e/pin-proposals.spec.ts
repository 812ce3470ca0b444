// Deep sleep's pin suggestions say why in the window's language: a memory the conversation cited five
// times is proposed for pinning after a night, and the digest words the reason (kept as a code) in
// English and in Chinese; accepting pins it.
import { expect, test, type Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { sleepResponder } from './fake-llm/sleep-responder.js';
import { callApi, newDataDir, shot, startApp, type RunningApp } from './app.js';

let fake: FakeLlm;
let app: RunningApp | null = null;

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async () => {
  fake.respond = undefined;
  await app?.stop('SIGTERM');
  app = null;
});

/** One exchange through the API, waited for until the reply is stored. */
async function talk(a: RunningApp, conversationId: string, content: string) {
  await callApi(a, 'chat.send', { conversationId, content });
  await expect.poll(async () => (await callApi(a, 'conversations.get', { id: conversationId })).messages.at(-1)?.status, { timeout: 60_000 }).toBe('complete');
}

async function showDigest(page: Page, a: RunningApp, language: 'en' | 'zh-CN', theme: 'light' | 'dark') {
  await callApi(a, 'settings.update', { language, theme });
  await page.goto(a.url);
  await page.getByTestId('nav-sleep').click();
  await expect(page.getByTestId('digest-proposal')).toHaveCount(1);
  await page.getByTestId('digest-proposal').scrollIntoViewIfNeeded();
}

test('a pin suggestion says why in English and in Chinese', async ({ page }) => {
  test.setTimeout(240_000);
  app = await startApp(newDataDir());
  const a = app;
  await callApi(a, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  // Automatic sleep off: the night is the test's own.
  await callApi(a, 'settings.update', { onboarded: true, sleep: { auto: false } });
  fake.respond = sleepResponder();

  const cat = (await callApi(a, 'memories.create', { type: 'world', content: 'Sam’s cat Miso sleeps on the kitchen windowsill every afternoon.' })).memory;
  const conversation = await callApi(a, 'conversations.create', {});
  for (const line of [
    'Miso was on the windowsill again today.',
    'I bought Miso a new cushion for the sill.',
    'Miso ignored the cushion and slept on the bare wood.',
    'The vet says Miso is a healthy weight.',
    'Miso brought me a leaf from the garden.',
  ]) {
    await talk(a, conversation.id, `${line} [[anima:${cat.id}]]`);
  }

  const started = await callApi(a, 'sleep.now');
  await expect.poll(async () => (await callApi(a, 'sleep.runs', { limit: 1 }))[0]?.status, { timeout: 180_000, intervals: [1000] }).toBe('done');
  const digest = (await callApi(a, 'sleep.digest', {}))!;
  expect(digest.runId).toBe(started.runId);
  const [proposal] = digest.proposals;
  expect(proposal).toMatchObject({ memoryId: cat.id, action: 'pin', reasonCode: { code: 'much_used' } });
  const replies = proposal!.reasonCode!.code === 'much_used' ? proposal!.reasonCode!.replies : 0;
  expect(replies).toBeGreaterThanOrEqual(5);
  expect(proposal!.reason).toBe(`used in ${replies} replies`);

  const reason = page.getByTestId('proposal-reason');
  await showDigest(page, a, 'en', 'light');
  await expect(reason).toHaveText(`Why: used in ${replies} replies`);
  await shot(page, 'sleep-digest-proposal-en-light');

  await showDigest(page, a, 'zh-CN', 'dark');
  await expect(reason).toHaveText(`原因：在 ${replies} 次回复里用到过`);
  await expect(page.getByTestId('digest-proposal')).not.toContainText('replies');
  await shot(page, 'sleep-digest-proposal-zh-dark');

  await page.getByTestId('proposal-accept').click();
  await expect(page.getByTestId('digest-proposal')).toHaveAttribute('data-status', 'accepted');
  expect((await callApi(a, 'memories.get', { id: cat.id })).memory.pinned).toBe(true);
});
