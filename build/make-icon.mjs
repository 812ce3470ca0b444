#!/usr/bin/env node
// Writes build/icon.png (512×512, what electron-builder turns into .icns/.ico) from the drawing in
// build/icon-drawing.mjs: run `node build/make-icon.mjs` after changing the drawing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { iconPng } from './icon-drawing.mjs';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'icon.png');
writeFileSync(out, iconPng(512));
console.log(`wrote ${path.relative(process.cwd(), out)} (512×512)`);
