// Irregular forms joined to their base (lexemes.ts): the table agrees with what Postgres's 'english'
// stemmer makes of the words, and recall over a real on-disk PGlite finds a memory said in one form
// by a question asked in another.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../db/open.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { MemoryStore } from '../store.js';
import { Recall } from './index.js';
import { IRREGULAR_LEXEMES, canonicalLexeme } from './lexemes.js';
import { parseTsvector } from './lexical-index.js';

/** The words whose stem is not the word itself; every other lexeme of the table is its own word. */
const WORD_OF: Record<string, string> = {
  awak: 'awake',
  awok: 'awoke',
  becom: 'become',
  becam: 'became',
  choos: 'choose',
  fli: 'fly',
  forgiv: 'forgive',
  freez: 'freeze',
  leav: 'leave',
  mistak: 'mistake',
  mous: 'mouse',
};

let db: Database;
let dir: string;

beforeAll(async () => {
  dir = tempDataDir('anima-lexemes-');
  db = await openDatabase(dir, { template: dbTemplate() });
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the table of irregular forms', () => {
  it("holds Postgres's own lexemes of the forms and of their bases", async () => {
    const lexemes = [...new Set([...IRREGULAR_LEXEMES.keys(), ...IRREGULAR_LEXEMES.values()])];
    expect(lexemes.length).toBeGreaterThan(200);
    const words = lexemes.map((l) => WORD_OF[l] ?? l);
    const rows = (await db.query<{ w: string; v: string }>(`SELECT w, to_tsvector('english', w)::text AS v FROM unnest($1::text[]) AS w`, [words])).rows;
    const stemmed = new Map(rows.map((r) => [r.w, r.v]));
    // A lexeme the stemmer never writes would join nothing; a stop word (did, was) is never indexed.
    expect(lexemes.filter((l, i) => stemmed.get(words[i]!) !== `'${l}':1`)).toEqual([]);
  });

  it('maps a form to its base and leaves every other lexeme as it is', () => {
    expect(canonicalLexeme('won')).toBe('win');
    expect(canonicalLexeme('bought')).toBe('buy');
    expect(canonicalLexeme('left')).toBe('leav');
    expect(canonicalLexeme('children')).toBe('child');
    expect(canonicalLexeme('win')).toBe('win');
    expect(canonicalLexeme('tournament')).toBe('tournament');
    // Forms that are mostly another word stay apart: a bit, a rose, bored.
    for (const word of ['bit', 'rose', 'bore']) expect(canonicalLexeme(word)).toBe(word);
  });

  it('is read into every tsvector the indexes hold: two forms of one word count as one lexeme twice', () => {
    const v = parseTsvector(`'nate':1 'won':2 'win':6,9`);
    expect([...v.tf.entries()]).toEqual([
      ['nate', 1],
      ['win', 3],
    ]);
    expect(v.length).toBe(4);
  });
});

describe('recall', () => {
  const ids: Record<string, number> = {};
  let recall: Recall;

  beforeAll(async () => {
    const store = new MemoryStore(db);
    const memories: Record<string, string> = {
      tournament: 'Nate won a regional video game tournament and met new people there.',
      turtles: 'Nate has had turtles for three years; they keep him calm.',
      bicycle: 'Mara bought a second-hand green bicycle with a basket.',
      market: 'Mara likes the Saturday market by the river.',
      kids: 'Melanie took the children to the dinosaur museum.',
      pottery: 'Melanie signed up for a pottery class.',
    };
    for (const [name, content] of Object.entries(memories)) {
      ids[name] = (await store.create({ type: 'world', content, source: 'user', actor: 'person' })).memory.id;
    }
    recall = new Recall({ db });
  });

  const first = async (query: string) => {
    const [hit] = await recall.semantic({ query, limit: 3 });
    return hit?.link.kind === 'memory' ? hit.link.memoryId : null;
  };

  it('finds what a memory says in an irregular form by a question in the base form, and the other way round', async () => {
    expect(await first('When did Nate win a tournament?')).toBe(ids.tournament);
    expect(await first('What did Mara buy?')).toBe(ids.bicycle);
    expect(await first('Where did Melanie take her child?')).toBe(ids.kids);
    const store = new MemoryStore(db);
    const base = (await store.create({ type: 'world', content: 'Joanna wants to write a screenplay about loss.', source: 'user', actor: 'person' })).memory.id;
    expect(await first('What has Joanna written?')).toBe(base);
  });

  it('passive recall brings the memory said in the other form, with the coverage of both words', async () => {
    const passive = await recall.passive({ query: 'What did Mara buy?', limit: 5, minScore: 0, minRelativeScore: 0.5, maxChars: 2000, timeoutMs: 0 });
    expect(passive.memories.map((m) => m.id)).toEqual([ids.bicycle]);
  });
});
