// "Use my Anima server" in the desktop window, the renderer's side: Settings → Devices shows the panel,
// a refused pairing link says each refusal in words, the banner names the server the window shows
// and offers this computer back, and says when the server did not answer. The real app runs in
// browser mode; window.animaDesktop is defined by page.addInitScript below: a STAND-IN for the
// Electron preload (electron/main/preload.ts), which cannot run in this browser. It follows the
// contract in shared/bridge.ts (DesktopShell) and keeps where the window is in sessionStorage, so
// "the window loads the server" is a reload that finds the new place. What the real main process
// does (pinning the certificate, stopping this computer's host) is tested on its own side.
// Screenshots in both languages and both themes.
import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { callApi, dismissToasts, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const ORIGIN = 'https://192.168.1.5:7431';
const GOOD_LINK = `${ORIGIN}/#pair=Xk2-pairing_s3cret&fp=${'3f'.repeat(32)}`;

/**
 * The stand-in shell, as page script (a string: the e2e tsconfig has no DOM types). A link that is no
 * pairing link is refused `invalid_link` here, as the real shell checks it before reaching anything;
 * for a well-formed one (and for reopenServer) it answers what the test queued in `answers`
 * ('ok' or a refusal code), else 'ok'. 'ok' goes to the server: where becomes `server`, the page reloads.
 */
const STAND_IN = `(() => {
  const KEY = 'anima.e2e.desktopShell';
  const read = () => JSON.parse(sessionStorage.getItem(KEY) || 'null') || { where: { kind: 'local', server: null }, answers: [], calls: [] };
  const write = (s) => sessionStorage.setItem(KEY, JSON.stringify(s));
  const reloadSoon = () => setTimeout(() => location.reload(), 30);
  const go = (s, call) => {
    s.calls.push(call);
    const answer = s.answers.shift() || 'ok';
    if (answer !== 'ok') {
      write(s);
      return { ok: false, error: { code: answer, message: 'stand-in shell: ' + answer } };
    }
    const server = (s.where.server && s.where.server.origin === s.origin) ? s.where.server : { origin: s.origin, fingerprint: s.fingerprint, since: new Date().toISOString() };
    s.where = { kind: 'server', server };
    write(s);
    reloadSoon();
    return { ok: true, value: null };
  };
  window.animaDesktop = {
    async where() { return read().where; },
    async useServer(link) {
      const s = read();
      const m = /^(https:\\/\\/[^/#?]+)\\/?#pair=[\\w-]+&fp=([0-9a-f]{64})$/.exec(link);
      if (!m) {
        s.calls.push('useServer ' + link);
        write(s);
        return { ok: false, error: { code: 'invalid_link', message: 'stand-in shell: not a pairing link' } };
      }
      s.origin = m[1];
      s.fingerprint = m[2].toUpperCase().match(/../g).join(':');
      return go(s, 'useServer ' + link);
    },
    async reopenServer() {
      const s = read();
      s.origin = s.where.server.origin;
      s.fingerprint = s.where.server.fingerprint;
      return go(s, 'reopenServer');
    },
    async useThisComputer() {
      const s = read();
      s.calls.push('useThisComputer');
      s.where = { kind: 'local', server: s.where.server };
      write(s);
      reloadSoon();
    },
    async forgetServer() {
      const s = read();
      s.calls.push('forgetServer');
      s.where = { kind: 'local', server: null };
      write(s);
    },
  };
})();`;

type Shell = { where: unknown; answers: string[]; calls: string[] };

/** What the stand-in holds now (its calls, where), and a change to it before the next step. */
async function standIn(page: Page, change?: Partial<Shell>): Promise<Shell> {
  return page.evaluate(
    ([key, patch]) => {
      const store = (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null; setItem(k: string, v: string): void } }).sessionStorage;
      const s = JSON.parse(store.getItem(key) ?? 'null') ?? { where: { kind: 'local', server: null }, answers: [], calls: [] };
      Object.assign(s, patch);
      store.setItem(key, JSON.stringify(s));
      return s as Shell;
    },
    ['anima.e2e.desktopShell', change ?? {}] as const,
  );
}

async function openDevices(page: Page): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-devices').click();
}

/** One screenshot per language and theme: `name` (English, light), -dark, -zh, -zh-dark. */
async function shotsInAllLooks(page: Page, app: RunningApp, name: string, visible: string): Promise<void> {
  for (const [theme, language, suffix] of [
    ['light', 'en', ''],
    ['dark', 'en', '-dark'],
    ['light', 'zh-CN', '-zh'],
    ['dark', 'zh-CN', '-zh-dark'],
  ] as const) {
    await callApi(app, 'settings.update', { theme, language });
    await expect(page.locator('html')).toHaveAttribute('lang', language);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    await expect(page.getByTestId(visible)).toBeVisible();
    await dismissToasts(page);
    await shot(page, `${name}${suffix}`);
  }
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
}

let app: RunningApp | undefined;

test.beforeEach(async ({ page }) => {
  app = await startApp(newDataDir());
  await callApi(app, 'settings.update', { onboarded: true, theme: 'light', language: 'en' });
  await page.addInitScript(STAND_IN);
});

test.afterEach(async () => {
  await app?.stop();
  if (app) fs.rmSync(app.dataDir, { recursive: true, force: true });
  app = undefined;
});

test('a pairing link refused in words, the server in the banner, and back to this computer', async ({ page }) => {
  await page.goto(app!.url);
  await expect(page.locator('.shell')).toBeVisible();
  // On this computer with no server remembered: no banner.
  await expect(page.getByTestId('server-banner')).toHaveCount(0);
  await openDevices(page);
  const panel = page.getByTestId('use-server');
  await expect(panel).toContainText('Use my Anima server');
  await expect(panel).toContainText('This computer’s own data stays here, untouched');
  // This computer's own devices are still there, below.
  await expect(page.getByTestId('devices-not-listening')).toBeVisible();
  await expect(page.getByTestId('use-server-connect')).toBeDisabled();

  // Each refusal in its words; Enter submits.
  const link = page.getByTestId('use-server-link');
  const refusal = page.getByTestId('use-server-refusal');
  await link.fill('192.168.1.5:7431');
  await link.press('Enter');
  await expect(refusal).toHaveAttribute('data-refusal-code', 'invalid_link');
  await expect(refusal).toContainText('That is not a pairing link.');
  await expect(link).toHaveAttribute('aria-invalid', 'true');
  // Typing again clears the old refusal.
  await link.fill(GOOD_LINK);
  await expect(refusal).toHaveCount(0);
  // Tab goes from the field to Connect.
  await link.press('Tab');
  await expect(page.getByTestId('use-server-connect')).toBeFocused();

  await standIn(page, { answers: ['server_unreachable', 'certificate_mismatch'] });
  await link.press('Enter');
  await expect(refusal).toHaveAttribute('data-refusal-code', 'server_unreachable');
  await expect(refusal).toContainText('The server did not answer.');
  await page.getByTestId('use-server-connect').click();
  await expect(refusal).toHaveAttribute('data-refusal-code', 'certificate_mismatch');
  await expect(refusal).toContainText('The server’s certificate is not the one the link names.');
  await expect(refusal).toContainText('Do not go on unless you have just made the server’s certificate anew');
  await shotsInAllLooks(page, app!, 'use-server-refused', 'use-server-refusal');

  // The third try goes through: the window "loads the server" (the stand-in reloads as the server).
  await page.getByTestId('use-server-connect').click();
  const banner = page.getByTestId('server-banner');
  await expect(banner).toContainText('Your Anima server · 192.168.1.5');
  expect((await standIn(page)).calls).toEqual(['useServer 192.168.1.5:7431', `useServer ${GOOD_LINK}`, `useServer ${GOOD_LINK}`, `useServer ${GOOD_LINK}`]);
  // Settings → Devices on the server says where the window is, not the server's own devices.
  await openDevices(page);
  await expect(page.getByTestId('use-server-on-server')).toContainText(`This window shows your server at ${ORIGIN}.`);
  await expect(page.getByTestId('devices-not-listening')).toHaveCount(0);
  await shotsInAllLooks(page, app!, 'use-server-on-server', 'server-banner');

  // In Chat the banner sits above the view and never covers the composer.
  await page.getByTestId('nav-chat').click();
  await expect(page.getByTestId('composer')).toBeVisible();
  const bannerBox = (await banner.boundingBox())!;
  const composerBox = (await page.getByTestId('composer').boundingBox())!;
  expect(bannerBox.height).toBeLessThan(48);
  expect(bannerBox.y + bannerBox.height).toBeLessThanOrEqual(composerBox.y);
  await shot(page, 'use-server-banner-chat');
  // A narrow desktop window takes the phone layout: the banner stays above the view, the tab bar below.
  await page.setViewportSize({ width: 480, height: 800 });
  await expect(page.locator('.tab-bar')).toBeVisible();
  const narrowBanner = (await banner.boundingBox())!;
  const tabBar = (await page.locator('.tab-bar').boundingBox())!;
  const narrowComposer = (await page.getByTestId('composer').boundingBox())!;
  expect(narrowBanner.y + narrowBanner.height).toBeLessThanOrEqual(narrowComposer.y);
  expect(narrowComposer.y + narrowComposer.height).toBeLessThanOrEqual(tabBar.y + 1);
  expect(tabBar.y + tabBar.height).toBeCloseTo(800, 0);
  await shot(page, 'use-server-banner-narrow');
  await page.setViewportSize({ width: 1280, height: 800 });

  // "Use this computer", by keyboard: back on this computer, the server remembered.
  await page.getByTestId('server-banner-this-computer').focus();
  await page.keyboard.press('Enter');
  await expect(banner).toHaveCount(0);
  await expect(page.locator('.shell')).toBeVisible();
  await openDevices(page);
  await expect(page.getByTestId('use-server-origin')).toHaveText(ORIGIN);
  await expect(page.getByTestId('use-server-remembered')).toContainText('first used just now');
  await page.getByTestId('use-server-reopen').focus();
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('use-server-forget')).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('use-server-link')).toBeFocused();
  await shotsInAllLooks(page, app!, 'use-server-remembered', 'use-server-remembered');

  // Forget asks first; Escape closes the question and gives focus back.
  await page.getByTestId('use-server-forget').click();
  const confirm = page.getByTestId('use-server-forget-confirm');
  await expect(confirm).toContainText(`Forget the server at ${ORIGIN}?`);
  await expect(page.getByTestId('use-server-forget-yes')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);
  await expect(page.getByTestId('use-server-forget')).toBeFocused();
  expect((await standIn(page)).calls).not.toContain('forgetServer');
  await page.getByTestId('use-server-forget').press('Enter');
  await page.getByTestId('use-server-forget-yes').press('Enter');
  await expect(page.getByTestId('use-server-remembered')).toHaveCount(0);
  expect((await standIn(page)).calls.at(-1)).toBe('forgetServer');
});

test('the server did not answer at start: the banner says so, tries again, and can be dismissed', async ({ page }) => {
  await page.goto(app!.url);
  await expect(page.locator('.shell')).toBeVisible();
  const server = { origin: ORIGIN, fingerprint: Array(32).fill('3F').join(':'), since: '2026-11-02T09:30:00.000Z' };
  await standIn(page, { where: { kind: 'local', server, serverUnreachable: true }, answers: ['server_unreachable'] });
  await page.reload();
  const banner = page.getByTestId('server-unreachable-banner');
  await expect(banner).toContainText('Your server at 192.168.1.5 did not answer; this is this computer’s own data.');
  await expect(page.getByTestId('composer')).toBeVisible();
  await shotsInAllLooks(page, app!, 'use-server-unreachable', 'server-unreachable-banner');

  // Try again: still no answer, said in words in the banner.
  await page.getByTestId('server-banner-retry').click();
  await expect(banner.getByTestId('use-server-refusal')).toContainText('The server did not answer.');
  await shot(page, 'use-server-unreachable-retry');
  expect((await standIn(page)).calls).toEqual(['reopenServer']);

  // Dismissed: gone for this window; Settings → Devices still offers the server.
  await page.getByTestId('server-banner-dismiss').click();
  await expect(banner).toHaveCount(0);
  await openDevices(page);
  await expect(page.getByTestId('use-server-origin')).toHaveText(ORIGIN);

  // Open it again, and this time it answers.
  await page.getByTestId('use-server-reopen').click();
  await expect(page.getByTestId('server-banner')).toContainText('Your Anima server · 192.168.1.5');
  expect((await standIn(page)).calls).toEqual(['reopenServer', 'reopenServer']);
});

test('outside the shell (a page without its key), the banner still offers this computer', async ({ page }) => {
  // A tab without the app's key shows the no-token page, as a revoked device's window on a server does.
  await page.goto(`${app!.origin}/`);
  await expect(page.getByTestId('no-token')).toBeVisible();
  await expect(page.getByTestId('server-banner')).toHaveCount(0);
  const server = { origin: ORIGIN, fingerprint: Array(32).fill('3F').join(':'), since: '2026-11-02T09:30:00.000Z' };
  await standIn(page, { where: { kind: 'server', server } });
  await page.reload();
  await expect(page.getByTestId('no-token')).toBeVisible();
  const banner = page.getByTestId('server-banner');
  await expect(banner).toContainText('Your Anima server · 192.168.1.5');
  // The banner lies above the page's card, not over it.
  const bannerBox = (await banner.boundingBox())!;
  const cardBox = (await page.locator('.fullpage-card').boundingBox())!;
  expect(bannerBox.y + bannerBox.height).toBeLessThanOrEqual(cardBox.y);
  await shot(page, 'use-server-banner-no-token');
  await page.getByTestId('server-banner-this-computer').click();
  await expect(banner).toHaveCount(0);
  expect((await standIn(page)).calls).toEqual(['useThisComputer']);
});
