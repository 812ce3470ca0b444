import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../db/open.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { ENGLISH_STOP_WORDS, MAX_TERMS, buildQuery } from './query.js';

describe('buildQuery', () => {
  it('ORs the words, lowercased, stop words out', () => {
    const q = buildQuery('When did Caroline go to the LGBTQ support group?');
    expect(q.terms).toEqual(['caroline', 'go', 'lgbtq', 'support', 'group']);
    expect(q.tsquery).toBe("'caroline' | 'go' | 'lgbtq' | 'support' | 'group'");
    expect(q.plainOr).toBe(true);
    expect(q.trigramText).toBe('caroline go lgbtq support group');
  });

  it('leaves out the words that only frame a question (how long, what kind of, in what ways)', () => {
    expect(buildQuery('How long has Nate had his turtles?').terms).toEqual(['nate', 'turtles']);
    expect(buildQuery('how many kids, how much money, how often, how far, how old, how soon').terms).toEqual(['kids', 'money']);
    expect(buildQuery('What kind of art does Caroline make? Which types of pottery?').terms).toEqual(['art', 'caroline', 'make', 'pottery']);
    expect(buildQuery('In what ways is Caroline helping?').terms).toEqual(['caroline', 'helping']);
    // The same words that say what the message is about stay.
    expect(buildQuery('a long walk, a kind friend, my type, the old town').terms).toEqual(['long', 'walk', 'kind', 'friend', 'type', 'old', 'town']);
    expect(buildQuery('what kind people').terms).toEqual(['kind', 'people']);
    expect(buildQuery('"how long" NOT kind').tsquery).toBe("( ( 'how' <-> 'long' ) & !'kind' )");
    expect(buildQuery('how long?').tsquery).toBeNull();
  });

  it('collapses repeated words', () => {
    expect(buildQuery('tea Tea TEA green').tsquery).toBe("'tea' | 'green'");
  });

  it('honours AND, OR and NOT', () => {
    expect(buildQuery('cats AND dogs').tsquery).toBe("( 'cats' & 'dogs' )");
    expect(buildQuery('cats OR dogs').tsquery).toBe("'cats' | 'dogs'");
    expect(buildQuery('cats NOT dogs').tsquery).toBe("( 'cats' & !'dogs' )");
    expect(buildQuery('NOT dogs cats').tsquery).toBe("( !'dogs' & 'cats' )");
    expect(buildQuery('tea AND green coffee').tsquery).toBe("( 'tea' & 'green' ) | 'coffee'");
    expect(buildQuery('cats NOT dogs').terms).toEqual(['cats']);
    expect(buildQuery('cats AND dogs').plainOr).toBe(false);
    // lower-case "and", "or", "not" are words (stop words), not operators
    expect(buildQuery('cats and dogs').tsquery).toBe("'cats' | 'dogs'");
  });

  it('keeps quoted phrases together, straight or curly quotes', () => {
    const q = buildQuery('"support group" meeting');
    expect(q.tsquery).toBe("( 'support' <-> 'group' ) | 'meeting'");
    expect(q.phrases).toEqual(['support group']);
    expect(q.terms).toEqual(['meeting']);
    expect(q.positiveWords).toEqual(['support', 'group', 'meeting']);
    expect(buildQuery('“green tea”').tsquery).toBe("( 'green' <-> 'tea' )");
  });

  it('treats an unbalanced quote as punctuation', () => {
    expect(buildQuery('say "hello world').tsquery).toBe("'say' | 'hello' | 'world'");
    expect(buildQuery('"a" "b c" "d').tsquery).toBe("( 'b' <-> 'c' ) | 'd'");
  });

  it('turns a CJK run longer than two characters into an OR of bigrams (and jieba words)', () => {
    const q = buildQuery('「你的邮箱是啥」');
    expect(q.terms).toContain('邮箱');
    expect(q.terms).not.toContain('你的'); // function characters only
    expect(q.terms).not.toContain('是啥');
    expect(q.terms).toEqual(['邮箱', '的邮', '箱是']);
    expect(q.tsquery).toBe("( '邮箱' | '的邮' | '箱是' )");
    // a short run is itself; a quoted run keeps adjacency
    expect(buildQuery('邮箱').tsquery).toBe("'邮箱'");
    expect(buildQuery('"复旦大学读书"').tsquery).toBe("( '复旦大学' <-> '读书' )");
    // mixed CJK / Latin
    expect(buildQuery('我的email是foo@example.com').terms).toEqual(['email', 'foo@example.com']);
  });

  it('never throws, and says when there is nothing to search for', () => {
    for (const bad of [
      '',
      '   ',
      '?!…',
      '...',
      'AND',
      'NOT',
      'OR',
      'AND NOT OR',
      'NOT cats',
      '😀🎉',
      '"',
      '""',
      '"the"',
      'the of and',
      '的了吗',
      'x'.repeat(100_000),
    ]) {
      const q = buildQuery(bad);
      expect(q.tsquery, bad.slice(0, 20)).toBeNull();
      expect(q.terms).toEqual([]);
    }
    expect(buildQuery(undefined as unknown as string).tsquery).toBeNull();
    expect(buildQuery(42 as unknown as string).tsquery).toBeNull();
  });

  it('keeps the start of a huge query, at most MAX_TERMS terms', () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `word${i}`).join(' '); // ~130 KB
    const q = buildQuery(words);
    expect(q.truncated).toBe(true);
    expect(q.terms.length).toBe(MAX_TERMS);
    expect(q.terms[0]).toBe('word0');
  });

  it('makes SQL-looking text into plain words', () => {
    const q = buildQuery("'; DROP TABLE messages; -- \\' OR 1=1");
    expect(q.terms).toEqual(['drop', 'table', 'messages', '1']);
    expect(q.tsquery).toBe("'drop' | 'table' | 'messages' | '1'");
  });
});

describe('buildQuery against Postgres', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    dir = tempDataDir('anima-query-');
    db = await openDatabase(dir, { template: dbTemplate() });
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uses the same stop words as to_tsvector("english")', async () => {
    const rows = (
      await db.query<{ w: string; v: string }>(`SELECT w, to_tsvector('english', w)::text AS v FROM unnest($1::text[]) AS w`, [[...ENGLISH_STOP_WORDS]])
    ).rows;
    expect(rows.filter((r) => r.v !== '').map((r) => r.w)).toEqual([]);
  });

  it('every query it builds is valid for to_tsquery', async () => {
    const inputs = [
      'When did Caroline go to the LGBTQ support group?',
      'cats NOT dogs',
      '"support group" AND NOT "the"',
      '「你的邮箱是啥」',
      "'; DROP TABLE messages; --",
      "O'Brien's \\\\ back\\slash 'quote' ''",
      'a AND AND b OR OR NOT NOT c',
      '我爱☕coffee 咖啡 and tea',
      'node.js 3.5 foo@example.com e-mail',
      Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' '),
    ];
    for (const input of inputs) {
      const q = buildQuery(input);
      expect(q.tsquery).not.toBeNull();
      const row = (await db.query<{ q: string }>(`SELECT to_tsquery('english', $1)::text AS q`, [q.tsquery])).rows[0]!;
      expect(typeof row.q).toBe('string');
    }
  });
});
