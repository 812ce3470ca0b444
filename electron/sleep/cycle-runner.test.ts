// The sleep runner on its own (no host): resuming a crashed night, the append-only diary, the
// snapshots kept and the quiet moment they wait for, and the size of deep sleep. Harness: testing/cycle-harness.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLEEP_STEP_IDS } from '../../shared/api.js';
import { SelfLayer } from '../companion/self-layer.js';
import { openDatabase, type Database } from '../db/open.js';
import { runCycle, type SleepStep } from './dag.js';
import { MEMORY_LINE } from './schemas.js';
import { buildSteps } from './service.js';
import { modelForRun, type SleepStepDeps } from './steps/deps.js';
import { deepSleepStep } from './steps/deep-sleep.js';
import { snapshotStep } from './steps/simple.js';
import { TODAY, day, model, lightSleep, fake, said, copyOf, LONG_TEXTS, longDir, depsFor, deadPid, useCycleHarness } from './testing/cycle-harness.js';

useCycleHarness();

describe('the runner on its own: crashes, the append-only diary, snapshots kept, the size of deep sleep', () => {
  let dir: string;
  let db: Database;
  let deps: SleepStepDeps;

  const reopen = async () => {
    db = await openDatabase(dir);
    deps = depsFor(db, dir);
    // A new process: the one that held the night is gone.
    await db.query(`UPDATE sleep_runs SET holder_pid = $1 WHERE status = 'running'`, [deadPid()]);
  };
  const count = async (sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;

  beforeAll(async () => {
    model.reset();
    dir = copyOf(longDir);
    db = await openDatabase(dir);
    deps = depsFor(db, dir);
    await new SelfLayer(db).ensureDefaults();
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model', contextTokens: 1024 });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
  });

  afterAll(async () => {
    if (!db.closed) await db.close();
  });

  it('resumes a night that crashed mid light sleep and again between steps: nothing extracted twice, one anchor per conversation and day', async () => {
    const messages = `SELECT count(*)::int AS n FROM messages`;
    const totals = [await count(messages), await count(`SELECT count(*)::int AS n FROM conversations`)];
    const seqOf = new Map(
      (await db.query<{ content: string; seq: number }>(`SELECT content, seq::float8 AS seq FROM messages`)).rows.map((r) => [r.content, Number(r.seq)]),
    );

    // Attempt 1: the process dies while the model is writing the second chunk.
    let reached!: () => void;
    const inSecondChunk = new Promise<void>((resolve) => (reached = resolve));
    model.scripted.push(
      { purpose: 'light-sleep', reply: lightSleep() },
      {
        purpose: 'light-sleep',
        reply: () => {
          reached();
          return { kind: 'hang' };
        },
      },
    );
    const asked1 = model.tasks.length;
    const controller = new AbortController();
    const attempt1 = runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual', signal: controller.signal }).catch((err: unknown) => err);
    await inSecondChunk;
    const chunkOne = said(model.tasks[asked1]!.prompt);
    expect(chunkOne.length).toBeGreaterThan(0);
    // The first chunk is committed with its watermark, before the second is asked for.
    expect((await db.query<{ last_seq: number }>(`SELECT last_seq::float8 AS last_seq FROM sleep_watermarks WHERE step_id = 'light-sleep'`)).rows).toEqual([
      { last_seq: seqOf.get(chunkOne.at(-1)!) },
    ]);
    const run1 = await count(`SELECT max(id)::int AS n FROM sleep_runs`);
    await db.close();
    // What the dead process would still have done meets a closed database.
    controller.abort();
    await attempt1;

    // Attempt 2: the interrupted run is taken over; light sleep reads on; then a crash inside the snapshot step.
    await reopen();
    let inSnapshot!: () => void;
    const snapshotting = new Promise<void>((resolve) => (inSnapshot = resolve));
    const hangingSnapshot: SleepStep[] = buildSteps(deps).map((s) =>
      s.id === 'snapshot'
        ? {
            ...s,
            run: () => {
              inSnapshot();
              return new Promise<Record<string, number>>(() => {});
            },
          }
        : s,
    );
    const asked2 = model.tasks.length;
    void runCycle(db, hangingSnapshot, { sleepDay: TODAY, trigger: 'manual' }).catch(() => {});
    await snapshotting;
    const run2 = run1 + 1;
    expect((await db.query(`SELECT status, error FROM sleep_runs WHERE id = $1`, [run1])).rows).toEqual([{ status: 'failed', error: 'interrupted' }]);
    expect((await db.query(`SELECT status, error FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [run1])).rows).toEqual([
      { status: 'failed', error: 'interrupted' },
    ]);
    expect((await db.query(`SELECT status FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [run2])).rows).toEqual([{ status: 'done' }]);
    const rest = model.tasks
      .slice(asked2)
      .filter((t) => t.purpose === 'light-sleep')
      .flatMap((t) => said(t.prompt));
    expect([...chunkOne, ...rest]).toEqual(LONG_TEXTS);
    await db.close();

    // Attempt 3 finishes the night: light sleep is carried over, not repeated.
    await reopen();
    const asked3 = model.tasks.length;
    const result = await runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual' });
    expect(result).toMatchObject({ status: 'done', error: null });
    expect(result.steps).toEqual(Object.fromEntries(SLEEP_STEP_IDS.map((id) => [id, 'done'])));
    expect((await db.query(`SELECT status, reason FROM sleep_steps WHERE run_id = $1 AND step_id = 'light-sleep'`, [result.runId])).rows).toEqual([
      { status: 'done', reason: `done in run ${run2}` },
    ]);
    expect(model.tasks.slice(asked3).filter((t) => t.purpose === 'light-sleep')).toHaveLength(0);

    const anchors = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'anchor' GROUP BY day, conversation_id`)).rows;
    expect(anchors).toEqual([{ n: 1 }]);
    const sources = (await db.query<{ ids: string[] }>(`SELECT source_message_ids AS ids FROM memories WHERE source = 'light-sleep'`)).rows.flatMap(
      (r) => r.ids,
    );
    expect(sources.length).toBeGreaterThan(0);
    expect(new Set(sources).size).toBe(sources.length);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'dream'`)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks WHERE kind = 'digest'`)).toBe(1);

    // Running the finished night once more reads nothing twice and dreams nothing twice.
    const blocks = await count(`SELECT count(*)::int AS n FROM diary_blocks`);
    const memories = await count(`SELECT count(*)::int AS n FROM memories`);
    const again = await runCycle(db, buildSteps(deps), { sleepDay: TODAY, trigger: 'manual' });
    expect(again.status).toBe('done');
    expect(await count(`SELECT count(*)::int AS n FROM auto_llm_runs WHERE run_id = $1 AND purpose IN ('light-sleep', 'dream')`, [again.runId])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM diary_blocks`)).toBe(blocks);
    expect(await count(`SELECT count(*)::int AS n FROM memories`)).toBe(memories);

    // None of it wrote a message or a conversation.
    expect([await count(messages), await count(`SELECT count(*)::int AS n FROM conversations`)]).toEqual(totals);
  });

  it('refuses to rewrite or delete a diary block (only hiding is allowed)', async () => {
    const anchor = (await db.query<{ id: number; body: string }>(`SELECT id::int AS id, body FROM diary_blocks WHERE kind = 'anchor' LIMIT 1`)).rows[0]!;
    await expect(db.query(`UPDATE diary_blocks SET body = 'rewritten' WHERE id = $1`, [anchor.id])).rejects.toThrow(
      /append-only: block \d+ cannot be rewritten/,
    );
    await expect(db.query(`UPDATE diary_blocks SET mood = '{"valence": 1, "arousal": 1, "labels": []}' WHERE id = $1`, [anchor.id])).rejects.toThrow(
      /append-only/,
    );
    await expect(db.query(`DELETE FROM diary_blocks WHERE id = $1`, [anchor.id])).rejects.toThrow(/append-only: set hidden_at instead of deleting/);
    await db.query(`UPDATE diary_blocks SET hidden_at = now() WHERE id = $1`, [anchor.id]);
    await db.query(`UPDATE diary_blocks SET hidden_at = NULL WHERE id = $1`, [anchor.id]);
    expect((await db.query(`SELECT body FROM diary_blocks WHERE id = $1`, [anchor.id])).rows).toEqual([{ body: anchor.body }]);
  });

  it('keeps the last seven snapshots', async () => {
    // The dump itself is PGlite's (a real one is checked in the full night); here only the keeping counts.
    const dumping = { dumpDataDir: async () => new Blob([Buffer.from([0x1f, 0x8b, 0x08, 0x00])]) } as unknown as Database;
    const snapshot = { ...snapshotStep(depsFor(dumping, dir, { freeBytes: () => Number.MAX_SAFE_INTEGER })), dependsOn: [] };
    const written: string[] = [];
    for (let i = 1; i <= 9; i++) {
      const r = await runCycle(db, [snapshot], { sleepDay: day(i), trigger: 'schedule' });
      expect(r.status).toBe('done');
      written.push(`${day(i)}-run${r.runId}.tar.gz`);
    }
    expect(fs.readdirSync(path.join(dir, 'snapshots')).sort()).toEqual(written.slice(2).sort());
  });

  it('waits for a quiet moment before the snapshot, and while the person keeps chatting leaves it and deep sleep to the next night', async () => {
    // The dump pauses the database for a second or two: it never happens mid-conversation.
    const dumps: number[] = [];
    const dumping = { dumpDataDir: async () => (dumps.push(Date.now()), new Blob([Buffer.from([0x1f, 0x8b, 0x08, 0x00])])) } as unknown as Database;
    const deep: SleepStep = { id: 'deep-sleep', dependsOn: ['snapshot'], run: async () => ({ ran: 1 }) };
    const chatting = {
      ...snapshotStep(depsFor(dumping, dir, { freeBytes: () => Number.MAX_SAFE_INTEGER, quietForMs: () => 0, snapshotWaitMs: 300 })),
      dependsOn: [],
    };
    const busy = await runCycle(db, [chatting, deep], { sleepDay: day(20), trigger: 'manual' });
    expect(busy).toMatchObject({ status: 'done', steps: { snapshot: 'skipped', 'deep-sleep': 'skipped' }, error: null });
    expect(dumps).toHaveLength(0);
    const reasons = (
      await db.query<{ step_id: string; reason: string }>(`SELECT step_id, reason FROM sleep_steps WHERE run_id = $1 ORDER BY step_id`, [busy.runId])
    ).rows;
    expect(reasons).toEqual([
      { step_id: 'deep-sleep', reason: 'needs snapshot, which was skipped' },
      { step_id: 'snapshot', reason: expect.stringMatching(/^you were chatting/) },
    ]);

    // The person stops typing during the wait: the copy is taken once they have been quiet long enough.
    const quietFrom = performance.now() + 200;
    const pausing = {
      ...snapshotStep(
        depsFor(dumping, dir, {
          freeBytes: () => Number.MAX_SAFE_INTEGER,
          quietForMs: () => (performance.now() < quietFrom ? 0 : 10_000),
          snapshotWaitMs: 5_000,
        }),
      ),
      dependsOn: [],
    };
    const quiet = await runCycle(db, [pausing, deep], { sleepDay: day(21), trigger: 'manual' });
    expect(quiet).toMatchObject({ status: 'done', steps: { snapshot: 'done', 'deep-sleep': 'done' } });
    expect(dumps).toHaveLength(1);
  });

  it('deep sleep makes at most six calls a night however large the store, and never proposes pins past 40', async () => {
    // 300 compound, overlapping memories: at 1024 tokens of context each round would need dozens of calls.
    const names = Array.from(
      { length: 300 },
      (_, i) => 'Ka Lo Mi Nu Pe Ri So Tu Va Ze'.split(' ')[i % 10]! + 'bcdfghjklm'[Math.floor(i / 10) % 10]! + 'aeiou'[Math.floor(i / 100)]! + 'n',
    );
    const contents = names.map((n) => `${n} from Oslo keeps bees on the roof; ${n} also sells honey at the harbour market on Saturdays.`);
    await db.query(
      `WITH m AS (INSERT INTO memories (type, content, source) SELECT 'world', c, 'user' FROM unnest($1::text[]) AS c RETURNING id)
       INSERT INTO memory_changes (memory_id, action, actor, after) SELECT id, 'create', 'person', '{}'::jsonb FROM m`,
      [contents],
    );
    // Beside them, not reviewed tonight (no journal entry) and about something else: 39 pinned
    // memories and three much-cited ones, so there is room for exactly one more pin.
    const others = names.slice(0, 42).map((n) => `${n}x painted the garden shed a bright ${['red', 'blue', 'green'][n.length % 3]} colour.`);
    await db.query(`INSERT INTO memories (type, content, source) SELECT 'world', c, 'user' FROM unnest($1::text[]) AS c`, [others]);
    await db.query(`UPDATE memories SET pinned = true, pin_order = id WHERE content = ANY($1::text[])`, [others.slice(0, 39)]);
    const cited = (
      await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE content = ANY($1::text[]) ORDER BY id`, [others.slice(39)])
    ).rows.map((r) => r.id);
    await db.query(`UPDATE memories SET reference_count = CASE id WHEN $1 THEN 9 WHEN $2 THEN 7 ELSE 6 END WHERE id = ANY($3::bigint[])`, [
      cited[0],
      cited[1],
      cited,
    ]);

    const deepOnly = () => [{ ...deepSleepStep(deps, modelForRun(deps)), dependsOn: [] }];
    const bulk = (await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE content = ANY($1::text[]) ORDER BY id`, [contents])).rows.map(
      (r) => r.id,
    );
    const callsOf = async (runId: number) =>
      (await db.query<{ purpose: string; n: number }>(`SELECT purpose, count(*)::int AS n FROM auto_llm_runs WHERE run_id = $1 GROUP BY purpose`, [runId]))
        .rows;
    const statsOf = async (runId: number) =>
      (await db.query<{ stats: Record<string, number> }>(`SELECT stats FROM sleep_steps WHERE run_id = $1`, [runId])).rows[0]!.stats;
    /** The new memory each contradiction group of a run starts with, in order. */
    const heads = async (runId: number) => {
      const prompts = (
        await db.query<{ prompt: string }>(`SELECT prompt FROM auto_llm_runs WHERE run_id = $1 AND purpose = 'deep-sleep:contradictions' ORDER BY id`, [runId])
      ).rows;
      return prompts.flatMap(({ prompt }) => {
        const lines = prompt.split('\n');
        return lines.flatMap((l, i) => (/^### Group \d+$/.test(l) ? [Number(MEMORY_LINE.exec(lines[i + 1]!.trim())![1])] : []));
      });
    };

    const r = await runCycle(db, deepOnly(), { sleepDay: day(20), trigger: 'manual' });
    expect(r.status).toBe('done');
    const calls = await callsOf(r.runId);
    expect(calls.reduce((n, c) => n + c.n, 0)).toBeLessThanOrEqual(6);
    expect(calls.find((c) => c.purpose === 'deep-sleep:contradictions')!.n).toBe(2);
    const stats = await statsOf(r.runId);
    expect(stats.calls).toBe(calls.reduce((n, c) => n + c.n, 0));
    // The cap held the night to what two calls a round can show; the other new memories wait.
    expect(stats.deferred_memories).toBeGreaterThan(0);
    expect(stats.reviewed! + stats.deferred_memories!).toBe(60);
    const shownFirst = await heads(r.runId);
    expect(shownFirst).toEqual(bulk.slice(0, shownFirst.length));

    const pins = async (runId: number) =>
      (await db.query<{ memory_id: number }>(`SELECT memory_id::int AS memory_id FROM sleep_proposals WHERE run_id = $1 AND action = 'pin'`, [runId])).rows.map(
        (p) => p.memory_id,
      );
    expect(await pins(r.runId)).toEqual([cited[0]]);
    await deps.store.pin(cited[0]!, true, 'person');
    expect(await count(`SELECT count(*)::int AS n FROM memories WHERE pinned AND status = 'active'`)).toBe(40);

    // The next night goes on with the first memory the last one could not show (none is skipped),
    // and with 40 pinned there is no room for another pin proposal.
    const active = new Set((await db.query<{ id: number }>(`SELECT id::int AS id FROM memories WHERE status = 'active'`)).rows.map((m) => m.id));
    const next = await runCycle(db, deepOnly(), { sleepDay: day(21), trigger: 'manual' });
    expect(next.status).toBe('done');
    expect((await callsOf(next.runId)).reduce((n, c) => n + c.n, 0)).toBeLessThanOrEqual(6);
    expect((await heads(next.runId))[0]).toBe(bulk.find((id) => id > shownFirst.at(-1)! && active.has(id)));
    expect(await pins(next.runId)).toEqual([]);
  });
});
