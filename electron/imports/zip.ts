// The one file worth importing inside a zip: ChatGPT and Claude hand their data export over as a zip
// holding conversations.json beside other files (the account, feedback, pictures). Only the chosen
// entry is ever inflated, and only after its declared size and compression ratio pass the limits, so
// a zip bomb or a cut-off download is refused before it costs memory.
import { unzipSync, type UnzipFileInfo } from 'fflate';
import { megabytes, type ParseContext } from './context.js';

export const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * The largest ratio of inflated to stored size an entry may declare. Chat exports are repetitive JSON
 * (measured: the LibreChat ChatGPT sample deflates 170,600 → 20,813 bytes, 8.2×; the redacted Claude
 * export 430,516 → 33,377, 12.9×); a zip bomb declares hundreds to millions.
 */
export const MAX_ZIP_RATIO = 200;

const IMPORTABLE = /\.(json|jsonl|png)$/i;

export function isZip(buf: Buffer): boolean {
  return buf.subarray(0, 4).equals(ZIP_SIGNATURE);
}

/** The entry to import and its bytes. Fails the parse (ImportError) with words when there is none, or it is unsafe. */
export function importableEntry(buf: Buffer, ctx: ParseContext, maxBytes: number): { name: string; bytes: Buffer } {
  const entries: UnzipFileInfo[] = [];
  try {
    // A first pass reads the directory only: the filter declines every entry, so nothing is inflated.
    unzipSync(buf, {
      filter: (info) => {
        entries.push(info);
        return false;
      },
    });
  } catch (err) {
    return ctx.fail('broken_zip', `the zip archive is damaged or cut off (${(err as Error).message}); download or copy it again.`);
  }
  const files = entries.filter((e) => !e.name.endsWith('/') && !/(^|\/)(__MACOSX|\.)/.test(e.name));
  const chosen = pick(files);
  if (!chosen) {
    const listed = files
      .slice(0, 5)
      .map((e) => e.name)
      .join(', ');
    return ctx.fail(
      'unknown_format',
      files.filter((e) => IMPORTABLE.test(e.name)).length > 1
        ? `the zip archive holds several files that could be chats (${listed}…); open it and import them one at a time.`
        : `the zip archive holds no conversations.json, chat or character card${listed ? ` (it holds ${listed}${files.length > 5 ? '…' : ''})` : ''}.`,
    );
  }
  if (chosen.originalSize > maxBytes) {
    return ctx.fail(
      'too_large',
      `${chosen.name} in the zip archive is ${megabytes(chosen.originalSize)} unpacked; files up to ${megabytes(maxBytes)} can be imported.`,
    );
  }
  if (chosen.originalSize > MAX_ZIP_RATIO * Math.max(chosen.size, 1) && chosen.originalSize > 1024 * 1024) {
    return ctx.fail(
      'broken_zip',
      `${chosen.name} in the zip archive claims to unpack to ${megabytes(chosen.originalSize)} from ${megabytes(chosen.size)}: more than ${MAX_ZIP_RATIO} times its size, which no chat export does. It was not opened.`,
    );
  }
  let inflated: Uint8Array | undefined;
  try {
    inflated = unzipSync(buf, { filter: (info) => info.name === chosen.name })[chosen.name];
  } catch (err) {
    return ctx.fail('broken_zip', `${chosen.name} in the zip archive is damaged (${(err as Error).message}); download or copy it again.`);
  }
  // The directory's size is a claim; what inflated is the fact.
  if (!inflated || inflated.length !== chosen.originalSize) {
    return ctx.fail('broken_zip', `${chosen.name} in the zip archive did not unpack to the size the archive states; it is damaged.`);
  }
  return { name: chosen.name, bytes: Buffer.from(inflated.buffer, inflated.byteOffset, inflated.byteLength) };
}

/** conversations.json (the shallowest one) when there is one; otherwise the only importable file. */
function pick(files: UnzipFileInfo[]): UnzipFileInfo | undefined {
  const depth = (name: string) => name.split('/').length;
  const conversations = files.filter((e) => /(^|\/)conversations\.json$/i.test(e.name)).sort((a, b) => depth(a.name) - depth(b.name));
  if (conversations[0]) return conversations[0];
  const importable = files.filter((e) => IMPORTABLE.test(e.name));
  return importable.length === 1 ? importable[0] : undefined;
}
