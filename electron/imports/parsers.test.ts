// The cases the shared fixtures do not have, in the same real shapes: several swipes, a chat with no
// generation times, a ChatGPT tree without current_node, unstorable text, V1 macros, PNG text chunks.
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseImport } from './detect.js';
import { crc32, PNG_SIGNATURE } from './parsers/png.js';
import { parseWallClock } from './parsers/sillytavern.js';
import type { ParseResult } from './types.js';

const NOW = new Date('2026-12-01T00:00:00Z');
const parse = (text: string, name: string): ParseResult => parseImport(Buffer.from(text), name, { now: NOW });
const jsonl = (...lines: unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n');

describe('SillyTavern', () => {
  const header = {
    user_name: 'slow',
    character_name: 'Seraphina',
    create_date: '2025-03-25@21h19m28s',
    chat_metadata: { chat_id_hash: 130419263489072, tainted: true },
  };
  const reply = (fields: Record<string, unknown>) => ({
    extra: { api: 'custom', model: 'deepseek-ai/DeepSeek-V3' },
    name: 'Seraphina',
    is_user: false,
    send_date: 'March 25, 2025 9:19pm',
    gen_started: '2025-03-25T13:19:34.754Z',
    gen_finished: '2025-03-25T13:20:01.464Z',
    ...fields,
  });

  it('three swipes, the second chosen: mes is the text, the other two are versions in swipe order', () => {
    const [c] = parse(
      jsonl(
        header,
        {
          name: 'slow',
          is_user: true,
          is_system: false,
          send_date: 'March 25, 2025 9:19pm',
          mes: '你好',
          extra: { isSmallSys: false },
          force_avatar: 'User Avatars/user-default.png',
        },
        reply({ mes: 'Second.', swipe_id: 1, swipes: ['First.', 'Second.', 'Third.'], swipe_info: [{}, { extra: { model: 'grok-3-mini-beta' } }, {}] }),
      ),
      'Seraphina - 2023-5-12 @21h 32m 29s 224ms.jsonl',
    ).conversations;
    expect(c!.messages[1]).toMatchObject({ role: 'assistant', text: 'Second.', versions: ['First.', 'Third.'], model: 'deepseek-ai/DeepSeek-V3' });
  });

  it('mes that drifted from swipes[swipe_id]: mes wins, every other non-empty swipe is a version', () => {
    const [c] = parse(jsonl(header, reply({ mes: 'Edited by hand.', swipe_id: 0, swipes: ['Original.', ''] })), 'chat.jsonl').conversations;
    expect(c!.messages[0]).toMatchObject({ text: 'Edited by hand.', versions: ['Original.'] });
  });

  it("zone-less dates with no generation times are read as this machine's local time, and the warning says so", () => {
    const result = parse(jsonl(header, { name: 'slow', is_user: true, send_date: 'March 25, 2025 9:19pm', mes: 'hi' }), 'chat.jsonl');
    expect(result.conversations[0]!.messages[0]!.at).toBe(new Date(2025, 2, 25, 21, 19).toISOString());
    expect(result.conversations[0]!.createdAt).toBe(new Date(2025, 2, 25, 21, 19, 28).toISOString());
    expect(result.warnings).toEqual(["The dates in this chat have no time zone; they were read as this computer's local time."]);
  });

  it('a writer west of UTC (gen_started the next day in UTC)', () => {
    const result = parse(jsonl(header, reply({ send_date: 'March 25, 2025 9:19pm', gen_started: '2025-03-26T04:19:40.000Z', mes: 'Hello.' })), 'chat.jsonl');
    expect(result.conversations[0]!.messages[0]!.at).toBe('2025-03-26T04:19:00.000Z');
    expect(result.warnings).toEqual(['The dates in this chat have no time zone; they were read as UTC-07:00, the zone the generation times in the file show.']);
  });

  it('SillyTavern system notices are not the conversation', () => {
    const result = parse(
      jsonl(
        header,
        {
          name: 'SillyTavern System',
          is_user: false,
          is_system: true,
          send_date: 1674563371558,
          mes: 'Hello there! Please select the help below.',
          extra: { type: 'help' },
        },
        { name: 'slow', is_user: true, send_date: 1674563371600, mes: 'hi' },
      ),
      'chat.jsonl',
    );
    expect(result.conversations[0]!.messages.map((m) => m.text)).toEqual(['hi']);
    expect(result.warnings).toContain('1 SillyTavern system notice was skipped.');
  });

  it('a date in no known form is left empty, and the warning shows it', () => {
    const result = parse(jsonl(header, { name: 'slow', is_user: true, send_date: 'yesterday-ish', mes: 'hi' }), 'chat.jsonl');
    expect(result.conversations[0]!.messages[0]!.at).toBeNull();
    expect(result.conversations[0]!.sourceId).toBe('130419263489072');
    expect(result.warnings).toContain('1 date could not be read (for example "yesterday-ish") and was left empty.');
  });

  it('wall-clock forms: locale (12 am/pm), the header form, the card form', () => {
    expect(parseWallClock('March 25, 2025 12:05am')).toEqual({ y: 2025, mo: 2, d: 25, h: 0, mi: 5, s: 0 });
    expect(parseWallClock('Dec 1, 2024 12:30pm')).toEqual({ y: 2024, mo: 11, d: 1, h: 12, mi: 30, s: 0 });
    expect(parseWallClock('2025-03-25@21h19m28s')).toEqual({ y: 2025, mo: 2, d: 25, h: 21, mi: 19, s: 28 });
    expect(parseWallClock('2023-5-12 @21h 32m 29s 228ms')).toEqual({ y: 2023, mo: 4, d: 12, h: 21, mi: 32, s: 29 });
    expect(parseWallClock('Smarch 1, 2025 1:00pm')).toBeNull();
  });
});

describe('ChatGPT', () => {
  const node = (
    id: string,
    parent: string | null,
    children: string[],
    role: string | null,
    parts: unknown[],
    t: number | null,
    extra: Record<string, unknown> = {},
  ) => ({
    id,
    parent,
    children,
    message:
      role === null
        ? null
        : {
            id,
            author: { role, name: null, metadata: {} },
            create_time: t,
            content: { content_type: 'text', parts },
            status: 'finished_successfully',
            metadata: {},
            recipient: 'all',
            ...extra,
          },
  });

  it('no current_node: the newest leaf is followed, and the warning says so', () => {
    const conv = {
      title: 't',
      create_time: 1714585031.1,
      update_time: 1714585060.5,
      conversation_id: 'c1',
      mapping: {
        root: node('root', null, ['q'], null, [], null),
        q: node('q', 'root', ['a1', 'a2'], 'user', ['question'], 1714585031.15),
        a1: node('a1', 'q', [], 'assistant', ['older answer'], 1714585040.1),
        a2: node('a2', 'q', [], 'assistant', ['newer answer'], 1714585050.1),
      },
    };
    const result = parse(JSON.stringify([conv]), 'conversations.json');
    expect(result.conversations[0]!.messages.map((m) => [m.text, m.versions])).toEqual([
      ['question', undefined],
      ['newer answer', ['older answer']],
    ]);
    expect(result.warnings).toEqual(['conversation 1: no current message is marked; the newest branch was followed.']);
  });

  it('a regenerated answer whose branch starts with a tool call: the other answer is a version (its own tool calls are not kept)', () => {
    const msg = (id: string, role: string, t: number, content: Record<string, unknown>, recipient = 'all') => ({
      id,
      author: { role, name: role === 'tool' ? 'browser' : null },
      create_time: t,
      content,
      metadata: {},
      recipient,
    });
    const text = (parts: string) => ({ content_type: 'text', parts: [parts] });
    const code = (call: string) => ({ content_type: 'code', language: 'unknown', text: call });
    const conv = {
      title: 'weather',
      create_time: 1704629915.7,
      update_time: 1704629999.1,
      conversation_id: 'c5',
      current_node: 'b3',
      mapping: {
        root: { id: 'root', parent: null, children: ['q'], message: null },
        q: { id: 'q', parent: 'root', children: ['a1', 'b1'], message: msg('q', 'user', 1704629915.8, text('Weather in Oslo?')) },
        a1: { id: 'a1', parent: 'q', children: ['a2'], message: msg('a1', 'assistant', 1704629920.1, code('search("oslo weather")'), 'browser') },
        a2: {
          id: 'a2',
          parent: 'a1',
          children: ['a3'],
          message: msg('a2', 'tool', 1704629921.1, { content_type: 'tether_browsing_display', result: 'rain', summary: null }),
        },
        a3: { id: 'a3', parent: 'a2', children: [], message: msg('a3', 'assistant', 1704629922.1, text('It rains in Oslo.')) },
        b1: { id: 'b1', parent: 'q', children: ['b2'], message: msg('b1', 'assistant', 1704629960.1, code('search("Oslo forecast")'), 'browser') },
        b2: {
          id: 'b2',
          parent: 'b1',
          children: ['b3'],
          message: msg('b2', 'tool', 1704629961.1, { content_type: 'tether_browsing_display', result: 'rain, 8C', summary: null }),
        },
        b3: { id: 'b3', parent: 'b2', children: [], message: msg('b3', 'assistant', 1704629962.1, text('Oslo: rain, 8°C.')) },
      },
    };
    const result = parse(JSON.stringify([conv]), 'conversations.json');
    const answer = result.conversations[0]!.messages[1]!;
    expect(answer).toMatchObject({
      text: 'Oslo: rain, 8°C.',
      versions: ['It rains in Oslo.'],
      notes: ['Tool call (browser): search("Oslo forecast")', 'Tool result (browser): rain, 8C'],
    });
    expect(result.warnings).toEqual([]);
  });

  it('tool traffic with no answer after it stays, as notes on an empty reply; newer cite markers are removed', () => {
    const conv = {
      title: 't',
      create_time: 1750537482.9,
      update_time: 1750537534.2,
      conversation_id: 'c2',
      current_node: 'r',
      mapping: {
        root: node('root', null, ['q'], null, [], null),
        q: node('q', 'root', ['call'], 'user', ['look it up'], 1750537483.1),
        call: {
          ...node('call', 'q', ['res'], 'assistant', [], 1750537484.1, { recipient: 'web.run' }),
          message: {
            id: 'call',
            author: { role: 'assistant' },
            create_time: 1750537484.1,
            content: { content_type: 'code', language: 'unknown', text: 'search("x")' },
            metadata: {},
            recipient: 'web.run',
          },
        },
        res: {
          id: 'res',
          parent: 'call',
          children: ['r'],
          message: {
            id: 'res',
            author: { role: 'tool', name: 'web.run' },
            create_time: 1750537485.1,
            content: { content_type: 'text', parts: ['results'] },
            metadata: {},
            recipient: 'all',
          },
        },
        r: node('r', 'res', [], 'assistant', ['It is so.\uE200cite\uE202turn0search0\uE201 Really【3†source】.'], 1750537486.1),
      },
    };
    const [c] = parse(JSON.stringify(conv), 'conversations.json').conversations;
    expect(c!.messages[1]).toMatchObject({
      role: 'assistant',
      text: 'It is so. Really.',
      notes: ['Tool call (web.run): search("x")', 'Tool result (web.run): results'],
    });
  });
});

describe('ChatGPT, newer exports', () => {
  it('a conversation listed with no mapping, or with only hidden nodes, is skipped and counted; reasoning nodes are not messages', () => {
    const conv = {
      title: 'with reasoning',
      create_time: 1750537482.9,
      update_time: 1750537534.2,
      conversation_id: 'c3',
      current_node: 'a',
      mapping: {
        root: { id: 'root', parent: null, children: ['q'], message: null },
        q: {
          id: 'q',
          parent: 'root',
          children: ['t'],
          message: {
            id: 'q',
            author: { role: 'user' },
            create_time: 1750537483.1,
            content: { content_type: 'text', parts: ['why?'] },
            metadata: {},
            recipient: 'all',
          },
        },
        t: {
          id: 't',
          parent: 'q',
          children: ['a'],
          message: {
            id: 't',
            author: { role: 'assistant' },
            create_time: 1750537484.1,
            content: { content_type: 'thoughts', thoughts: [{ summary: 'Thinking', content: 'hmm' }] },
            metadata: {},
            recipient: 'all',
          },
        },
        a: {
          id: 'a',
          parent: 't',
          children: [],
          message: {
            id: 'a',
            author: { role: 'assistant' },
            create_time: 1750537486.1,
            content: { content_type: 'text', parts: ['because.'] },
            metadata: {},
            recipient: 'all',
          },
        },
      },
    };
    const result = parse(
      JSON.stringify([
        { title: 'no messages', conversation_id: 'c4', id: 'c4', create_time: 1750537482.9, mapping: null },
        conv,
        {
          title: 'only hidden',
          conversation_id: 'c6',
          current_node: 'sys',
          mapping: {
            root: { id: 'root', parent: null, children: ['sys'], message: null },
            sys: {
              id: 'sys',
              parent: 'root',
              children: [],
              message: {
                id: 'sys',
                author: { role: 'system' },
                content: { content_type: 'text', parts: [''] },
                metadata: { is_visually_hidden_from_conversation: true },
              },
            },
          },
        },
      ]),
      'conversations.json',
    );
    expect(result.conversations).toHaveLength(1);
    expect(result.conversations[0]!.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'why?'],
      ['assistant', 'because.'],
    ]);
    expect(result.warnings).toEqual(['2 conversations without any messages were skipped.']);
  });
});

describe('Claude', () => {
  it('unstorable text (a NUL, a lone surrogate) is replaced where it enters; an older export with no blocks uses `text`', () => {
    const convs = [
      {
        uuid: 'c1',
        name: 'x',
        created_at: '2024-03-13T14:48:37.115821Z',
        updated_at: '2025-06-21T20:47:54.195022Z',
        account: { uuid: 'a' },
        chat_messages: [
          {
            uuid: 'm1',
            text: 'a\u0000b\ud800 ',
            content: [],
            sender: 'human',
            created_at: '2024-03-13T14:48:44.500345Z',
            updated_at: '2024-03-13T14:48:44.500345Z',
            attachments: [],
            files: [],
          },
        ],
      },
    ];
    const [c] = parse(JSON.stringify(convs), 'conversations.json').conversations;
    expect(c!.messages[0]).toEqual({ role: 'user', text: 'a\uFFFDb\uFFFD', at: '2024-03-13T14:48:44.500Z' });
  });
});

describe('character cards', () => {
  const v1 = {
    name: 'Mira',
    description: 'Mira is <BOT>, a lighthouse keeper.\r\nShe writes to {{User}} daily.',
    personality: 'calm',
    scenario: '{{char}} and <USER> share a lighthouse.',
    first_mes: 'Hello, <USER>.',
    mes_example: '',
  };

  it('V1 JSON: legacy <BOT>/<USER> and {{User}} macros, CRLF normalised', () => {
    const card = parse(JSON.stringify(v1), 'Mira.json').card!;
    expect(card).toMatchObject({
      spec: 'v1',
      name: 'Mira',
      greeting: 'Hello, you.',
      blocks: {
        identity: 'Mira is Mira, a lighthouse keeper.\nShe writes to you daily.',
        personality: 'calm',
        relationship: 'Mira and you share a lighthouse.',
      },
    });
  });

  const png = (chunks: [string, Buffer][]): Buffer =>
    Buffer.concat([
      PNG_SIGNATURE,
      ...[['IHDR', Buffer.alloc(13)] as [string, Buffer], ...chunks, ['IEND', Buffer.alloc(0)] as [string, Buffer]].map(([type, data]) => {
        const head = Buffer.alloc(8);
        head.writeUInt32BE(data.length, 0);
        head.write(type, 4, 'latin1');
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
        return Buffer.concat([head, data, crc]);
      }),
    ]);
  const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

  it('a card in a compressed zTXt chunk, and ccv3 preferred over chara whatever their order', () => {
    const v2 = { spec: 'chara_card_v2', spec_version: '2.0', data: { ...v1, name: 'Mira v2' } };
    const v3 = { spec: 'chara_card_v3', spec_version: '3.0', data: { ...v1, name: 'Mira v3' } };
    const ztxt = Buffer.concat([Buffer.from('chara\0\0', 'latin1'), deflateSync(Buffer.from(b64(v2), 'latin1'))]);
    expect(parseImport(png([['zTXt', ztxt]]), 'm.png').card!.name).toBe('Mira v2');
    const both = png([
      ['tEXt', Buffer.from(`ccv3\0${b64(v3)}`, 'latin1')],
      ['tEXt', Buffer.from(`chara\0${b64(v2)}`, 'latin1')],
    ]);
    expect(parseImport(both, 'm.png').card).toMatchObject({ name: 'Mira v3', spec: 'v3' });
  });

  it('a block longer than a self block holds is reported, not cut', () => {
    const long = 'x'.repeat(20_001);
    const result = parse(JSON.stringify({ ...v1, description: long }), 'long.json');
    expect(result.card!.blocks.identity).toHaveLength(20_001);
    expect(result.warnings).toEqual(["The card's identity text is 20,001 characters, more than the 20,000 a block holds; shorten it before saving."]);
  });

  it('CRC-32 is the PNG one (the check value of "123456789")', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });
});

describe('encodings', () => {
  const claude = (text: string) =>
    JSON.stringify([
      {
        uuid: 'c1',
        name: 'x',
        created_at: '2024-03-13T14:48:37.115821Z',
        updated_at: '2024-03-13T14:48:37.115821Z',
        chat_messages: [
          { uuid: 'm1', text, content: [{ type: 'text', text }], sender: 'human', created_at: '2024-03-13T14:48:44.500345Z', attachments: [], files: [] },
        ],
      },
    ]);

  it('UTF-16 with a byte-order mark (little and big endian) reads like UTF-8', () => {
    const json = claude('héllo 你好 🙂');
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(Buffer.from(json, 'utf16le')).swap16()]);
    for (const buf of [le, be]) expect(parseImport(buf, 'conversations.json', { now: NOW }).conversations[0]!.messages[0]!.text).toBe('héllo 你好 🙂');
  });

  it('bytes that are not UTF-8 show as U+FFFD, and the warning counts them', () => {
    const json = Buffer.from(claude('caf_ au lait'));
    for (let at = json.indexOf('caf_'); at >= 0; at = json.indexOf('caf_', at + 1)) json[at + 3] = 0xe9; // Latin-1 é, in `text` and in the block
    const result = parseImport(json, 'conversations.json', { now: NOW });
    expect(result.conversations[0]!.messages[0]!.text).toBe('caf\uFFFD au lait');
    expect(result.warnings).toEqual(['The file is not entirely UTF-8 text: 2 characters could not be read and show as �.']);
  });
});
