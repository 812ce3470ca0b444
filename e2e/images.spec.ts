// Images in chat, end to end: the real app in browser mode, Chromium attaching by the button, a
// paste and a drop; the image reaches a vision model in each wire protocol's own shape (read at the
// loopback fake servers: Ollama's `images`, OpenAI `image_url` data URLs, Anthropic base64 image
// blocks), a large one resized to 1568 px first; a text-only model gets none and the person reads why.
// Then a message too long for the model: stopped in the composer with the model's limit in words,
// the notices never covering the conversation, a long message collapsed with "show all", and an error
// heading that names the message, not the conversation. Screenshots in English/light and Chinese/dark.
import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { serveOllama } from './fake-llm/ollama.js';
import { imagesSent, solidPng } from './fake-llm/images.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

let ollama: FakeLlm;
let cloud: FakeLlm;
let app: RunningApp;

test.beforeEach(async () => {
  ollama = await startFakeLlm();
  ollama.models = ['llava:7b', 'llama3.2:3b'];
  serveOllama(ollama, {
    loaded: { 'llava:7b': 8192, 'llama3.2:3b': 8192 },
    show: {
      'llava:7b': { contextLength: 8192, capabilities: ['completion', 'vision'], family: 'llama' },
      'llama3.2:3b': { contextLength: 8192, capabilities: ['completion', 'tools'], family: 'llama' },
    },
  });
  // OpenAI-compatible and Anthropic: a server that is no Ollama, so the model's name speaks for it.
  cloud = await startFakeLlm();
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true });
});
test.afterEach(async () => {
  await app.stop('SIGTERM');
  fs.rmSync(app.dataDir, { recursive: true, force: true });
  await Promise.all([ollama.close(), cloud.close()]);
});

const user = (page: Page) => page.locator('[data-testid="message"][data-role="user"]');
const assistant = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const png = (w: number, h: number, rgb?: [number, number, number]) => solidPng(w, h, rgb);

/** Waits until the composer's images are all uploaded. */
async function imagesReady(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId('composer-image')).toHaveCount(count);
  await expect(page.locator('[data-testid="composer-image"][data-ready="false"]')).toHaveCount(0, { timeout: 60_000 });
}

async function sendAndWait(page: Page, replies: number): Promise<void> {
  await expect(page.getByTestId('send-button')).toBeEnabled();
  await page.getByTestId('send-button').click();
  await expect(assistant(page)).toHaveCount(replies, { timeout: 60_000 });
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
}

/** A script that makes a DataTransfer holding one PNG file (a string: the root tsconfig has no DOM types). */
const transferScript = (bytes: Buffer, name: string) => `(() => {
  const bin = atob(${JSON.stringify(bytes.toString('base64'))});
  const data = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) data[i] = bin.charCodeAt(i);
  const transfer = new DataTransfer();
  transfer.items.add(new File([data], ${JSON.stringify(name)}, { type: 'image/png' }));
  return transfer;
})()`;

/** A paste of an image file into the composer, as the clipboard hands it over. */
async function pasteImage(page: Page, bytes: Buffer, name: string): Promise<void> {
  await page.evaluate(`document.querySelector('[data-testid="chat-input"]').dispatchEvent(
    new ClipboardEvent('paste', { clipboardData: ${transferScript(bytes, name)}, bubbles: true, cancelable: true }))`);
}

/** A file dragged from the desktop and dropped on the composer. */
async function dropImage(page: Page, bytes: Buffer, name: string): Promise<void> {
  const transfer = await page.evaluateHandle(transferScript(bytes, name));
  await page.getByTestId('composer').dispatchEvent('dragover', { dataTransfer: transfer });
  await page.getByTestId('composer').dispatchEvent('drop', { dataTransfer: transfer });
}

const lastChat = (fake: FakeLlm, path: string) => fake.requests.filter((r) => r.path === path).at(-1)!.body;

test('an image reaches a vision model in each protocol’s shape, attached by button, paste and drop', async ({ page }) => {
  test.setTimeout(300_000);
  const llava = await callApi(app, 'providers.save', { kind: 'ollama', name: 'Llava', baseUrl: ollama.url, model: 'llava:7b' });
  const gpt = await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'GPT', baseUrl: cloud.baseUrl, model: 'gpt-4o', apiKey: 'k' });
  const claude = await callApi(app, 'providers.save', { kind: 'anthropic', name: 'Claude', baseUrl: cloud.url, model: 'claude-sonnet-4-5', apiKey: 'k' });
  expect(llava.abilities.images).toBe('yes');
  await callApi(app, 'settings.update', { chatProviderId: llava.id });
  await page.goto(app.url);
  await expect(page.getByTestId('chat-input')).toBeVisible();

  // Ollama, by the button: a small photo goes as it is, bare base64 in the message's `images`.
  const cat = png(320, 240, [210, 140, 80]);
  await page.getByTestId('attach-input').setInputFiles({ name: 'miso.png', mimeType: 'image/png', buffer: cat });
  await imagesReady(page, 1);
  await expect(page.getByTestId('cant-see')).toHaveCount(0);
  await page.getByTestId('chat-input').fill('This is Miso, asleep on my desk.');
  await sendAndWait(page, 1);
  const ollamaBody = lastChat(ollama, '/api/chat') as { messages: { role: string; content: string; images?: string[] }[] };
  expect(ollamaBody.messages.at(-1)).toEqual({ role: 'user', content: 'This is Miso, asleep on my desk.', images: [cat.toString('base64')] });
  await expect(user(page).last().getByTestId('message-image')).toHaveCount(1);
  await expect(user(page).last().locator('img')).toHaveAttribute('alt', 'Photo 1 you shared');

  // OpenAI-compatible, by a paste: a large image is drawn at 1568 px on its longest side first.
  await callApi(app, 'settings.update', { chatProviderId: gpt.id });
  await expect(async () => {
    await pasteImage(page, png(2400, 1200, [60, 120, 200]), 'sky.png');
    await expect(page.getByTestId('composer-image')).toHaveCount(1, { timeout: 2000 });
  }).toPass({ timeout: 30_000 });
  await imagesReady(page, 1);
  await page.getByTestId('chat-input').fill('And the sky this evening.');
  await sendAndWait(page, 2);
  const openAiBody = lastChat(cloud, '/v1/chat/completions') as { messages: { role: string; content: unknown }[] };
  const parts = openAiBody.messages.at(-1)!.content as { type: string; text?: string; image_url?: { url: string } }[];
  expect(parts[0]).toEqual({ type: 'text', text: 'And the sky this evening.' });
  expect(parts[1]!.type).toBe('image_url');
  expect(parts[1]!.image_url!.url).toMatch(/^data:image\/png;base64,/);
  // The earlier photo of the conversation rides along too (a model that sees gets the newest few).
  expect(imagesSent(openAiBody)).toHaveLength(2);
  const conversationId = (await callApi(app, 'conversations.list', {}))[0].id as string;
  const stored = (await callApi(app, 'conversations.get', { id: conversationId })).messages as { images?: { width: number; height: number }[] }[];
  expect(stored.flatMap((m) => m.images ?? []).map((i) => [i.width, i.height])).toEqual([
    [320, 240],
    [1568, 784],
  ]);

  // Anthropic, by a drop: two at once, base64 image blocks before the words.
  await callApi(app, 'settings.update', { chatProviderId: claude.id });
  await dropImage(page, png(200, 300, [90, 160, 90]), 'fern.png');
  await dropImage(page, png(300, 200, [160, 90, 160]), 'plum.png');
  await imagesReady(page, 2);
  await page.getByTestId('chat-input').fill('Two plants from the balcony.');
  await shot(page, 'chat-images-composer');
  await sendAndWait(page, 3);
  const anthropicBody = lastChat(cloud, '/v1/messages') as {
    messages: { role: string; content: { type: string; source?: { type: string; media_type: string } }[] }[];
  };
  const blocks = anthropicBody.messages.at(-1)!.content;
  expect(blocks.map((b) => b.type)).toEqual(['image', 'image', 'text']);
  expect(blocks[0]!.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
  await expect(user(page).last().getByTestId('message-image')).toHaveCount(2);
  // Side by side, and whole when clicked.
  const [fern, plum] = [
    await user(page).last().getByTestId('message-image').nth(0).boundingBox(),
    await user(page).last().getByTestId('message-image').nth(1).boundingBox(),
  ];
  expect(Math.abs(fern!.y - plum!.y)).toBeLessThan(5);
  await shot(page, 'chat-images');
  await user(page).last().getByTestId('message-image').nth(1).click();
  await expect(user(page).last().getByTestId('message-image').nth(1)).toHaveAttribute('aria-expanded', 'true');
  await expect.poll(async () => (await user(page).last().getByTestId('message-image').nth(1).boundingBox())!.width).toBeGreaterThan(250);
  await shot(page, 'chat-images-open');
  await user(page).last().getByTestId('message-image').nth(1).click();

  // A file that only calls itself a picture is refused in words; nothing is attached.
  await page.getByTestId('attach-input').setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('just some words, not a picture') });
  await expect(page.getByTestId('image-problem')).toHaveText('That file isn’t a PNG, JPEG, WebP or GIF image, so I can’t attach it.');
  await expect(page.getByTestId('composer-image')).toHaveCount(0);

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.getByTestId('chat-input')).toHaveAttribute('placeholder', '写点什么…');
  await shot(page, 'chat-images-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
});

test('a model that cannot see gets no image, and the person reads why', async ({ page }) => {
  test.setTimeout(240_000);
  const llama = await callApi(app, 'providers.save', { kind: 'ollama', name: 'Llama', baseUrl: ollama.url, model: 'llama3.2:3b' });
  expect(llama.abilities.images).toBe('no');
  await callApi(app, 'settings.update', { chatProviderId: llama.id });
  await page.goto(app.url);
  await page.getByTestId('attach-input').setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: png(400, 300, [240, 120, 40]) });
  await imagesReady(page, 1);
  await expect(page.getByTestId('cant-see')).toHaveText('This model can’t look at pictures; I’ll keep the photo with our chat');
  await page.getByTestId('chat-input').fill('The sunset from the bridge.');
  await shot(page, 'chat-images-cant-see');
  await sendAndWait(page, 1);
  const body = lastChat(ollama, '/api/chat') as { messages: { content: string; images?: string[] }[] };
  expect(imagesSent(body)).toEqual([]);
  expect(body.messages.at(-1)!.content).toBe('[photo shared] The sunset from the bridge.');
  // Kept with the chat all the same.
  await expect(user(page).last().getByTestId('message-image')).toHaveCount(1);

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await page.getByTestId('attach-input').setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: png(400, 300, [240, 120, 40]) });
  await imagesReady(page, 1);
  await expect(page.getByTestId('cant-see')).toHaveText('这个模型看不了图片；我会把照片留在我们的聊天里');
  await shot(page, 'chat-images-cant-see-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
});

test('an oversized message is stopped in the composer with the model’s limit; long ones collapse; the heading names the message', async ({ page }) => {
  test.setTimeout(300_000);
  const small = await callApi(app, 'providers.save', {
    kind: 'openai-compatible',
    name: 'Small',
    baseUrl: cloud.baseUrl,
    model: 'small-model',
    contextTokens: 4096,
  });
  await callApi(app, 'settings.update', { chatProviderId: small.id });
  const { id } = await callApi(app, 'conversations.create', {});
  // A conversation to keep in view, and a long message the window still takes, collapsed.
  cloud.script({ kind: 'text', text: 'I read it all. The second section is the one that matters.' });
  const report = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of the garden report: the tomatoes are doing well.`).join('\n');
  await callApi(app, 'chat.send', { conversationId: id, content: report });
  await page.goto(app.url);
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  const long = user(page).last().getByTestId('long-text');
  await expect(long).toHaveAttribute('data-open', 'false');
  await expect(long).not.toContainText('Line 40 of');
  await expect(long.getByTestId('long-text-toggle')).toHaveText(`Show all (${report.length} characters)`);
  await shot(page, 'chat-long-collapsed');
  await long.getByTestId('long-text-toggle').click();
  await expect(long).toContainText('Line 40 of the garden report');
  await long.getByTestId('long-text-toggle').click();

  // Too long for this model: said with its own numbers before anything is sent.
  const input = page.getByTestId('chat-input');
  await input.fill('word '.repeat(3000));
  const notice = page.getByTestId('too-long-for-model');
  await expect(notice).toContainText('small-model can take about 1,572 in one message (its context window is 4,096 tokens)');
  await expect(page.getByTestId('send-button')).toBeDisabled();
  const noOverlap = async () => {
    const last = await assistant(page).last().boundingBox();
    const scroller = await page.locator('.msg-scroller').boundingBox();
    const wrap = await page.getByTestId('composer').boundingBox();
    // The notice lives in the composer, below the conversation's scroller: it never covers it, and
    // the newest reply stays in view above it.
    expect(wrap!.y).toBeGreaterThanOrEqual(scroller!.y + scroller!.height - 1);
    expect(last!.y + last!.height).toBeLessThanOrEqual(scroller!.y + scroller!.height + 1);
    expect(last!.y).toBeGreaterThanOrEqual(scroller!.y - 1);
  };
  await expect(noOverlap).toPass({ timeout: 10_000 });
  await shot(page, 'chat-too-long-for-model');

  // Over the transport's limit for any model (300 KB): the same place, the same promise.
  await input.fill('x'.repeat(300_000));
  await expect(page.getByTestId('too-long')).toBeVisible();
  await expect(page.getByTestId('send-button')).toBeDisabled();
  await shot(page, 'chat-too-long-300k');
  await expect(noOverlap).toPass({ timeout: 10_000 });
  await input.fill('');

  // Sent anyway (not through the composer): the error's heading names the message, and offers the
  // model settings, not "Connect a model".
  await callApi(app, 'chat.send', { conversationId: id, content: 'word '.repeat(4000) });
  await page.reload();
  await expect(user(page)).toHaveCount(2, { timeout: 60_000 });
  const failed = assistant(page).last();
  await expect(failed).toHaveAttribute('data-status', 'error', { timeout: 60_000 });
  await expect(failed.locator('.error-note-what')).toHaveText('This message is too long for the model.');
  await expect(failed.getByRole('button', { name: 'Open model settings' })).toBeVisible();
  await expect(failed.getByRole('button', { name: 'Connect a model' })).toHaveCount(0);
  await shot(page, 'chat-too-long-error');

  await callApi(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await input.fill('word '.repeat(3000));
  await expect(notice).toContainText('small-model 一条消息大约只能接收 1,572 个');
  await expect(failed.locator('.error-note-what')).toHaveText('这条消息对这个模型来说太长了。');
  await shot(page, 'chat-too-long-zh-dark');
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
});
