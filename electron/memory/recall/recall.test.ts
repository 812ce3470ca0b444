// Recall over a real on-disk PGlite: each source, restriction, active-only, boolean queries, typos,
// CJK, bad input, and the in-memory index keeping up with writes.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallHit } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { openTestDatabase, tempDataDir } from '../../testing/host.js';
import { MemoryStore } from '../store.js';
import { Recall } from './index.js';

let db: Database;
let recall: Recall;
let dir: string;
let conversations: Conversations;
let store: MemoryStore;
let a: string; // conversation A
let b: string; // conversation B
const msg: Record<string, string> = {};
const mem: Record<string, number> = {};
const diary: Record<string, number> = {};
const SAID = new Date('2024-03-05T10:00:00Z');

async function say(conversationId: string, name: string, content: string, role: 'user' | 'assistant' = 'user', speaker: string | null = null) {
  const m = await conversations.append({ conversationId, role, content, status: 'complete', speaker, createdAt: SAID });
  msg[name] = m.id;
  return m;
}

/** The names of session hits, in order. */
function said(hits: RecallHit[]): string[] {
  const byId = new Map(Object.entries(msg).map(([name, id]) => [id, name]));
  return hits.map((h) => (h.link.kind === 'message' ? (byId.get(h.link.messageId) ?? '?') : h.link.kind));
}

async function addDiary(name: string, kind: string, title: string | null, body: string, day = '2024-03-05') {
  const r = await db.query<{ id: number }>(`INSERT INTO diary_blocks (day, kind, title, body) VALUES ($1, $2, $3, $4) RETURNING id::float8 AS id`, [
    day,
    kind,
    title,
    body,
  ]);
  diary[name] = Number(r.rows[0]!.id);
}

async function counts() {
  return (
    await db.query<{ m: number; c: number; mem: number; d: number }>(
      `SELECT (SELECT count(*) FROM messages)::int AS m, (SELECT count(*) FROM conversations)::int AS c,
              (SELECT count(*) FROM memories)::int AS mem, (SELECT count(*) FROM diary_blocks)::int AS d`,
    )
  ).rows[0]!;
}

beforeAll(async () => {
  dir = tempDataDir('anima-recall-');
  db = await openTestDatabase(dir);
  recall = new Recall({ db });
  conversations = new Conversations(db);
  store = new MemoryStore(db);
  a = (await conversations.create('Baking')).id;
  b = (await conversations.create('Allotment')).id;
  await say(a, 'sourdough', 'I baked sourdough bread this morning.');
  await say(a, 'crustQ', 'How did the crust turn out?', 'assistant');
  await say(a, 'crust', 'The crust was perfect, that education course really helped.');
  await say(a, 'gardenA', 'The garden needs water after the heatwave.');
  await say(b, 'gardenB', 'Our garden has tomatoes now.');
  await say(b, 'email', '我的邮箱是 mara@example.com');
  const m1 = await store.create({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon and works as a nurse.', source: 'user', actor: 'person' });
  const m2 = await store.create({ type: 'preference', content: 'Mara prefers green tea to coffee.', source: 'user', actor: 'person' });
  const m3 = await store.create({ type: 'world', content: 'The cat is called Pepper.', source: 'user', actor: 'person' });
  mem.lisbon = m1.memory.id;
  mem.tea = m2.memory.id;
  mem.cat = m3.memory.id;
  await addDiary('storm', 'anchor', null, 'A thunderstorm evening: the talk felt warm and close.');
  await addDiary('imprint', 'imprint', 'Laughing about the burnt crust', 'The crust story made us both laugh.');
  await addDiary('lighthouse', 'narrative', 'The lighthouse walk', 'We talked about the lighthouse Sam visited as a child.');
  await addDiary('dream', 'dream', null, 'I dreamt of a lighthouse made of bread.');
  await addDiary('digest', 'digest', 'Digest', 'lighthouse digest lighthouse lighthouse');
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('recall', () => {
  it('finds a semantic memory, with its type, text, time and link', async () => {
    const hits = await recall.search({ query: 'Where does Mara live these days?', sources: ['semantic'] });
    expect(hits.map((h) => h.link)).toEqual([
      { kind: 'memory', memoryId: mem.lisbon },
      { kind: 'memory', memoryId: mem.tea },
    ]);
    expect(hits[0]).toMatchObject({ source: 'semantic', memoryType: 'world', text: 'Sam’s sister Mara lives in Lisbon and works as a nurse.', score: 1 });
    expect(Date.parse(hits[0]!.time)).not.toBeNaN();
    expect(hits[1]!.memoryType).toBe('preference');
    expect(hits[1]!.score).toBeLessThan(1);
  });

  it('finds past conversation turns (session), linked to their message, with the turns after it', async () => {
    const hits = await recall.search({ query: 'sourdough', sources: ['session'] });
    expect(hits[0]).toEqual({
      source: 'session',
      memoryType: 'session',
      text: 'I baked sourdough bread this morning.',
      time: SAID.toISOString(),
      score: 1,
      link: { kind: 'message', conversationId: a, messageId: msg.sourdough },
    });
    // The next turn is a short question about it: the answer after that takes the topic's score × half
    // × TOPIC_GAIN 1.9 (strength 0.95 at rank 2: 0.95 × 61/62), still below the turn that names it; the
    // question shares half, × QUESTION_OWN 0.8 (0.4 × 61/63 at rank 3).
    expect(said(hits)).toEqual(['sourdough', 'crust', 'crustQ']);
    expect(hits[1]!.score).toBe(0.9347);
    expect(hits[2]!.score).toBe(0.3873);
  });

  it('finds limbic (anchors, imprints) and autobiographical (narratives) diary blocks, never dreams, digests or hidden blocks', async () => {
    const limbic = await recall.search({ query: 'thunderstorm', sources: ['limbic'] });
    expect(limbic).toEqual([
      {
        source: 'limbic',
        memoryType: 'limbic',
        text: 'A thunderstorm evening: the talk felt warm and close.',
        time: limbic[0]!.time,
        score: 1,
        link: { kind: 'diary', day: '2024-03-05', blockId: diary.storm },
      },
    ]);
    const auto = await recall.search({ query: 'lighthouse', sources: ['autobiographical'] });
    // The dream mentions a lighthouse too, but a dream is not something that happened.
    expect(auto.map((h) => (h.link.kind === 'diary' ? h.link.blockId : 0))).toEqual([diary.lighthouse]);
    expect(auto.find((h) => h.link.kind === 'diary' && h.link.blockId === diary.lighthouse)!.text).toBe(
      'The lighthouse walk — We talked about the lighthouse Sam visited as a child.',
    );
    expect(await recall.search({ query: 'lighthouse', sources: ['limbic'] })).toEqual([]);
    // Hidden by the person: out of recall at once, back after undo.
    await db.query('UPDATE diary_blocks SET hidden_at = now() WHERE id = $1', [diary.storm]);
    expect(await recall.search({ query: 'thunderstorm', sources: ['limbic'] })).toEqual([]);
    await db.query('UPDATE diary_blocks SET hidden_at = NULL WHERE id = $1', [diary.storm]);
    expect(await recall.search({ query: 'thunderstorm', sources: ['limbic'] })).toHaveLength(1);
  });

  it('returns one list over all four sources by default', async () => {
    const hits = await recall.search({ query: 'crust lisbon thunderstorm lighthouse' });
    expect(new Set(hits.map((h) => h.source))).toEqual(new Set(['semantic', 'session', 'limbic', 'autobiographical']));
    // best first
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
    expect((await recall.search({ query: 'crust lisbon thunderstorm lighthouse', limit: 2 })).length).toBe(2);
  });

  it('restricts session hits to the conversations asked for (statistics included)', async () => {
    const both = await recall.search({ query: 'garden', sources: ['session'] });
    expect(said(both)).toEqual(['gardenB', 'gardenA', 'email', 'crust', 'crustQ']);
    const onlyB = await recall.search({ query: 'garden', sources: ['session'], conversationIds: [b] });
    expect(said(onlyB)).toEqual(['gardenB', 'email']);
    expect(onlyB[0]!.link).toEqual({ kind: 'message', conversationId: b, messageId: msg.gardenB });
    expect(onlyB[0]!.score).toBe(1);
    expect(await recall.search({ query: 'garden', sources: ['session'], conversationIds: ['no-such-conversation'] })).toEqual([]);
    expect(await recall.search({ query: 'garden', sources: ['session'], conversationIds: [] })).toEqual([]);
  });

  it('ranks the neighbours of a matching turn: the answer after the question', async () => {
    const hits = await recall.search({ query: 'crust', sources: ['session'], conversationIds: [a] });
    // Both name the crust; the answer also takes its share of the short question before it, which holds no fact itself.
    expect(said(hits)).toEqual(['crust', 'crustQ', 'sourdough', 'gardenA']);
  });

  it('returns active memories only, and follows updates', async () => {
    expect((await recall.semantic({ query: 'cat Pepper' })).map((h) => h.link)).toEqual([{ kind: 'memory', memoryId: mem.cat }]);
    await store.forget(mem.cat!, 'person');
    expect(await recall.semantic({ query: 'cat Pepper' })).toEqual([]);
    expect(await recall.search({ query: 'cat Pepper' })).toEqual([]);
    await store.update(mem.tea!, { content: 'Mara prefers jasmine tea now.' }, 'person');
    expect((await recall.semantic({ query: 'jasmine' })).map((h) => h.text)).toEqual(['Mara prefers jasmine tea now.']);
    expect(await recall.semantic({ query: 'coffee' })).toEqual([]);
  });

  it('filters semantic hits by memory type', async () => {
    expect((await recall.semantic({ query: 'Mara', types: ['preference'] })).map((h) => h.link)).toEqual([{ kind: 'memory', memoryId: mem.tea }]);
    expect((await recall.semantic({ query: 'Mara', types: ['world'] })).map((h) => h.link)).toEqual([{ kind: 'memory', memoryId: mem.lisbon }]);
    expect(await recall.semantic({ query: 'Mara', types: ['procedural'] })).toEqual([]);
  });

  it('honours AND, NOT and phrases', async () => {
    // Matches of an explicit query are exactly what it asks for: no neighbours.
    expect(said(await recall.search({ query: 'garden NOT tomatoes', sources: ['session'] }))).toEqual(['gardenA']);
    expect(said(await recall.search({ query: 'garden AND tomatoes', sources: ['session'] }))).toEqual(['gardenB']);
    expect(said(await recall.search({ query: '"crust was perfect"', sources: ['session'] }))).toEqual(['crust']);
    expect(await recall.search({ query: '"perfect crust"', sources: ['session'] })).toEqual([]);
  });

  it('finds a misspelt word through the trigram branch', async () => {
    const hits = await recall.search({ query: 'educaton', sources: ['session'] });
    // its two neighbours tie, the newer row first; then the turn two before it
    expect(said(hits)).toEqual(['crust', 'gardenA', 'crustQ', 'sourdough']);
  });

  it('finds 「邮箱」 from 「你的邮箱是啥」', async () => {
    const hits = await recall.search({ query: '「你的邮箱是啥」', sources: ['session'] });
    expect(said(hits)).toEqual(['email', 'gardenB']);
    expect(hits[0]!.text).toBe('我的邮箱是 mara@example.com');
  });

  it('keeps up with new, streaming, replaced and background messages', async () => {
    const c = (await conversations.create('Later')).id;
    const streaming = await conversations.append({ conversationId: c, role: 'assistant', content: 'zeppelin', status: 'streaming' });
    expect(await recall.search({ query: 'zeppelin', sources: ['session'] })).toEqual([]);
    await conversations.finish(streaming.id, { content: 'A zeppelin flew over.', status: 'complete', error: null, model: null });
    expect((await recall.search({ query: 'zeppelin', sources: ['session'] })).map((h) => h.text)).toEqual(['A zeppelin flew over.']);
    const old = await conversations.append({ conversationId: c, role: 'user', content: 'kumquat first draft', status: 'complete' });
    expect((await recall.search({ query: 'kumquat', sources: ['session'] })).map((h) => h.text)).toEqual(['kumquat first draft', 'A zeppelin flew over.']);
    const edited = await conversations.append({ conversationId: c, role: 'user', content: 'kumquat second draft', status: 'complete' });
    await conversations.markReplaced([old.id], edited.id);
    // The replaced version is gone, and the turn before it is now the edited one's neighbour.
    expect((await recall.search({ query: 'kumquat', sources: ['session'] })).map((h) => h.text)).toEqual(['kumquat second draft', 'A zeppelin flew over.']);
    await db.query(`INSERT INTO conversations (id, kind, title) VALUES ('bg-1', 'background', 'Sleep')`);
    await conversations.append({ conversationId: 'bg-1', role: 'assistant', content: 'quokka notes from the night', status: 'complete' });
    expect(await recall.search({ query: 'quokka', sources: ['session'] })).toEqual([]);
  });

  it('gives the same answers after the index is dropped and rebuilt', async () => {
    const before = await recall.search({ query: 'garden crust lisbon lighthouse thunderstorm' });
    recall.drop();
    expect(await recall.search({ query: 'garden crust lisbon lighthouse thunderstorm' })).toEqual(before);
  });

  it('answers bad input with an empty list, never an SQL error, and changes nothing', async () => {
    const before = await counts();
    const bad = [
      '',
      '   ',
      '?!…;:()[]{}',
      'AND',
      'NOT',
      'AND NOT OR',
      '"',
      '"unbalanced quote',
      '😀🎉🔥',
      'x'.repeat(100_000),
      Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(' '),
      "'; DROP TABLE messages; --",
      "1' OR '1'='1",
      'garden\\\' OR \\"x',
      '我爱☕coffee 和 garden 花园',
      'NOT garden',
      '"the of"',
    ];
    for (const query of bad) {
      const hits = await recall.search({ query });
      expect(Array.isArray(hits), query.slice(0, 20)).toBe(true);
    }
    expect(await recall.search({ query: 'AND' })).toEqual([]);
    expect(await recall.search({ query: '😀🎉🔥' })).toEqual([]);
    expect(await recall.search({ query: 'NOT garden' })).toEqual([]);
    expect(said(await recall.search({ query: '我爱☕coffee 和 garden 花园', sources: ['session'] }))).toEqual([
      'gardenB',
      'gardenA',
      'email',
      'crust',
      'crustQ',
    ]);
    expect(await counts()).toEqual(before);
  });

  it('clamps the limit; unknown sources search nothing', async () => {
    expect((await recall.search({ query: 'garden crust', limit: 0 })).length).toBe(1);
    expect((await recall.search({ query: 'garden crust', limit: 1.7 })).length).toBe(1);
    expect(await recall.search({ query: 'garden', sources: ['nonsense' as 'session'] })).toEqual([]);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(recall.search({ query: 'garden', signal: controller.signal })).rejects.toThrow('stop');
  });
});
