// Forgetting a memory "…and what it came from", as a person does it: the memory was saved in three
// turns of a chat; Forget asks whether to hide those three messages too; with the box ticked they
// leave recall but stay in the conversation, and the toast's Undo brings back the memory and them.
import type { Page } from '@playwright/test';
import { callApi, expect, shot, test, dismissToasts } from './app.js';
import { useConnectedApp } from './connected-app.js';

const connected = useConnectedApp();

const FACT = 'Sam’s grandmother Ilse grows saffron crocuses on her balcony in Graz.';

/** One turn in which the model saves FACT (the same words each time: one memory, its sources growing). */
async function talk(page: Page, text: string): Promise<void> {
  connected.fake.script({ kind: 'tool_call', name: 'remember', arguments: { action: 'save', type: 'world', content: FACT }, thenText: 'I’ll remember that.' });
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  const before = await replies.count();
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
  await expect(replies).toHaveCount(before + 1);
  await expect(replies.last()).toHaveAttribute('data-status', 'complete');
}

const recalledMessages = async (query: string) =>
  ((await callApi(connected.app, 'recall.search', { query, limit: 50 })) as { link: { kind: string; messageId?: string } }[]).flatMap((h) =>
    h.link.kind === 'message' ? [h.link.messageId!] : [],
  );

test('Forget offers to hide the messages it came from; they leave recall, stay in the chat, and Undo brings them back', async ({ page }) => {
  const conversation = await callApi(connected.app, 'conversations.create', { title: 'Grandmother Ilse' });
  await page.goto(connected.app.url);
  await page.getByTestId('conversation-item').filter({ hasText: 'Grandmother Ilse' }).click();
  await talk(page, 'My grandmother Ilse grows saffron crocuses on her balcony in Graz.');
  await talk(page, 'Ilse’s saffron crocuses on the balcony flowered again this October.');
  await talk(page, 'The saffron on Ilse’s balcony is enough for a risotto every winter.');

  const memory = (await callApi(connected.app, 'memories.list', {})).items.find((m: { content: string }) => m.content === FACT);
  expect(memory.sourceMessageIds).toHaveLength(3);
  const sources: string[] = memory.sourceMessageIds;
  expect((await recalledMessages('saffron balcony')).filter((id) => sources.includes(id)).length).toBeGreaterThan(0);

  // The companion's "I saved a memory" toasts are dismissed: the screenshots are of the confirmation.
  await dismissToasts(page);
  await page.getByTestId('nav-memories').click();
  await page.getByTestId('memory-card').filter({ hasText: 'saffron' }).click();
  await page.getByTestId('memory-forget').click();
  const confirm = page.getByTestId('memory-forget-confirm');
  await expect(confirm).toContainText('Also hide the messages it came from (3)');
  await expect(page.getByTestId('memory-forget-sources')).toBeFocused();
  await shot(page, 'memory-forget-sources');

  // In Chinese, dark.
  await callApi(connected.app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(confirm).toContainText('同时隐藏它来自的消息（3 条）');
  await page.getByTestId('memory-forget-sources').check();
  await shot(page, 'memory-forget-sources-zh-dark');
  await callApi(connected.app, 'settings.update', { theme: 'light', language: 'en' });

  // Esc closes it and changes nothing; Forget asks again.
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);
  expect((await callApi(connected.app, 'memories.get', { id: memory.id })).memory.status).toBe('active');
  await page.getByTestId('memory-forget').click();
  await page.getByTestId('memory-forget-sources').check();
  await page.getByTestId('memory-forget-go').click();
  await expect(page.getByTestId('toast').last()).toContainText('with the 3 messages it came from');

  // Out of recall, still in the conversation.
  expect((await callApi(connected.app, 'memories.get', { id: memory.id })).memory.status).toBe('expired');
  expect((await recalledMessages('saffron balcony')).filter((id) => sources.includes(id))).toEqual([]);
  const shown = (await callApi(connected.app, 'conversations.get', { id: conversation.id })).messages.map((m: { id: string }) => m.id);
  for (const id of sources) expect(shown).toContain(id);

  // Undo brings back the memory and the messages.
  await page.getByTestId('toast-action').last().click();
  await expect.poll(async () => (await callApi(connected.app, 'memories.get', { id: memory.id })).memory.status).toBe('active');
  await expect.poll(async () => (await recalledMessages('saffron balcony')).filter((id) => sources.includes(id)).length).toBeGreaterThan(0);
});
