// What an image file is, read from its first bytes: its type (png, jpeg, webp, gif — a name or a
// declared type is never trusted) and its width and height. Pure: bytes in, facts out.
import type { ImageType } from '../../shared/api/attachments.js';

export interface ImageFacts {
  type: ImageType;
  width: number;
  height: number;
}

export const EXTENSIONS: Record<ImageType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) => prefix.every((b, i) => bytes[at + i] === b);
const ascii = (bytes: Uint8Array, at: number, text: string) =>
  startsWith(
    bytes,
    [...text].map((c) => c.charCodeAt(0)),
    at,
  );

/** The image type its magic bytes say, or null for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  return null;
}

/** Type and dimensions, or null when the bytes are no image of a taken type (or its header is cut). */
export function imageFacts(bytes: Uint8Array): ImageFacts | null {
  const type = sniffImageType(bytes);
  if (!type) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = (() => {
    try {
      switch (type) {
        case 'image/png':
          // IHDR is the first chunk: width and height, big-endian, at 16 and 20.
          return ascii(bytes, 12, 'IHDR') ? { width: view.getUint32(16), height: view.getUint32(20) } : null;
        case 'image/gif':
          return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
        case 'image/webp':
          return webpSize(bytes, view);
        case 'image/jpeg':
          return jpegSize(bytes, view);
      }
    } catch {
      return null; // a header cut short
    }
  })();
  if (!size || size.width < 1 || size.height < 1) return null;
  return { type, ...size };
}

function webpSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | null {
  if (ascii(bytes, 12, 'VP8X')) {
    const u24 = (at: number) => view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getUint8(at + 2) << 16);
    return { width: u24(24) + 1, height: u24(27) + 1 };
  }
  if (ascii(bytes, 12, 'VP8L')) {
    const b = (i: number) => view.getUint8(21 + i);
    return { width: 1 + (b(0) | ((b(1) & 0x3f) << 8)), height: 1 + (((b(1) & 0xc0) >> 6) | (b(2) << 2) | ((b(3) & 0x0f) << 10)) };
  }
  if (ascii(bytes, 12, 'VP8 ')) return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  return null;
}

/** The first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC) holds the dimensions. */
function jpegSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | null {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = view.getUint16(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    }
    at += 2 + length;
  }
  return null;
}
