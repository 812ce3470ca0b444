#!/usr/bin/env node
// Draws build/icon.png (512×512, what electron-builder turns into .icns/.ico): a rounded square in a
// dusk gradient with a soft crescent — Anima asleep and dreaming. Pure Node, no image libraries:
// run `node build/make-icon.mjs` after changing the drawing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const SIZE = 512;
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'icon.png');

const clamp01 = (v) => Math.min(1, Math.max(0, v));
/** Coverage of a shape from its signed distance (negative inside), antialiased over one pixel. */
const cover = (d) => clamp01(0.5 - d);

function roundedSquare(x, y, inset, radius) {
  const half = SIZE / 2 - inset;
  const qx = Math.abs(x - SIZE / 2) - (half - radius);
  const qy = Math.abs(y - SIZE / 2) - (half - radius);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - radius;
}

const circle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r;

function pixel(x, y) {
  const t = clamp01((x + y) / (2 * SIZE));
  // dusk violet → rose
  let r = 88 + (236 - 88) * t;
  let g = 72 + (122 - 72) * t;
  let b = 196 + (160 - 196) * t;
  const bg = cover(roundedSquare(x, y, 24, 112));
  // crescent: a disc with an offset disc taken away
  const moon = Math.min(cover(circle(x, y, 250, 262, 150)), 1 - cover(circle(x, y, 318, 212, 128)));
  r += (255 - r) * moon;
  g += (248 - g) * moon;
  b += (240 - b) * moon;
  return [r, g, b, 255 * bg].map((v) => Math.round(v));
}

function crc32(bytes) {
  let c = ~0;
  for (const byte of bytes) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) {
  const row = y * (SIZE * 4 + 1); // each row starts with filter type 0
  for (let x = 0; x < SIZE; x++) {
    // sample the pixel centre
    Buffer.from(pixel(x + 0.5, y + 0.5)).copy(raw, row + 1 + x * 4);
  }
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bit depth
header[9] = 6; // RGBA
writeFileSync(
  out,
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]),
);
console.log(`wrote ${path.relative(process.cwd(), out)} (${SIZE}×${SIZE})`);
