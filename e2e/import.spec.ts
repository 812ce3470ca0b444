// Settings → Data → Import, as a person uses it: the real app in browser mode, real export files
// from ../shared/fixtures/imports chosen with the file picker or dropped on the panel. A cut-off
// file is refused in words; a ChatGPT export is summarised before anything is stored, imported with
// its result, and found in Chats; the same file again says it is already here, and a later export
// with new messages in two of them adds only those; a big export shows
// its progress and stops on Cancel with what was stored kept (Chinese, dark); a character card's
// blocks are reviewed, edited, saved and undone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { addTurns, exportBytes, readChatGpt } from '../electron/imports/testing/chatgpt-grow.js';
import { callApi, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const FIXTURES = path.resolve('..', 'shared', 'fixtures', 'imports');
const CHATGPT = path.join(FIXTURES, 'chatgpt', 'librechat-chatgpt-export.json');
const AQUA = path.join(FIXTURES, 'sillytavern', 'st-2023-default-Aqua.jsonl');
const SERAPHINA = path.join(FIXTURES, 'cards', 'st-default_Seraphina.v2+v3.png');

let app: RunningApp | null = null;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-e2e-import-'));

test.afterEach(async ({}, testInfo) => {
  if (app && testInfo.status !== testInfo.expectedStatus) console.log(`app output:\n${app.output()}`);
  await app?.stop('SIGTERM');
  app = null;
});
test.afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function openData(page: Page, a: RunningApp): Promise<void> {
  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await expect(page.getByTestId('import-panel')).toBeVisible();
}

/** Scrolls the settings pane so the import panel is at its top. */
async function scrollToImport(page: Page): Promise<void> {
  await page.getByTestId('import-panel').evaluate((el) => {
    const pane = el.closest('.settings-content')!;
    pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 16;
  });
}

/** A ChatGPT conversations.json in the export's real shape (a mapping tree under a hidden root), `n` conversations of `size` messages. */
function chatgptExport(n: number, size: number): string {
  const base = Date.UTC(2023, 3, 2) / 1000;
  const conversations = Array.from({ length: n }, (_, i) => {
    const id = `6f1c${String(i).padStart(4, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const start = base + i * 86_400;
    const mapping: Record<string, unknown> = { root: { id: 'root', message: null, parent: null, children: ['m0'] } };
    for (let j = 0; j < size; j++) {
      const role = j % 2 ? 'assistant' : 'user';
      mapping[`m${j}`] = {
        id: `m${j}`,
        message: {
          id: `m${j}`,
          author: { role, name: null, metadata: {} },
          create_time: start + j * 45,
          content: {
            content_type: 'text',
            parts: [
              role === 'user'
                ? `Day ${i + 1}, question ${j / 2 + 1}: what should I plant on my balcony in week ${(i % 52) + 1}?`
                : `For week ${(i % 52) + 1}, basil and mint do well in pots; water them in the morning and give them afternoon shade.`,
            ],
          },
          status: 'finished_successfully',
          weight: 1,
          metadata: role === 'assistant' ? { model_slug: 'gpt-4o' } : {},
          recipient: 'all',
        },
        parent: j === 0 ? 'root' : `m${j - 1}`,
        children: j + 1 < size ? [`m${j + 1}`] : [],
      };
    }
    return {
      title: `Balcony garden ${i + 1}`,
      create_time: start,
      update_time: start + size * 45,
      mapping,
      current_node: `m${size - 1}`,
      id,
      conversation_id: id,
    };
  });
  return JSON.stringify(conversations);
}

test('a ChatGPT export: refused when cut off, summarised, imported, in Chats; again: already here; a chat dropped on the panel', async ({ page }) => {
  test.setTimeout(180_000);
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  await openData(page, app);
  await scrollToImport(page);
  await expect(page.getByTestId('import-drop')).toContainText('Drop an export here');
  await shot(page, 'import-idle');

  // A download cut off half-way: said in words, nothing stored, the drop zone back.
  const cut = path.join(scratch, 'conversations.json');
  const whole = fs.readFileSync(CHATGPT);
  fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
  await page.getByTestId('import-file').setInputFiles(cut);
  const refusal = page.locator('.import-panel [role="alert"]');
  await expect(refusal).toBeVisible();
  await expect(refusal).toContainText('conversations.json could not be imported.');
  await expect(refusal).toHaveAttribute('data-error-code', 'invalid_input');
  expect(await callApi(app, 'conversations.list', {})).toEqual([]);

  // The real export: what it holds, before anything is stored.
  await page.getByTestId('import-file').setInputFiles(CHATGPT);
  const summary = page.getByTestId('import-summary');
  await expect(summary).toBeVisible();
  await expect(summary).toContainText('ChatGPT export');
  const line = page.getByTestId('import-summary-line');
  await expect(line).toHaveText(/^\d+ conversations, \d+ messages, from Oct 2023 to Jan 2024$/);
  const [, conversations, messages] = /^(\d+) conversations, (\d+) messages/.exec((await line.textContent())!)!;
  expect(await callApi(app, 'conversations.list', {})).toEqual([]);
  await scrollToImport(page);
  await shot(page, 'import-summary');

  await page.getByTestId('import-start').click();
  const progress = page.getByTestId('import-progress');
  await expect(progress).toHaveAttribute('data-state', 'done');
  await expect(page.getByTestId('import-result')).toHaveText(`Imported ${conversations} conversations and ${messages} messages.`);
  await expect(progress.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '100');
  await shot(page, 'import-done');
  const listed = await callApi(app, 'conversations.list', {});
  expect(listed).toHaveLength(Number(conversations));

  // Chats lists them, with their own dates.
  await page.getByTestId('import-open-chats').click();
  await expect(page.locator('[data-testid="conversation-item"]')).toHaveCount(Number(conversations));

  // The same file again: already here, nothing to import.
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-data').click();
  await page.getByTestId('import-another').click();
  await page.getByTestId('import-file').setInputFiles(CHATGPT);
  await expect(page.getByTestId('import-already')).toHaveText('Everything in this file is already here — there is nothing new to import.');
  await expect(page.getByTestId('import-start')).toHaveCount(0);
  await page.getByTestId('import-cancel-preview').click();

  // The person went on chatting in ChatGPT: the next export carries two of them further. Not "already here":
  // the preview counts the new messages, and the import adds them.
  const [first, second, ...rest] = readChatGpt('librechat-chatgpt-export.json');
  const later = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      text: `${tag}: ${i % 2 ? 'answer' : 'question'} ${i + 1}`,
      at: new Date(Date.UTC(2024, 1, 1, 10, i)),
    }));
  const grownFile = path.join(scratch, 'grown', 'conversations.json');
  fs.mkdirSync(path.dirname(grownFile), { recursive: true });
  fs.writeFileSync(grownFile, exportBytes([addTurns(first!, later('first', 4)), addTurns(second!, later('second', 3)), ...rest]));
  await page.getByTestId('import-file').setInputFiles(grownFile);
  await expect(page.getByTestId('import-grown')).toHaveText('2 conversations already here have 7 new messages: they are added after ours.');
  await expect(page.getByTestId('import-start')).toBeVisible();
  await scrollToImport(page);
  await shot(page, 'import-grown');
  await page.getByTestId('import-start').click();
  await expect(page.getByTestId('import-progress')).toHaveAttribute('data-state', 'done');
  await expect(page.getByTestId('import-result')).toHaveText(/^Added 7 new messages to 2 conversations already here\./);
  expect(await callApi(app, 'conversations.list', {})).toHaveLength(Number(conversations));
  await page.getByTestId('import-another').click();

  // A SillyTavern chat dropped on the panel.
  // Built in the page (a string: the root tsconfig has no DOM types), as a person's drag would carry it.
  const aqua = { name: path.basename(AQUA), text: fs.readFileSync(AQUA, 'utf8') };
  const dataTransfer = await page.evaluateHandle(
    `(() => { const dt = new DataTransfer(); dt.items.add(new File([${JSON.stringify(aqua.text)}], ${JSON.stringify(aqua.name)}, { type: 'application/json' })); return dt; })()`,
  );
  await page.getByTestId('import-drop').dispatchEvent('dragover', { dataTransfer });
  await expect(page.getByTestId('import-drop')).toHaveClass(/over/);
  await page.getByTestId('import-drop').dispatchEvent('drop', { dataTransfer });
  await expect(page.getByTestId('import-summary')).toContainText('SillyTavern chat');
  await expect(page.getByTestId('import-summary-line')).toHaveText(/^1 conversation, \d+ messages?, in Jan 2023$/);
  await page.getByTestId('import-start').click();
  await expect(page.getByTestId('import-result')).toHaveText(/^Imported 1 conversation and \d+ messages?\.$/);
  expect(await callApi(app, 'conversations.list', {})).toHaveLength(Number(conversations) + 1);
});

test('a big export in Chinese, dark: progress, Cancel keeps what was stored, importing again goes on', async ({ page }) => {
  test.setTimeout(240_000);
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'dark', language: 'zh-CN' });
  const big = path.join(scratch, 'conversations-big.json');
  fs.writeFileSync(big, chatgptExport(500, 40));
  await openData(page, app);
  await scrollToImport(page);
  await page.getByTestId('import-file').setInputFiles(big);
  await expect(page.getByTestId('import-summary-line')).toHaveText('500 段对话，20,000 条消息，2023年4月至2024年8月');
  await expect(page.getByTestId('import-summary')).toContainText('ChatGPT 导出');
  await shot(page, 'import-summary-zh-dark');

  await page.getByTestId('import-start').click();
  const progress = page.getByTestId('import-progress');
  await expect(progress).toHaveAttribute('data-state', 'running');
  // Some conversations in, the bar moving.
  await expect(progress.getByRole('progressbar')).not.toHaveAttribute('aria-valuenow', '0');
  await shot(page, 'import-progress-zh-dark');
  await page.getByTestId('import-cancel').click();
  await expect(progress).toHaveAttribute('data-state', 'cancelled', { timeout: 60_000 });
  await expect(page.getByTestId('import-result')).toContainText('已停止。已导入的');
  await shot(page, 'import-cancelled-zh-dark');
  const status = await callApi(app, 'imports.status', {});
  expect(status.state).toBe('cancelled');
  expect(status.imported).toBeGreaterThan(0);
  expect(status.imported).toBeLessThan(500);
  expect(await callApi(app, 'conversations.list', {})).toHaveLength(status.imported);

  // The same file again: what is here is skipped, the rest comes in.
  await page.getByTestId('import-another').click();
  await page.getByTestId('import-file').setInputFiles(big);
  await expect(page.getByTestId('import-already')).toContainText(`其中 ${status.imported} 段已经在这里了`);
  await page.getByTestId('import-start').click();
  await expect(progress).toHaveAttribute('data-state', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('import-result')).toContainText(`${500 - status.imported} 段对话`);
  expect((await callApi(app, 'imports.status', {})).already).toBe(status.imported);
});

test('a character card: its blocks reviewed and edited, saved, undone', async ({ page }) => {
  test.setTimeout(120_000);
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  const before: { key: string; content: string }[] = await callApi(app, 'self.list', {});
  await openData(page, app);
  await page.getByTestId('import-file').setInputFiles(SERAPHINA);
  const review = page.getByTestId('import-card-review');
  await expect(review).toContainText('Character card: Seraphina');
  const identity = review.locator('#import-block-identity');
  await expect(identity).toBeVisible();
  await expect(identity).not.toHaveValue('');
  // Nothing is written by looking.
  expect(await callApi(app, 'self.list', {})).toEqual(before);
  await scrollToImport(page);
  await shot(page, 'import-card');

  await identity.fill('I am Seraphina, guardian of the Eldoria forest, and I keep this home safe.');
  await page.getByTestId('import-card-save').click();
  await expect(page.getByTestId('import-card-saved')).toContainText('My blocks now come from “Seraphina”.');
  const saved: { key: string; content: string; isDefault: boolean }[] = await callApi(app, 'self.list', {});
  expect(saved.find((b) => b.key === 'identity')).toMatchObject({
    content: 'I am Seraphina, guardian of the Eldoria forest, and I keep this home safe.',
    isDefault: false,
  });

  await page.getByTestId('import-card-undo').click();
  await expect(page.getByTestId('import-card-saved')).toContainText('Undone: my blocks are as they were.');
  const undone: { key: string; content: string }[] = await callApi(app, 'self.list', {});
  expect(undone.map((b) => [b.key, b.content])).toEqual(before.map((b) => [b.key, b.content]));
});
