// Versions and branches, end to end: the real app in browser mode, Chromium on the real UI, and the
// loopback fake model server. What the model is sent is read at the fake server: after flipping to
// an older reply and going on, the next request carries the chosen line. Also: editing an earlier
// message, delete + undo (the toast), continue a cut-off reply, branch from here. Screenshots in
// en/light and zh-CN/dark go to e2e/screenshots/.
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { callApi as api, expect, newDataDir, shot, startApp, test, type RunningApp, dismissToasts } from './app.js';

let fake: FakeLlm;
const apps: RunningApp[] = [];

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.stop('SIGTERM')));
  fake.reset();
});

async function connectedApp(): Promise<RunningApp> {
  const app = await startApp(newDataDir());
  apps.push(app);
  await api(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await api(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  return app;
}

const messages = (page: Page) => page.locator('[data-testid="message"]');
const assistant = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const user = (page: Page) => page.locator('[data-testid="message"][data-role="user"]');

/** The person's and the companion's turns of the last chat request the fake server got. */
function lastSent(): string[] {
  const body = fake.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as {
    messages: { role: string; content: string; name?: string }[];
  };
  return body.messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && !m.name).map((m) => m.content);
}

async function send(page: Page, text: string, reply: string) {
  fake.script({ kind: 'text', text: reply });
  const before = await assistant(page).count();
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
  await expect(assistant(page)).toHaveCount(before + 1);
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(assistant(page).last()).toContainText(reply);
}

async function texts(page: Page): Promise<string[]> {
  return (await messages(page).locator('.msg-bubble, .markdown').allInnerTexts()).map((t) => t.trim());
}

test('flip versions and go on from an older one; edit an earlier message', async ({ page }) => {
  const app = await connectedApp();
  await page.goto(app.url);
  await send(page, 'Tell me about owls', 'Owls hunt at night.');

  // Write it again: two versions, the new one shown as 2/2.
  fake.script({ kind: 'text', text: 'Owls can turn their heads far.' });
  await assistant(page).last().hover();
  await assistant(page).last().getByTestId('regenerate').click();
  await expect(assistant(page).last()).toContainText('Owls can turn their heads far.');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(assistant(page).last().getByTestId('version-position')).toHaveText('2/2');
  await shot(page, 'versions-flip');

  // ‹ to the first; → and ← on the focused reply flip too.
  await assistant(page).last().getByTestId('version-previous').click();
  await expect(assistant(page).last()).toContainText('Owls hunt at night.');
  await expect(assistant(page).last().getByTestId('version-position')).toHaveText('1/2');
  await assistant(page).last().focus();
  await page.keyboard.press('ArrowRight');
  await expect(assistant(page).last()).toContainText('Owls can turn their heads far.');
  await expect(assistant(page).last()).toBeFocused();
  await page.keyboard.press('ArrowLeft');
  await expect(assistant(page).last()).toContainText('Owls hunt at night.');

  // Going on from the first version: the model is sent the chosen line.
  await send(page, 'Why at night?', 'Less competition for food.');
  expect(lastSent()).toEqual(['Tell me about owls', 'Owls hunt at night.', 'Why at night?']);
  expect(await texts(page)).toEqual(['Tell me about owls', 'Owls hunt at night.', 'Why at night?', 'Less competition for food.']);

  // Edit the first message: the replies after it become an earlier branch.
  fake.script({ kind: 'text', text: 'Bats find their way by echoes.' });
  await user(page).first().hover();
  await user(page).first().getByTestId('edit').click();
  await page.getByTestId('edit-input').fill('Tell me about bats');
  await page.getByTestId('edit-input').press('Enter');
  await expect(assistant(page).last()).toContainText('Bats find their way by echoes.');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  expect(lastSent()).toEqual(['Tell me about bats']);
  await expect(messages(page)).toHaveCount(2);
  await expect(user(page).first().getByTestId('version-position')).toHaveText('2/2');
  await shot(page, 'versions-edited');
  // The original, with everything that followed it, is one flip away.
  await user(page).first().getByTestId('version-previous').click();
  await expect(messages(page)).toHaveCount(4);
  await expect(assistant(page).last()).toContainText('Less competition for food.');

  // The same screen in the other language and theme.
  await api(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await assistant(page).first().hover();
  await shot(page, 'versions-flip-zh-dark');
  await api(app, 'settings.update', { theme: 'light', language: 'en' });
});

test('delete with undo, continue a cut-off reply, branch from here', async ({ page }) => {
  const app = await connectedApp();
  await page.goto(app.url);
  await send(page, 'My sister is Ana', 'Nice to hear about Ana.');
  await send(page, 'She plays chess', 'Chess is a fine game.');

  // Delete the first reply: gone from the line, the model never sees it; the toast's undo brings it back.
  await assistant(page).first().hover();
  await assistant(page).first().getByTestId('delete').click();
  await expect(messages(page)).toHaveCount(3);
  await expect(page.getByTestId('toast-action')).toBeVisible();
  await shot(page, 'versions-deleted');
  await page.getByTestId('toast-action').click();
  await expect(messages(page)).toHaveCount(4);
  await expect(assistant(page).first()).toContainText('Nice to hear about Ana.');
  await assistant(page).first().hover();
  await assistant(page).first().getByTestId('delete').click();
  await expect(messages(page)).toHaveCount(3);
  await send(page, 'Any tips?', 'Practise endgames.');
  expect(lastSent()).toEqual(['My sister is Ana', 'She plays chess', 'Chess is a fine game.', 'Any tips?']);

  // A reply cut off mid-way is continued: what comes is appended to it.
  fake.script({ kind: 'cut', text: 'The three rules are: first,' });
  await page.getByTestId('chat-input').fill('What are the rules?');
  await page.getByTestId('chat-input').press('Enter');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'partial');
  fake.script({ kind: 'text', text: ' be kind; second, be brief.' });
  await assistant(page).last().getByTestId('continue').click();
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(assistant(page).last()).toContainText('The three rules are: first, be kind; second, be brief.');
  expect(lastSent().slice(-2)).toEqual(['What are the rules?', 'The three rules are: first,']);
  await shot(page, 'versions-continued');

  // Branch from the reply about chess: a new conversation with the history up to it.
  const chess = assistant(page).filter({ hasText: 'Chess is a fine game.' });
  await chess.hover();
  await chess.getByTestId('branch').click();
  await expect(messages(page)).toHaveCount(3);
  await expect(page.getByTestId('conversation-item').first()).toContainText('(branch)');
  await send(page, 'Is she good?', 'She sounds good.');
  expect(lastSent()).toEqual(['My sister is Ana', 'She plays chess', 'Chess is a fine game.', 'Is she good?']);
  await shot(page, 'versions-branch');

  // (A toast's words are the language it was shown in: let them go first.)
  await dismissToasts(page);
  await api(app, 'settings.update', { theme: 'dark', language: 'zh-CN' });
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await assistant(page).last().hover();
  await shot(page, 'versions-branch-zh-dark');
  await api(app, 'settings.update', { theme: 'light', language: 'en' });
});
