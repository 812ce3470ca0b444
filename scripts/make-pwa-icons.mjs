#!/usr/bin/env node
// Draws the home-screen icons of the web app (renderer/public/icons/) from the app's own icon (the
// drawing in build/icon-drawing.mjs, which build/make-icon.mjs also renders for the desktop): run
// `node scripts/make-pwa-icons.mjs` after changing the drawing.
//   icon-192.png, icon-512.png    the rounded square on transparent, as the desktop icon
//   icon-maskable-512.png         full bleed: the platform cuts its own shape; the crescent lies well
//                                 inside the safe zone (a circle of 40 % of the size around the centre)
//   apple-touch-icon.png (180)    full bleed and opaque: iOS rounds the corners itself
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { iconPng } from '../build/icon-drawing.mjs';

const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer', 'public', 'icons');

mkdirSync(outDir, { recursive: true });
for (const [name, size, bleed] of [
  ['icon-192.png', 192, false],
  ['icon-512.png', 512, false],
  ['icon-maskable-512.png', 512, true],
  ['apple-touch-icon.png', 180, true],
]) {
  writeFileSync(path.join(outDir, name), iconPng(size, bleed));
  console.log(`wrote ${path.relative(process.cwd(), path.join(outDir, name))} (${size}×${size})`);
}
