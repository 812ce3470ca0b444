// Graph-aware recall over a real on-disk PGlite: the walk's scoring (decay per hop, edge weight,
// valid time, hidden and merged entities, hubs, the person and the companion), its place in recall
// (after the direct hits, on/off, restrictions), and memory_recall's entity option.
// The graph is written with SQL here, so each weight, count and status is exactly what a test says.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallHit } from '../../../shared/api.js';
import { recallTools } from '../../agent/tools/recall-tools.js';
import { openDatabase, type Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { MemoryStore } from '../store.js';
import { BONUS_BRANCHES, GRAPH_WEIGHT, fuse } from './fusion.js';
import { GRAPH_DECAY, graphWalk, resolveEntityName, specificity, type WalkInput } from './graph-walk.js';
import { GRAPH_WALK_DEFAULT, Recall } from './index.js';
import { warmIndexes } from './search.js';
import { Sidecar } from './sidecar.js';
import { RECALL_SOURCES } from '../../../shared/api.js';

let db: Database;
let recall: Recall;
let dir: string;
let conversations: Conversations;
let memories: MemoryStore;
const msg: Record<string, string> = {};
const seq: Record<string, number> = {};
const ent: Record<string, number> = {};
const mem: Record<string, number> = {};
let convSeed: string;
let convItems: string;
let convOther: string;
let convHub: string;
let convWeak: string;
const AT = new Date('2024-06-01T10:00:00Z');
let minute = 0;

async function say(conversationId: string, name: string, content: string): Promise<void> {
  const m = await conversations.append({ conversationId, role: 'user', content, status: 'complete', createdAt: new Date(AT.getTime() + minute++ * 60_000) });
  msg[name] = m.id;
  seq[name] = Number((await db.query<{ seq: number }>('SELECT seq::float8 AS seq FROM messages WHERE id = $1', [m.id])).rows[0]!.seq);
}

async function entity(
  name: string,
  o: { mentions?: number; status?: 'active' | 'hidden' | 'merged'; mergedInto?: number; kind?: string } = {},
): Promise<number> {
  const id = Number(
    (
      await db.query<{ id: number }>(
        `INSERT INTO entities (kind, name, name_key, mention_count, status, merged_into) VALUES ($1, $2, lower($2), $3, $4, $5) RETURNING id::float8 AS id`,
        [o.kind ?? 'person', name, o.mentions ?? 1, o.status ?? 'active', o.mergedInto ?? null],
      )
    ).rows[0]!.id,
  );
  ent[name] = id;
  return id;
}

async function edge(a: number, b: number, weight: number, o: { relation?: string; validFrom?: Date; validTo?: Date } = {}): Promise<void> {
  const relation = o.relation ?? 'co_mention';
  const [s, t] = relation === 'co_mention' && a > b ? [b, a] : [a, b];
  await db.query(`INSERT INTO entity_edges (source_id, target_id, relation, weight, valid_from, valid_to) VALUES ($1, $2, $3, $4, $5, $6)`, [
    s,
    t,
    relation,
    weight,
    o.validFrom ?? null,
    o.validTo ?? null,
  ]);
}

async function mention(entityId: number, where: { message?: string; memory?: number }): Promise<void> {
  await db.query(
    `INSERT INTO entity_mentions (entity_id, message_id, memory_id, surface, surface_key, origin, seen_at)
     VALUES ($1, $2, $3, $4, $4, 'detected', now())`,
    [entityId, where.message ? msg[where.message] : null, where.memory ?? null, `e${entityId}`],
  );
}

/** Message names of session hits and `mem:<name>` of semantic ones, in order. */
function named(hits: RecallHit[]): string[] {
  const byMsg = new Map(Object.entries(msg).map(([name, id]) => [id, name]));
  const byMem = new Map(Object.entries(mem).map(([name, id]) => [id, `mem:${name}`]));
  return hits.map((h) =>
    h.link.kind === 'message' ? (byMsg.get(h.link.messageId) ?? '?') : h.link.kind === 'memory' ? (byMem.get(h.link.memoryId) ?? '?') : h.link.kind,
  );
}

let walkSidecar: Sidecar | undefined;

/** A walk seeded by one message at full score. */
async function walkFrom(seed: string, extra: Partial<WalkInput> = {}, tuning = {}) {
  const sidecar = (walkSidecar ??= new Sidecar(db));
  await warmIndexes({ db, sidecar, vectors: null }, RECALL_SOURCES);
  const input: WalkInput = {
    direct: [{ source: 'session', key: seq[seed]!, score: 1 }],
    sources: ['session', 'semantic'],
    population: 100,
    depth: 30,
    ...extra,
  };
  return graphWalk(db, sidecar, input, tuning);
}

const itemsOf = (r: Awaited<ReturnType<typeof walkFrom>>, source: 'session' | 'semantic' = 'session') => r.lists.find((l) => l.source === source)?.items ?? [];
const namesOf = (items: { key: number }[]) => items.map((i) => Object.entries(seq).find(([, s]) => s === i.key)?.[0] ?? `?${i.key}`);

beforeAll(async () => {
  dir = tempDataDir('anima-graph-walk-');
  db = await openDatabase(dir, { template: dbTemplate() });
  recall = new Recall({ db });
  conversations = new Conversations(db);
  memories = new MemoryStore(db);
  convSeed = (await conversations.create('Seed')).id;
  convItems = (await conversations.create('Items')).id;
  convOther = (await conversations.create('Other')).id;
  convHub = (await conversations.create('Hub')).id;
  convWeak = (await conversations.create('Weak')).id;

  // The seed, and a weaker direct hit for the same words.
  await say(convSeed, 'seed', 'The quarterly garden report is finished at last.');
  await say(convWeak, 'weakDirect', 'Rain would help the garden.');
  // Items that share no word with the query: only the graph can reach them.
  await say(convItems, 'alder2', 'Alder fixed the gate on Sunday.');
  await say(convItems, 'birch', 'Birch called about the fence.');
  await say(convItems, 'cedar', 'Cedar sent a postcard from Porto.');
  await say(convItems, 'dogwood', 'Dogwood moved to Leeds in May.');
  await say(convItems, 'elm', 'Elm signed the lease yesterday.');
  await say(convItems, 'fir', 'Fir painted the shed blue.');
  await say(convItems, 'hazel', 'Hazel lost her keys again.');
  await say(convItems, 'ginkgo', 'Ginkgo came by with apples.');
  await say(convItems, 'quince', 'Quince is everywhere these days.');
  await say(convItems, 'oak', 'Oak waved from the bus.');
  await say(convOther, 'birchElsewhere', 'Birch phoned while we were out.');

  const alder = await entity('Alder');
  const birch = await entity('Birch');
  const cedar = await entity('Cedar');
  const dogwood = await entity('Dogwood');
  const elm = await entity('Elm');
  const fir = await entity('Fir');
  const hazel = await entity('Hazel', { status: 'hidden' });
  const ginkgo = await entity('Ginkgo', { status: 'merged', mergedInto: cedar });
  const quince = await entity('Quince', { mentions: 5000 });
  const oak = await entity('Oak');
  await mention(alder, { message: 'seed' });
  await mention(alder, { message: 'alder2' });
  await mention(birch, { message: 'birch' });
  await mention(birch, { message: 'birchElsewhere' });
  await mention(cedar, { message: 'cedar' });
  await mention(dogwood, { message: 'dogwood' });
  await mention(elm, { message: 'elm' });
  await mention(fir, { message: 'fir' });
  await mention(hazel, { message: 'hazel' });
  await mention(ginkgo, { message: 'ginkgo' });
  await mention(quince, { message: 'quince' });
  await mention(oak, { message: 'oak' });
  const past = new Date(Date.now() - 86_400_000);
  const future = new Date(Date.now() + 86_400_000);
  await edge(alder, birch, 4); // heaviest live edge of Alder
  await edge(alder, cedar, 1);
  await edge(alder, fir, 2, { relation: 'neighbour_of', validTo: future }); // ends tomorrow: holds now
  await edge(alder, elm, 10, { relation: 'married_to', validTo: past }); // ended: never walked
  await edge(alder, oak, 10, { relation: 'works_with', validFrom: future }); // starts tomorrow: not yet
  await edge(alder, hazel, 5); // hidden by the person
  await edge(alder, ginkgo, 5); // merged away
  await edge(alder, quince, 4); // as heavy as Birch, but Quince is named everywhere
  await edge(birch, dogwood, 4, { relation: 'friend_of' }); // two hops from Alder (read from its target end)
  await edge(dogwood, birch, 2); // a second edge between the two: one neighbour, by the heavier

  // Semantic memories reached through Birch: an active one and a forgotten one.
  mem.birchTea = (await memories.create({ type: 'preference', content: 'Birch prefers oolong.', source: 'user', actor: 'person' })).memory.id;
  mem.birchOld = (await memories.create({ type: 'world', content: 'Birch once lived by the docks.', source: 'user', actor: 'person' })).memory.id;
  await memories.forget(mem.birchOld, 'person');
  await mention(birch, { memory: mem.birchTea });
  await mention(birch, { memory: mem.birchOld });

  // A hub: 15 neighbours, weights 1…15, each named in its own message; the person and the companion
  // beside it.
  await say(convHub, 'hubSeed', 'The hub meeting agenda went out.');
  const hub = await entity('Hubert', { mentions: 3 });
  await mention(hub, { message: 'hubSeed' });
  await mention(1, { message: 'hubSeed' }); // the companion
  await mention(2, { message: 'hubSeed' }); // the person
  for (let i = 1; i <= 15; i++) {
    await say(convHub, `spoke${i}`, `Spoke number ${i} checked in.`);
    const id = await entity(`Spoke ${i}`);
    await mention(id, { message: `spoke${i}` });
    await edge(hub, id, i);
  }
  const hiddenSpoke = await entity('Spoke hidden', { status: 'hidden' });
  await edge(hub, hiddenSpoke, 100);
  // Reachable only through the person or the companion.
  await say(convHub, 'viaPerson', 'Zinnia planted tulips.');
  const zinnia = await entity('Zinnia');
  await mention(zinnia, { message: 'viaPerson' });
  await edge(2, zinnia, 50);
  await edge(1, zinnia, 50);
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('graph walk: scoring', () => {
  it('decays 0.7 a hop, relative to each node’s heaviest edge, with IDF-like damping', async () => {
    const r = await walkFrom('seed');
    const a = (name: string) => r.activation.get(ent[name]!);
    const spec = (mentions: number) => specificity(mentions, 100);
    expect(a('Alder')).toEqual({ value: spec(1), hop: 0 });
    // Birch is Alder's heaviest live edge (4): the whole decay; Cedar (1) a quarter of it.
    expect(a('Birch')!.hop).toBe(1);
    expect(a('Birch')!.value).toBeCloseTo(spec(1) * GRAPH_DECAY * 1 * spec(1), 10);
    expect(a('Cedar')!.value).toBeCloseTo(spec(1) * GRAPH_DECAY * 0.25 * spec(1), 10);
    expect(a('Fir')!.value).toBeCloseTo(spec(1) * GRAPH_DECAY * 0.5 * spec(1), 10);
    // Dogwood: two hops (Alder → Birch → Dogwood, Birch's heaviest edge): 0.7 × 0.7.
    expect(a('Dogwood')!.hop).toBe(2);
    expect(a('Dogwood')!.value).toBeCloseTo(a('Birch')!.value * GRAPH_DECAY * spec(1), 10);
    // Quince hangs on an edge as heavy as Birch's, but is named 5,000 times.
    expect(a('Quince')!.value).toBeCloseTo(a('Birch')!.value * spec(5000), 10);
    expect(a('Quince')!.value).toBeLessThan(a('Cedar')!.value);
  });

  it('ranks a one-hop neighbour’s item above a two-hop one, and a heavier edge above a lighter one', async () => {
    const order = namesOf(itemsOf(await walkFrom('seed')));
    // The seed's own entity first (hop 0), then by activation: Birch (1 hop, heaviest), Dogwood (2 hops
    // along heaviest edges), Fir (half weight), Cedar (quarter weight), Quince (named everywhere).
    // (Equal scores: the newer message first.)
    expect(order).toEqual(['alder2', 'birchElsewhere', 'birch', 'dogwood', 'fir', 'cedar', 'quince']);
    const items = itemsOf(await walkFrom('seed'));
    const score = (name: string) => items.find((i) => i.key === seq[name])!.score;
    expect(score('birch')).toBeGreaterThan(score('dogwood'));
    expect(score('fir')).toBeGreaterThan(score('cedar'));
  });

  it('never walks an edge that ended or has not begun, nor a hidden or merged entity', async () => {
    const r = await walkFrom('seed');
    for (const name of ['Elm', 'Oak', 'Hazel', 'Ginkgo']) expect(r.activation.has(ent[name]!), name).toBe(false);
    const order = namesOf(itemsOf(r));
    for (const name of ['elm', 'oak', 'hazel', 'ginkgo']) expect(order).not.toContain(name);
    // The closed edge (weight 10) does not count as Alder's heaviest either: Birch (4) still gets the whole decay.
    expect(r.activation.get(ent.Birch!)!.value).toBeCloseTo(r.activation.get(ent.Alder!)!.value * GRAPH_DECAY * specificity(1, 100), 10);
  });

  it('reads only a hub’s heaviest edges, never the person’s or the companion’s', async () => {
    const r = await walkFrom('hubSeed', {}, { fanout: 5, hops: 1 });
    const reached = [...r.activation.keys()].filter((id) => id !== ent.Hubert);
    // The five heaviest live edges (the hidden neighbour's 100 takes no slot).
    expect(reached.sort((x, y) => x - y)).toEqual([11, 12, 13, 14, 15].map((i) => ent[`Spoke ${i}`]!).sort((x, y) => x - y));
    expect(r.activation.has(1)).toBe(false);
    expect(r.activation.has(2)).toBe(false);
    expect(r.activation.has(ent.Zinnia!)).toBe(false);
    expect(namesOf(itemsOf(r))).toEqual(['spoke15', 'spoke14', 'spoke13', 'spoke12', 'spoke11']);
    // With the default fan-out every spoke is reached, still heaviest first.
    expect(namesOf(itemsOf(await walkFrom('hubSeed', {}, { hops: 1, fanout: 20 }))).slice(0, 3)).toEqual(['spoke15', 'spoke14', 'spoke13']);
  });

  it('scores active memories of the types asked for, and keeps to the conversations asked for', async () => {
    const r = await walkFrom('seed');
    expect(itemsOf(r, 'semantic').map((i) => i.key)).toEqual([mem.birchTea]);
    expect(itemsOf(await walkFrom('seed', { memoryTypes: ['world'] }), 'semantic')).toEqual([]);
    expect(itemsOf(await walkFrom('seed', { excludeMemoryIds: [mem.birchTea!] }), 'semantic')).toEqual([]);
    const inItems = namesOf(itemsOf(await walkFrom('seed', { conversationIds: [convSeed, convItems] })));
    expect(inItems).toContain('birch');
    expect(inItems).not.toContain('birchElsewhere');
    expect(await walkFrom('seed', { sources: ['limbic'] })).toMatchObject({ lists: [] });
  });

  it('leaves out the items the direct branches already ranked (unless re-ranking)', async () => {
    const direct = [
      { source: 'session' as const, key: seq.seed!, score: 1 },
      { source: 'session' as const, key: seq.birch!, score: 0.2 },
    ];
    const skipped = namesOf(itemsOf(await walkFrom('seed', { direct }, { seeds: 1 })));
    expect(skipped).not.toContain('birch');
    expect(skipped).toContain('birchElsewhere');
    expect(skipped).not.toContain('seed');
    const reranked = namesOf(itemsOf(await walkFrom('seed', { direct }, { seeds: 1, rerank: true })));
    expect(reranked).toContain('birch');
    expect(reranked).not.toContain('seed');
    // A seed is never scored, re-ranking or not.
    expect(namesOf(itemsOf(await walkFrom('seed', { direct }, { seeds: 2, rerank: true })))).not.toContain('birch');
  });
});

describe('graph walk in recall', () => {
  it('is off by default and on when asked; its items come after the direct hits', async () => {
    expect(GRAPH_WALK_DEFAULT).toBe(false);
    const plain = named(await recall.search({ query: 'quarterly garden report', sources: ['session', 'semantic'] }));
    expect(plain).toEqual(['seed', 'weakDirect']);
    expect(named(await recall.search({ query: 'quarterly garden report', sources: ['session', 'semantic'], graphWalk: false }))).toEqual(plain);

    const timings = { graphMs: 0, walks: 0 };
    const walked = await recall.detailed({ query: 'quarterly garden report', sources: ['session', 'semantic'], graphWalk: true, timings });
    const names = named(walked.map((d) => d.hit));
    expect(names.slice(0, 2)).toEqual(['seed', 'weakDirect']);
    expect(names).toEqual(expect.arrayContaining(['alder2', 'birch', 'dogwood', 'mem:birchTea']));
    expect(names.indexOf('birch')).toBeLessThan(names.indexOf('dogwood'));
    for (const never of ['elm', 'oak', 'hazel', 'ginkgo', 'mem:birchOld']) expect(names).not.toContain(never);
    expect(timings.walks).toBe(1);
    expect(timings.graphMs).toBeGreaterThan(0);
    // A direct hit keeps the score it had without the walk (the graph branch adds no ceiling).
    expect(walked[0]!.hit.score).toBe(1);
    expect(walked.find((d) => named([d.hit])[0] === 'weakDirect')!.hit.score).toBe(
      (await recall.search({ query: 'quarterly garden report', sources: ['session'] }))[1]!.score,
    );
  });

  it('takes a weight, 0 turning the branch off', async () => {
    const q = { query: 'quarterly garden report', sources: ['session' as const], graphWalk: true };
    expect(named(await recall.search({ ...q, graphWeight: 0 }))).toEqual(['seed', 'weakDirect']);
    const light = await recall.search({ ...q, graphWeight: 0.1 });
    const heavy = await recall.search({ ...q, graphWeight: 1 });
    const scoreOf = (hits: RecallHit[], name: string) => hits[named(hits).indexOf(name)]!.score;
    expect(scoreOf(heavy, 'birch')).toBeCloseTo(scoreOf(light, 'birch') * 10, 3);
    expect(GRAPH_WEIGHT).toBeGreaterThan(0);
  });

  it('keeps to the conversations asked for', async () => {
    const names = named(
      await recall.search({ query: 'quarterly garden report', sources: ['session'], conversationIds: [convSeed, convItems], graphWalk: true }),
    );
    expect(names).toContain('birch');
    expect(names).not.toContain('birchElsewhere');
    expect(names).not.toContain('weakDirect');
  });

  it('fuses bonus branches without raising the ceiling, scaled as full text where nothing else answered', () => {
    expect([...BONUS_BRANCHES].sort()).toEqual(['entity', 'graph']);
    const fused = fuse([
      { source: 'session', branch: 'fts', items: [{ key: 1, score: 2 }] },
      {
        source: 'session',
        branch: 'graph',
        items: [
          { key: 1, score: 1 },
          { key: 2, score: 0.5 },
        ],
        full: 1,
      },
      { source: 'semantic', branch: 'entity', items: [{ key: 9, score: 1 }] },
    ]);
    // session:1 is direct and graph-reached (1.25 before the clamp); semantic:9, the best of a source
    // only a bonus branch answered, scores what the entity branch's weight gives against full text's.
    expect(fused.map((f) => `${f.source}:${f.key}`)).toEqual(['session:1', 'semantic:9', 'session:2']);
    expect(fused.find((f) => f.key === 1)!.score).toBe(1); // clamped: direct and graph-reached
    expect(fused.find((f) => f.key === 9)!.score).toBeCloseTo(0.5, 10);
    expect(fused.find((f) => f.key === 2)!.score).toBeCloseTo((GRAPH_WEIGHT * 0.5) / 62 / (1 / 61), 10);
  });
});

describe('memory_recall about one entity', () => {
  const tool = () => recallTools(db, recall).find((t) => t.spec.name === 'memory_recall')!;
  let bob: number;

  beforeAll(async () => {
    const c = (await conversations.create('Bob')).id;
    await say(c, 'bobTea', 'Bob likes tea in the afternoon.');
    await say(c, 'bobBike', 'Bob fixed his bike.');
    await say(c, 'noBob', 'We drank tea at noon.');
    bob = await entity('Bob');
    await db.query(`INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, 'Bobby', 'bobby')`, [bob]);
    await mention(bob, { message: 'bobTea' });
    await mention(bob, { message: 'bobBike' });
    mem.bobTea = (await memories.create({ type: 'preference', content: 'Bob prefers green tea to coffee.', source: 'user', actor: 'person' })).memory.id;
    mem.teaOther = (await memories.create({ type: 'preference', content: 'Mina prefers black tea.', source: 'user', actor: 'person' })).memory.id;
    await mention(bob, { memory: mem.bobTea });
    await db.query(`INSERT INTO diary_blocks (day, kind, title, body) VALUES ('2024-06-01', 'anchor', NULL, 'A slow walk with Bob by the river.')`);
    await entity('Maria Lopez');
    await entity('Maria Chen');
    await entity('Vera', { status: 'hidden' });
  });

  it('describes the entity parameter', () => {
    const spec = tool().spec;
    expect(spec.description).toContain('entity');
    expect(spec.parameters).toMatchObject({ required: ['query'], properties: { entity: { type: 'string' } } });
  });

  it('lists everything that mentions it, newest first, when the query is empty', async () => {
    const out = await tool().run({ query: '', entity: 'Bob' });
    const lines = out.split('\n');
    expect(lines[0]).toBe('4 hits about Bob, newest first:');
    expect(out).toContain('Bob likes tea in the afternoon.');
    expect(out).toContain('Bob fixed his bike.');
    expect(out).toContain(`Bob prefers green tea to coffee. [[anima:${mem.bobTea}]]`);
    expect(out).toContain('[limbic · anchor · 2024-06-01] A slow walk with Bob by the river.');
    expect(out).not.toContain('We drank tea');
    expect(out).not.toContain('Mina');
  });

  it('ranks by the query within what mentions it, under any of its names', async () => {
    const out = await tool().run({ query: 'tea', entity: 'Bobby' });
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^\d+ hits about Bob, best first:$/);
    // What matches the words first, then the rest about Bob.
    expect(lines.slice(1, 3).join('\n')).toContain('Bob likes tea in the afternoon.');
    expect(lines.slice(1, 3).join('\n')).toContain('Bob prefers green tea to coffee.');
    expect(out).toContain('Bob fixed his bike.');
    expect(out).not.toContain('We drank tea');
    expect(out).not.toContain('Mina prefers black tea');
    // recall() takes entity ids directly, with the other restrictions.
    const hits = await recall.search({ query: 'tea', entityIds: [bob], sources: ['semantic'] });
    expect(hits.map((h) => h.link)).toEqual([{ kind: 'memory', memoryId: mem.bobTea }]);
  });

  it('tells the model when the name is unknown, ambiguous, hidden or not a name — never throws', async () => {
    const unknown = await tool().run({ query: 'tea', entity: 'Xavier Quill' });
    expect(unknown).toMatch(/^Error: No entity called "Xavier Quill" is known: .*Search without entity/);
    const ambiguous = await tool().run({ query: '', entity: 'Maria' });
    expect(ambiguous).toMatch(/^Error: "Maria" could be more than one entity: /);
    expect(ambiguous).toContain('"Maria Lopez"');
    expect(ambiguous).toContain('"Maria Chen"');
    expect(await tool().run({ query: '', entity: 'Vera' })).toMatch(/^Error: entity: the person hid "Vera"/);
    expect(await tool().run({ query: '', entity: '!!!' })).toMatch(/^Error: entity: /);
    expect(await tool().run({ query: 'tea', entity: 42 })).toBe('Error: entity must be a name (text), e.g. "Bob".');
    // Without an entity an empty query is still an error.
    expect(await tool().run({ query: '' })).toBe('Error: query is required: the words to look for.');
    expect((await resolveEntityName(db, 'Bobby')).ok).toBe(true);
  });
});
