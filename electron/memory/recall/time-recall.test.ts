// Time-aware recall over a real on-disk PGlite: a question that names a time ("last week", "in
// March 2024", 上个月) ranks what was said — or became true — in that window a little higher, read
// from when the question was asked (`now`); it never drops what lies outside.
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
const msg: Record<string, string> = {};
const mem: Record<string, number> = {};
// Wednesday 15 May 2024, noon UTC: when the questions are asked.
const NOW = Date.UTC(2024, 4, 15, 12);
const UTC = { timeOffsetMinutes: 0 };

function names(hits: RecallHit[]): string[] {
  const byMessage = new Map(Object.entries(msg).map(([name, id]) => [id, name]));
  const byMemory = new Map(Object.entries(mem).map(([name, id]) => [id, name]));
  return hits.map((h) =>
    h.link.kind === 'message' ? (byMessage.get(h.link.messageId) ?? '?') : h.link.kind === 'memory' ? (byMemory.get(h.link.memoryId) ?? '?') : h.link.kind,
  );
}

beforeAll(async () => {
  dir = tempDataDir('anima-time-recall-');
  db = await openTestDatabase(dir);
  recall = new Recall({ db });
  const conversations = new Conversations(db);
  const say = async (name: string, when: string, content: string) => {
    const c = await conversations.create(name);
    msg[name] = (await conversations.append({ conversationId: c.id, role: 'user', content, status: 'complete', createdAt: new Date(when) })).id;
  };
  // The March turn matches the words better (shorter, "hiking" twice); the May one was said last week.
  await say('march', '2024-03-02T10:00:00Z', 'Hiking, hiking: the hills.');
  await say('lastWeek', '2024-05-08T18:00:00Z', 'We went hiking up the mountain ridge on Saturday, long and windy day.');
  await say('chinese', '2024-04-20T09:00:00Z', '我们去爬山了，风景很好。');
  await say('chineseOld', '2023-11-02T09:00:00Z', '爬山');
  // Two rides: the older one says more about it (a better match), the newer one is the answer to "most recently".
  await say('bus', '2024-02-27T06:00:00Z', 'Back from a bus ride to a wedding, a long bus ride.');
  await say('train', '2024-03-03T19:00:00Z', 'I took the train to see my family today, two hours through green hills and small towns.');
  const store = new MemoryStore(db);
  mem.marchFact = (
    await store.create({ type: 'experience', content: 'Sam ran a half marathon.', source: 'user', actor: 'person', validFrom: '2024-03-10T00:00:00Z' })
  ).memory.id;
  mem.mayFact = (
    await store.create({
      type: 'experience',
      content: 'Sam ran a half marathon in the rain and finished strong.',
      source: 'user',
      actor: 'person',
      validFrom: '2024-05-05T00:00:00Z',
    })
  ).memory.id;
});

afterAll(async () => {
  await db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('time-aware recall', () => {
  it('ranks what was said in the window the question names first, and keeps the rest', async () => {
    const plain = await recall.search({ query: 'Any hiking?', sources: ['session'], now: NOW, ...UTC });
    expect(names(plain)).toEqual(['march', 'lastWeek']);
    const lastWeek = await recall.search({ query: 'Any hiking last week?', sources: ['session'], now: NOW, ...UTC });
    expect(names(lastWeek)).toEqual(['lastWeek', 'march']);
    const march = await recall.search({ query: 'Any hiking in March 2024?', sources: ['session'], now: new Date(NOW), ...UTC });
    expect(names(march)).toEqual(['march', 'lastWeek']);
    // Off (measurement): the plain order.
    const off = await recall.search({ query: 'Any hiking last week?', sources: ['session'], now: NOW, ...UTC, timeAware: false });
    expect(names(off)).toEqual(['march', 'lastWeek']);
  });

  it('ranks the newer of what matches first when the question asks for the newest', async () => {
    const plain = await recall.search({ query: 'Which ride did I take, bus or train?', sources: ['session'], now: NOW, ...UTC });
    expect(names(plain)).toEqual(['bus', 'train']);
    const newest = await recall.search({ query: 'Which ride did I take most recently, bus or train?', sources: ['session'], now: NOW, ...UTC });
    expect(names(newest)).toEqual(['train', 'bus']);
    // Off (measurement): the plain order.
    const off = await recall.search({ query: 'Which ride did I take most recently, bus or train?', sources: ['session'], now: NOW, ...UTC, latestGain: 0 });
    expect(names(off)).toEqual(['bus', 'train']);
  });

  it('reads the window from the time the question was asked, not the clock', async () => {
    // Asked in early March 2024, "last week" is the end of February: the March turn lies within its reach.
    const asked = await recall.search({ query: 'hiking last week', sources: ['session'], now: '2024-03-04T12:00:00Z', ...UTC });
    expect(names(asked)).toEqual(['march', 'lastWeek']);
  });

  it('reads Chinese times', async () => {
    const hits = await recall.search({ query: '上个月爬山', sources: ['session'], now: NOW, ...UTC });
    expect(names(hits)).toEqual(['chinese', 'chineseOld']);
    const old = await recall.search({ query: '去年十一月爬山', sources: ['session'], now: NOW, ...UTC });
    expect(names(old)).toEqual(['chineseOld', 'chinese']);
  });

  it('ranks memories by the time they became true', async () => {
    const plain = await recall.search({ query: 'half marathon', sources: ['semantic'], now: NOW, ...UTC });
    expect(names(plain)).toEqual(['marchFact', 'mayFact']);
    const march = await recall.search({ query: 'half marathon in March', sources: ['semantic'], now: NOW, ...UTC });
    expect(names(march)).toEqual(['marchFact', 'mayFact']);
    const recent = await recall.search({ query: 'the half marathon two weeks ago', sources: ['semantic'], now: NOW, ...UTC });
    expect(names(recent)).toEqual(['mayFact', 'marchFact']);
  });

  it('a query of time words alone still searches them as words', async () => {
    const hits = await recall.search({ query: 'last week', sources: ['session'], now: NOW, ...UTC });
    expect(Array.isArray(hits)).toBe(true);
    // A bad `now` is the clock: no error.
    await expect(recall.search({ query: 'hiking yesterday', sources: ['session'], now: 'not a date' })).resolves.toBeInstanceOf(Array);
  });
});
