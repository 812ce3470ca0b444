// The web app manifest and its icons as committed (scripts/make-pwa-icons.mjs draws the icons): the
// fields a phone needs to add Anima to its home screen, every icon there at the size it claims, the
// maskable one full bleed, and index.html pointing at them with the themes' colours.
import fs from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const PUBLIC = path.resolve('renderer', 'public');
const manifest = JSON.parse(fs.readFileSync(path.join(PUBLIC, 'manifest.webmanifest'), 'utf8'));

/** Width, height and the RGBA pixels of a PNG as make-pwa-icons.mjs writes it (8-bit RGBA, filter 0). */
function readPng(file: string): { width: number; height: number; alpha: (x: number, y: number) => number } {
  const bytes = fs.readFileSync(file);
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  const idat: Buffer[] = [];
  for (let at = 8; at < bytes.length;) {
    const len = bytes.readUInt32BE(at);
    if (bytes.toString('ascii', at + 4, at + 8) === 'IDAT') idat.push(bytes.subarray(at + 8, at + 8 + len));
    at += len + 12;
  }
  const raw = inflateSync(Buffer.concat(idat));
  return { width, height, alpha: (x, y) => raw[y * (width * 4 + 1) + 1 + x * 4 + 3]! };
}

describe('the web app manifest', () => {
  it('names the app and opens it standalone from where it is served', () => {
    expect(manifest).toMatchObject({ name: 'Anima', short_name: 'Anima', start_url: '.', display: 'standalone' });
    expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/);
    expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/);
  });

  it('lists icons of 192 and 512 px and a maskable one, each a PNG of the size it claims', () => {
    const icons = manifest.icons as { src: string; sizes: string; type: string; purpose: string }[];
    expect(icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual(['192x192 any', '512x512 any', '512x512 maskable']);
    for (const icon of icons) {
      expect(icon.type).toBe('image/png');
      const png = readPng(path.join(PUBLIC, icon.src));
      expect(`${png.width}x${png.height}`).toBe(icon.sizes);
      // "any": the rounded square on transparent; maskable: full bleed, the platform cuts the shape.
      expect(png.alpha(0, 0)).toBe(icon.purpose === 'maskable' ? 255 : 0);
      expect(png.alpha(png.width >> 1, png.height >> 1)).toBe(255);
    }
  });

  it('is linked from index.html with the apple-touch-icon and both themes’ colours', () => {
    const html = fs.readFileSync(path.resolve('renderer', 'index.html'), 'utf8');
    expect(html).toContain('<link rel="manifest" href="./manifest.webmanifest" />');
    expect(html).toContain('<link rel="apple-touch-icon" href="./icons/apple-touch-icon.png" />');
    const touch = readPng(path.join(PUBLIC, 'icons', 'apple-touch-icon.png'));
    expect([touch.width, touch.height, touch.alpha(0, 0)]).toEqual([180, 180, 255]);
    // The status bar in each theme's page colour (--bg in renderer/styles/base.css).
    const css = fs.readFileSync(path.resolve('renderer', 'styles', 'base.css'), 'utf8');
    const light = css.match(/:root \{[^}]*?--bg: (#[0-9a-f]{6});/)![1];
    const dark = css.match(/:root\[data-theme='dark'\] \{[^}]*?--bg: (#[0-9a-f]{6});/)![1];
    expect(html).toContain(`<meta name="theme-color" content="${light}" media="(prefers-color-scheme: light)" />`);
    expect(html).toContain(`<meta name="theme-color" content="${dark}" media="(prefers-color-scheme: dark)" />`);
    expect(manifest.background_color).toBe(light);
  });
});
