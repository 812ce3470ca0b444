// The companion's name, face and first word, as a person meets them: the real app in browser mode
// with the loopback fake model. Renamed to "Mira" with a picture in Settings → Companion, the name
// and face head its replies, the screen-reader text and the finished-reply announcement say "Mira",
// the graph's node for it is "Mira", and the next request's system prompt (read at the fake) says
// "I am Mira". After a good night, opening the app shows one short morning message written by the
// chat model — once: a reload or a second ask writes no other; after a failed night, none.
import path from 'node:path';
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm, type FakeResponse } from './fake-llm/server.js';
import { findTask, sleepResponder } from './fake-llm/sleep-responder.js';
import { callApi, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const MORNING = 'Good morning! I slept on what you told me about Pixel hiding under the sofa — did she come out to say hello?';
const NOTE_MARK = 'they just opened the app';

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

type Body = { messages?: { role: string; content: unknown }[] };
const lastTurn = (body: unknown) => {
  const content = (body as Body).messages?.at(-1)?.content;
  return typeof content === 'string' ? content : '';
};
const systemOf = (body: unknown) => {
  const content = (body as Body).messages?.[0]?.content;
  return typeof content === 'string' ? content : '';
};
const chatBodies = () => fake.requests.filter((r) => r.body && !findTask(r.body)).map((r) => r.body);

/** The sleep tasks answered by `night`, the morning note by the morning message, anything else echoed. */
function model(night: (body: unknown) => FakeResponse | undefined | Promise<FakeResponse | undefined>) {
  fake.respond = (body) => {
    if (findTask(body)) return night(body);
    if (lastTurn(body).includes(NOTE_MARK)) return { kind: 'text', text: MORNING, chunks: 4 };
    return undefined;
  };
}

async function launch(): Promise<RunningApp> {
  app = await startApp(newDataDir());
  await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  // Automatic sleep off: the nights are the tests' own ("Sleep now").
  await callApi(app, 'settings.update', { onboarded: true, sleep: { auto: false } });
  return app;
}

/** One exchange through the API, waited for until the reply is stored. */
async function talk(a: RunningApp, conversationId: string, content: string) {
  await callApi(a, 'chat.send', { conversationId, content });
  await expect.poll(async () => (await callApi(a, 'conversations.get', { id: conversationId })).messages.at(-1)?.status, { timeout: 60_000 }).toBe('complete');
}

async function chatted(a: RunningApp): Promise<string> {
  const conv = await callApi(a, 'conversations.create', {});
  await talk(a, conv.id, 'I adopted a grey cat called Pixel from the shelter on Saturday.');
  await talk(a, conv.id, 'She hides under the sofa, but she purred when I fed her tonight.');
  return conv.id;
}

/** "Sleep now", waited for; the run as the Sleep view reads it. */
async function sleepNow(a: RunningApp): Promise<{ id: number; status: string }> {
  const started = await callApi(a, 'sleep.now');
  await expect.poll(async () => (await callApi(a, 'sleep.runs', { limit: 1 }))[0]?.status, { timeout: 180_000, intervals: [1000] }).not.toBe('running');
  const [run] = await callApi(a, 'sleep.runs', { limit: 1 });
  expect(run.id).toBe(started.runId);
  return run;
}

async function look(page: Page, a: RunningApp, language: 'en' | 'zh-CN', theme: 'light' | 'dark') {
  await callApi(a, 'settings.update', { language, theme });
  await page.reload();
}

const replies = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const morning = (page: Page) => replies(page).filter({ hasText: MORNING });

test('the name and face everywhere: replies, screen-reader text, the graph, the prompt', async ({ page }) => {
  test.setTimeout(240_000);
  const a = await launch();
  model(() => undefined);
  const convId = await chatted(a);

  await page.goto(a.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-companion').click();
  const card = page.getByTestId('companion-profile');
  await expect(page.getByTestId('companion-name')).toHaveValue('Anima');
  await expect(card.getByTestId('companion-avatar')).toHaveText('A');
  // A colour for the initial, then the name.
  await page.getByTestId('avatar-color-violet').click();
  await expect(page.getByTestId('avatar-color-violet')).toHaveAttribute('aria-pressed', 'true');
  await expect(card.getByTestId('companion-avatar')).toHaveClass(/avatar-violet/);
  await page.getByTestId('companion-name').fill('Mira');
  await page.getByTestId('companion-rename').click();
  await expect(card.getByTestId('companion-avatar')).toHaveText('M');
  // The Identity block says it: one source of truth.
  await expect(page.getByTestId('self-input-identity')).toHaveValue(/^I am Mira, a companion/);
  await shot(page, 'companion-settings-initial');

  // A picture: cut to a square and stored in the data folder.
  await page.getByTestId('companion-picture-file').setInputFiles(path.resolve('build', 'icon.png'));
  await expect(card.getByTestId('companion-avatar')).toHaveAttribute('data-kind', 'image');
  const profile = await callApi(a, 'self.profile');
  expect(profile).toMatchObject({ name: 'Mira', color: 'violet' });
  expect(profile.avatar).toMatch(/^data:image\/png;base64,/);
  expect((await callApi(a, 'settings.get')).companion.avatar).toMatch(/^avatar-[0-9a-f]{16}\.png$/);
  await shot(page, 'companion-settings');

  // The chat: each reply headed by the face and the name; the screen-reader text says the name.
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('conversation-item').first().click();
  const reply = replies(page).last();
  await expect(reply.getByTestId('message-from')).toHaveText('Mira');
  await expect(reply.getByTestId('companion-avatar')).toHaveAttribute('data-kind', 'image');
  await expect(reply).toHaveAttribute('aria-label', /^Message from Mira,/);

  // A new reply: the prompt it was asked with says the new name, and it is announced as Mira's.
  fake.requests.length = 0;
  await page.getByTestId('chat-input').fill('Do you like your new name?');
  await page.getByTestId('chat-input').press('Enter');
  await expect(replies(page)).toHaveCount(3);
  await expect(replies(page).last()).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(page.locator('.visually-hidden[aria-live="polite"]')).toHaveText(/^Mira: I hear you/);
  expect(systemOf(chatBodies().at(-1))).toContain('I am Mira, a companion');
  await shot(page, 'companion-chat');

  // The graph: the node for the companion is called Mira (the old name stays an alias).
  await page.getByTestId('nav-graph').click();
  await expect(page.getByTestId('graph-canvas')).toHaveAttribute('data-layout', 'done', { timeout: 60_000 });
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  await page.keyboard.press('/');
  await page.getByTestId('graph-search').fill('Mira');
  await expect(page.getByTestId('graph-hit').first()).toContainText('Mira');
  await page.getByTestId('graph-search').press('Enter');
  await expect(page.getByTestId('graph-panel').getByTestId('graph-panel-name')).toHaveText('Mira');
  await shot(page, 'companion-graph');

  // Both languages and themes.
  await look(page, a, 'zh-CN', 'dark');
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('conversation-item').first().click();
  await expect(replies(page).last()).toHaveAttribute('aria-label', /Mira/);
  await expect(replies(page).last().getByTestId('message-from')).toHaveText('Mira');
  await shot(page, 'companion-chat-zh-dark');
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-companion').click();
  await expect(page.getByTestId('companion-profile')).toContainText('名字和头像');
  await shot(page, 'companion-settings-zh-dark');
  expect(convId).toBeTruthy();
});

test('the morning message: once after a good night, written by the chat model; none after a failed night', async ({ page }) => {
  test.setTimeout(420_000);
  const a = await launch();
  model(sleepResponder());
  const convId = await chatted(a);
  const run = await sleepNow(a);
  expect(run.status).toBe('done');
  expect(await callApi(a, 'sleep.digest', {})).toMatchObject({ runId: run.id });

  // Opening the app: the companion speaks first, in the conversation the person was last in.
  fake.requests.length = 0;
  await page.goto(a.url);
  await expect(morning(page)).toBeVisible({ timeout: 60_000 });
  await expect(replies(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(replies(page).last().getByTestId('message-from')).toHaveText(/Anima$/);
  // One chat request: the usual system prompt, then the note with the night in it (never stored).
  const asked = chatBodies();
  expect(asked).toHaveLength(1);
  expect(systemOf(asked[0])).toContain('I am Anima');
  expect(lastTurn(asked[0])).toContain(NOTE_MARK);
  expect(lastTurn(asked[0])).toMatch(/While I slept I/);
  const stored = (await callApi(a, 'conversations.get', { id: convId })).messages;
  expect(stored.filter((m: { content: string }) => m.content === MORNING)).toHaveLength(1);
  expect(stored.some((m: { content: string }) => m.content.includes(NOTE_MARK))).toBe(false);
  await shot(page, 'companion-morning');

  // Opened again, focused again, asked again: no second message that day.
  await page.reload();
  await expect(morning(page)).toHaveCount(1);
  await page.evaluate('window.dispatchEvent(new Event("focus"))');
  expect((await callApi(a, 'self.greet')).skipped).toBe('greeted');
  await look(page, a, 'zh-CN', 'dark');
  await expect(morning(page)).toHaveCount(1);
  await shot(page, 'companion-morning-zh-dark');
  expect(chatBodies()).toHaveLength(1);
  // The switch is in Settings → Companion, on by default.
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-companion').click();
  await expect(page.getByTestId('companion-greeting')).toBeChecked();
  await page.getByTestId('companion-greeting').click();
  await expect.poll(async () => (await callApi(a, 'settings.get')).companion.greeting).toBe(false);
  await app!.stop('SIGTERM');
  app = null;

  // Another data folder, a night the background model answers in prose: it fails, and nothing greets.
  const b = await launch();
  model(() => ({ kind: 'text', text: 'Sure! Here is a summary of your day: you talked about your cat.', chunks: 2 }));
  const otherConv = await chatted(b);
  const failed = await sleepNow(b);
  expect(failed.status).toBe('failed');
  fake.requests.length = 0;
  await page.goto(b.url);
  await page.getByTestId('conversation-item').first().click();
  await expect(replies(page)).toHaveCount(2, { timeout: 30_000 });
  expect((await callApi(b, 'self.greet')).skipped).toBe('night_failed');
  expect(chatBodies()).toHaveLength(0);
  const after = (await callApi(b, 'conversations.get', { id: otherConv })).messages;
  expect(after.some((m: { content: string }) => m.content === MORNING)).toBe(false);
});
