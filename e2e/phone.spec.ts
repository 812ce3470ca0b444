// The app on a phone: the real app in browser mode, Chromium at a phone's viewport (390×844, touch,
// mobile) — the tab bar at the bottom, a chat with the loopback fake model (send, the reply, a tap
// that shows a message's actions, the conversation list as a sheet), Memories with its detail as a
// full page and a back button, the Diary after a real night's sleep, and the other views behind
// "More"; nothing wider than the screen, and the web app manifest with its icons. Screenshots of
// each, in English and light and in Chinese and dark, go to e2e/screenshots/phone-*.png.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { sleepResponder } from './fake-llm/sleep-responder.js';
import { callApi, dismissToasts, expect, newDataDir, seedConversations, shot, startApp, test, type RunningApp } from './app.js';

const FIXTURE = path.resolve('..', 'shared', 'bench', 'locomo', 'dev', '26.json');

let fake: FakeLlm;
let app: RunningApp | null = null;
const dirs: string[] = [];

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
test.afterEach(async () => {
  fake.respond = undefined;
  await app?.stop('SIGTERM');
  app = null;
});

async function connected(dataDir = newDataDir()): Promise<RunningApp> {
  dirs.push(dataDir);
  app = await startApp(dataDir);
  await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await callApi(app, 'settings.update', { onboarded: true, sleep: { auto: false } });
  return app;
}

// The checks run in the page: strings, as this project's e2e code is typed without the DOM.

/**
 * Everything inside the app that reaches past the right edge of the screen, unless a box that
 * scrolls or clips sideways holds it within the screen (a strip of filter chips slides in its own box).
 */
const SIDEWAYS = `(() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > width + 1) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + width);
  for (const el of document.querySelectorAll('#root *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || (r.right <= width + 1 && r.left >= -1)) continue;
    let clipped = false;
    for (let p = el.parentElement; p && p.id !== 'root'; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') {
        const pr = p.getBoundingClientRect();
        clipped = pr.right <= width + 1 && pr.left >= -1;
        break;
      }
    }
    if (!clipped && getComputedStyle(el).visibility !== 'hidden') out.push(el.tagName.toLowerCase() + '.' + el.className + ' ' + Math.round(r.left) + '–' + Math.round(r.right));
  }
  return out;
})()`;

/** The buttons and fields on screen a finger cannot hit: smaller than 44×44 px (links inside text aside). */
const SMALL_TARGETS = `(() => {
  const out = [];
  for (const el of document.querySelectorAll('#root button, #root input, #root select, #root textarea')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.bottom < 0 || r.top > innerHeight) continue;
    if (el.classList.contains('link-button') || el.classList.contains('visually-hidden') || el.type === 'file') continue;
    if (el.closest('[aria-hidden="true"], .markdown')) continue;
    // A switch or a box sits in a row that takes the tap with it.
    const row = el.type === 'checkbox' ? el.closest('label, .switch-field') : null;
    if (row && row.getBoundingClientRect().height >= 44) continue;
    if (r.width < 43.5 || r.height < 43.5)
      out.push(el.tagName.toLowerCase() + '[' + (el.dataset.testid || el.className) + '] "' + (el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30) + '" ' + Math.round(r.width) + '×' + Math.round(r.height));
  }
  return out;
})()`;

/** No animation running but the endless ones (a pulse): a sheet sliding in is measured where it comes to rest. */
const SETTLED = `document.getAnimations().every((a) => a.playState !== 'running' || a.effect.getComputedTiming().iterations === Infinity)`;

/** Checks the screen as it is now (nothing sideways; finger-sized targets) and takes its picture. */
async function look(page: Page, name: string): Promise<void> {
  await page.evaluate('document.fonts.ready');
  await expect.poll(() => page.evaluate<boolean>(SETTLED)).toBe(true);
  expect(await page.evaluate<string[]>(SIDEWAYS), `${name}: nothing wider than the screen`).toEqual([]);
  // The page itself never scrolls (the tab bar stays at the bottom); the view scrolls inside.
  const shifted = `['html', 'body', '#root', '.shell', '.shell-main'].map((s) => document.querySelector(s)).map((e) => e.scrollTop + e.scrollLeft)`;
  expect(await page.evaluate<number[]>(shifted), `${name}: the page has not moved`).toEqual([0, 0, 0, 0, 0]);
  const bar = await page.locator('nav.tab-bar').boundingBox(); // none while a keyboard is open
  if (bar) expect(Math.round(bar.y + bar.height), `${name}: the tab bar at the bottom`).toBe(page.viewportSize()!.height);
  const small = await page.evaluate<string[]>(SMALL_TARGETS);
  if (small.length) console.log(`${name}: small targets:\n  ${small.join('\n  ')}`);
  await shot(page, name);
}

async function appearance(page: Page, a: RunningApp, language: 'en' | 'zh-CN', theme: 'light' | 'dark'): Promise<void> {
  await callApi(a, 'settings.update', { language, theme });
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
  await expect(page.locator('html')).toHaveAttribute('lang', language);
}

const assistant = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const user = (page: Page) => page.locator('[data-testid="message"][data-role="user"]');

test('chat on a phone: the tab bar, send and reply, a tap shows a message’s actions, the list as a sheet', async ({ page }) => {
  const a = await connected();
  await page.goto(a.url);

  // The navigation is a tab bar at the bottom of the screen, not a rail at the side.
  const bar = page.getByRole('navigation', { name: 'Main navigation' });
  await expect(bar).toHaveClass(/tab-bar/);
  const barBox = (await bar.boundingBox())!;
  expect(barBox.y + barBox.height).toBeGreaterThan(844 - 2);
  expect(barBox.width).toBeGreaterThan(388);
  for (const tab of await bar.locator('.tab-item').all()) {
    const box = (await tab.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(44);
    expect(box.height).toBeGreaterThanOrEqual(44);
  }

  // The chat fills the screen, the composer just above the tab bar.
  const input = page.getByTestId('chat-input');
  await expect(input).toBeVisible();
  const composer = (await page.locator('.composer').boundingBox())!;
  expect(composer.x).toBeGreaterThanOrEqual(8);
  expect(composer.x + composer.width).toBeLessThanOrEqual(390 - 8);
  expect(composer.y + composer.height).toBeLessThanOrEqual(barBox.y);
  expect(composer.y + composer.height).toBeGreaterThan(barBox.y - 40);

  const reply = 'Tomatoes on a balcony love the morning sun. Water them at the roots, not the leaves, and they will thank you by July.';
  fake.script({ kind: 'text', text: reply, chunks: 6, chunkDelayMs: 60 });
  await input.tap();
  await input.fill('My tomatoes look a bit sad. Any advice for a balcony?');
  await page.getByTestId('send-button').tap();
  await expect(user(page).last()).toContainText('tomatoes look a bit sad');
  await expect(assistant(page).last()).toHaveAttribute('data-status', 'complete');
  await expect(assistant(page).last()).toContainText(reply);
  await dismissToasts(page);
  await page.locator('.msg-scroller').tap({ position: { x: 20, y: 20 } });
  await look(page, 'phone-chat');

  // No hover on a phone: a message's actions are hidden until a tap on it shows them.
  const mine = user(page).last();
  await expect(mine.getByRole('button', { name: /copy/i })).toBeHidden();
  await mine.locator('.msg-bubble').tap();
  await expect(mine.getByRole('button', { name: /copy/i })).toBeVisible();
  await expect(mine.getByTestId('edit-last')).toBeVisible();
  const edit = (await mine.getByTestId('edit-last').boundingBox())!;
  expect(edit.height).toBeGreaterThanOrEqual(44);
  await look(page, 'phone-chat-actions');

  // An on-screen keyboard takes the bottom of the screen (as Android resizes the page for it): the
  // composer stays in sight above it and the tab bar steps aside.
  await input.focus();
  await page.setViewportSize({ width: 390, height: 480 });
  await expect(page.locator('html')).toHaveAttribute('data-keyboard', 'open');
  await expect(bar).toBeHidden();
  await expect(input).toBeInViewport();
  const typing = (await page.locator('.composer').boundingBox())!;
  expect(typing.y + typing.height).toBeLessThanOrEqual(480);
  expect(typing.y + typing.height).toBeGreaterThan(480 - 40);
  await look(page, 'phone-chat-keyboard');
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(bar).toBeVisible();

  // The conversation list is a sheet over the chat; starting a conversation or picking one closes it.
  const list = page.getByRole('complementary', { name: 'Conversations' });
  await expect(list).toBeHidden();
  await page.getByTestId('conversations-open').tap();
  await expect(list).toBeVisible();
  await page.getByTestId('new-conversation').tap();
  await expect(list).toBeHidden();
  await expect(user(page)).toHaveCount(0);
  await page.getByTestId('conversations-open').tap();
  await expect(page.getByTestId('conversation-item')).toHaveCount(2);
  await look(page, 'phone-conversations');
  await page.getByTestId('conversation-item').filter({ hasText: 'tomatoes look a bit sad' }).locator('.conv-open').tap();
  await expect(list).toBeHidden();
  await expect(assistant(page).last()).toContainText(reply);

  // In Chinese and the dark theme too.
  await appearance(page, a, 'zh-CN', 'dark');
  await look(page, 'phone-chat-zh-dark');
  await page.getByTestId('conversations-open').tap();
  await look(page, 'phone-conversations-zh-dark');
  await page.getByTestId('conversations-close').tap({ position: { x: 370, y: 400 } });
  await expect(list).toBeHidden();

  // The web app manifest and its icons, from the app's own server.
  const manifest = await page.request.get(`${a.origin}/manifest.webmanifest`);
  expect(manifest.status()).toBe(200);
  expect(manifest.headers()['content-type']).toBe('application/manifest+json; charset=utf-8');
  const m = await manifest.json();
  expect(m).toMatchObject({ name: 'Anima', short_name: 'Anima', start_url: '.', display: 'standalone' });
  const sizes = new Map<string, string>();
  for (const icon of m.icons as { src: string; sizes: string; purpose: string }[]) {
    const res = await page.request.get(new URL(icon.src, `${a.origin}/`).href);
    expect(res.status(), icon.src).toBe(200);
    expect(res.headers()['content-type']).toBe('image/png');
    const png = await res.body();
    expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`).toBe(icon.sizes);
    sizes.set(icon.purpose, icon.sizes);
  }
  expect(sizes.get('maskable')).toBe('512x512');
  expect([...m.icons.map((i: { sizes: string }) => i.sizes)]).toEqual(expect.arrayContaining(['192x192', '512x512']));
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute('href', './manifest.webmanifest');
  await expect(page.locator('link[rel="apple-touch-icon"]')).toHaveAttribute('href', './icons/apple-touch-icon.png');
  expect((await page.request.get(`${a.origin}/icons/apple-touch-icon.png`)).status()).toBe(200);
  await expect(page.locator('meta[name="theme-color"]').first()).toHaveAttribute('content', '#1a1917');
});

test('Memories, the Diary and the rest on a phone: tabs, More, a detail as a full page with Back', async ({ page }) => {
  test.skip(!fs.existsSync(FIXTURE), `needs the LoCoMo fixture at ${FIXTURE}`);
  test.setTimeout(300_000);
  const dataDir = newDataDir();
  dirs.push(dataDir);
  seedConversations(dataDir, { fixture: FIXTURE, sessions: 2, turns: 8 });
  const a = await connected(dataDir);
  for (const [type, content] of [
    ['world', 'Sam’s sister Mara lives in Lisbon and works night shifts as a nurse.'],
    ['preference', 'Sam prefers tea to coffee in the evening.'],
    ['experience', 'Sam and I talked about the allotment garden on a rainy Sunday.'],
    ['procedural', 'When Sam is stressed, ask before giving advice.'],
  ] as const)
    await callApi(a, 'memories.create', { type, content, pinned: type === 'preference' });
  // A real night's sleep, so the Diary has days to show.
  fake.respond = sleepResponder();
  expect((await callApi(a, 'sleep.now')).runId).not.toBeNull();
  await expect.poll(async () => (await callApi(a, 'sleep.status')).running, { timeout: 240_000 }).toBeNull();

  await page.goto(a.url);
  for (const [language, theme, suffix] of [
    ['en', 'light', ''],
    ['zh-CN', 'dark', '-zh-dark'],
  ] as const) {
    await appearance(page, a, language, theme);

    // Memories: the card index fills the screen; a card opens its detail as a page with Back.
    await page.getByTestId('nav-memories').tap();
    await expect(page.getByTestId('memory-card').first()).toBeVisible();
    await dismissToasts(page);
    await look(page, `phone-memories${suffix}`);
    await page.getByTestId('memory-card').filter({ hasText: 'Mara' }).tap();
    await expect(page.getByTestId('memory-detail')).toBeVisible();
    await expect(page.getByTestId('memory-card').first()).toBeHidden();
    await look(page, `phone-memory-detail${suffix}`);
    await page.locator('.mem-back').tap();
    await expect(page.getByTestId('memory-card').first()).toBeVisible();

    // The Diary, by day.
    await page.getByTestId('nav-diary').tap();
    await expect(page.getByTestId('diary-day').first()).toBeVisible();
    await look(page, `phone-diary${suffix}`);

    await page.getByTestId('nav-pins').tap();
    await expect(page.locator('[data-view="pins"]')).toBeVisible();
    await look(page, `phone-pins${suffix}`);

    // The other views behind More.
    for (const view of ['dreams', 'graph', 'sleep', 'settings'] as const) {
      await page.getByTestId('nav-more').tap();
      await expect(page.getByTestId('nav-more-sheet')).toBeVisible();
      if (view === 'dreams') await look(page, `phone-more${suffix}`);
      await page.getByTestId(`nav-${view}`).tap();
      await expect(page.getByTestId('nav-more-sheet')).toHaveCount(0);
      await expect(page.locator(`[data-view="${view}"]`)).toBeVisible();
      if (view === 'graph') {
        await expect(page.getByTestId('graph-canvas')).toHaveAttribute('data-layout', 'done', { timeout: 60_000 });
        await expect(page.getByTestId('graph-phone-note')).toBeVisible();
      }
      await look(page, `phone-${view}${suffix}`);
      if (view === 'sleep') {
        // A background call in full: the dialog takes the whole screen, and closes.
        await page.getByTestId('audit-row').first().scrollIntoViewIfNeeded();
        await look(page, `phone-sleep-log${suffix}`);
        await page.getByTestId('audit-row').first().tap();
        const detail = page.getByTestId('audit-detail');
        await expect(detail).toBeVisible();
        const box = (await detail.boundingBox())!;
        expect(box.width).toBeLessThanOrEqual(390);
        expect(box.x).toBeGreaterThanOrEqual(0);
        await look(page, `phone-sleep-audit${suffix}`);
        await page.keyboard.press('Escape');
        await expect(detail).toHaveCount(0);
      }
    }
    for (const section of ['memory', 'data', 'devices'] as const) {
      await page.getByTestId(`settings-${section}`).tap();
      await expect(page.getByTestId(`settings-${section}`)).toHaveAttribute('aria-current', 'page');
      await look(page, `phone-settings-${section}${suffix}`);
    }
  }
});
