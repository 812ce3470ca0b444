// What the companion remembers, as a person sees it: citation chips and the "remembered" line in
// chat, the Memories card index with its history and undo, and the Pins view with the resident block.
import { callApi, expect, shot, test } from './app.js';
import { useConnectedApp } from './connected-app.js';

const connected = useConnectedApp();

test('chat shows which memories were used, and a chip opens the memory', async ({ page }) => {
  const mara = (
    await callApi(connected.app, 'memories.create', { type: 'world', content: 'Sam’s sister Mara lives in Lisbon and works night shifts as a nurse.' })
  ).memory;
  await callApi(connected.app, 'memories.create', { type: 'preference', content: 'Sam prefers tea to coffee in the evening.' });

  await page.goto(connected.app.url);
  await page.getByTestId('new-conversation').click();
  connected.fake.script({ kind: 'text', text: `Mara is still in Lisbon — the night shifts must be hard on her. [[anima:${mara.id}]]`, chunks: 6 });
  await page.getByTestId('chat-input').fill('How is my sister Mara doing in Lisbon?');
  await page.getByTestId('chat-input').press('Enter');

  const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await expect(reply).toHaveAttribute('data-status', 'complete');
  const chip = reply.getByTestId('citation-chip');
  await expect(chip).toHaveAttribute('data-id', String(mara.id));
  await expect(chip).toHaveAttribute('data-state', 'active');
  await expect(reply).not.toContainText('[[anima:');
  await expect(page.getByTestId('injected-line')).toBeVisible();
  await shot(page, 'memory-chat-citations');

  await chip.click();
  await expect(page.getByTestId('memory-detail')).toContainText('Mara lives in Lisbon');
  await shot(page, 'memory-view-detail');
});

test('the Memories view searches, edits, refuses secrets, and forgets with undo', async ({ page }) => {
  for (const [type, content] of [
    ['world', 'Sam’s sister Mara lives in Lisbon.'],
    ['experience', 'Sam and I talked about the allotment garden on a rainy Sunday.'],
    ['opinion', 'I think Sam’s tomato plan is ambitious but doable.'],
    ['procedural', 'When Sam is stressed, ask before giving advice.'],
  ] as const) {
    await callApi(connected.app, 'memories.create', { type, content });
  }
  await page.goto(connected.app.url);
  await page.getByTestId('nav-memories').click();
  await expect(page.getByTestId('memory-card')).toHaveCount(4);
  await shot(page, 'memory-view');

  await page.getByTestId('memory-search').fill('sister Lisbon');
  await expect(page.getByTestId('memory-card').first()).toContainText('Mara');
  await page.getByTestId('memory-card').first().click();

  await page.getByTestId('memory-edit').click();
  await page.getByTestId('memory-edit-input').fill('Sam’s sister Mara lives in Lisbon; her wifi password=hunter2hunter2');
  await page.getByTestId('memory-save').click();
  await expect(page.getByTestId('memory-detail')).toContainText(/credential|secret|password/i);
  await page.getByTestId('memory-edit-input').fill('Sam’s sister Mara lives in Porto now.');
  await page.getByTestId('memory-save').click();
  await expect(page.getByTestId('memory-detail')).toContainText('Porto');
  await expect(page.getByTestId('memory-history')).toBeVisible();

  await page.getByTestId('memory-forget').click();
  await expect(page.getByTestId('toast')).toBeVisible();
  await page.getByTestId('toast-action').click();
  const restored = await callApi(connected.app, 'memories.list', {});
  expect(restored.items.map((m: { content: string }) => m.content)).toContain('Sam’s sister Mara lives in Porto now.');
});

test('the Pins view lists pins in order and previews what the companion carries', async ({ page }) => {
  const a = (await callApi(connected.app, 'memories.create', { type: 'preference', content: 'Sam likes to be called Sammy.', pinned: true })).memory;
  const b = (await callApi(connected.app, 'memories.create', { type: 'world', content: 'Sam lives in Rotterdam with a cat called Pepper.', pinned: true }))
    .memory;
  await page.goto(connected.app.url);
  await page.getByTestId('nav-pins').click();
  await expect(page.getByTestId('pin-item')).toHaveCount(2);
  await expect(page.getByTestId('resident-preview')).toContainText(`[[anima:${a.id}]]`);
  await expect(page.getByTestId('resident-size')).toContainText(/\d/);
  await page.getByTestId('pin-item').nth(1).getByTestId('pin-up').click();
  await expect(page.getByTestId('pin-item').first()).toHaveAttribute('data-id', String(b.id));
  // The preview follows the new order: it is what the next prompt will carry.
  await expect
    .poll(async () => {
      const text = await page.getByTestId('resident-preview').innerText();
      return text.indexOf(`[[anima:${b.id}]]`) < text.indexOf(`[[anima:${a.id}]]`);
    })
    .toBe(true);
  await shot(page, 'memory-pins');
});

test('Settings → Memory shows the nap switch and its quiet minutes, in both languages', async ({ page }) => {
  await page.goto(connected.app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-memory').click();
  const nap = page.getByTestId('sleep-nap');
  await expect(nap).toBeChecked();
  const minutes = page.getByTestId('sleep-setting-napQuietMinutes');
  await expect(minutes).toHaveValue('10');
  await minutes.fill('25');
  await minutes.press('Enter');
  await expect.poll(async () => (await callApi(connected.app, 'settings.get', {})).sleep.napQuietMinutes).toBe(25);
  await nap.scrollIntoViewIfNeeded();
  await shot(page, 'settings-memory-nap');

  // Off: no nap, and the minutes go away with it; kept after a reload.
  await nap.click();
  await expect.poll(async () => (await callApi(connected.app, 'settings.get', {})).sleep.nap).toBe(false);
  await expect(page.getByTestId('sleep-setting-napQuietMinutes')).toHaveCount(0);
  await callApi(connected.app, 'settings.update', { language: 'zh-CN', theme: 'dark' });
  await page.reload();
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-memory').click();
  await expect(page.getByTestId('sleep-nap')).not.toBeChecked();
  await expect(page.getByTestId('sleep-settings')).toContainText('对话安静下来时小憩一下');
  await page.getByTestId('sleep-nap').scrollIntoViewIfNeeded();
  await shot(page, 'settings-memory-nap-zh-dark');
});
