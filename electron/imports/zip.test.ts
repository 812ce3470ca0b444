// Data exports arrive as zip archives (ChatGPT's and Claude's hold conversations.json beside the
// account, feedback and pictures): the archive imports as its conversations file would alone, and a
// damaged archive or a zip bomb is refused with words before anything is inflated.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ParseContext } from './context.js';
import { parseImport } from './detect.js';
import { ImportError } from './errors.js';
import { importableEntry, MAX_ZIP_RATIO } from './zip.js';

const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/imports/', import.meta.url));
const NOW = new Date('2026-12-01T00:00:00Z');
const fixture = (rel: string) => new Uint8Array(fs.readFileSync(path.join(FIXTURES, rel)));
const zip = (files: Zippable) => Buffer.from(zipSync(files, { level: 6 }));
const parse = (buf: Buffer, name: string) => parseImport(buf, name, { now: NOW });

function refusal(buf: Buffer, name = 'export.zip'): ImportError {
  try {
    parse(buf, name);
  } catch (err) {
    expect(err).toBeInstanceOf(ImportError);
    return err as ImportError;
  }
  throw new Error(`${name} was accepted`);
}

describe('a zip archive', () => {
  it("imports ChatGPT's data export as its conversations.json alone, pictures and other files left unread", () => {
    const archive = zip({
      'conversations.json': fixture('chatgpt/librechat-chatgpt-export.json'),
      'user.json': new TextEncoder().encode('{"id":"user-1","email":"someone@example.com"}'),
      'message_feedback.json': new TextEncoder().encode('[]'),
      'chat.html': new TextEncoder().encode('<html><body>…</body></html>'),
      'file-6y9fAbC.webp': new Uint8Array(4096).fill(7),
    });
    const alone = parse(Buffer.from(fixture('chatgpt/librechat-chatgpt-export.json')), 'conversations.json');
    const inZip = parse(archive, 'chatgpt-export.zip');
    expect(inZip).toEqual(alone);
    expect(inZip.format).toBe('chatgpt');
  });

  it("imports Claude's export from its folder inside the archive, and the only chat of an archive that holds one", () => {
    const claude = zip({
      'data-2025-06-21/conversations.json': fixture('claude/openwebui-importer-claude_example.redacted.json'),
      'data-2025-06-21/users.json': new TextEncoder().encode('[]'),
      'data-2025-06-21/projects.json': new TextEncoder().encode('[]'),
      '__MACOSX/data-2025-06-21/._conversations.json': new Uint8Array(16),
    });
    expect(parse(claude, 'claude.zip')).toEqual(parse(Buffer.from(fixture('claude/openwebui-importer-claude_example.redacted.json')), 'conversations.json'));

    const tavern = zip({ 'chats/Seraphina.jsonl': fixture('sillytavern/st-2025-Seraphina-user-chat.jsonl'), 'notes/': new Uint8Array(0) });
    expect(parse(tavern, 'backup.zip').format).toBe('sillytavern');
  });

  it('refuses a cut-off archive, a damaged entry and a nested archive, in words', () => {
    const archive = zip({ 'conversations.json': fixture('chatgpt/openwebui-importer-gpt_example.json') });
    const cut = refusal(archive.subarray(0, Math.floor(archive.length * 0.6)));
    expect(cut.code).toBe('broken_zip');
    expect(cut.message).toMatch(/^export\.zip: the zip archive is damaged or cut off/);

    // Flip bytes in the middle of the compressed data: the directory still reads, the entry does not.
    const damaged = Buffer.from(archive);
    for (let i = 60; i < 90; i++) damaged[i] = damaged[i]! ^ 0xff;
    expect(refusal(damaged).code).toMatch(/broken_zip|broken_json|wrong_shape/);

    const nested = zip({ 'inner.zip': new Uint8Array(archive) });
    expect(refusal(nested).message).toMatch(/holds no conversations\.json|zip archive inside/);
  });

  it('refuses a zip bomb from what its directory claims, before inflating anything', () => {
    // 8 MB of zeros deflate to a few kilobytes: a ratio no chat export has.
    const bomb = zip({ 'conversations.json': new Uint8Array(8 * 1024 * 1024) });
    expect(bomb.length * MAX_ZIP_RATIO).toBeLessThan(8 * 1024 * 1024);
    const err = refusal(bomb);
    expect(err.code).toBe('broken_zip');
    expect(err.message).toMatch(/more than 200 times its size/);

    // An entry over the size limit is refused by its declared size alone.
    const big = zip({ 'conversations.json': fixture('chatgpt/librechat-chatgpt-export.json') });
    expect(() => importableEntry(big, new ParseContext('big.zip'), 100_000)).toThrow(/unpacked; files up to/);
  });

  it('asks for one file at a time when several chats and no conversations.json are inside, and names what it holds otherwise', () => {
    const several = zip({
      'a.jsonl': fixture('sillytavern/st-2023-default-Aqua.jsonl'),
      'b.jsonl': fixture('sillytavern/st-2025-Seraphina-user-chat.jsonl'),
    });
    expect(refusal(several).message).toMatch(/several files that could be chats \(a\.jsonl, b\.jsonl…\); open it and import them one at a time/);
    const nothing = zip({ 'readme.txt': new TextEncoder().encode('hello') });
    expect(refusal(nothing).message).toMatch(/holds no conversations\.json, chat or character card \(it holds readme\.txt\)/);
  });
});
