// What an import file is, and its parse: bytes and a file name in, a ParseResult or one ImportError
// out. A zip archive (ChatGPT's and Claude's data exports) is opened here: its conversations.json, or
// its only chat or card, is parsed as if it had been given alone (zip.ts).
//
// Choices, for the person's sake:
// - Dates before 1990 or in the future are kept as "no date" with one warning counting them, so a
//   single bad timestamp does not refuse a whole history (context.ts).
// - Duplicated conversation or message ids refuse the file: a merged or repeated export would
//   otherwise import the same history twice.
// - Empty messages and conversations with no text are skipped and counted in the warnings.
// - Anima's own archive (the zip `anima export` writes, or its anima.json alone) is read whole by
//   anima-archive.ts: its format and schema version, every section's rows and references.
import { TooDeeplyNested } from '../../shared/text.js';
import { animaJsonInZip, avatarsInZip, imagesInZip, isAnimaArchiveJson, readAnimaArchive } from './anima-archive.js';
import { ParseContext, isRecord, megabytes, type ParseOptions } from './context.js';
import { ImportError } from './errors.js';
import { cardFrom, isCard, parseCardPng } from './parsers/card.js';
import { isChatGptConversation, parseChatGpt } from './parsers/chatgpt.js';
import { isClaudeConversation, parseClaude } from './parsers/claude.js';
import { isLibreChatExport, parseLibreChat } from './parsers/librechat.js';
import { isOpenWebUiChat, parseOpenWebUi } from './parsers/openwebui.js';
import { isPng } from './parsers/png.js';
import { isSillyTavernLine, jsonLines, parseSillyTavern } from './parsers/sillytavern.js';
import type { ImportFormat, ParseResult } from './types.js';
import { importableEntry, isZip } from './zip.js';

/**
 * The largest file parseImport reads. A whole conversations.json is parsed in memory (V8 holds a
 * string of at most ~512 MiB, and the parsed tree takes several times the file's size), so a larger
 * file is refused with its size before any of it is read as text. Measured on a generated ChatGPT
 * export (2 cores shared with other work, so the times vary by 3×): 66 MB / 100k messages parsed in
 * 1.8–6.7 s at 430 MB RSS; 231 MB / 350k messages in 34 s at 1.2 GB RSS.
 */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;
/** The largest character card PNG: cards are a picture and a few kilobytes of text. */
export const MAX_CARD_BYTES = 32 * 1024 * 1024;

const KNOWN =
  "ChatGPT's conversations.json, Claude's conversations.json, a SillyTavern chat (.jsonl), a character card (.png or .json), an Open WebUI or a LibreChat export, or Anima's own archive";

/** What the file is, from its bytes (and its name for .jsonl), with the JSON it holds; null when it is none of the known formats. A peek: it throws nothing and checks no more than the first item's shape (parseImport checks everything). */
export function detectFormat(buf: Buffer, name: string): { format: ImportFormat; parsed: unknown } | null {
  if (isPng(buf)) return { format: 'card', parsed: null };
  if (isZip(buf)) {
    try {
      if (animaJsonInZip(buf, new ParseContext(name), MAX_IMPORT_BYTES)) return { format: 'anima', parsed: null };
      const inner = importableEntry(buf, new ParseContext(name), MAX_IMPORT_BYTES);
      return isZip(inner.bytes) ? null : detectFormat(inner.bytes, inner.name);
    } catch {
      return null;
    }
  }
  const text = decode(buf);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const lines = jsonLines(text);
    if (lines && isSillyTavernLine(lines[0]!)) return { format: 'sillytavern', parsed: lines };
    return null;
  }
  const format = formatOf(parsed, name);
  return format ? { format, parsed } : null;
}

function formatOf(parsed: unknown, name: string): ImportFormat | null {
  if (isAnimaArchiveJson(parsed)) return 'anima';
  const first: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
  // A ChatGPT export may open with a conversation listed without messages (no mapping).
  if (Array.isArray(parsed) ? parsed.some(isChatGptConversation) : isChatGptConversation(parsed)) return 'chatgpt';
  if (isClaudeConversation(first)) return 'claude';
  if (isCard(first) && !Array.isArray(parsed)) return 'card';
  if (isOpenWebUiChat(first)) return 'openwebui';
  if (isLibreChatExport(parsed)) return 'librechat';
  // A one-line .jsonl chat (a header and nothing else, or a single message) parses as plain JSON.
  if (/\.jsonl$/i.test(name) && isRecord(parsed) && isSillyTavernLine(parsed)) return 'sillytavern';
  return null;
}

/**
 * The file's text: UTF-8 (or UTF-16 when it starts with that byte-order mark, as some Windows tools
 * save JSON), the mark dropped. Bytes that are not UTF-8 become U+FFFD, and `warn` is told how many.
 */
function decode(buf: Buffer, warn?: (message: string) => void): string {
  if (buf[0] === 0xff && buf[1] === 0xfe) return buf.toString('utf16le', 2);
  if (buf[0] === 0xfe && buf[1] === 0xff) return Buffer.from(buf.subarray(2)).swap16().toString('utf16le');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    text = buf.toString('utf8');
    const replaced = text.match(/\uFFFD/g)?.length ?? 0;
    warn?.(
      `The file is not entirely UTF-8 text: ${replaced} character${replaced === 1 ? '' : 's'} could not be read and ${replaced === 1 ? 'shows' : 'show'} as �.`,
    );
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Parses one import file. Throws ImportError (never anything else) when the file cannot be imported. */
export function parseImport(buf: Buffer, name: string, options: ParseOptions = {}): ParseResult {
  const file = name.split(/[\\/]/).pop() || name;
  const ctx = new ParseContext(file, options);
  try {
    return parse(buf, file, ctx);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    if (err instanceof TooDeeplyNested) throw new ImportError('wrong_shape', file, `${file}: ${err.message}`);
    throw new ImportError('wrong_shape', file, `${file} could not be read: ${(err as Error).message}`);
  }
}

/**
 * Throws too_large for a file over MAX_IMPORT_BYTES. Call it with the size on disk before reading a
 * file into memory (a 2 GB file must be refused, not read); parseImport checks it again.
 */
export function checkImportSize(bytes: number, name: string): void {
  const file = name.split(/[\\/]/).pop() || name;
  if (bytes > MAX_IMPORT_BYTES) {
    throw new ImportError(
      'too_large',
      file,
      `${file}: the file is ${megabytes(bytes)}; files up to ${megabytes(MAX_IMPORT_BYTES)} can be imported. Split the export or import the conversations file alone.`,
    );
  }
}

function parse(buf: Buffer, file: string, ctx: ParseContext, insideZip = false): ParseResult {
  checkImportSize(buf.length, file);
  if (isZip(buf)) {
    if (insideZip) ctx.fail('unknown_format', `${file} is a zip archive inside the zip archive; open them and import the conversations file inside.`);
    const anima = animaJsonInZip(buf, ctx, MAX_IMPORT_BYTES);
    if (anima) {
      const result = parse(anima, 'anima.json', ctx, true);
      // The images the archive's messages carry come along, stored once the rows are.
      if (result.archive) {
        result.archive.images = imagesInZip(buf);
        result.archive.avatars = avatarsInZip(buf);
      }
      return result;
    }
    const inner = importableEntry(buf, ctx, MAX_IMPORT_BYTES);
    return parse(inner.bytes, inner.name, ctx, true);
  }
  if (buf.length === 0) ctx.fail('empty', 'the file is empty.');
  if (isPng(buf)) {
    if (buf.length > MAX_CARD_BYTES)
      ctx.fail('too_large', `the picture is ${megabytes(buf.length)}; character cards up to ${megabytes(MAX_CARD_BYTES)} can be imported.`);
    const card = parseCardPng(buf, ctx);
    return { format: 'card', conversations: [], card, warnings: ctx.finish() };
  }
  if (/\.png$/i.test(file)) ctx.fail('card_corrupt', 'the file is named .png but is not a PNG picture (its first bytes are not a PNG signature).');

  const text = decode(buf, (m) => ctx.warn(m));
  const start = /\S/.exec(text)?.[0];
  if (start === undefined) ctx.fail('empty', 'the file is empty.');
  if (start !== '{' && start !== '[')
    ctx.fail('unknown_format', `this is not a file Anima can import (it is not JSON, JSON Lines or a PNG card). Anima can import ${KNOWN}.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const lines = jsonLines(text);
    if (lines) {
      if (!isSillyTavernLine(lines[0]!)) ctx.fail('wrong_shape', `the file is JSON Lines, but not a SillyTavern chat. Anima can import ${KNOWN}.`);
      return finish('sillytavern', parseSillyTavern(lines, file, ctx), ctx);
    }
    if (/\.jsonl$/i.test(file))
      ctx.fail('broken_json', `a line of this chat is not valid JSON (${brokenLine(text)}); the file may have been cut off or edited by hand.`);
    ctx.fail('broken_json', `the file is not valid JSON (${(err as Error).message}); it may have been cut off while downloading or copying.`);
  }
  if (Array.isArray(parsed) && parsed.length === 0) ctx.fail('empty', 'the file holds an empty list: there are no conversations in it.');
  const format = formatOf(parsed, file);
  switch (format) {
    case 'chatgpt':
      return finish(format, parseChatGpt(parsed, ctx), ctx);
    case 'claude':
      return finish(format, parseClaude(parsed, ctx), ctx);
    case 'openwebui':
      return finish(format, parseOpenWebUi(parsed, ctx), ctx);
    case 'librechat':
      return finish(format, parseLibreChat(parsed, ctx), ctx);
    case 'sillytavern':
      return finish(format, parseSillyTavern([parsed as Record<string, unknown>], file, ctx), ctx);
    case 'card':
      return { format, conversations: [], card: cardFrom(parsed, ctx), warnings: ctx.finish() };
    case 'anima': {
      const archive = readAnimaArchive(parsed, ctx);
      return { format, conversations: [], archive, warnings: ctx.finish() };
    }
    case null:
      return ctx.fail('wrong_shape', `the file is valid JSON but not an export Anima knows. Anima can import ${KNOWN}.`);
  }
}

function finish(format: ImportFormat, conversations: ParseResult['conversations'], ctx: ParseContext): ParseResult {
  if (conversations.length === 0) ctx.warn('No conversation in this file had any text to import.');
  return { format, conversations, warnings: ctx.finish() };
}

/** "line N: <parser message>" for the first line of a .jsonl text that is not JSON. */
function brokenLine(text: string): string {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === '') continue;
    try {
      JSON.parse(lines[i]!);
    } catch (err) {
      return `line ${i + 1}: ${(err as Error).message}`;
    }
  }
  return 'a line is not a JSON object';
}
