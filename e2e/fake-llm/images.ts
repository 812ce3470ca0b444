// Real image files for the tests of attached images: a PNG of any size drawn in one colour (a valid
// file: signature, IHDR, deflated IDAT, IEND, each with its CRC), and what a request carried of them.
import zlib from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A width × height RGB PNG in one colour. */
export function solidPng(width: number, height: number, rgb: [number, number, number] = [200, 120, 60]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The base64 image data a recorded request carried, in each protocol's shape (OpenAI data URLs, Anthropic blocks, Ollama's list). */
export function imagesSent(body: unknown): string[] {
  const messages = (body as { messages?: { content?: unknown; images?: unknown }[] }).messages ?? [];
  const found: string[] = [];
  for (const message of messages) {
    if (Array.isArray(message.images)) found.push(...message.images.map(String));
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Record<string, unknown>[]) {
      const url = (part.image_url as { url?: string } | undefined)?.url;
      if (part.type === 'image_url' && url) found.push(url.replace(/^data:[^;]+;base64,/, ''));
      const source = part.source as { type?: string; data?: string } | undefined;
      if (part.type === 'image' && source?.type === 'base64' && source.data) found.push(source.data);
    }
  }
  return found;
}
