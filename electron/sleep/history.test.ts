// "Read my imported history" on a real PGlite on disk against the loopback model: a real ChatGPT
// export carried over three days is imported (marked read by the night), then the catch-up reads it
// day by day into memories and diary blocks on their real dates; a restart in the middle of a call
// resumes without reading a finished day again; a pause lets the call in hand finish and starts no
// other; the host API offers it and reports through sleep.history.
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEvents, ImportedHistoryStatus } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import { TranscriptImports } from '../conversations/import-transcript.js';
import { openDatabase, type Database } from '../db/open.js';
import { apply } from '../imports/apply.js';
import { parseImport } from '../imports/detect.js';
import { addTurns, exportBytes, readChatGpt, type Turn } from '../imports/testing/chatgpt-grow.js';
import { spawnScript } from '../testing/child.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { HistoryReader, historyStepId, type PassOutcome } from './history.js';
import { markImportedHistoryRead } from './imported-history.js';
import { TRANSCRIPT_LINE } from './schemas.js';
import { lightSleepWatermarks } from './steps/light-sleep.js';
import { stepDeps } from './testing/fixture.js';

const NOW = new Date('2026-12-05T12:00:00Z');
const TODAY = '2026-12-05';
// The fixture's conversation is of 2025-06-21; the person went on chatting on the two days after.
const DAYS = ['2025-06-21', '2025-06-22', '2025-06-23'];
const LATER: Turn[] = [
  { role: 'user', text: 'I started a small herb garden on my balcony in Lisbon, basil and mint so far.', at: new Date('2025-06-22T09:00:00Z') },
  { role: 'assistant', text: 'A balcony garden in Lisbon gets plenty of sun; basil will love it.', at: new Date('2025-06-22T09:01:00Z') },
  { role: 'user', text: 'My sister Lena visits next week and she hates mint, sadly.', at: new Date('2025-06-23T18:00:00Z') },
  { role: 'assistant', text: 'Then the basil can be the star when Lena comes.', at: new Date('2025-06-23T18:01:00Z') },
];
const exportFile = () => exportBytes([addTurns(readChatGpt('openwebui-importer-gpt_example.json')[0]!, LATER)]);

let fake: FakeLlm;
/** Every light-sleep prompt the server saw, in order. */
const prompts: string[] = [];
/** What the next light-sleep request gets instead of the responder's answer (consumed). */
const override: ((prompt: string) => Promise<FakeResponse> | FakeResponse)[] = [];
const dirs: string[] = [];
const open: { db: Database; reader: HistoryReader }[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  const responder = sleepResponder();
  fake.respond = async (body) => {
    const task = findTask(body);
    if (task?.purpose === 'light-sleep') {
      prompts.push(task.prompt);
      const next = override.shift();
      if (next) return next(task.prompt);
    }
    return responder(body);
  };
});
afterEach(async () => {
  override.length = 0;
  for (const o of open.splice(0)) {
    await o.reader.close();
    await o.db.close();
  }
});
afterAll(async () => {
  await fake?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The texts a light-sleep prompt showed. */
const said = (prompt: string) => prompt.split('\n').flatMap((line) => TRANSCRIPT_LINE.exec(line)?.[4] ?? []);

async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A data folder with the export imported, and a reader on it (timer off: the test runs the passes). */
async function openFolder(dir?: string) {
  const fresh = !dir;
  dir ??= tempDataDir('anima-history-');
  if (fresh) dirs.push(dir);
  const db = await openDatabase(dir, fresh ? { template: dbTemplate() } : {});
  const deps = stepDeps(db, dir, { now: () => NOW });
  const transcripts = new TranscriptImports(db, () => NOW);
  if (fresh) {
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
    const parse = parseImport(exportFile(), 'conversations.json', { now: NOW });
    const r = await apply(parse, { transcripts, markRead: markImportedHistoryRead });
    expect(r).toMatchObject({ status: 'done', imported: 1 });
  }
  const reader = new HistoryReader({ ...deps, transcripts }, { tickMs: 0, idleMs: 0, daysPerPass: 1 });
  open.push({ db, reader });
  return { dir, db, deps, reader };
}

async function passesUntilFinished(reader: HistoryReader): Promise<PassOutcome[]> {
  const outcomes: PassOutcome[] = [];
  for (let i = 0; i < 20; i++) {
    const o = await reader.tick();
    // The pass begin() started on its own is still reading: wait for it, then go on.
    if (o.status === 'waiting' && o.why === 'busy') {
      await reader.idle();
      continue;
    }
    outcomes.push(o);
    if (o.status !== 'read') break;
  }
  return outcomes;
}

describe('the imported-history catch-up', () => {
  it('reads the imported days oldest first into memories and diary blocks on their real dates, until every day is read', async () => {
    const { db, deps, reader } = await openFolder();
    // The import is history: the night has nothing to read.
    expect(await deps.conversations.chatMessagesAfter(await lightSleepWatermarks(db))).toEqual([]);
    const offered = await reader.status();
    expect(offered).toMatchObject({ state: 'unread', conversations: 1, daysTotal: 3, daysRead: 0, active: false });
    expect(offered.from!.slice(0, 10)).toBe(DAYS[0]);
    expect(offered.to!.slice(0, 10)).toBe(DAYS[2]);
    expect(offered.nightsLeft).toBeGreaterThanOrEqual(1);
    // Not asked: nothing is read.
    expect(await reader.tick()).toEqual({ status: 'waiting', why: 'not-asked' });

    const started = prompts.length;
    expect((await reader.begin()).state).toBe('reading');
    const outcomes = await passesUntilFinished(reader);
    const read = outcomes.filter((o): o is Extract<PassOutcome, { status: 'read' }> => o.status === 'read');
    // begin() started the first pass itself; the rest came one day each, in date order.
    expect(outcomes.at(-1)).toEqual({ status: 'finished' });
    expect(read.map((o) => o.days[0])).toEqual(DAYS.slice(DAYS.length - read.length));
    const mine = prompts.slice(started);
    expect(mine).toHaveLength(3);
    // Each call showed its own day's lines only, oldest day first.
    expect(said(mine[1]!)).toEqual(LATER.slice(0, 2).map((t) => t.text));
    expect(said(mine[2]!)).toEqual(LATER.slice(2).map((t) => t.text));
    expect(said(mine[0]!)[0]).toBe('Can you explain how photosynthesis works in simple terms?');

    const done = await reader.status();
    expect(done).toMatchObject({ state: 'done', daysTotal: 3, daysRead: 3, nightsLeft: 0 });
    // The diary holds each day on its own date; the memories are dated by the day they were said.
    const blocks = (await db.query<{ day: string; kind: string; run_id: number | null }>(`SELECT day, kind, run_id FROM diary_blocks ORDER BY day`)).rows;
    expect([...new Set(blocks.filter((b) => b.kind === 'anchor').map((b) => b.day))]).toEqual(DAYS);
    expect([...new Set(blocks.filter((b) => b.kind === 'narrative').map((b) => b.day))]).toEqual(DAYS);
    expect(blocks.every((b) => b.run_id === null)).toBe(true);
    const memories = (
      await db.query<{ content: string; valid_from: Date | null; source: string }>(`SELECT content, valid_from, source FROM memories WHERE status = 'active'`)
    ).rows;
    const lisbon = memories.find((m) => m.content.includes('Lisbon'));
    expect(lisbon?.valid_from?.toISOString().slice(0, 10)).toBe(DAYS[1]);
    expect(memories.every((m) => m.source === 'light-sleep')).toBe(true);
    // Every call is audited, outside any night, under the catch-up's own step id.
    const audit = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM auto_llm_runs WHERE run_id IS NULL AND step_id = $1`, [historyStepId(TODAY)]))
      .rows[0]!;
    expect(audit.n).toBe(3);
    // Finished: the request is forgotten; nothing more to start.
    expect(await reader.tick()).toEqual({ status: 'waiting', why: 'not-asked' });
    await expect(reader.begin()).rejects.toMatchObject({ code: 'conflict' });
  });

  it('a restart in the middle of a call resumes where it stopped, without reading a finished day again', async () => {
    const first = await openFolder();
    // Day one is read; the call for day two hangs when the app closes.
    const base = prompts.length;
    await first.reader.begin();
    await until(() => prompts.length === base + 1, 'the first call');
    await first.reader.idle();
    expect((await first.reader.status()).daysRead).toBe(1);
    override.push(() => ({ kind: 'hang' }));
    const hanging = first.reader.runPass();
    await until(() => prompts.length === base + 2, 'the second call to reach the model');
    await first.reader.close();
    expect((await hanging).status).toBe('failed');
    await first.db.close();
    open.splice(0);

    const again = await openFolder(first.dir);
    const resumed = await again.reader.status();
    expect(resumed).toMatchObject({ state: 'reading', daysRead: 1, daysTotal: 3 });
    const before = prompts.length;
    const outcomes = await passesUntilFinished(again.reader);
    expect(outcomes.map((o) => o.status)).toEqual(['read', 'read', 'finished']);
    const after = prompts.slice(before);
    expect(after).toHaveLength(2);
    // Day one (the photosynthesis talk) is not read again; day two is read (its first try never committed).
    expect(after.flatMap(said).some((t) => t.includes('photosynthesis'))).toBe(false);
    expect(said(after[0]!)).toEqual(LATER.slice(0, 2).map((t) => t.text));
    expect(await again.reader.status()).toMatchObject({ state: 'done', daysRead: 3 });
    // One narrative per day, whatever the restart.
    const narratives = (await again.db.query<{ day: string }>(`SELECT day FROM diary_blocks WHERE kind = 'narrative' ORDER BY day`)).rows.map((r) => r.day);
    expect(narratives).toEqual(DAYS);
  });

  it('a process killed (SIGKILL) in the middle of a call: the next start goes on from the day it was reading', async () => {
    const { dir, db, reader } = await openFolder();
    // The folder as the killed process will find it: imported, a connection saved; closed again.
    await reader.close();
    await db.close();
    open.splice(0);
    // Day one is answered; the call for day two never is.
    const base = prompts.length;
    override.push(async (prompt) => (await sleepResponder()({ messages: [{ role: 'user', content: prompt }] }))!);
    override.push(() => ({ kind: 'hang' }));
    const child = spawnScript('electron/sleep/testing/history-child.ts', [dir]);
    try {
      await child.waitFor(/^history 1 3 false$/, 'the first day read');
      await until(() => prompts.length === base + 2, 'the call for day two');
    } finally {
      await child.kill();
    }
    const again = await openFolder(dir);
    expect(await again.reader.status()).toMatchObject({ state: 'reading', daysRead: 1, daysTotal: 3 });
    const before = prompts.length;
    const outcomes = await passesUntilFinished(again.reader);
    expect(outcomes.map((o) => o.status)).toEqual(['read', 'read', 'finished']);
    const after = prompts.slice(before);
    expect(after.flatMap(said).some((t) => t.includes('photosynthesis'))).toBe(false);
    expect(said(after[0]!)).toEqual(LATER.slice(0, 2).map((t) => t.text));
    const narratives = (await again.db.query<{ day: string }>(`SELECT day FROM diary_blocks WHERE kind = 'narrative' ORDER BY day`)).rows.map((r) => r.day);
    expect(narratives).toEqual(DAYS);
  });

  it('pause lets the call in hand finish, keeps its day, and starts no other until resumed', async () => {
    const { reader } = await openFolder();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const responder = sleepResponder();
    override.push(async (prompt) => {
      await held;
      return (await responder({ messages: [{ role: 'user', content: prompt }] }))!;
    });
    const base = prompts.length;
    await reader.begin();
    await until(() => prompts.length === base + 1, 'the first call to reach the model');
    const paused = await reader.pause();
    expect(paused).toMatchObject({ state: 'paused', active: true });
    release();
    await reader.idle();
    const status = await reader.status();
    expect(status).toMatchObject({ state: 'paused', daysRead: 1, active: false });
    expect(await reader.tick()).toEqual({ status: 'waiting', why: 'not-asked' });
    expect(prompts.length).toBe(base + 1);
    // Resumed: the other days, and done.
    await reader.begin();
    await reader.idle();
    await passesUntilFinished(reader);
    expect(await reader.status()).toMatchObject({ state: 'done', daysRead: 3 });
    expect(prompts.length).toBe(base + 3);
  });
});

describe('staying out of the way', () => {
  it('waits while the person chats, while a night runs, and once today’s allowance is spent', async () => {
    const { db, deps, reader } = await openFolder();
    await deps.settings.update({ sleep: { maxCallsPerNight: 2 } });
    // Chat just now: a reader that wants two quiet minutes waits.
    const patient = new HistoryReader({ ...deps, transcripts: new TranscriptImports(db, () => NOW) }, { tickMs: 0, daysPerPass: 1 });
    deps.events.emit('chat.finished', { conversationId: 'x', message: {} as never });
    await reader.begin();
    await reader.idle();
    expect(await patient.tick()).toEqual({ status: 'waiting', why: 'chatting' });
    expect((await patient.status()).waiting).toBe('chatting');
    // A night holds the cycle lock: wait for it.
    const run = await db.query<{ id: number }>(
      `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host) VALUES ($1, 'manual', $2, 'here') RETURNING id::int AS id`,
      [TODAY, process.pid],
    );
    expect(await reader.tick()).toEqual({ status: 'waiting', why: 'sleeping' });
    await db.query(`UPDATE sleep_runs SET status = 'done' WHERE id = $1`, [run.rows[0]!.id]);
    // Half of two calls a night is one a day: begin()'s pass spent it; the rest waits for tomorrow.
    expect(await reader.tick()).toEqual({ status: 'waiting', why: 'allowance' });
    expect(await reader.status()).toMatchObject({ state: 'reading', daysRead: 1, waiting: 'allowance', allowance: { calls: 1, maxCalls: 1 } });
    await patient.close();
  });
});

describe('the host API', () => {
  it('offers the catch-up after an import, refuses it without a model, and reports progress through sleep.history', async () => {
    const dir = tempDataDir('anima-history-host-');
    dirs.push(dir);
    const host = await startTestHost({ dataDir: dir, now: () => NOW, sleep: { tickMs: 0 }, history: { tickMs: 50, idleMs: 0, daysPerPass: 2 } });
    try {
      await host.api['settings.update']({ timeZone: 'UTC' });
      expect(await host.api['sleep.importedHistory']({})).toMatchObject({ state: 'none', daysTotal: 0 });
      const bytes = exportFile();
      const { uploadId } = await host.api['imports.upload']({ name: 'conversations.json', size: bytes.length, offset: 0, data: bytes.toString('base64') });
      const preview = await host.api['imports.preview']({ uploadId });
      const ended = nextEvent(host, 'imports.progress', (p: ApiEvents['imports.progress']) => p.state !== 'running');
      await host.api['imports.apply']({ previewId: preview.previewId });
      await ended;
      expect(await host.api['sleep.importedHistory']({})).toMatchObject({ state: 'unread', daysTotal: 3, daysRead: 0, conversations: 1 });
      // No model connection yet: refused in words, nothing changes.
      await expect(host.api['sleep.readImportedHistory']({ action: 'start' })).rejects.toMatchObject({ code: 'no_provider' });
      expect((await host.api['sleep.importedHistory']({})).state).toBe('unread');
      await host.api['providers.save']({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });

      const events: ImportedHistoryStatus[] = [];
      const off = host.on((event, payload) => {
        if (event === 'sleep.history') events.push(payload as ImportedHistoryStatus);
      });
      const finished = nextEvent(host, 'sleep.history', (p: ImportedHistoryStatus) => p.state === 'done' && !p.active);
      expect((await host.api['sleep.readImportedHistory']({ action: 'start' })).state).toBe('reading');
      await finished;
      off();
      expect(events.map((e) => e.daysRead)).toContain(2);
      expect(events.at(-1)).toMatchObject({ state: 'done', daysRead: 3, daysTotal: 3 });
      const diary = await host.api['diary.days']({ limit: 30 });
      expect(
        diary
          .map((d) => d.day)
          .filter((d) => DAYS.includes(d))
          .sort(),
      ).toEqual(DAYS);
    } finally {
      await host.close();
    }
  });
});
