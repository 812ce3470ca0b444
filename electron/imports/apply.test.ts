// Storing parsed imports on a real PGlite: counts as the parse says, real dates and speakers, earlier
// versions kept as regenerate keeps them, notes kept as text, one transaction per conversation (an
// error in the middle of one leaves nothing of it), "already imported" on a second import, cancel
// between conversations, the sleep room's marks in the same transaction, and a card written only
// through applyCard, checked whole before any block is written.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, MAX_IMPORT_BYTES, SELF_BLOCK_KEYS } from '../../shared/api.js';
import { SelfLayer } from '../companion/self-layer.js';
import { Conversations } from '../conversations/conversations.js';
import { IMPORT_BATCH_ROWS, importedContent, importSourceKey, TranscriptImports } from '../conversations/import-transcript.js';
import { openDatabase, type Database } from '../db/open.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { NAP } from '../sleep/nap.js';
import { LIGHT_SLEEP, lightSleepWatermarks } from '../sleep/steps/light-sleep.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { apply, applyCard, describeSummary, summarise, type ApplyProgress } from './apply.js';
import { MAX_IMPORT_BYTES as PARSER_MAX_BYTES, parseImport } from './detect.js';
import type { ImportedConversation, ParseResult } from './types.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'imports');
const fixture = (rel: string) => parseImport(fs.readFileSync(path.join(FIXTURES, rel)), path.basename(rel), { now: new Date('2026-12-05T00:00:00Z') });

let db: Database;
let dir: string;
let transcripts: TranscriptImports;
let conversations: Conversations;
const deps = () => ({ transcripts, markRead: markImportedHistoryRead });

beforeAll(async () => {
  dir = tempDataDir('anima-import-');
  db = await openDatabase(dir, { template: dbTemplate() });
  transcripts = new TranscriptImports(db, () => new Date('2026-12-05T09:00:00Z'));
  conversations = new Conversations(db);
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return Number((await db.query<{ n: number }>(sql, params)).rows[0]!.n);
}
const messagesOf = (conversationId: string) => count('SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [conversationId]);

/** A ChatGPT-shaped parse of `n` conversations (ids chat-<tag>-<i>), each of `size` messages a minute apart. */
function chats(tag: string, n: number, size = 4): ParseResult {
  const conversations: ImportedConversation[] = Array.from({ length: n }, (_, i) => ({
    sourceId: `chat-${tag}-${i}`,
    title: `Chat ${tag} ${i}`,
    createdAt: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00.000Z`,
    updatedAt: null,
    messages: Array.from({ length: size }, (_, j) => ({
      role: j % 2 ? ('assistant' as const) : ('user' as const),
      text: `${tag} ${i}.${j} ${j % 2 ? 'an answer' : 'a question'}`,
      at: new Date(Date.UTC(2024, 2, 1 + (i % 28), 10, j)).toISOString(),
    })),
  }));
  return { format: 'chatgpt', conversations, warnings: [] };
}

describe('summarise', () => {
  it('counts what would be stored and says it in one line', () => {
    const parse = chats('s', 3, 5);
    parse.conversations[0]!.messages[1]!.versions = ['first try', 'second try'];
    parse.conversations[2]!.messages[0]!.at = null;
    parse.conversations.push({ sourceId: 'empty', title: 'Nothing', createdAt: null, updatedAt: null, messages: [] });
    const s = summarise(parse);
    expect(s).toMatchObject({
      format: 'chatgpt',
      conversations: 3,
      messages: 15,
      versions: 2,
      undated: 1,
      from: '2024-03-01T10:00:00.000Z',
      to: '2024-03-03T10:04:00.000Z',
    });
    expect(s.warnings).toEqual(['1 conversation has no messages and will not be imported.']);
    expect(describeSummary(s)).toBe('3 conversations, 15 messages, 2 earlier versions kept, in 2024-03');
    expect(describeSummary({ conversations: 412, messages: 38120, versions: 0, from: '2023-04-02T00:00:00Z', to: '2026-11-30T00:00:00Z' })).toBe(
      '412 conversations, 38,120 messages, from 2023-04 to 2026-11',
    );
  });

  it('the API and the parsers agree on the largest file', () => {
    expect(MAX_IMPORT_BYTES).toBe(PARSER_MAX_BYTES);
  });
});

describe('apply', () => {
  it('stores a real ChatGPT export with its dates, speakers, models, notes and earlier versions, marked read by the sleep cycle', async () => {
    const parse = fixture('chatgpt/librechat-chatgpt-tree.branched.json');
    const summary = summarise(parse);
    expect(summary.versions).toBeGreaterThan(0);
    const progress: ApplyProgress[] = [];
    const r = await apply(parse, deps(), { onProgress: (p) => progress.push(p) });
    expect(r).toMatchObject({
      status: 'done',
      total: summary.conversations,
      imported: summary.conversations,
      already: 0,
      messages: summary.messages,
      versions: summary.versions,
    });
    expect(progress.at(-1)).toMatchObject({ done: summary.conversations, imported: summary.conversations });

    const [id] = r.conversationIds;
    const conversation = await conversations.get(id!);
    const source = parse.conversations[0]!;
    expect(conversation.title).toBe(source.title);
    expect(conversation.messageCount).toBe(source.messages.length);
    const shown = await conversations.messages(id!);
    expect(shown.map((m) => [m.role, m.content, m.createdAt])).toEqual(
      source.messages.map((m) => [m.role, importedContent(m.text, m.notes), new Date(m.at!).toISOString()]),
    );
    expect(shown.filter((m) => m.role === 'assistant').every((m) => m.model)).toBe(true);
    // Earlier versions: stored before the version they lead to, replaced_by pointing at it, as regenerate keeps them.
    const all = await conversations.messages(id!, { includeReplaced: true });
    expect(all).toHaveLength(summary.messages + summary.versions);
    const withVersions = source.messages.findIndex((m) => m.versions?.length);
    const chosen = shown[withVersions]!;
    const earlier = all.filter((m) => m.replacedBy === chosen.id);
    expect(earlier.map((m) => m.content)).toEqual(source.messages[withVersions]!.versions);
    expect(all.findIndex((m) => m.id === earlier.at(-1)!.id)).toBe(all.findIndex((m) => m.id === chosen.id) - 1);
    // The source is recorded; light sleep and the nap have both read it already.
    expect(await transcripts.sourceOf(id!)).toEqual({ format: 'chatgpt', sourceKey: importSourceKey(source), importedAt: '2026-12-05T09:00:00.000Z' });
    const lastSeq = await conversations.seqOf(all.at(-1)!.id);
    expect((await lightSleepWatermarks(db)).get(id!)).toBe(lastSeq);
    expect(
      await count(`SELECT count(*)::int AS n FROM sleep_watermarks WHERE conversation_id = $1 AND step_id = $2 AND last_seq = $3`, [id, NAP, lastSeq]),
    ).toBe(1);
    expect(await conversations.chatMessagesOf(id!, lastSeq!)).toEqual([]);
  });

  it('a second import of the same file says already imported and copies nothing', async () => {
    const parse = fixture('chatgpt/librechat-chatgpt-export.json');
    const first = await apply(parse, deps());
    expect(first.imported).toBe(summarise(parse).conversations);
    const before = await count('SELECT count(*)::int AS n FROM messages');
    const again = await apply(fixture('chatgpt/librechat-chatgpt-export.json'), deps());
    expect(again).toMatchObject({ status: 'done', imported: 0, already: first.imported, messages: 0 });
    expect(await count('SELECT count(*)::int AS n FROM messages')).toBe(before);
    // An export without ids is recognised by its content.
    const aqua = fixture('sillytavern/st-2023-default-Aqua.jsonl');
    expect((await apply(aqua, deps())).imported).toBe(1);
    expect((await apply(fixture('sillytavern/st-2023-default-Aqua.jsonl'), deps())).already).toBe(1);
    // …and the same conversation id in another format is another conversation.
    const existing = await transcripts.existing('chatgpt', parse.conversations.map(importSourceKey));
    expect(existing.size).toBe(first.imported);
    expect((await transcripts.existing('claude', parse.conversations.map(importSourceKey))).size).toBe(0);
  });

  it('imports every conversation fixture with the counts its parse states', async () => {
    for (const rel of [
      'chatgpt/echomine-002-with-images.single-conversation.json',
      'chatgpt/openwebui-importer-gpt_example.json',
      'claude/openwebui-importer-claude_example.redacted.json',
      'claude/openwebui-importer-claude_thinking_example.synthetic.json',
      'claude/echomine-tool_messages.synthetic.json',
      'claude/echomine-claude_attachments.synthetic.json',
      'sillytavern/st-2025-Seraphina-user-chat.jsonl',
      'sillytavern/st-2026-Seraphina-greeting.transcribed.jsonl',
      'other/librechat-export.branched.json',
      'other/librechat-openwebui-export.synthetic.transcribed.json',
      'other/openwebui-chat-column.from-sql.json',
    ]) {
      const parse = fixture(rel);
      const s = summarise(parse);
      const r = await apply(parse, deps());
      expect([rel, r.status, r.imported, r.messages, r.versions]).toEqual([rel, 'done', s.conversations, s.messages, s.versions]);
      let stored = 0;
      for (const id of r.conversationIds) stored += await messagesOf(id);
      expect([rel, stored]).toEqual([rel, s.messages + s.versions]);
    }
  });

  it('an error in the middle of a conversation leaves nothing of it; what came before stays and a second import goes on', async () => {
    const parse = chats('err', 3, IMPORT_BATCH_ROWS + 300);
    // A role the messages table refuses, in the second batch of the second conversation's rows.
    (parse.conversations[1]!.messages[IMPORT_BATCH_ROWS + 100] as { role: string }).role = 'system';
    const r = await apply(parse, deps());
    expect(r).toMatchObject({ status: 'failed', imported: 1, done: 1, failedAt: 'Chat err 1' });
    expect(r.error?.message).toMatch(/check constraint/i);
    const keys = parse.conversations.map(importSourceKey);
    const here = await transcripts.existing('chatgpt', keys);
    expect([...here.keys()]).toEqual([keys[0]]);
    expect(await count(`SELECT count(*)::int AS n FROM messages WHERE content LIKE 'err 1.%'`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM conversations WHERE title = 'Chat err 1'`)).toBe(0);

    (parse.conversations[1]!.messages[IMPORT_BATCH_ROWS + 100] as { role: string }).role = 'user';
    const again = await apply(parse, deps());
    expect(again).toMatchObject({ status: 'done', imported: 2, already: 1, messages: 2 * (IMPORT_BATCH_ROWS + 300) });
    expect(await messagesOf(again.conversationIds[0]!)).toBe(IMPORT_BATCH_ROWS + 300);
  });

  it('a failure in the sleep marks rolls the conversation back too (one transaction)', async () => {
    const parse = chats('marks', 1);
    const r = await apply(parse, {
      transcripts,
      markRead: async (tx, conversationId, lastSeq) => {
        await markImportedHistoryRead(tx, conversationId, lastSeq);
        throw new Error('disk full');
      },
    });
    expect(r).toMatchObject({ status: 'failed', imported: 0 });
    expect((await transcripts.existing('chatgpt', [importSourceKey(parse.conversations[0]!)])).size).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM messages WHERE content LIKE 'marks %'`)).toBe(0);
  });

  it('cancel stops between conversations: what was stored stays and is reported, the rest comes on the next import', async () => {
    const parse = chats('cancel', 6);
    const controller = new AbortController();
    const r = await apply(parse, deps(), {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 2) controller.abort();
      },
    });
    expect(r).toMatchObject({ status: 'cancelled', done: 2, imported: 2, total: 6, messages: 8 });
    expect(await count(`SELECT count(*)::int AS n FROM conversations WHERE title LIKE 'Chat cancel %'`)).toBe(2);
    const rest = await apply(parse, deps());
    expect(rest).toMatchObject({ status: 'done', imported: 4, already: 2 });
  });
});

describe('applyCard', () => {
  it('writes a real card’s blocks only when called, and says what they held before', async () => {
    const selfLayer = new SelfLayer(db);
    await selfLayer.ensureDefaults();
    const card = fixture('cards/st-default_Seraphina.v2+v3.png');
    expect(card.format).toBe('card');
    expect(summarise(card)).toMatchObject({ conversations: 0, messages: 0 });
    const before = await selfLayer.list();
    expect(before.every((b) => b.isDefault)).toBe(true);
    const r = await applyCard(selfLayer, card.card!.blocks);
    const written = SELF_BLOCK_KEYS.filter((k) => card.card!.blocks[k]?.trim());
    expect(written.length).toBeGreaterThan(0);
    for (const key of written) expect(r.blocks.find((b) => b.key === key)!.content).toBe(card.card!.blocks[key]!.trim());
    expect(r.previous.map((p) => p.key)).toEqual(written);
    expect(r.previous.every((p) => p.isDefault && p.content === before.find((b) => b.key === p.key)!.content)).toBe(true);
    for (const p of r.previous) await selfLayer.reset(p.key);
  });

  it('a card with a credential in any block changes no block', async () => {
    const selfLayer = new SelfLayer(db);
    const before = await selfLayer.list();
    const err = await applyCard(selfLayer, {
      identity: 'I am Vela, a lighthouse keeper.',
      voice: 'My key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).field).toBe('blocks.voice');
    expect(await selfLayer.list()).toEqual(before);
  });
});

describe('markImportedHistoryRead', () => {
  it('never moves a watermark back', async () => {
    const { id } = await conversations.create('marks');
    await markImportedHistoryRead(db, id, 50);
    await markImportedHistoryRead(db, id, 20);
    expect((await lightSleepWatermarks(db)).get(id)).toBe(50);
    expect(await count(`SELECT count(*)::int AS n FROM sleep_watermarks WHERE conversation_id = $1 AND step_id IN ($2, $3)`, [id, LIGHT_SLEEP, NAP])).toBe(2);
  });
});
