// Every real sample in ../shared/fixtures/imports (README.md there lists their quirks) parses, with
// the counts and facts the README states.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detectFormat, parseImport } from './detect.js';
import type { ImportedConversation, ParseResult } from './types.js';

const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/imports/', import.meta.url));
// The fixtures' newest date is 2026-07; judging "the future" from a pinned now keeps these tests true later.
const NOW = new Date('2026-12-01T00:00:00Z');

function parse(rel: string): ParseResult {
  return parseImport(fs.readFileSync(path.join(FIXTURES, rel)), path.basename(rel), { now: NOW });
}
function raw(rel: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, rel), 'utf8'));
}
const texts = (c: ImportedConversation): string[] => c.messages.map((m) => m.text);

describe('every fixture file', () => {
  const files = fs
    .readdirSync(FIXTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => fs.readdirSync(path.join(FIXTURES, d.name)).map((f) => `${d.name}/${f}`));

  it('is there (the shared fixtures are beside the repository)', () => {
    expect(files.length).toBe(19);
  });

  it.each(files)('%s parses with a known format, storable text and real dates', (rel) => {
    const result = parse(rel);
    expect(detectFormat(fs.readFileSync(path.join(FIXTURES, rel)), path.basename(rel))?.format).toBe(result.format);
    const expected = { chatgpt: 'chatgpt', claude: 'claude', sillytavern: 'sillytavern', cards: 'card' }[rel.split('/')[0]!];
    if (expected) expect(result.format).toBe(expected);
    else expect(['openwebui', 'librechat']).toContain(result.format);
    if (result.format === 'card') {
      expect(result.card!.name).not.toBe('');
      for (const block of Object.values(result.card!.blocks)) expect(block).not.toMatch(/\r|\{\{(char|user)\}\}/i);
      return;
    }
    expect(result.conversations.length).toBeGreaterThan(0);
    for (const c of result.conversations) {
      expect(c.messages.length).toBeGreaterThan(0);
      for (const m of c.messages) {
        expect(['user', 'assistant']).toContain(m.role);
        expect(m.text || m.notes?.length || m.versions?.length).toBeTruthy();
        expect(m.text).toBe(m.text.trim());
        if (m.at !== null) expect(new Date(m.at).toISOString()).toBe(m.at);
      }
    }
  });
});

describe('ChatGPT', () => {
  it('librechat-chatgpt-export: the web search turns are 3 questions and 3 answers, tool traffic as notes, citations cleaned', () => {
    const result = parse('chatgpt/librechat-chatgpt-export.json');
    expect(result.conversations.map((c) => c.title)).toEqual(['Conversation 1. Web Search', 'Conversation 2']);
    const [search, code] = result.conversations;
    // Of the 17 nodes, only 6 are chat turns; the root, the hidden system node and the tool nodes are not messages.
    expect(search!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(search!.messages[0]!.text).toBe('What is the fuel consumption of vw  transporter with 8 people in l/km');
    const firstAnswer = search!.messages[1]!;
    expect(firstAnswer.model).toBe('gpt-4');
    expect(firstAnswer.notes).toEqual([
      'Tool call (browser): search("Volkswagen Transporter fuel consumption with 8 people l/km")',
      expect.stringMatching(/^Tool result \(browser\): .*Fuelly/),
      'Tool call (browser): mclick([0, 3, 7])',
      expect.stringMatching(/^Tool result \(browser\): 2021 Volkswagen Transporter .*ultimatespecs\.com/),
      expect.stringMatching(/^Tool result \(browser\): Volkswagen Transporter Review - Drive https:\/\/www\.drive\.com\.au/),
    ]);
    // The source's final texts carry 【n†source】 markers; none survive.
    const rawText = fs.readFileSync(path.join(FIXTURES, 'chatgpt/librechat-chatgpt-export.json'), 'utf8');
    expect(rawText.includes('\\u3010')).toBe(true); // 【, written as a \u escape in this ASCII-only file
    for (const m of search!.messages) expect(m.text).not.toMatch(/[【】†]/);
    expect(search!.createdAt).toBe('2024-01-07T12:18:35.775Z');
    expect(code!.messages.map((m) => m.model ?? null)).toEqual([null, 'text-davinci-002-render-sha', null, 'text-davinci-002-render-sha']);
    expect(code!.messages[3]!.text).toContain('```csharp');
  });

  it('the branched tree: the 8-node main line via current_node, the edited question and the regenerated answer as versions', () => {
    const result = parse('chatgpt/librechat-chatgpt-tree.branched.json');
    const [c] = result.conversations;
    // 8 nodes from the root to current_node: the root and the hidden system node are not messages.
    expect(texts(c!)).toEqual([
      'hi there',
      'Hello! How can I assist you today?',
      'hi again',
      "Hey! Welcome back. What's on your mind?",
      'tell me a joke',
      "Sure, here's one for you:\n\nWhy don't scientists trust atoms?\n\nBecause they make up everything!",
    ]);
    // children[0] leads to "so cool bro", the abandoned edit: it is an earlier version, not the main line.
    expect(c!.messages[2]!.versions).toEqual(['so cool bro']);
    expect(c!.messages[5]!.versions).toHaveLength(1);
    expect(c!.messages[5]!.at).toBe('2024-05-01T17:37:40.598Z'); // current_node, the later of the two answers
    expect(result.warnings).toEqual([expect.stringMatching(/^3 messages on abandoned branches/)]);
  });

  it('echomine-002 (a single conversation object): the image as a note named by its attachment, the empty assistant node skipped, custom instructions not a message', () => {
    const result = parse('chatgpt/echomine-002-with-images.single-conversation.json');
    expect(result.conversations).toHaveLength(1);
    const [c] = result.conversations;
    expect(c!.title).toBe('Interpretación pintura surrealista');
    expect(c!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(c!.messages[0]!.text).toBe('Interpret this painting');
    expect(c!.messages[0]!.notes).toEqual(['Image (1536×1152): BE5F438F-8A64-4D2D-A395-F81569CBD555.jpeg (the picture itself is not in conversations.json)']);
    expect(c!.messages[1]!.text).toMatch(/^This painting presents a surreal/);
    expect(c!.messages[3]!.text).toMatch(/^Yes — it’s quite plausible/);
    expect(result.warnings).toEqual(['1 empty message was skipped.']);
    for (const m of c!.messages) expect(m.text).not.toMatch(/The user provided the following information about themselves/);
  });

  it('gpt_example: the "client-created-root" root, user_editable_context skipped, 5 questions and 5 answers in order', () => {
    const [c] = parse('chatgpt/openwebui-importer-gpt_example.json').conversations;
    expect(c!.messages).toHaveLength(10);
    expect(c!.messages[0]).toEqual({ role: 'user', text: 'Can you explain how photosynthesis works in simple terms?', at: '2025-06-21T20:24:43.102Z' });
    expect(c!.messages.filter((m) => m.role === 'assistant').every((m) => m.model === 'gpt-4o')).toBe(true);
    expect(texts(c!).join('\n')).not.toContain('Please keep the initial');
    // Assistant replies are stamped slightly before the question they answer: the source's order is kept, not re-sorted.
    expect(c!.messages[1]!.at! < c!.messages[0]!.at!).toBe(true);
  });
});

describe('Claude', () => {
  it('the redacted real export: 85 conversations and 557 messages in the file; the one with text kept, the blanked ones counted as skipped', () => {
    const file = 'claude/openwebui-importer-claude_example.redacted.json';
    const all = raw(file) as { chat_messages: unknown[] }[];
    expect(all).toHaveLength(85);
    expect(all.reduce((n, c) => n + c.chat_messages.length, 0)).toBe(557);
    const result = parse(file);
    expect(result.conversations).toHaveLength(1);
    const [c] = result.conversations;
    expect(c!.title).toBe('How Photosynthesis Works');
    expect(c!.messages).toHaveLength(10);
    expect(c!.createdAt).toBe('2025-06-21T20:48:38.467Z');
    // Assistant texts start with a space in the export; it is trimmed.
    expect(c!.messages[1]!.text).toMatch(/^Photosynthesis is how plants/);
    expect(c!.messages.map((m) => m.role)).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'user' : 'assistant')));
    // 557 - 10 kept; 85 - 1 kept (the two with no messages among them).
    expect(result.warnings).toEqual(['547 messages with no text were skipped.', '84 conversations with no text in any message were skipped.']);
  });

  it('thinking: the text comes from the blocks when `text` is empty, and the thinking block is not imported', () => {
    const [c] = parse('claude/openwebui-importer-claude_thinking_example.synthetic.json').conversations;
    expect(c!.messages).toEqual([
      { role: 'user', text: 'Can you greet me?', at: '2025-01-01T00:00:01.000Z' },
      { role: 'assistant', text: "Hello there! It's great to hear from you.", at: '2025-01-01T00:00:05.000Z' },
    ]);
  });

  it('tool use: calls and results are notes on the reply; tool-result "human" messages are not the person speaking', () => {
    const result = parse('claude/echomine-tool_messages.synthetic.json');
    expect(result.conversations.map((c) => c.messages.length)).toEqual([4, 2, 3, 4]);
    const fib = result.conversations[0]!;
    expect(fib.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant', 'assistant']);
    expect(fib.messages[1]!.notes).toEqual([
      expect.stringMatching(/^Tool call \(write_file\): \{"path":"fibonacci\.py"/),
      'Tool result: File written successfully to fibonacci.py (285 bytes)',
    ]);
    const only = result.conversations[3]!;
    expect(only.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'Run a quick calculation for me: what is 42 * 137?'],
      ['assistant', 'The result is 5754.'],
      ['user', 'Now check if that number is prime'],
      ['assistant', expect.stringMatching(/^No, 5754 is not prime/)],
    ]);
    expect(only.messages[1]!.notes).toHaveLength(2);
    expect(only.messages[1]!.notes![0]).toMatch(/^Tool call/);
    expect(only.messages[1]!.notes![1]).toMatch(/^Tool result/);
  });

  it('attachments and files are kept by name, an empty file name said in words', () => {
    const [c] = parse('claude/echomine-claude_attachments.synthetic.json').conversations;
    expect(c!.messages.map((m) => [m.text, m.notes])).toEqual([
      ['Please review this document', ['Attachment: report.pdf (application/pdf)']],
      ['Here are my files', ['File: data.csv', 'File: image.png']],
      ['Document and file together', ['Attachment: notes.txt (text/plain)', 'File: backup.zip']],
      ['', ['File: a file with no name']],
      ['', ['Attachment: uploaded.pdf (application/pdf)']],
      ['Analyze this document for me', [expect.stringMatching(/^Attachment: analysis\.docx/)]],
    ]);
  });
});

describe('SillyTavern', () => {
  it('2023: epoch-ms dates, the character named in the header', () => {
    const result = parse('sillytavern/st-2023-default-Aqua.jsonl');
    const [c] = result.conversations;
    expect(c!.title).toBe('Aqua');
    expect(c!.createdAt).toBe(new Date(1674559896839).toISOString());
    expect(c!.messages).toHaveLength(1);
    expect(c!.messages[0]).toMatchObject({ role: 'assistant', speaker: 'Aqua', at: new Date(1674563371558).toISOString() });
    expect(result.warnings).toEqual([]);
  });

  it("2025: zone-less locale dates read at the writer's UTC+8 (shown by gen_started), the empty failed reply skipped, models kept", () => {
    const result = parse('sillytavern/st-2025-Seraphina-user-chat.jsonl');
    const [c] = result.conversations;
    expect(c!.title).toBe('Seraphina');
    expect(c!.messages.map((m) => [m.role, m.speaker])).toEqual([
      ['assistant', 'Seraphina'],
      ['user', 'slow'],
      ['assistant', 'Seraphina'],
      ['user', 'slow'],
    ]);
    expect(c!.messages[1]!.text).toBe('你好');
    // "March 25, 2025 9:19pm" at UTC+8; the reply's gen_started is 13:19:34Z.
    expect(c!.messages[0]!.at).toBe('2025-03-25T13:19:00.000Z');
    expect(c!.messages[3]!.at).toBe('2025-04-18T15:39:00.000Z');
    expect(c!.createdAt).toBe('2025-03-25T13:19:28.000Z'); // "2025-03-25@21h19m28s"
    expect(c!.messages[2]!.model).toBe('deepseek-ai/DeepSeek-V3');
    expect(c!.messages[2]!.versions).toBeUndefined(); // one swipe: nothing earlier
    expect(result.warnings).toEqual([
      '1 empty message (a failed reply) was skipped.',
      'The dates in this chat have no time zone; they were read as UTC+08:00, the zone the generation times in the file show.',
    ]);
  });

  it('2026: names "unused" are no names; the character comes from the message line', () => {
    const result = parse('sillytavern/st-2026-Seraphina-greeting.transcribed.jsonl');
    const [c] = result.conversations;
    expect(c!.title).toBe('Seraphina');
    expect(c!.sourceId).toBe('aa6b43a4-7acb-42c2-9946-5acce736ea22');
    expect(c!.createdAt).toBe('2026-07-12T05:59:53.290Z');
    expect(c!.messages).toEqual([expect.objectContaining({ role: 'assistant', speaker: 'Seraphina', at: '2026-07-12T05:59:53.290Z' })]);
    for (const m of c!.messages) expect(m.speaker).not.toBe('unused');
  });
});

describe('character cards', () => {
  it('Seraphina PNG: ccv3 preferred over chara, UTF-8 decoded, CRLF normalised, macros replaced, the lorebook as narrative', () => {
    const result = parse('cards/st-default_Seraphina.v2+v3.png');
    const card = result.card!;
    expect(card.spec).toBe('v3');
    expect(card.name).toBe('Seraphina');
    // Seraphina keeps everything in the description (personality, scenario and examples are empty) and in its lorebook.
    expect(Object.keys(card.blocks).sort()).toEqual(['identity', 'narrative']);
    expect(card.blocks.narrative!.split('\n\n').filter((p) => /^[^:\n]+: /.test(p)).length).toBeGreaterThanOrEqual(4);
    expect(card.blocks.identity).toMatch(/^\[Seraphina's Personality= "caring"/);
    expect(card.blocks.identity).toContain('you: "Describe your traits?"\nSeraphina: *Seraphina\'s gentle smile');
    // Eight em dashes in the JSON: decoded as UTF-8, not Latin-1.
    expect(JSON.stringify(card.raw).match(/—/g)).toHaveLength(8);
    expect(JSON.stringify(card)).not.toMatch(/â€/);
    expect(card.greeting).toMatch(/^\*You wake with a start/);
    expect(card.greeting).toContain('guardian of this forest — I');
    expect(result.warnings).toEqual([]);
  });

  it('Skynet: named v2, read as V1 (no spec, no data)', () => {
    const card = parse('cards/Skynet_v2.actually-v1.png').card!;
    expect(card).toMatchObject({
      spec: 'v1',
      name: 'Skynet',
      greeting: 'How can I help you today User.',
      blocks: {
        identity: "Skynet's = [AGI, intelligent, polite, rational,\n\tloves being helpful, hates impolite language, hates crude language]",
        personality: 'Skynet is an AGI created by Cyberdyne Systems. Skynet will answer questions for User in a helpful and polite manner.',
        relationship: 'Skynet is an AGI developed by Cyberdyne Systems to be an AI assistant and to answer questions.',
      },
    });
    expect(card.blocks.voice).toBeUndefined(); // mes_example is ""
  });

  it('tavern_kit PNG: the Title/Author/zTXt chunks ignored, the ccv3 card read', () => {
    const card = parse('cards/tavern_kit-test_character.v2+v3.synthetic.png').card!;
    expect(card.spec).toBe('v3');
    expect(card.name).toBe('Test Character');
    expect((card.raw as { data: { nickname: string } }).data.nickname).toBe('TestChar');
    expect(card.blocks.identity).toBe('A test character for unit testing purposes.\n\nYou are a helpful test assistant.');
    expect(card.blocks.voice).toBe('Test Character: Hi there!\nyou: Hello!\nTest Character: Nice to meet you!\n\nRemember to be helpful.');
  });

  it('月纱 (SillyTavern JSON export, V3): data.* preferred over the V1 mirror fields, {{user}} as 你, constant lorebook entries kept', () => {
    const card = parse('cards/yuesha.st-export.v3.json').card!;
    expect(card.spec).toBe('v3');
    expect(card.name).toBe('月纱');
    expect(card.blocks.identity).toMatch(/^姓名：月纱\n性别：女/);
    expect(card.blocks.identity).toContain('喜欢开你的玩笑');
    expect(card.blocks.personality).toBeUndefined(); // personality is "" in this card
    expect(card.blocks.narrative!.split('\n\n').filter((p) => /^[^\s:]+: /.test(p)).length).toBeGreaterThanOrEqual(2);
    expect(card.greeting).toContain('<StatusBlock>');
  });

  it('tavern_kit V2 JSON: no V1 mirror fields, custom extensions survive in raw', () => {
    const card = parse('cards/tavern_kit-full_v2_card.synthetic.json').card!;
    expect(card.spec).toBe('v2');
    expect(card.blocks).toEqual({
      identity: 'Aurora is a wise oracle who lives in a crystal tower.\n\nYou are Aurora, a mystical oracle.',
      personality: 'Mysterious, kind, prophetic',
      relationship: 'You seek guidance from the oracle.',
      voice: '<START>\nyou: What does the future hold?\nAurora: The mists of time reveal many paths...\n\nSpeak in riddles and prophecies.',
      narrative: 'The crystal tower glows with ancient magic.',
    });
    expect((card.raw as { data: { extensions: unknown } }).data.extensions).toEqual({
      'tavern_kit/test': { round_trip: true },
      custom_field: 'should be preserved',
    });
  });
});

describe('other formats', () => {
  it('Open WebUI chat column: the tree followed to currentId, seconds for messages, milliseconds for the chat', () => {
    const result = parse('other/openwebui-chat-column.from-sql.json');
    expect(result.format).toBe('openwebui');
    const [c] = result.conversations;
    expect(c!.title).toBe('🧠 Goldwater Rule Ethics');
    expect(c!.sourceId).toBeNull(); // id ""
    expect(c!.createdAt).toBe(new Date(1744577557127).toISOString());
    expect(c!.messages.map((m) => [m.role, m.at])).toEqual([
      ['user', '2025-04-13T20:52:37.000Z'],
      ['assistant', '2025-04-13T20:52:37.000Z'],
    ]);
    expect(c!.messages[1]!.model).toBeTruthy();
  });

  it("LibreChat's Open WebUI export: reasoning dropped, tool calls as notes", () => {
    const result = parse('other/librechat-openwebui-export.synthetic.transcribed.json');
    expect(result.conversations.map((c) => c.title)).toEqual(['Chat with reasoning', 'Chat with tool call', 'Simple linear chat']);
    expect(result.conversations[0]!.messages[1]!.text).toBe('255');
    expect(result.conversations[1]!.messages[1]).toMatchObject({
      text: 'The weather in Paris is 18C with rain.',
      notes: ['Tool calls: Tool Executed "Paris: 18C, rain"'],
    });
  });

  it('LibreChat export: the nested tree, the longest branch as the main line, the regenerated reply as a version, the role from isCreatedByUser', () => {
    const result = parse('other/librechat-export.branched.json');
    expect(result.format).toBe('librechat');
    const [c] = result.conversations;
    expect(c!.messages.map((m) => [m.role, m.text.slice(0, 12)])).toEqual([
      ['user', 'How do I use'],
      ['assistant', 'It looks lik'],
      ['user', 'thanks'],
      ['assistant', "You're welco"],
      ['user', 'does coding '],
      ['assistant', 'As a softwar'],
    ]);
    expect(c!.messages[2]!.versions).toEqual(['lol']);
    expect(c!.messages[3]!.versions).toHaveLength(1);
    expect(c!.messages[1]!.speaker).toBe('Software Engineer');
    expect(result.warnings).toEqual(['1 message on abandoned branches was not imported.']);
  });
});
