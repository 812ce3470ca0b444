// Settings → Devices with `anima serve --listen 127.0.0.1` (the LAN listener on a loopback address):
// the pairing QR with its address, fingerprint and countdown; a "phone" (a second browser context
// that accepts the self-signed certificate, as a person does after comparing the fingerprint) opens
// the pairing address, pairs, and goes on as a normal window with its own token; the desktop list
// shows it; unpairing it (confirmed) refuses it at once. Screenshots in both languages and themes.
import fs from 'node:fs';
import { callApi, dismissToasts, expect, newDataDir, shot, startApp, test, type RunningApp } from './app.js';

const LAN_LINE = /^On your local network \(HTTPS only\): (https:\/\/[^\s]+) /m;

async function startListening(dataDir: string): Promise<RunningApp & { lanOrigin: string }> {
  const app = await startApp(dataDir, {}, { args: ['--listen', '127.0.0.1'], readyWhen: [LAN_LINE, /fingerprint \(SHA-256\): \S+\n/] });
  return { ...app, lanOrigin: app.output().match(LAN_LINE)![1]! };
}

let app: (RunningApp & { lanOrigin: string }) | undefined;

test.afterEach(async () => {
  await app?.stop();
  if (app) fs.rmSync(app.dataDir, { recursive: true, force: true });
  app = undefined;
});

test('pair a phone from Settings → Devices, use it, and unpair it', async ({ page, browser }) => {
  app = await startListening(newDataDir());
  expect(app.output()).toMatch(/fingerprint \(SHA-256\): ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
  await callApi(app, 'settings.update', { onboarded: true });

  await page.goto(app.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-devices').click();
  await expect(page.getByTestId('devices-listening')).toContainText('127.0.0.1');
  await expect(page.getByText('No device is paired yet.')).toBeVisible();
  await page.getByTestId('devices-pair').click();
  await expect(page.getByTestId('pairing-qr')).toBeVisible();
  const url = (await page.getByTestId('pairing-url').textContent())!;
  const fingerprint = (await page.getByTestId('pairing-fingerprint').textContent())!.replace(/\n/g, ':');
  expect(url).toMatch(new RegExp(`^${app.lanOrigin.replace(/[.]/g, '\\.')}/#pair=[\\w-]+&fp=[0-9a-f]{64}$`));
  expect(app.output()).toContain(fingerprint);
  await expect(page.getByTestId('pairing-countdown')).toContainText(/9:\d\d|10:00/);
  await dismissToasts(page);
  await shot(page, 'devices-pairing');

  for (const [theme, language, name] of [
    ['dark', 'en', 'devices-pairing-dark'],
    ['light', 'zh-CN', 'devices-pairing-zh'],
    ['dark', 'zh-CN', 'devices-pairing-zh-dark'],
  ] as const) {
    await callApi(app, 'settings.update', { theme, language });
    await expect(page.locator('html')).toHaveAttribute('lang', language);
    await expect(page.getByTestId('pairing-qr')).toBeVisible();
    await dismissToasts(page);
    await shot(page, name);
  }
  await callApi(app, 'settings.update', { theme: 'light', language: 'en' });
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');

  // The phone: it accepts the certificate (the person compared the fingerprint), opens the address.
  const phoneContext = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 390, height: 844 },
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  });
  const phone = await phoneContext.newPage();
  await phone.goto(url);
  await expect(phone.getByTestId('pair-device')).toBeVisible();
  expect((await phone.getByTestId('pair-fingerprint').textContent())!.replace(/\n/g, ':')).toBe(fingerprint);
  await expect(phone.getByTestId('pair-name')).toHaveValue('iPhone (Safari)');
  await shot(phone, 'devices-pair-page-phone');
  await phone.getByTestId('pair-name').fill('Marek’s iPhone');
  await phone.getByTestId('pair-submit').click();
  // Paired: the app itself, with the device's own token (no token in the address).
  await expect(phone.getByTestId('pair-device')).toHaveCount(0);
  await expect(phone.getByTestId('no-token')).toHaveCount(0);
  await expect(phone.locator('.shell')).toBeVisible();
  expect(phone.url()).not.toContain('pair=');
  expect(await phone.evaluate('localStorage.getItem("anima.deviceToken")')).toMatch(/^[\w-]{43}$/);

  // The desktop learns of it at once: the code is used, the list shows the device and its use.
  await expect(page.getByTestId('pairing-card')).toHaveCount(0);
  await expect(page.getByTestId('device-row')).toHaveCount(1);
  await expect(page.getByTestId('device-row')).toContainText('Marek’s iPhone');
  await expect(page.getByTestId('device-row')).toContainText('last used');
  await dismissToasts(page);
  await shot(page, 'devices-list');

  // Unpairing is confirmed, says it cannot be undone, and refuses the phone at once.
  await page.getByTestId('device-revoke').click();
  await expect(page.getByRole('alertdialog')).toContainText('cannot be undone');
  await shot(page, 'devices-revoke-confirm');
  await page.getByTestId('device-revoke-confirm').click();
  await expect(page.getByTestId('device-row')).toHaveAttribute('data-revoked', 'true');
  await phone.reload();
  await expect(phone.getByTestId('no-token')).toContainText('no longer paired');
  await shot(phone, 'devices-unpaired-phone');
  await phoneContext.close();
});

test('without --listen, Settings → Devices says how to start it', async ({ page }) => {
  const { startApp } = await import('./app.js');
  const plain = await startApp(newDataDir());
  app = { ...plain, lanOrigin: '' };
  await callApi(plain, 'settings.update', { onboarded: true });
  await page.goto(plain.url);
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-devices').click();
  await expect(page.getByTestId('devices-not-listening')).toContainText('anima serve --listen 0.0.0.0');
  await dismissToasts(page);
  await shot(page, 'devices-not-listening');
});
