// Deleting a conversation and keeping one off the record, as a person does it: delete from the list
// (with Undo), find it in Settings → Data → Trash with the day it is removed for good, restore it;
// start a conversation off the record (badge in the list, banner in the chat) and put it back on.
import type { Page } from '@playwright/test';
import { callApi, expect, shot, test, dismissToasts } from './app.js';
import { useConnectedApp } from './connected-app.js';

const connected = useConnectedApp();

async function talk(page: Page, text: string): Promise<void> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
  await expect(page.locator('[data-testid="message"][data-role="assistant"]').last()).toHaveAttribute('data-status', 'complete');
}

const item = (page: Page, title: string) => page.getByTestId('conversation-item').filter({ hasText: title });

async function openTrash(page: Page): Promise<void> {
  // The toasts of the deletes are dismissed first: the screenshot is of the trash.
  await dismissToasts(page);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('trash-panel')).toBeVisible();
  // The settings pane scrolled so the trash is at its top.
  await page.getByTestId('trash-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

test('delete from the list with undo, the trash says when it is removed for good, restore brings it back', async ({ page }) => {
  const kept = await callApi(connected.app, 'conversations.create', { title: 'Allotment plans' });
  const doomed = await callApi(connected.app, 'conversations.create', { title: 'Lofoten trip' });
  await page.goto(connected.app.url);
  await item(page, 'Lofoten trip').click();
  await talk(page, 'My sister Margaret kayaks around Lofoten every summer.');

  // Delete, then Undo from the toast: it is back in the list.
  await item(page, 'Lofoten trip').hover();
  await item(page, 'Lofoten trip').getByTestId('conversation-delete').click();
  await expect(item(page, 'Lofoten trip')).toHaveCount(0);
  await expect(page.getByTestId('toast').last()).toContainText('Lofoten trip');
  await page.getByTestId('toast-action').last().click();
  await expect(item(page, 'Lofoten trip')).toHaveCount(1);

  // Delete again, by keyboard: focus the row's delete button and press Enter.
  await item(page, 'Lofoten trip').getByTestId('conversation-delete').focus();
  await page.keyboard.press('Enter');
  await expect(item(page, 'Lofoten trip')).toHaveCount(0);
  await expect(item(page, 'Allotment plans')).toHaveCount(1);
  const trash = await callApi(connected.app, 'conversations.trash');
  expect(trash.map((t: { id: string }) => t.id)).toEqual([doomed.id]);

  await openTrash(page);
  const row = page.getByTestId('trash-item');
  await expect(row).toHaveCount(1);
  const purge = new Intl.DateTimeFormat('en', { month: 'long', day: 'numeric', year: 'numeric' }).format(new Date(trash[0].purgeAt));
  await expect(row).toContainText(`Deleted — removed for good on ${purge}`);
  await shot(page, 'trash');

  // In Chinese, dark.
  await callApi(connected.app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.getByTestId('trash-panel')).toContainText('回收站');
  await expect(row).toContainText('彻底清除');
  await shot(page, 'trash-zh-dark');
  await callApi(connected.app, 'settings.update', { theme: 'light', language: 'en' });

  await row.getByTestId('trash-restore').click();
  await expect(page.getByTestId('trash-empty')).toBeVisible();
  await page.getByTestId('nav-chat').click();
  await expect(item(page, 'Lofoten trip')).toHaveCount(1);
  expect((await callApi(connected.app, 'conversations.get', { id: doomed.id })).messages.length).toBe(2);
  expect(kept.id).not.toBe(doomed.id);
});

test('off the record: started from the list, badge and banner, back on the record', async ({ page }) => {
  await page.goto(connected.app.url);
  await page.getByTestId('new-off-record').click();
  await expect(page.getByTestId('off-record-banner')).toBeVisible();
  await talk(page, 'Between us: Oswaldo hides his umbrella collection.');
  const row = page.locator('[data-testid="conversation-item"][data-off-record="true"]');
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('off-record-badge')).toBeVisible();
  const [listed] = await callApi(connected.app, 'conversations.list', {});
  expect(listed.offRecord).toBe(true);
  const { messages } = await callApi(connected.app, 'conversations.get', { id: listed.id });
  expect(messages.every((m: { offRecord?: boolean }) => m.offRecord === true)).toBe(true);
  await shot(page, 'off-record');

  await callApi(connected.app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.getByTestId('off-record-banner')).toContainText('不留记录');
  await shot(page, 'off-record-zh-dark');
  await callApi(connected.app, 'settings.update', { theme: 'light', language: 'en' });

  // Back on the record from the banner: the badge and banner go; what was said before stays off.
  await page.getByTestId('off-record-end').click();
  await expect(page.getByTestId('off-record-banner')).toHaveCount(0);
  await expect(page.locator('[data-testid="conversation-item"][data-off-record="true"]')).toHaveCount(0);
  await talk(page, 'Now on the record: tangerine kites.');
  const after = (await callApi(connected.app, 'conversations.get', { id: listed.id })).messages as { content: string; offRecord?: boolean }[];
  expect(after.filter((m) => m.offRecord).length).toBe(2);
  expect(after.filter((m) => !m.offRecord).length).toBe(2);

  // And off again from the row's button.
  await row.or(page.getByTestId('conversation-item')).first().hover();
  await page.getByTestId('conversation-item').first().getByTestId('conversation-off-record').click();
  await expect(page.getByTestId('off-record-banner')).toBeVisible();

  // An empty off-the-record conversation is open: "New" gives one on the record, not that one again.
  await page.getByTestId('new-off-record').click();
  await expect(page.locator('[data-testid="conversation-item"][data-off-record="true"]')).toHaveCount(2);
  await page.getByTestId('new-conversation').click();
  await expect(page.getByTestId('off-record-banner')).toHaveCount(0);
  await talk(page, 'A new conversation, on the record.');
  const newest = (await callApi(connected.app, 'conversations.list', {}))[0] as { offRecord?: boolean; title: string };
  expect(newest.offRecord).toBeUndefined();
});
