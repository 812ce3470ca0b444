// A small PNG chunk reader: enough to find a character card's text chunk. Every chunk's CRC-32 is
// checked; a card chunk that fails it, or a file cut off inside a chunk, is a damaged card.
import { inflateSync } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngTextChunk {
  type: 'tEXt' | 'zTXt' | 'iTXt';
  keyword: string;
  /** The text (Latin-1 for tEXt/zTXt as the PNG spec says, UTF-8 for iTXt); null when it could not be read. */
  text: string | null;
  /** False when the chunk's CRC does not match its bytes. */
  crcOk: boolean;
}

export interface PngScan {
  texts: PngTextChunk[];
  /** Chunks other than text whose CRC failed (the image itself is damaged). */
  damaged: string[];
  /** Set when the file ends inside a chunk or before IEND. */
  truncated: boolean;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO-HDLC, as PNG and zip use). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function isPng(buf: Buffer): boolean {
  return buf.length >= 8 && buf.subarray(0, 8).equals(PNG_SIGNATURE);
}

/** How much a compressed text chunk may inflate to (a card is text; this stops a zip-bomb chunk). */
const MAX_INFLATED = 32 * 1024 * 1024;

export function scanPng(buf: Buffer): PngScan {
  const scan: PngScan = { texts: [], damaged: [], truncated: false };
  let at = 8;
  while (true) {
    if (at + 12 > buf.length) {
      scan.truncated = true;
      break;
    }
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    if (at + 12 + length > buf.length) {
      scan.truncated = true;
      break;
    }
    const data = buf.subarray(at + 8, at + 8 + length);
    const crcOk = crc32(buf.subarray(at + 4, at + 8 + length)) === buf.readUInt32BE(at + 8 + length);
    at += 12 + length;
    if (type === 'tEXt' || type === 'zTXt' || type === 'iTXt') {
      scan.texts.push(readText(type, data, crcOk));
    } else if (!crcOk) {
      scan.damaged.push(type);
    }
    if (type === 'IEND') break;
  }
  return scan;
}

function readText(type: 'tEXt' | 'zTXt' | 'iTXt', data: Buffer, crcOk: boolean): PngTextChunk {
  const nul = data.indexOf(0);
  if (nul < 0) return { type, keyword: data.toString('latin1'), text: null, crcOk };
  const keyword = data.toString('latin1', 0, nul);
  try {
    if (type === 'tEXt') return { type, keyword, text: data.toString('latin1', nul + 1), crcOk };
    if (type === 'zTXt') return { type, keyword, text: inflateSync(data.subarray(nul + 2), { maxOutputLength: MAX_INFLATED }).toString('latin1'), crcOk };
    // iTXt: keyword\0 compressed-flag method language\0 translated-keyword\0 text
    const compressed = data[nul + 1] === 1;
    const langEnd = data.indexOf(0, nul + 3);
    const transEnd = langEnd < 0 ? -1 : data.indexOf(0, langEnd + 1);
    if (transEnd < 0) return { type, keyword, text: null, crcOk };
    const body = data.subarray(transEnd + 1);
    return { type, keyword, text: (compressed ? inflateSync(body, { maxOutputLength: MAX_INFLATED }) : body).toString('utf8'), crcOk };
  } catch {
    return { type, keyword, text: null, crcOk };
  }
}
