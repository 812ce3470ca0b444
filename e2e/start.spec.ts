// `npm start` where Electron cannot open a window (no binary or no display): it says why in one
// line, then serves the same app in browser mode at the first loopback URL it prints.
import { spawn } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { newDataDir } from './app.js';

test('npm start falls back to browser mode and says why', async ({ page }) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ANIMA_DATA_DIR: newDataDir(), CI: '1' };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const child = spawn(process.execPath, ['scripts/start.mjs', '--no-open'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await expect.poll(() => output, { timeout: 60_000 }).toMatch(/Anima is running at /);
    const lines = output.trim().split('\n');
    expect(lines[0]).toMatch(/so Anima opens in your browser instead\.$/);
    const url = output.match(/https?:\/\/(127\.0\.0\.1|localhost)\S*/)![0];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}$/);
    await page.goto(url);
    await expect(page.getByTestId('onboarding')).toBeVisible();
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  expect(child.exitCode ?? 0).toBe(0);
});
