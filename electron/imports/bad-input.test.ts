// Files that cannot be imported give one ImportError naming the file and what is wrong — never a
// crash, never a half result. The damaged files are real fixtures cut, flipped or mixed up.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkImportSize, MAX_CARD_BYTES, MAX_IMPORT_BYTES, parseImport } from './detect.js';
import { ImportError, type ImportErrorCode } from './errors.js';
import { crc32, PNG_SIGNATURE } from './parsers/png.js';

const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/imports/', import.meta.url));
const NOW = new Date('2026-12-01T00:00:00Z');
const fixture = (rel: string): Buffer => fs.readFileSync(path.join(FIXTURES, rel));

function refusal(buf: Buffer | string, name: string): ImportError {
  try {
    parseImport(typeof buf === 'string' ? Buffer.from(buf) : buf, name, { now: NOW });
  } catch (err) {
    expect(err).toBeInstanceOf(ImportError);
    return err as ImportError;
  }
  throw new Error(`${name} was accepted`);
}

function expectRefused(buf: Buffer | string, name: string, code: ImportErrorCode, words: RegExp): ImportError {
  const err = refusal(buf, name);
  expect({ code: err.code, file: err.file }).toEqual({ code, file: name });
  expect(err.message.startsWith(`${name}: `)).toBe(true);
  expect(err.message).toMatch(words);
  return err;
}

interface Chunk {
  type: string;
  data: Buffer;
  /** Where the chunk starts in the file (its length field). */
  at: number;
}
function chunksOf(png: Buffer): Chunk[] {
  const out: Chunk[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    out.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length), at });
    at += 12 + length;
  }
  return out;
}
function pngOf(chunks: { type: string; data: Buffer }[]): Buffer {
  return Buffer.concat([
    PNG_SIGNATURE,
    ...chunks.map(({ type, data }) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(data.length, 0);
      head.write(type, 4, 'latin1');
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
      return Buffer.concat([head, data, crc]);
    }),
  ]);
}
const textChunk = (keyword: string, text: string): { type: string; data: Buffer } => ({ type: 'tEXt', data: Buffer.from(`${keyword}\0${text}`, 'latin1') });

describe('size', () => {
  it(`refuses a file over ${MAX_IMPORT_BYTES / 1024 / 1024} MB before reading it, saying both sizes`, () => {
    // Not filled: the size alone must refuse it (the pages are never touched).
    const big = Buffer.allocUnsafe(MAX_IMPORT_BYTES + 1);
    big.write('[', 0);
    expectRefused(big, 'conversations.json', 'too_large', /is 256 MB; files up to 256 MB can be imported/);
  });

  it('a 2 GB file is refused from its size on disk, before anyone reads it', () => {
    expect(() => checkImportSize(2 * 1024 ** 3, '/exports/conversations.json')).toThrow(
      expect.objectContaining({
        code: 'too_large',
        file: 'conversations.json',
        message: 'conversations.json: the file is 2048 MB; files up to 256 MB can be imported. Split the export or import the conversations file alone.',
      }),
    );
    expect(() => checkImportSize(MAX_IMPORT_BYTES, 'conversations.json')).not.toThrow();
  });

  it('refuses a card picture over the card limit', () => {
    const big = Buffer.allocUnsafe(MAX_CARD_BYTES + 1);
    PNG_SIGNATURE.copy(big, 0);
    expectRefused(big, 'huge.png', 'too_large', /character cards up to 32 MB/);
  });
});

describe('broken and wrong files', () => {
  it('a real Claude export cut in half is broken JSON, with the parser position', () => {
    const whole = fixture('claude/openwebui-importer-claude_example.redacted.json');
    expectRefused(whole.subarray(0, Math.floor(whole.length / 2)), 'conversations.json', 'broken_json', /not valid JSON \(.*\); it may have been cut off/);
  });

  it('a ChatGPT export cut anywhere is refused as broken JSON, never parsed halfway', () => {
    const whole = fixture('chatgpt/librechat-chatgpt-tree.branched.json');
    for (const cut of [1, 100, 5_000, whole.length - 2]) {
      expect(refusal(whole.subarray(0, cut), 'conversations.json').code).toBe('broken_json');
    }
  });

  it('a SillyTavern chat whose last line was cut names the line', () => {
    const whole = fixture('sillytavern/st-2025-Seraphina-user-chat.jsonl');
    expectRefused(whole.subarray(0, whole.length - 40), 'chat.jsonl', 'broken_json', /line 6: /);
  });

  it('empty files and empty lists', () => {
    expectRefused('', 'conversations.json', 'empty', /the file is empty/);
    expectRefused(' \n', 'conversations.json', 'empty', /the file is empty/);
    expectRefused('[]', 'conversations.json', 'empty', /no conversations in it/);
  });

  it('valid JSON of another shape lists what can be imported', () => {
    expectRefused('{"conversations": []}', 'export.json', 'wrong_shape', /not an export Anima knows\. Anima can import ChatGPT's conversations\.json/);
    expectRefused('[1, 2, 3]', 'export.json', 'wrong_shape', /not an export Anima knows/);
    expectRefused('[' + '['.repeat(100) + ']'.repeat(100) + ']', 'deep.json', 'wrong_shape', /not an export Anima knows/);
  });

  it('one item of the wrong shape refuses the whole file, naming the item', () => {
    const chatgpt = JSON.parse(fixture('chatgpt/librechat-chatgpt-export.json').toString('utf8')) as unknown[];
    expectRefused(JSON.stringify([chatgpt[0], { title: 'no mapping' }]), 'conversations.json', 'wrong_shape', /conversation 2 is not a ChatGPT conversation/);
    const claude = JSON.parse(fixture('claude/openwebui-importer-claude_thinking_example.synthetic.json').toString('utf8')) as { chat_messages: unknown[] }[];
    claude[0]!.chat_messages.push('not a message');
    expectRefused(JSON.stringify(claude), 'conversations.json', 'wrong_shape', /conversation 1, message 3 is not an object/);
    expectRefused(
      '{"user_name":"You","character_name":"Aqua"}\n{"name":"Aqua","is_user":false}',
      'chat.jsonl',
      'wrong_shape',
      /line 2 is not a SillyTavern message/,
    );
    expectRefused('{"a":1}\n{"b":2}', 'chat.jsonl', 'wrong_shape', /JSON Lines, but not a SillyTavern chat/);
  });

  it('a ChatGPT tree whose parent links loop is refused, not walked forever', () => {
    const conv = {
      id: 'c1',
      current_node: 'b',
      mapping: {
        a: {
          id: 'a',
          parent: 'b',
          children: ['b'],
          message: { id: 'a', author: { role: 'user' }, content: { content_type: 'text', parts: ['hi'] }, create_time: 1714585031 },
        },
        b: {
          id: 'b',
          parent: 'a',
          children: ['a'],
          message: { id: 'b', author: { role: 'assistant' }, content: { content_type: 'text', parts: ['hello'] }, create_time: 1714585032 },
        },
      },
    };
    expectRefused(JSON.stringify([conv]), 'conversations.json', 'wrong_shape', /loops back on itself/);
  });

  it('a zip, a PDF, or a file named .png that is not a picture', () => {
    expectRefused(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]), 'export.zip', 'broken_zip', /zip archive is damaged or cut off/);
    expectRefused('%PDF-1.7\n…', 'notes.pdf', 'unknown_format', /not a file Anima can import/);
    expectRefused(fixture('cards/tavern_kit-full_v2_card.synthetic.json'), 'card.png', 'card_corrupt', /not a PNG picture/);
  });
});

describe('duplicated ids', () => {
  it('the same ChatGPT conversation twice in one file', () => {
    const [one] = JSON.parse(fixture('chatgpt/librechat-chatgpt-tree.branched.json').toString('utf8')) as unknown[];
    expectRefused(
      JSON.stringify([one, one]),
      'conversations.json',
      'duplicate_id',
      /conversation id "d5dc5307-6807-41a0-8b04-4acee626eeb7" appears twice \(conversation 1 and conversation 2\)/,
    );
  });

  it('two Claude messages with one uuid', () => {
    const convs = JSON.parse(fixture('claude/openwebui-importer-claude_thinking_example.synthetic.json').toString('utf8')) as {
      chat_messages: { uuid: string }[];
    }[];
    convs[0]!.chat_messages[1]!.uuid = convs[0]!.chat_messages[0]!.uuid;
    expectRefused(JSON.stringify(convs), 'conversations.json', 'duplicate_id', /message id "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" appears twice/);
  });
});

describe('implausible dates', () => {
  it('1970 and the future are kept as no date, with one warning counting them; the messages stay', () => {
    const convs = JSON.parse(fixture('claude/openwebui-importer-claude_thinking_example.synthetic.json').toString('utf8')) as {
      created_at: string;
      chat_messages: { created_at: string }[];
    }[];
    convs[0]!.created_at = '1970-01-01T00:00:00Z';
    convs[0]!.chat_messages[0]!.created_at = '2031-05-01T10:00:00Z';
    const result = parseImport(Buffer.from(JSON.stringify(convs)), 'conversations.json', { now: NOW });
    expect(result.conversations[0]!.createdAt).toBeNull();
    expect(result.conversations[0]!.messages.map((m) => m.at)).toEqual([null, '2025-01-01T00:00:05.000Z']);
    expect(result.warnings).toEqual(['2 dates lay before 1990 or in the future (for example 2031-05-01T10:00:00.000Z) and were left empty.']);
  });

  it('ChatGPT seconds read as milliseconds (a 1970 date) are caught the same way', () => {
    const [conv] = JSON.parse(fixture('chatgpt/librechat-chatgpt-tree.branched.json').toString('utf8')) as { create_time: number }[];
    conv!.create_time = 1714585031; // as if milliseconds: January 1970
    const result = parseImport(Buffer.from(JSON.stringify([{ ...conv, create_time: conv!.create_time / 1000 }])), 'conversations.json', { now: NOW });
    expect(result.conversations[0]!.createdAt).toBeNull();
    expect(result.warnings.at(-1)).toMatch(/^1 date lay before 1990/);
  });
});

describe('character card PNGs', () => {
  const skynet = fixture('cards/Skynet_v2.actually-v1.png');
  const chara = chunksOf(skynet).find((c) => c.type === 'tEXt')!;

  it('a flipped CRC byte of the card chunk', () => {
    const bad = Buffer.from(skynet);
    const crcAt = chara.at + 8 + chara.data.length;
    bad[crcAt] = bad[crcAt]! ^ 0xff;
    expectRefused(bad, 'Skynet.png', 'card_corrupt', /"chara" chunk is damaged \(its CRC check fails\)/);
  });

  it('a changed byte inside the card text (the CRC no longer matches)', () => {
    const bad = Buffer.from(skynet);
    const at = chara.at + 8 + 20;
    bad[at] = bad[at] === 0x41 ? 0x42 : 0x41;
    expectRefused(bad, 'Skynet.png', 'card_corrupt', /CRC check fails/);
  });

  it('a damaged picture chunk is a warning: the card text is intact', () => {
    const bad = Buffer.from(skynet);
    const idat = chunksOf(skynet).find((c) => c.type === 'IDAT')!;
    const crcAt = idat.at + 8 + idat.data.length;
    bad[crcAt] = bad[crcAt]! ^ 0x01;
    const result = parseImport(bad, 'Skynet.png', { now: NOW });
    expect(result.card!.name).toBe('Skynet');
    expect(result.warnings).toEqual(['The picture itself is damaged (IDAT chunk CRC); the card text is intact.']);
  });

  it('a picture cut off in its image data, before the card chunks', () => {
    const seraphina = fixture('cards/st-default_Seraphina.v2+v3.png');
    expectRefused(seraphina.subarray(0, 300_000), 'Seraphina.png', 'card_corrupt', /cut off before its end, and no character card was found/);
  });

  it('a plain PNG with no card chunk', () => {
    const plain = pngOf(chunksOf(skynet).filter((c) => c.type !== 'tEXt'));
    expectRefused(plain, 'photo.png', 'card_missing', /no character card \(no "chara" or "ccv3" text chunk\)/);
  });

  it('a card chunk (with a right CRC) that is not base64 JSON', () => {
    const rest = chunksOf(skynet).filter((c) => c.type !== 'tEXt' && c.type !== 'IEND');
    expectRefused(
      pngOf([...rest, textChunk('chara', 'this is not base64!'), { type: 'IEND', data: Buffer.alloc(0) }]),
      'x.png',
      'card_corrupt',
      /not base64 text/,
    );
    const notJson = Buffer.from('{"name": "Skynet", "description": ').toString('base64');
    expectRefused(pngOf([...rest, textChunk('chara', notJson), { type: 'IEND', data: Buffer.alloc(0) }]), 'x.png', 'card_corrupt', /not valid JSON/);
    const notCard = Buffer.from('{"hello": "world"}').toString('base64');
    expectRefused(
      pngOf([...rest, textChunk('chara', notCard), { type: 'IEND', data: Buffer.alloc(0) }]),
      'x.png',
      'wrong_shape',
      /neither a "spec" nor the name and description/,
    );
  });
});

describe('no crash on damaged bytes', () => {
  // A seeded byte-flipper: every fixture with a few bytes changed either parses or is refused with an ImportError.
  let seed = 20261205;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const files = [
    'chatgpt/librechat-chatgpt-tree.branched.json',
    'claude/echomine-tool_messages.synthetic.json',
    'sillytavern/st-2025-Seraphina-user-chat.jsonl',
    'cards/Skynet_v2.actually-v1.png',
    'other/librechat-export.branched.json',
  ];
  it.each(files)('%s with random bytes changed', (rel) => {
    const original = fixture(rel);
    let refused = 0;
    for (let round = 0; round < 60; round++) {
      const bad = Buffer.from(original);
      for (let i = 0; i < 3; i++) bad[random(bad.length)] = random(256);
      try {
        parseImport(bad, path.basename(rel), { now: NOW });
      } catch (err) {
        expect(err).toBeInstanceOf(ImportError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});
