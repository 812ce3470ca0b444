// A conversation imported again after the person went on chatting in ChatGPT: two exports of the same
// real ChatGPT conversations (the second made by adding nodes to a copy of each real `mapping`, as
// ChatGPT would). Only the new messages are added, after ours, in order, with their real dates and
// marked as history; an unchanged conversation stays "already here"; one whose earlier message was
// edited there keeps ours and is named in a note; a regenerated last answer becomes an earlier version
// of ours. On a real PGlite on disk.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conversations } from '../conversations/conversations.js';
import { importedContent, importSourceKey, TranscriptImports } from '../conversations/import-transcript.js';
import { openDatabase, type Database } from '../db/open.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { LIGHT_SLEEP, lightSleepWatermarks } from '../sleep/steps/light-sleep.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { apply, describeApplied } from './apply.js';
import { parseImport } from './detect.js';
import { addTurns, exportBytes, mainLineNode, readChatGpt, type Turn } from './testing/chatgpt-grow.js';
import type { ImportedConversation } from './types.js';

const NOW = new Date('2026-12-05T09:00:00Z');
let db: Database;
let dir: string;
let transcripts: TranscriptImports;
let conversations: Conversations;
const deps = () => ({ transcripts, markRead: markImportedHistoryRead });

beforeAll(async () => {
  dir = tempDataDir('anima-regrow-');
  db = await openDatabase(dir, { template: dbTemplate() });
  transcripts = new TranscriptImports(db, () => NOW);
  conversations = new Conversations(db);
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
/** A real conversation under another id (a second conversation of the same shape in one export). */
function renamed(conversation: Json, id: string): Json {
  return { ...structuredClone(conversation), id, conversation_id: id, title: `${String(conversation.title)} (${id.slice(0, 4)})` };
}
/** `n` alternating turns a minute apart from `start`. */
function turns(tag: string, n: number, start: string): Turn[] {
  return Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    text: `${tag}: ${i % 2 ? 'answer' : 'question'} ${i + 1}`,
    at: new Date(Date.parse(start) + i * 60_000),
  }));
}
const parse = (items: Json[]) => parseImport(exportBytes(items), 'conversations.json', { now: NOW });
const count = async (sql: string, params: unknown[] = []) => Number((await db.query<{ n: number }>(sql, params)).rows[0]!.n);

describe('importing a grown conversation again', () => {
  it('adds only the new messages, in order with their dates and marked as history; keeps ours where the file tells it differently', async () => {
    const [web, second] = readChatGpt('librechat-chatgpt-export.json');
    const [tree] = readChatGpt('librechat-chatgpt-tree.branched.json');
    const [photo] = readChatGpt('openwebui-importer-gpt_example.json');
    const edited = renamed(photo!, 'e1e1e1e1-0000-4000-8000-000000000001');
    const regenerated = renamed(photo!, 'f2f2f2f2-0000-4000-8000-000000000002');
    const first = parse([web!, second!, tree!, photo!, edited, regenerated]);
    const before = await apply(first, deps());
    expect(before).toMatchObject({ status: 'done', imported: 6, grown: 0 });
    const ids = new Map(first.conversations.map((c, i) => [c.sourceId!, before.conversationIds[i]!]));

    // The person went on in ChatGPT: 14 + 14 + 13 new messages in three conversations, one left as it
    // was, one with an earlier question edited (a new branch three messages up), one whose last answer
    // was regenerated (a sibling of the current node).
    const grownItems = [
      addTurns(web!, turns('web', 14, '2024-02-01T10:00:00Z')),
      addTurns(second!, turns('second', 14, '2024-02-02T10:00:00Z')),
      addTurns(tree!, turns('tree', 13, '2024-06-01T10:00:00Z')),
      photo!,
      addTurns(edited, turns('edited', 2, '2025-07-01T10:00:00Z'), { after: mainLineNode(edited, 3), tag: 'edit' }),
      addTurns(
        regenerated,
        [{ role: 'assistant', text: 'Plants turn sunlight, water and air into sugar — a second take.', at: new Date('2025-06-21T21:00:00Z') }],
        {
          after: mainLineNode(regenerated, 1),
          tag: 'regen',
        },
      ),
    ];
    const again = parse(grownItems);
    // Asked before anything is stored (what a preview can say): three grown by 41, one the same, one
    // different only in its last message, one told differently further back.
    const compared = await transcripts.compare('chatgpt', again.conversations);
    const kinds = again.conversations.map((c) => compared.get(importSourceKey(c)));
    expect(kinds.map((k) => k?.kind)).toEqual(['grown', 'grown', 'grown', 'same', 'diverged', 'last']);
    expect(kinds.reduce((n, k) => n + (k?.added ?? 0), 0)).toBe(41);
    const watermarkBefore = await lightSleepWatermarks(db);
    const messagesBefore = await count('SELECT count(*)::int AS n FROM messages');

    const r = await apply(again, deps());
    expect(r).toMatchObject({ status: 'done', imported: 0, grown: 3, added: 41, messages: 41, diverged: 1, versions: 1 });
    // Unchanged, diverged and version-only: all "here already".
    expect(r.already).toBe(3);
    expect(describeApplied(r)).toBe('3 conversations have new messages (41); 2 were already here; 1 was kept as it is here (told differently in the file)');
    expect(r.notes).toHaveLength(1);
    expect(r.notes[0]).toContain('(e1e1)');
    expect(await count('SELECT count(*)::int AS n FROM messages')).toBe(messagesBefore + 42);

    // Each grown conversation: ours first, unchanged, then the new ones in order with their real dates.
    for (const [item, tag, n] of [
      [again.conversations[0]!, 'web', 14],
      [again.conversations[1]!, 'second', 14],
      [again.conversations[2]!, 'tree', 13],
    ] as [ImportedConversation, string, number][]) {
      const id = ids.get(item.sourceId!)!;
      const shown = await conversations.messages(id);
      expect(shown.map((m) => m.content)).toEqual(item.messages.map((m) => importedContent(m.text, m.notes)));
      const added = shown.slice(-n);
      expect(added.map((m) => m.content)).toEqual(turns(tag, n, '2000-01-01T00:00:00Z').map((t) => t.text));
      expect(added.map((m) => m.createdAt)).toEqual(item.messages.slice(-n).map((m) => new Date(m.at!).toISOString()));
      // Marked as history: the night and the nap start after them; the catch-up has them still to read.
      const last = (await conversations.seqOf(added.at(-1)!.id))!;
      expect((await lightSleepWatermarks(db)).get(id)).toBe(last);
      expect(last).toBeGreaterThan(watermarkBefore.get(id)!);
      const history = (
        await db.query<{ through_seq: number; read_seq: number }>(
          `SELECT through_seq::float8 AS through_seq, read_seq::float8 AS read_seq FROM sleep_history WHERE conversation_id = $1`,
          [id],
        )
      ).rows[0]!;
      expect(Number(history.through_seq)).toBe(last);
      expect(Number(history.read_seq)).toBe(0);
    }

    // The edited one keeps ours, as it was.
    const editedId = ids.get(edited.id as string)!;
    expect((await conversations.messages(editedId)).map((m) => m.content)).toEqual(
      first.conversations.find((c) => c.sourceId === edited.id)!.messages.map((m) => importedContent(m.text, m.notes)),
    );
    expect((await lightSleepWatermarks(db)).get(editedId)).toBe(watermarkBefore.get(editedId));

    // The regenerated last answer: ours stays the one shown, theirs is an earlier version of it.
    const regenId = ids.get(regenerated.id as string)!;
    const shown = await conversations.messages(regenId);
    const all = await conversations.messages(regenId, { includeReplaced: true });
    expect(shown.at(-1)!.content).toBe(first.conversations.find((c) => c.sourceId === regenerated.id)!.messages.at(-1)!.text);
    expect(all.filter((m) => m.replacedBy === shown.at(-1)!.id).map((m) => m.content)).toContain(
      'Plants turn sunlight, water and air into sugar — a second take.',
    );

    // The same grown file once more: nothing new.
    const third = await apply(parse(grownItems), deps());
    expect(third).toMatchObject({ imported: 0, grown: 0, added: 0, messages: 0, versions: 0, already: 6, diverged: 1 });
    expect(await count('SELECT count(*)::int AS n FROM messages')).toBe(messagesBefore + 42);
    expect(await count(`SELECT count(*)::int AS n FROM sleep_watermarks WHERE step_id = $1`, [LIGHT_SLEEP])).toBe(6);
  });
});
