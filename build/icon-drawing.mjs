// The app's icon as a drawing: a rounded square in a dusk gradient with a soft crescent — Anima
// asleep and dreaming. Drawn in 512 units and rendered at any size to a PNG, in pure Node (no image
// libraries). build/make-icon.mjs writes the desktop icon with it, scripts/make-pwa-icons.mjs the
// web app's home-screen icons: change the drawing here and run both.
import { deflateSync } from 'node:zlib';

const GRID = 512; // the drawing's own units

const clamp01 = (v) => Math.min(1, Math.max(0, v));

function roundedSquare(x, y, inset, radius) {
  const half = GRID / 2 - inset;
  const qx = Math.abs(x - GRID / 2) - (half - radius);
  const qy = Math.abs(y - GRID / 2) - (half - radius);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - radius;
}

const circle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r;

/** One pixel at (x, y) in drawing units; `px` is one output pixel in drawing units (antialiasing over one pixel). */
function pixel(x, y, px, bleed) {
  /** Coverage of a shape from its signed distance (negative inside). */
  const cover = (d) => clamp01(0.5 - d / px);
  const t = clamp01((x + y) / (2 * GRID));
  // dusk violet → rose
  let r = 88 + (236 - 88) * t;
  let g = 72 + (122 - 72) * t;
  let b = 196 + (160 - 196) * t;
  const bg = bleed ? 1 : cover(roundedSquare(x, y, 24, 112));
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

/**
 * The icon as an 8-bit RGBA PNG of `size`×`size`. `bleed`: the gradient fills the whole square
 * (platforms that cut their own shape: maskable and Apple touch icons) instead of the rounded square on transparent.
 */
export function iconPng(size, bleed = false) {
  const px = GRID / size;
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    const row = y * (size * 4 + 1); // each row starts with filter type 0
    for (let x = 0; x < size; x++) {
      // sample the pixel centre
      Buffer.from(pixel((x + 0.5) * px, (y + 0.5) * px, px, bleed)).copy(raw, row + 1 + x * 4);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
