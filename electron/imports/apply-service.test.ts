// The import through the host's API on a real PGlite, with real fixture files: chunked upload, the
// preview, progress events to the end, "already imported", refusals that change nothing, a card only
// on its own call — and the sleep cycle: the next light sleep does not read the imported history, and
// the nap does not either, while what is said after the import is read as usual.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { ApiError, IMPORT_CHUNK_BYTES, MAX_IMPORT_BYTES, type ApiEvents, type ImportProgress, type Message } from '../../shared/api.js';
import { TranscriptImports } from '../conversations/import-transcript.js';
import { openDatabase, type Database } from '../db/open.js';
import type { Host } from '../host/types.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { Napper } from '../sleep/nap.js';
import { TASK_PREFIX, TRANSCRIPT_LINE } from '../sleep/schemas.js';
import { lastUser, stepDeps } from '../sleep/testing/fixture.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { apply, describeApplied, summarise } from './apply.js';
import { parseImport } from './detect.js';
import { addTurns, exportBytes, mainLineNode, readChatGpt } from './testing/chatgpt-grow.js';
import type { ParseResult } from './types.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'imports');
const CLAUDE = path.join(FIXTURES, 'claude', 'openwebui-importer-claude_example.redacted.json');
const SERAPHINA = path.join(FIXTURES, 'cards', 'st-default_Seraphina.v2+v3.png');
const NOON = new Date('2026-12-05T12:00:00Z');

let fake: FakeLlm;
const tasks: { purpose: string; prompt: string }[] = [];
const hosts: Host[] = [];
const dbs: Database[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  const answer = sleepResponder();
  fake.respond = async (body) => {
    const prompt = lastUser(body);
    if (prompt.startsWith(`${TASK_PREFIX}nap`)) {
      tasks.push({ purpose: 'nap', prompt });
      return { kind: 'text', text: JSON.stringify({ memories: [] }), chunks: 2 };
    }
    const task = findTask(body);
    if (task) tasks.push(task);
    return answer(body);
  };
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await Promise.all(dbs.splice(0).map((d) => d.close()));
  tasks.length = 0;
});
afterAll(async () => {
  await fake.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function hostAt(clock: { now: Date }): Promise<Host> {
  const dataDir = tempDataDir('anima-import-host-');
  dirs.push(dataDir);
  const host = await startTestHost({ dataDir, now: () => clock.now, sleep: { tickMs: 0 } });
  hosts.push(host);
  await host.api['settings.update']({ timeZone: 'UTC' });
  return host;
}

/** Uploads a file the way the window does: IMPORT_CHUNK_BYTES at a time, in order. */
async function upload(host: Host, bytes: Buffer, name: string): Promise<string> {
  let uploadId: string | undefined;
  for (let offset = 0; offset < bytes.length; offset += IMPORT_CHUNK_BYTES) {
    const r = await host.api['imports.upload']({
      uploadId,
      name,
      size: bytes.length,
      offset,
      data: bytes.subarray(offset, offset + IMPORT_CHUNK_BYTES).toString('base64'),
    });
    uploadId = r.uploadId;
    expect(r.received).toBe(Math.min(bytes.length, offset + IMPORT_CHUNK_BYTES));
    expect(r.complete).toBe(r.received === bytes.length);
  }
  return uploadId!;
}

/** imports.apply, waited for: every progress event and the last (its end state). */
async function importAll(host: Host, previewId: string): Promise<{ events: ImportProgress[]; end: ImportProgress }> {
  const events: ImportProgress[] = [];
  const off = host.on((event, payload) => {
    if (event === 'imports.progress') events.push(payload);
  });
  const ended = nextEvent(host, 'imports.progress', (p: ImportProgress) => p.state !== 'running', 60_000) as Promise<ImportProgress>;
  const first = await host.api['imports.apply']({ previewId });
  expect(first).toMatchObject({ previewId, state: 'running', done: 0 });
  const end = await ended;
  off();
  return { events, end };
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err as ApiError,
  );

describe('imports through the API', () => {
  it('uploads a real Claude export in chunks, previews it, imports it with progress, and says already imported the second time', async () => {
    const clock = { now: NOON };
    const host = await hostAt(clock);
    const bytes = fs.readFileSync(CLAUDE);
    const preview = await host.api['imports.preview']({ uploadId: await upload(host, bytes, 'conversations.json') });
    expect(preview).toMatchObject({ file: 'conversations.json', format: 'claude', alreadyImported: 0, inTrash: 0, card: null });
    // The parse's own summary (the redacted export keeps text in one conversation: the others are skipped with a warning).
    const expected = summarise(parseImport(bytes, 'conversations.json', { now: NOON }));
    expect(preview).toMatchObject({
      conversations: expected.conversations,
      messages: expected.messages,
      from: expected.from,
      to: expected.to,
      warnings: expected.warnings,
    });
    expect(preview.conversations).toBeGreaterThan(0);
    expect(preview.to!.slice(0, 7)).toBe('2025-06');
    // Nothing is stored by a preview.
    expect(await host.api['conversations.list']({})).toEqual([]);

    const { events, end } = await importAll(host, preview.previewId);
    expect(end).toMatchObject({
      state: 'done',
      total: preview.conversations,
      done: preview.conversations,
      imported: preview.conversations,
      messages: preview.messages,
      error: null,
    });
    expect(end.finishedAt).not.toBeNull();
    expect(events[0]!.state).toBe('running');
    expect(events.map((e) => e.done)).toEqual([...events.map((e) => e.done)].sort((a, b) => a - b));
    expect(await host.api['imports.status']({})).toEqual(end);
    const list = await host.api['conversations.list']({});
    expect(list).toHaveLength(preview.conversations);
    const photosynthesis = list.find((c) => c.title === 'How Photosynthesis Works')!;
    const { messages } = await host.api['conversations.get']({ id: photosynthesis.id });
    expect(messages).toHaveLength(10);
    expect(messages[0]!.createdAt.slice(0, 10)).toBe('2025-06-21');
    expect(messages.map((m) => m.role)).toContain('assistant');

    // The same file again: everything is here already, nothing is copied.
    const again = await host.api['imports.preview']({ uploadId: await upload(host, bytes, 'conversations.json') });
    expect(again).toMatchObject({ conversations: preview.conversations, alreadyImported: preview.conversations });
    const second = await importAll(host, again.previewId);
    expect(second.end).toMatchObject({ state: 'done', imported: 0, already: preview.conversations, messages: 0 });
    expect(await host.api['conversations.list']({})).toHaveLength(preview.conversations);
    // A spent preview is gone.
    expect((await rejection(host.api['imports.apply']({ previewId: again.previewId })))?.code).toBe('not_found');
  }, 120_000);

  it('refuses bad input with a clear message and changes nothing', async () => {
    const host = await hostAt({ now: NOON });
    const tooBig = await rejection(host.api['imports.upload']({ name: 'export.zip', size: 2 * 1024 ** 3, offset: 0, data: '' }));
    expect(tooBig).toMatchObject({ code: 'payload_too_large', field: 'size' });
    expect(tooBig!.message).toContain('2048 MB');
    expect(tooBig!.message).toContain(`${MAX_IMPORT_BYTES / 1024 / 1024} MB`);

    // A cut-off export: the parser's words reach the person, nothing is stored.
    const whole = fs.readFileSync(CLAUDE);
    const cut = whole.subarray(0, Math.floor(whole.length / 2));
    const broken = await rejection(host.api['imports.preview']({ uploadId: await upload(host, cut, 'conversations.json') }));
    expect(broken).toMatchObject({ code: 'invalid_input', field: 'file' });
    expect(broken!.message).toMatch(/^conversations\.json: the file is not valid JSON/);
    expect(await host.api['conversations.list']({})).toEqual([]);

    // Chunks out of order, an unknown upload, a preview before the upload is complete.
    const { uploadId } = await host.api['imports.upload']({ name: 'a.json', size: 10, offset: 0, data: Buffer.from('[1,').toString('base64') });
    expect((await rejection(host.api['imports.upload']({ uploadId, name: 'a.json', size: 10, offset: 7, data: 'AA==' })))?.code).toBe('conflict');
    expect((await rejection(host.api['imports.preview']({ uploadId })))?.code).toBe('conflict');
    expect((await rejection(host.api['imports.upload']({ uploadId: 'gone', name: 'a.json', size: 10, offset: 3, data: 'AA==' })))?.code).toBe('not_found');
    expect((await rejection(host.call('imports.upload', { name: 'a.json', size: 10, offset: 0, data: 'not base64!' }) as Promise<unknown>))?.code).toBe(
      'invalid_input',
    );
    // One file in memory at a time: a new upload lets the older one go.
    const other = await host.api['imports.upload']({ name: 'b.json', size: 4, offset: 0, data: Buffer.from('[1,').toString('base64') });
    expect((await rejection(host.api['imports.upload']({ uploadId, name: 'a.json', size: 10, offset: 3, data: 'AA==' })))?.code).toBe('not_found');
    expect(await host.api['imports.discard']({ id: other.uploadId })).toEqual({ discarded: true });
    expect(await host.api['imports.discard']({ id: uploadId })).toEqual({ discarded: false });
    expect((await rejection(host.api['imports.preview']({ uploadId })))?.code).toBe('not_found');
    expect(await host.api['imports.status']({})).toBeNull();
  });

  it('a character card is previewed for review and written only by imports.applyCard', async () => {
    const host = await hostAt({ now: NOON });
    const bytes = fs.readFileSync(SERAPHINA);
    expect(bytes.length).toBeGreaterThan(IMPORT_CHUNK_BYTES);
    const before = await host.api['self.list']({});
    const preview = await host.api['imports.preview']({ uploadId: await upload(host, bytes, 'default_Seraphina.png') });
    expect(preview).toMatchObject({ format: 'card', conversations: 0, messages: 0, card: { name: 'Seraphina' } });
    expect(Object.keys(preview.card!.blocks).length).toBeGreaterThan(0);
    expect(await host.api['self.list']({})).toEqual(before);
    expect((await rejection(host.api['imports.apply']({ previewId: preview.previewId })))?.code).toBe('invalid_input');

    const edited = { ...preview.card!.blocks, identity: 'I am Seraphina, guardian of the Eldoria forest.' };
    const applied = await host.api['imports.applyCard']({ blocks: edited });
    expect(applied.blocks.find((b) => b.key === 'identity')).toMatchObject({ content: edited.identity, isDefault: false });
    expect(applied.previous.find((p) => p.key === 'identity')).toEqual({
      key: 'identity',
      content: before.find((b) => b.key === 'identity')!.content,
      isDefault: true,
    });
    // Undo is the person's: the previous blocks go back through the self layer.
    for (const p of applied.previous) await host.api['self.reset']({ key: p.key });
    expect((await host.api['self.list']({})).map((b) => b.content)).toEqual(before.map((b) => b.content));
  });

  it('a second export whose conversations are all here but grown: the preview counts the new messages, the import adds them and names the one kept as ours', async () => {
    const host = await hostAt({ now: NOON });
    const [web, second] = readChatGpt('librechat-chatgpt-export.json');
    const [photo] = readChatGpt('openwebui-importer-gpt_example.json');
    const edited = { ...structuredClone(photo!), id: 'e1e1e1e1-0000-4000-8000-000000000001', title: 'Photosynthesis (e1e1)' };
    const first = await host.api['imports.preview']({ uploadId: await upload(host, exportBytes([web!, second!, edited]), 'conversations.json') });
    expect(first).toMatchObject({ format: 'chatgpt', conversations: 3, alreadyImported: 0, grown: 0, newMessages: 0 });
    expect((await importAll(host, first.previewId)).end).toMatchObject({ state: 'done', imported: 3 });

    // The person went on in ChatGPT: 14 and 13 new messages in two, an earlier question edited in the third.
    const turns = (tag: string, n: number, start: string) =>
      Array.from({ length: n }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        text: `${tag}: ${i % 2 ? 'answer' : 'question'} ${i + 1}`,
        at: new Date(Date.parse(start) + i * 60_000),
      }));
    const again = exportBytes([
      addTurns(web!, turns('web', 14, '2024-02-01T10:00:00Z')),
      addTurns(second!, turns('second', 13, '2024-02-02T10:00:00Z')),
      addTurns(edited, turns('edited', 2, '2025-07-01T10:00:00Z'), { after: mainLineNode(edited, 3), tag: 'edit' }),
    ]);
    const conversationsBefore = (await host.api['conversations.list']({})).length;
    const preview = await host.api['imports.preview']({ uploadId: await upload(host, again, 'conversations.json') });
    expect(preview).toMatchObject({ conversations: 3, alreadyImported: 3, inTrash: 0, grown: 2, newMessages: 27, newVersions: 0, diverged: 1 });

    // Not refused as "already here": the new messages go in, and the kept one is named.
    const { end } = await importAll(host, preview.previewId);
    expect(end).toMatchObject({ state: 'done', imported: 0, grown: 2, added: 27, messages: 27, diverged: 1, already: 1 });
    expect(end.notes).toHaveLength(1);
    expect(end.notes![0]).toContain('(e1e1)');
    expect(await host.api['imports.status']({})).toEqual(end);
    expect(describeApplied(end)).toBe('2 conversations have new messages (27); 1 was kept as it is here (told differently in the file)');
    expect(await host.api['conversations.list']({})).toHaveLength(conversationsBefore);

    // The same file once more: nothing new to say.
    const third = await host.api['imports.preview']({ uploadId: await upload(host, again, 'conversations.json') });
    expect(third).toMatchObject({ alreadyImported: 3, grown: 0, newMessages: 0, diverged: 1 });
  }, 60_000);
});

describe('imported history and the sleep cycle', () => {
  const said = (prompt: string) => prompt.split('\n').flatMap((line) => TRANSCRIPT_LINE.exec(line)?.[4] ?? []);

  it('the next light sleep does not read the imported messages; what is said after the import is read as usual', async () => {
    const clock = { now: NOON };
    const host = await hostAt(clock);
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    const preview = await host.api['imports.preview']({ uploadId: await upload(host, fs.readFileSync(CLAUDE), 'conversations.json') });
    const { end } = await importAll(host, preview.previewId);
    expect(end.imported).toBeGreaterThan(0);

    const night = async () => {
      const finished = nextEvent(host, 'sleep.finished', () => true, 60_000) as Promise<ApiEvents['sleep.finished']>;
      await host.api['sleep.now']({});
      await finished;
      return (await host.api['sleep.runs']({ limit: 1 }))[0]!;
    };
    const first = await night();
    expect(first.steps.find((s) => s.stepId === 'light-sleep')).toMatchObject({ status: 'done', stats: { calls: 0 } });
    expect(tasks.filter((t) => t.purpose === 'light-sleep')).toEqual([]);

    // A message in an imported conversation the next day: that night reads it, and none of the history.
    clock.now = new Date(NOON.getTime() + 86_400_000);
    const photosynthesis = (await host.api['conversations.list']({})).find((c) => c.title === 'How Photosynthesis Works')!;
    const history = (await host.api['conversations.get']({ id: photosynthesis.id })).messages;
    const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === photosynthesis.id, 20_000);
    await host.api['chat.send']({
      conversationId: photosynthesis.id,
      content: 'Coming back to this: my daughter Ada has a biology exam on photosynthesis on Friday.',
    });
    const reply = ((await finished) as { message: Message }).message;
    expect(reply.status).toBe('complete');
    clock.now = new Date(clock.now.getTime() + 86_400_000);
    const second = await night();
    expect(second.steps.find((s) => s.stepId === 'light-sleep')!.status).toBe('done');
    const prompts = tasks.filter((t) => t.purpose === 'light-sleep').map((t) => t.prompt);
    expect(prompts.length).toBeGreaterThan(0);
    const lines = prompts.flatMap(said);
    expect(lines).toContain('Coming back to this: my daughter Ada has a biology exam on photosynthesis on Friday.');
    for (const m of history) if (m.content.trim()) expect(lines).not.toContain(m.content.slice(0, 2000));
  }, 180_000);

  it('the nap does not read imported history (a control imported without the marks would be read)', async () => {
    const clock = { now: NOON };
    const dir = tempDataDir('anima-import-nap-');
    dirs.push(dir);
    const db = await openDatabase(dir, { template: dbTemplate() });
    dbs.push(db);
    const deps = stepDeps(db, dir, { now: () => clock.now });
    await deps.selfLayer.ensureDefaults();
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
    const napper = new Napper({ ...deps, log: () => {} });
    // What a nap would find worth a call: the person's lasting facts, said at length.
    const parse = (id: string): ParseResult => ({
      format: 'chatgpt',
      warnings: [],
      conversations: [
        {
          sourceId: id,
          title: 'Old chat',
          createdAt: '2025-01-10T09:00:00.000Z',
          updatedAt: null,
          messages: [
            {
              role: 'user',
              text: 'Please keep in mind that I am allergic to peanuts and to shellfish, it matters whenever we plan dinners.',
              at: '2025-01-10T09:00:00.000Z',
            },
            { role: 'assistant', text: 'Noted — no peanuts, no shellfish.', at: '2025-01-10T09:01:00.000Z' },
            {
              role: 'user',
              text: 'Also remember that I live in Lisbon now and work at a small design studio near the river in Alcântara.',
              at: '2025-01-10T09:02:00.000Z',
            },
          ],
        },
      ],
    });
    const transcripts = new TranscriptImports(db, () => clock.now);
    const marked = await apply(parse('marked'), { transcripts, markRead: markImportedHistoryRead });
    const unmarked = await apply(parse('control'), { transcripts, markRead: async () => {} });
    expect(await napper.nap(marked.conversationIds[0]!, 'leave')).toEqual({ status: 'skipped', why: 'short' });
    expect(tasks.filter((t) => t.purpose === 'nap')).toEqual([]);
    expect(await napper.nap(unmarked.conversationIds[0]!, 'leave')).toEqual({ status: 'done', saved: [], summarised: false });
    expect(tasks.filter((t) => t.purpose === 'nap')).toHaveLength(1);
    await napper.close();
  }, 60_000);
});
