// The entity graph from the sleep cycle, on real PGlite through the host API and the loopback model:
// light sleep's typed relations (resolved to entities, strengthened when said again, bad items
// dropped and counted), deep sleep closing the ones that ended (memories superseded, a single-valued
// relation replaced) with valid time and undo, observation profiles per entity (superseded by the
// next night's), and a night whose budget runs out just before the profile call.
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { answerSleepTask, findTask, sleepResponder, type SleepPurpose } from '../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, Entity, EntityEdge, Memory, SleepRun } from '../../shared/api.js';
import { nextDay } from '../../shared/sleep-day.js';
import { openDatabase, type Database } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import type { Host } from '../host/types.js';
import { listedId, stepDeps } from './testing/fixture.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { runCycle, type SleepStep } from './dag.js';
import {
  conversationHeading,
  dreamAnswer,
  ENTITY_HEADING,
  entityHeading,
  lightSleepAnswer,
  memoryLine,
  profileAnswer,
  TASK_PREFIX,
  transcriptLine,
  type LightSleepAnswer,
  type RelationItem,
} from './schemas.js';
import { deepSleepStep } from './steps/deep-sleep.js';
import { modelForRun, type SleepStepDeps } from './steps/deps.js';

const TODAY = new Date().toISOString().slice(0, 10);
const day = (offset: number) => nextDay(TODAY, offset);
const at = (d: string, hour: number, minute = 0) => new Date(`${d}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`);
const midnight = (d: string) => new Date(`${d}T00:00:00.000Z`).toISOString();

// ---- The model: scripted replies per task in front of the deterministic responder ----

type Reply = FakeResponse | ((prompt: string) => FakeResponse);
const responder = sleepResponder();
const model = {
  scripted: [] as { purpose: SleepPurpose; reply: Reply }[],
  /** Per-task fixed answers for what is not scripted (deep sleep's rounds answer "nothing" unless told). */
  fixed: {} as Partial<Record<SleepPurpose, unknown>>,
  tasks: [] as { purpose: SleepPurpose; prompt: string }[],
};
const json = (value: unknown): FakeResponse => ({ kind: 'text', text: JSON.stringify(value), chunks: 6 });
const NOTHING: Partial<Record<SleepPurpose, unknown>> = {
  'deep-sleep:contradictions': { operations: [] },
  'deep-sleep:split': { splits: [] },
  'deep-sleep:merge': { merges: [] },
};

/** The responder's light-sleep answer for the prompt, its memories replaced (citing the prompt's first message). */
const lightSleep =
  (memories: (ref: string) => LightSleepAnswer['memories']) =>
  (prompt: string): FakeResponse => {
    const a = answerSleepTask('light-sleep', prompt) as LightSleepAnswer;
    const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
    a.memories = memories(ref);
    return json(a);
  };

let fake: FakeLlm;
let blankDir: string;
const dirs: string[] = [];
const hosts: Host[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.respond = async (body) => {
    const task = findTask(body);
    if (!task) return undefined;
    model.tasks.push(task);
    const i = model.scripted.findIndex((s) => s.purpose === task.purpose);
    if (i >= 0) {
      const { reply } = model.scripted.splice(i, 1)[0]!;
      return typeof reply === 'function' ? reply(task.prompt) : reply;
    }
    const fixed = model.fixed[task.purpose];
    return fixed ? json(fixed) : responder(body);
  };
  blankDir = tempDataDir('anima-relations-blank-');
  dirs.push(blankDir);
  await (await openDatabase(blankDir, { template: dbTemplate() })).close();
});

afterAll(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await fake?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => fake.reset()); // a test that failed halfway leaves no replies queued for the next

function copyOfBlank(): string {
  const dir = tempDataDir('anima-relations-');
  fs.cpSync(blankDir, dir, { recursive: true });
  dirs.push(dir);
  return dir;
}

// ---- The host ----

interface Opened {
  host: Host;
  clock: { now: Date };
}

async function openHost(dir: string): Promise<Opened> {
  const clock = { now: at(TODAY, 12) };
  // A full disk: no snapshot dumps (deep sleep still runs).
  const host = await startTestHost({ dataDir: dir, now: () => clock.now, sleep: { tickMs: 0 }, freeBytes: () => 1 });
  hosts.push(host);
  await host.api['settings.update']({ timeZone: 'UTC' });
  await host.api['providers.save']({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  return { host, clock };
}

async function closeHost(o: Opened | undefined): Promise<void> {
  const i = o ? hosts.indexOf(o.host) : -1;
  if (i < 0) return;
  hosts.splice(i, 1);
  await o!.host.close();
}

async function night(host: Host): Promise<SleepRun> {
  const finished = nextEvent(host, 'sleep.finished', () => true) as Promise<ApiEvents['sleep.finished']>;
  const started = await host.api['sleep.now']({});
  const event = await finished;
  expect(event.runId).toBe(started.runId);
  const [run] = await host.api['sleep.runs']({ limit: 1 });
  return run!;
}

const statsOf = (run: SleepRun, stepId: string) => run.steps.find((s) => s.stepId === stepId)!.stats!;

async function say(host: Host, conversationId: string, content: string): Promise<void> {
  const done = nextEvent(host, 'chat.finished', (p: ApiEvents['chat.finished']) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  await done;
}

async function entityNamed(host: Host, name: string): Promise<Entity> {
  const found = (await host.api['graph.search']({ query: name })).find((e) => e.name === name);
  if (!found) throw new Error(`no entity named ${name}`);
  return found;
}

/** The typed relations of the graph as it was at `when` (now when undefined), as "Mara lives_in Lisbon". */
async function typedAt(host: Host, when?: string): Promise<string[]> {
  const slice = await host.api['graph.view']({ ...(when ? { at: when } : {}) });
  const name = new Map(slice.nodes.map((n) => [n.id, n.name]));
  return slice.edges
    .filter((e) => e.relation !== 'co_mention')
    .map((e) => `${name.get(e.source)} ${e.relation} ${name.get(e.target)}`)
    .sort();
}

async function typedEdges(host: Host, entityId: number): Promise<EntityEdge[]> {
  return (await host.api['graph.entity']({ id: entityId })).relations.filter((r) => r.relation !== 'co_mention');
}

// ---------------------------------------------------------------------------------------------

describe('typed relations and profiles over three nights', () => {
  const HOME = 'Mara lives in Lisbon.';
  const JOB = 'Mara moved to Lisbon for a job at the Tile Museum.';
  const MOVE = 'Mara moved to Porto.';
  let O: Opened;
  let first: SleepRun;
  let second: SleepRun;
  let third: SleepRun;
  let firstProfile: Memory;
  const memoryNamed = async (content: string) =>
    (await O.host.api['memories.list']({ statuses: ['active', 'superseded', 'expired'], limit: 200 })).items.find((m) => m.content === content)!;

  beforeAll(async () => {
    model.scripted.length = 0;
    model.fixed = NOTHING;
    const dir = copyOfBlank();
    const db = await openDatabase(dir);
    const conversations = new Conversations(db);
    const { id } = await conversations.create('News from Mara');
    for (const [i, [role, content]] of (
      [
        ['user', 'We finally moved! I live in Lisbon now, I found a job at the Tile Museum.'],
        ['assistant', 'That is wonderful news. How do you like the city?'],
      ] as const
    ).entries()) {
      await conversations.append({
        conversationId: id,
        role,
        content,
        status: 'complete',
        speaker: role === 'user' ? 'Mara' : null,
        createdAt: at(day(-10), 10, i * 2),
      });
    }
    await db.close();
    O = await openHost(dir);

    // Night 1: two memories that both say Mara lives in Lisbon, a relation of the person's, and four bad items.
    const bad = [
      { subject: 'Zed', relation: 'knows', object: 'Mara' },
      { subject: 'Mara', relation: 'Lives In!', object: 'Lisbon' },
      { subject: 'Mara', relation: 'likes', object: 'mara' },
      { subject: 'Mara' },
    ] as unknown as RelationItem[];
    model.scripted.push({
      purpose: 'light-sleep',
      reply: lightSleep((ref) => [
        {
          type: 'world',
          content: HOME,
          entities: ['Mara', 'Lisbon'],
          sources: [ref],
          validFrom: day(-10),
          relations: [
            { subject: 'Mara', relation: 'lives_in', object: 'Lisbon' },
            { subject: 'the person', relation: 'friend_of', object: 'Mara' },
          ],
        },
        {
          type: 'world',
          content: JOB,
          entities: ['Mara', 'Lisbon', 'Tile Museum'],
          sources: [ref],
          validFrom: day(-10),
          relations: [{ subject: 'mara', relation: 'lives in', object: 'Lisbon' }, { subject: 'Mara', relation: 'works_at', object: 'Tile Museum' }, ...bad],
        },
      ]),
    });
    first = await night(O.host);
    const mara = await entityNamed(O.host, 'Mara');
    firstProfile = (await O.host.api['graph.entity']({ id: mara.id })).profile!;

    // Night 2, a day later: Mara moved to Porto; deep sleep finds the job memory replaced by it.
    O.clock.now = at(day(1), 12);
    const chat = await O.host.api['conversations.create']({ title: 'Moving again' });
    await say(O.host, chat.id, 'Big news: I moved to Porto last week.');
    model.scripted.push(
      {
        purpose: 'light-sleep',
        reply: lightSleep((ref) => [
          {
            type: 'world',
            content: MOVE,
            entities: ['Mara', 'Porto'],
            sources: [ref],
            validFrom: day(-3),
            relations: [{ subject: 'Mara', relation: 'lives_in', object: 'Porto' }],
          },
        ]),
      },
      {
        purpose: 'deep-sleep:contradictions',
        reply: (prompt) => {
          const [older, newer] = [listedId(prompt, JOB), listedId(prompt, MOVE)];
          return json({ operations: older && newer ? [{ op: 'supersede', older, newer, reason: 'Mara left Lisbon and the museum job for Porto.' }] : [] });
        },
      },
    );
    second = await night(O.host);
  });

  afterAll(() => closeHost(O));

  it('light sleep stores the relations its memories state: the person by the fixed node, a repeat strengthened, bad items dropped and counted', async () => {
    expect(first.status).toBe('done');
    expect(statsOf(first, 'light-sleep')).toMatchObject({ memories_created: 2, relations_created: 3, relations_strengthened: 1, relations_dropped: 4 });
    const [home, job] = [await memoryNamed(HOME), await memoryNamed(JOB)];
    const [mara, lisbon, museum] = [await entityNamed(O.host, 'Mara'), await entityNamed(O.host, 'Lisbon'), await entityNamed(O.host, 'Tile Museum')];
    const lives = (await typedEdges(O.host, mara.id)).filter((e) => e.relation === 'lives_in' && e.target === lisbon.id);
    // One edge, said twice: weight 2, both memories as evidence, valid from the day it was said.
    expect(lives).toHaveLength(1);
    expect(lives[0]).toMatchObject({ source: mara.id, weight: 2, validFrom: midnight(day(-10)), evidenceMemoryIds: [home.id, job.id] });
    expect((await typedEdges(O.host, museum.id))[0]).toMatchObject({ source: mara.id, relation: 'works_at', evidenceMemoryIds: [job.id] });
    const friend = (await typedEdges(O.host, mara.id)).find((e) => e.relation === 'friend_of')!;
    expect(friend).toMatchObject({ source: 2, target: mara.id, evidenceMemoryIds: [home.id] });
    const history = (await O.host.api['graph.entity']({ id: mara.id })).history.map((c) => c.action);
    // Three relations from the first night, and the second night's move to Porto.
    expect(history.filter((a) => a === 'relate')).toHaveLength(4);
    expect(history.filter((a) => a === 'strengthen')).toHaveLength(1);
    // Nothing anywhere about "Zed", and no self-relation.
    expect((await O.host.api['graph.search']({ query: 'Zed' })).map((e) => e.name)).not.toContain('Zed');
    expect((await typedEdges(O.host, mara.id)).some((e) => e.source === e.target)).toBe(false);
  });

  it('deep sleep writes a profile per entity that gained facts, linked to it and shown by graph.entity', async () => {
    const deep = statsOf(first, 'deep-sleep');
    expect(deep).toMatchObject({ profiles: 3, relations_closed: 0 });
    const [home, job] = [await memoryNamed(HOME), await memoryNamed(JOB)];
    expect(firstProfile).toMatchObject({ type: 'observation', source: 'deep-sleep', entityNames: ['Mara'] });
    expect(firstProfile.content).toContain(HOME);
    expect(firstProfile.sourceMessageIds).toEqual(home.sourceMessageIds);
    const [call] = (await O.host.api['sleep.audit']({ limit: 50 })).items.filter((a) => a.runId === first.id && a.purpose === 'deep-sleep:profiles');
    const prompt = (await O.host.api['sleep.auditEntry']({ id: call!.id })).prompt;
    expect(prompt).toMatch(/^## Entity e\d — Mara \(person\)$/m);
    expect(prompt).toContain(`[#${job.id}]`);
    // The profile is the profile, not one of the facts.
    const detail = await O.host.api['graph.entity']({ id: (await entityNamed(O.host, 'Lisbon')).id });
    expect(detail.profile).toMatchObject({ type: 'observation', status: 'active', entityNames: ['Lisbon'] });
    expect(detail.facts.map((f) => f.id)).not.toContain(detail.profile!.id);
  });

  it('a later night closes the replaced and the unsupported relations at the time they ended; the graph at a date shows each', async () => {
    expect(second.status).toBe('done');
    expect(statsOf(second, 'light-sleep')).toMatchObject({ relations_created: 1 });
    expect(statsOf(second, 'deep-sleep')).toMatchObject({ superseded: 1, relations_closed: 2 });
    const [mara, lisbon, porto, museum] = [
      await entityNamed(O.host, 'Mara'),
      await entityNamed(O.host, 'Lisbon'),
      await entityNamed(O.host, 'Porto'),
      await entityNamed(O.host, 'Tile Museum'),
    ];
    const edges = await typedEdges(O.host, mara.id);
    const toLisbon = edges.find((e) => e.relation === 'lives_in' && e.target === lisbon.id)!;
    const toPorto = edges.find((e) => e.relation === 'lives_in' && e.target === porto.id)!;
    const job = edges.find((e) => e.relation === 'works_at' && e.target === museum.id)!;
    expect(toPorto).toMatchObject({ validFrom: midnight(day(-3)), validTo: null });
    expect(toLisbon).toMatchObject({ validFrom: midnight(day(-10)), validTo: toPorto.validFrom });
    // The job rested only on the memory deep sleep superseded: it ends where the newer one begins.
    expect(job.validTo).toBe(midnight(day(-3)));

    expect(await typedAt(O.host, at(day(-7), 12).toISOString())).toEqual(['Mara lives_in Lisbon', 'Mara works_at Tile Museum', 'You friend_of Mara']);
    expect(await typedAt(O.host, at(day(-1), 12).toISOString())).toEqual(['Mara lives_in Porto', 'You friend_of Mara']);
    expect(await typedAt(O.host)).toEqual(['Mara lives_in Porto', 'You friend_of Mara']);
    const closes = (await O.host.api['graph.entity']({ id: mara.id })).history.filter((c) => c.action === 'close');
    expect(closes).toHaveLength(2);
    for (const c of closes) expect(c).toMatchObject({ undoneBy: null });
  });

  it('the profile of an entity with new facts is superseded by the new one, and the link moves', async () => {
    expect(statsOf(second, 'deep-sleep')).toMatchObject({ profiles: 2, profiles_superseded: 1 });
    const mara = await entityNamed(O.host, 'Mara');
    const detail = await O.host.api['graph.entity']({ id: mara.id });
    expect(detail.profile!.id).not.toBe(firstProfile.id);
    expect(detail.profile).toMatchObject({ status: 'active', type: 'observation', entityNames: ['Mara'] });
    expect(detail.profile!.content).toContain(MOVE);
    const { memory: old, chain } = await O.host.api['memories.get']({ id: firstProfile.id });
    expect(old).toMatchObject({ status: 'superseded', supersededBy: detail.profile!.id });
    expect(chain.map((m) => m.id)).toEqual([firstProfile.id, detail.profile!.id]);
    expect((await O.host.api['graph.entity']({ id: (await entityNamed(O.host, 'Porto')).id })).profile).toMatchObject({ entityNames: ['Porto'] });
  });

  it('undo of a close reopens the relation, and the next night leaves it open', async () => {
    const [mara, lisbon] = [await entityNamed(O.host, 'Mara'), await entityNamed(O.host, 'Lisbon')];
    const close = (await O.host.api['graph.entity']({ id: lisbon.id })).history.find((c) => c.action === 'close')!;
    expect(close).toMatchObject({ entityId: mara.id, after: expect.objectContaining({ cause: 'replaced' }) });
    await O.host.api['graph.undo']({ changeId: close.id });
    expect((await typedEdges(O.host, mara.id)).find((e) => e.relation === 'lives_in' && e.target === lisbon.id)).toMatchObject({ validTo: null });
    expect(await typedAt(O.host)).toContain('Mara lives_in Lisbon');

    O.clock.now = at(day(2), 12);
    third = await night(O.host);
    expect(third.status).toBe('done');
    expect(statsOf(third, 'deep-sleep')).toMatchObject({ relations_closed: 0 });
    expect((await typedEdges(O.host, mara.id)).find((e) => e.relation === 'lives_in' && e.target === lisbon.id)).toMatchObject({ validTo: null });
  });
});

// ---------------------------------------------------------------------------------------------

describe('the night budget and the profile call', () => {
  let db: Database;
  let deps: SleepStepDeps;

  beforeAll(async () => {
    model.scripted.length = 0;
    model.fixed = {};
    const dir = copyOfBlank();
    db = await openDatabase(dir);
    deps = stepDeps(db, dir, { now: () => at(TODAY, 12), extra: { freeBytes: () => 1 } });
    await deps.selfLayer.ensureDefaults();
    const provider = await deps.providers.save({ kind: 'openai-compatible', name: 'fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await deps.settings.update({ chatProviderId: provider.id, timeZone: 'UTC' });
  });

  afterAll(async () => {
    if (!db.closed) await db.close();
  });

  it('over the budget just before the profile call, deep sleep stops cleanly; the next night writes the profile', async () => {
    const model = modelForRun(deps);
    // One call spent before deep sleep, so a budget of one call runs out exactly at the profile call.
    const spend: SleepStep = {
      id: 'spend',
      dependsOn: [],
      async run(ctx) {
        const bg = await model(ctx);
        const r = await bg.call({
          purpose: 'dream',
          stepId: ctx.stepId,
          runId: ctx.runId,
          instructions: 'Dream.',
          material: 'A river.',
          schema: dreamAnswer,
          maxTokens: 256,
          signal: ctx.signal,
        });
        return { calls: 1, ok: r.ok ? 1 : 0 };
      },
    };
    const deep = { ...deepSleepStep(deps, model), dependsOn: ['spend'] };
    const profileOf = async () =>
      (await db.query<{ id: number | null }>(`SELECT profile_memory_id::int AS id FROM entities WHERE name = 'Ines'`)).rows[0]?.id ?? null;
    const stepOf = async (runId: number) =>
      (
        await db.query<{ status: string; error: string | null; stats: Record<string, number> }>(
          `SELECT status, error, stats FROM sleep_steps WHERE run_id = $1 AND step_id = 'deep-sleep'`,
          [runId],
        )
      ).rows[0]!;

    // A first night profiles Ines (her memory has no neighbours, so deep sleep's only call is the profile).
    await deps.store.create({ type: 'world', content: 'Ines grows tomatoes on her balcony.', entityNames: ['Ines'], source: 'user', actor: 'person' });
    const one = await runCycle(db, [spend, deep], { sleepDay: day(30), trigger: 'manual' });
    expect(one.status).toBe('done');
    expect((await stepOf(one.runId)).stats).toMatchObject({ calls: 1, profiles: 1 });
    const before = await profileOf();
    expect(before).not.toBeNull();

    // She gains a fact; tonight the budget is one call, spent before deep sleep reaches the profiles.
    await deps.store.create({
      type: 'world',
      content: 'A grey cat called Miso sleeps on the windowsill.',
      entityNames: ['Ines'],
      source: 'user',
      actor: 'person',
    });
    await deps.settings.update({ sleep: { maxCallsPerNight: 1 } });
    const stopped = await runCycle(db, [spend, deep], { sleepDay: day(31), trigger: 'manual' });
    expect(stopped.status).toBe('stopped');
    expect(stopped.error).toMatch(/^Over tonight's budget for background work \(1 of 1 calls/);
    const step = await stepOf(stopped.runId);
    expect(step).toMatchObject({ status: 'stopped', stats: expect.objectContaining({ calls: 0, profiles: 0, reviewed: 1 }) });
    expect(await profileOf()).toBe(before);
    expect((await db.query(`SELECT 1 FROM auto_llm_runs WHERE run_id = $1 AND purpose = 'deep-sleep:profiles'`, [stopped.runId])).rows).toHaveLength(0);

    // The next night has its budget back: the new fact makes a new profile, superseding the first.
    await deps.settings.update({ sleep: { maxCallsPerNight: 60 } });
    const next = await runCycle(db, [spend, deep], { sleepDay: day(32), trigger: 'manual' });
    expect(next.status).toBe('done');
    expect((await stepOf(next.runId)).stats).toMatchObject({ profiles: 1, profiles_superseded: 1 });
    const after = await profileOf();
    expect(after).not.toBe(before);
    const rows = (
      await db.query<{ id: number; status: string; superseded_by: number | null; content: string }>(
        `SELECT id::int AS id, status, superseded_by::int AS superseded_by, content FROM memories WHERE id = ANY($1::bigint[]) ORDER BY id`,
        [[before, after]],
      )
    ).rows;
    expect(rows).toEqual([
      expect.objectContaining({ id: before, status: 'superseded', superseded_by: after }),
      expect.objectContaining({ id: after, status: 'active', superseded_by: null, content: expect.stringContaining('Miso') }),
    ]);
  });

  it('profiles no weekday, month or pronoun a model listed as a name; the person themself still gets one', async () => {
    await deps.store.create({
      type: 'experience',
      content: 'Ines took you to the flea market on Saturday, as every June.',
      entityNames: ['Ines', 'Saturday', 'June', 'You'],
      source: 'user',
      actor: 'person',
    });
    const night = await runCycle(db, [{ ...deepSleepStep(deps, modelForRun(deps)), dependsOn: [] }], { sleepDay: day(33), trigger: 'manual' });
    expect(night.status).toBe('done');
    const [call] = (await db.query<{ prompt: string }>(`SELECT prompt FROM auto_llm_runs WHERE run_id = $1 AND purpose = 'deep-sleep:profiles'`, [night.runId]))
      .rows;
    const listed = [...call!.prompt.matchAll(new RegExp(ENTITY_HEADING.source, 'gm'))].map((m) => m[2]);
    expect(listed.sort()).toEqual(['Ines', 'You']);
    const profiled = await db.query<{ name: string }>(`SELECT name FROM entities WHERE profile_memory_id IS NOT NULL ORDER BY name`);
    expect(profiled.rows.map((r) => r.name)).toEqual(['Ines', 'You']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the loopback model answers relations and profiles from the prompt', () => {
  it('reads typed relations off the lines it keeps, only between names the memory lists', () => {
    const prompt = [
      `${TASK_PREFIX}light-sleep`,
      conversationHeading('c1', 'News', '2026-03-01'),
      transcriptLine('m1', '2026-03-01 10:00', 'Mara', 'We finally moved! I live in Lisbon now and my sister Lena visits every spring.'),
      conversationHeading('c2', 'Chat', '2026-03-01'),
      transcriptLine('m2', '2026-03-01 11:00', 'Person', 'Since March I work at Nimbus Labs, my brother Tom found me the job.'),
    ].join('\n');
    const answer = lightSleepAnswer.parse(answerSleepTask('light-sleep', prompt));
    expect(answer.memories.map((m) => m.relations)).toEqual([
      [
        { subject: 'Mara', relation: 'lives_in', object: 'Lisbon' },
        { subject: 'Lena', relation: 'sister_of', object: 'Mara' },
      ],
      [
        { subject: 'the person', relation: 'works_at', object: 'Nimbus Labs' },
        { subject: 'Tom', relation: 'brother_of', object: 'the person' },
      ],
    ]);
  });

  it('writes one profile per listed entity from the facts under it, citing only those', () => {
    const facts = (ids: number[], texts: string[]) =>
      ids.map((id, i) => memoryLine({ id, type: 'world', content: texts[i]!, validFrom: null, validTo: null, createdAt: '2026-03-02T02:00:00Z' }));
    const prompt = [
      `${TASK_PREFIX}deep-sleep:profiles`,
      entityHeading('e1', 'Mara', 'person'),
      'My profile so far: Mara is a friend.',
      ...facts([4, 9], ['Mara lives in Porto.', 'Mara paints tiles.']),
      '',
      entityHeading('e2', 'Porto', 'place'),
      ...facts([4], ['Mara lives in Porto.']),
      '',
      entityHeading('e3', 'Nobody', 'person'),
    ].join('\n');
    const answer = profileAnswer.parse(answerSleepTask('deep-sleep:profiles', prompt));
    expect(answer.profiles.map((p) => [p.entity, p.sources])).toEqual([
      ['e1', [4, 9]],
      ['e2', [4]],
    ]);
    expect(answer.profiles[0]!.content).toMatch(/^Mara is someone I know.*Mara lives in Porto\. Mara paints tiles\.$/);
  });
});
