// Related words over a real on-disk PGlite: a question's word also finds the turns that say a word
// near it in meaning (related-words.json, "kids" → "children"), below the turns that say the word
// itself; the weight 0 turns it off.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallHit } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { openTestDatabase, tempDataDir } from '../../testing/host.js';
import { Recall } from './index.js';
import table from './related-words.json';

let db: Database;
let recall: Recall;
let dir: string;
const msg: Record<string, string> = {};

function names(hits: RecallHit[]): string[] {
  const byMessage = new Map(Object.entries(msg).map(([name, id]) => [id, name]));
  return hits.map((h) => (h.link.kind === 'message' ? (byMessage.get(h.link.messageId) ?? '?') : h.link.kind));
}

beforeAll(async () => {
  dir = tempDataDir('anima-related-words-');
  db = await openTestDatabase(dir);
  recall = new Recall({ db });
  const conversations = new Conversations(db);
  // One conversation each: no turn lends its neighbour a share of its score.
  const say = async (name: string, content: string) => {
    const c = await conversations.create(name);
    msg[name] = (await conversations.append({ conversationId: c.id, role: 'user', content, status: 'complete' })).id;
  };
  await say('related', 'The children played in the garden until dark.');
  await say('unrelated', 'The weather was mild and the roads were quiet.');
  await say('own', 'The kids stayed home on Sunday.');
});

afterAll(async () => {
  await db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('related words', () => {
  it('finds a turn by a word near the question’s in meaning, below a turn with the word itself', async () => {
    expect(table.words.kids.split(' ')).toContain('children');
    const hits = await recall.search({ query: 'What did the kids do?', sources: ['session'] });
    expect(names(hits)).toEqual(['own', 'related']);
  });

  it('is off at weight 0', async () => {
    const hits = await recall.search({ query: 'What did the kids do?', sources: ['session'], relatedWordWeight: 0 });
    expect(names(hits)).toEqual(['own']);
  });
});
