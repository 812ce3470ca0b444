// The pure parts of ranking: the tsvector reader, BM25 with neighbours and speaker, the trigram
// vocabulary, and weighted reciprocal rank fusion.
import { describe, expect, it } from 'vitest';
import { fuse } from './fusion.js';
import { LexicalIndex, parseTsvector } from './lexical-index.js';
import { Vocabulary, trigrams } from './vocabulary.js';

const vec = (text: string) => parseTsvector(text);

describe('parseTsvector', () => {
  it('reads lexemes, term frequencies and length', () => {
    const v = parseTsvector(`'carolin':1 'group':5,9A 'it''s':3 'e-mail':17 '邮箱':2`);
    expect([...v.tf.entries()]).toEqual([
      ['carolin', 1],
      ['group', 2],
      ["it's", 1],
      ['e-mail', 1],
      ['邮箱', 1],
    ]);
    expect(v.length).toBe(6);
    expect(parseTsvector('').length).toBe(0);
    expect(parseTsvector(null).tf.size).toBe(0);
    expect([...parseTsvector(`'a' 'b'`).tf.entries()]).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });
});

describe('LexicalIndex', () => {
  function small() {
    const index = new LexicalIndex();
    // conversation 0: three turns; conversation 1: one turn
    index.put(1, 0, vec(`'garden':1 'tomato':2`), { linkNeighbours: true, field: ['carolin'] });
    index.put(2, 0, vec(`'water':1`), { linkNeighbours: true, field: ['melani'] });
    index.put(3, 0, vec(`'rain':1 'garden':2,3`), { linkNeighbours: true, field: ['carolin'] });
    index.put(4, 1, vec(`'garden':1 'fenc':2`), { linkNeighbours: true });
    return index;
  }

  it('ranks by BM25 with idf from the searched scope', () => {
    const index = small();
    const hits = index.search(['garden'], { limit: 10 });
    expect(hits.map((h) => h.key)).toEqual([3, 4, 1]);
    // idf = ln(1 + (4 - 3 + 0.5) / (3 + 0.5)); doc 3: tf 2, length 3; average length 8/4
    const idf = Math.log(1 + 1.5 / 3.5);
    const bm = (tf: number, len: number, avg: number) => (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * len) / avg));
    expect(hits[0]!.score).toBeCloseTo(bm(2, 3, 2), 10);
    expect(hits[1]!.score).toBeCloseTo(bm(1, 2, 2), 10);
    // scoped to conversation 1: one document, its own statistics
    const scoped = index.search(['garden'], { limit: 10, scope: Uint8Array.from([0, 1]) });
    expect(scoped.map((h) => h.key)).toEqual([4]);
    expect(scoped[0]!.score).toBeCloseTo(Math.log(1 + 0.5 / 1.5) * 1, 10);
  });

  it('gives a turn a share of its neighbours’ scores, within its conversation', () => {
    const index = small();
    const plain = index.search(['tomato'], { limit: 10 });
    expect(plain.map((h) => h.key)).toEqual([1]);
    const withNeighbours = index.search(['tomato'], { limit: 10, neighbour: 0.5 });
    expect(withNeighbours.map((h) => h.key)).toEqual([1, 2]);
    expect(withNeighbours[1]!.score).toBeCloseTo(withNeighbours[0]!.score * 0.5, 10);
  });

  it('leaves out a weighted lexeme held by more docs than weightedMaxDf, and only a weighted one', () => {
    const index = small();
    const related = new Map([['garden', 0.1]]);
    // 'garden' (3 docs) as a related word: searched under a cap of 3, left out under a cap of 2.
    expect(index.search(['tomato', 'garden'], { limit: 10, weights: related, weightedMaxDf: 3 }).map((h) => h.key)).toEqual([1, 3, 4]);
    expect(index.search(['tomato', 'garden'], { limit: 10, weights: related, weightedMaxDf: 2 }).map((h) => h.key)).toEqual([1]);
    // The query's own words (no weight) are never left out.
    expect(index.search(['garden'], { limit: 10, weightedMaxDf: 1 }).map((h) => h.key)).toEqual([3, 4, 1]);
    // Within a scope, the docs counted are the scope's: conversation 0 holds 'garden' twice.
    const scope = new Uint8Array([1, 0]);
    expect(index.search(['tomato', 'garden'], { limit: 10, scope, weights: related, weightedMaxDf: 2 }).map((h) => h.key)).toEqual([1, 3]);
  });

  it('takes the better neighbour’s share, not both: a turn between two matches does not outrank them', () => {
    // A reply (2) between two turns on the topic (1, 3), each matching the query once, with no word of it itself.
    const index = new LexicalIndex();
    index.put(1, 0, vec(`'kayak':1 'lake':2`), { linkNeighbours: true });
    index.put(2, 0, vec(`'sound':1 'fun':2`), { linkNeighbours: true });
    index.put(3, 0, vec(`'kayak':1 'river':2`), { linkNeighbours: true });
    index.put(4, 1, vec(`'bake':1 'bread':2`), { linkNeighbours: true });
    const max = index.search(['kayak'], { limit: 10, neighbour: 0.75 });
    expect(max.map((h) => h.key)).toEqual([3, 1, 2]);
    expect(max[2]!.score).toBeCloseTo(max[0]!.score * 0.75, 10);
    // Summing both neighbours lifted the reply above the turns that say it (0.75 × 2 > 1 + 0.75 × 0).
    const sum = index.search(['kayak'], { limit: 10, neighbour: 0.75, neighbourMode: 'sum' });
    expect(sum[0]!.key).toBe(2);
  });

  it('counts a turn two away at its factor, in the same better-of, and never across conversations', () => {
    // conversation 0: the topic, a question between, the answer; conversation 1: a turn two after nothing.
    const index = new LexicalIndex();
    index.put(1, 0, vec(`'turtl':1 'boy':2`), { linkNeighbours: true });
    index.put(2, 0, vec(`'long':1`), { linkNeighbours: true });
    index.put(3, 0, vec(`'year':1 'joy':2`), { linkNeighbours: true });
    index.put(4, 1, vec(`'year':1`), { linkNeighbours: true });
    const only = index.search(['turtl'], { limit: 10, neighbour: 0.5 });
    expect(only.map((h) => h.key)).toEqual([1, 2]);
    const hits = index.search(['turtl'], { limit: 10, neighbour: 0.5, secondNeighbour: 0.75 });
    const score = (key: number) => hits.find((h) => h.key === key)!.score;
    expect(hits.map((h) => h.key)).toEqual([1, 2, 3]);
    expect(score(2)).toBeCloseTo(score(1) * 0.5, 10);
    expect(score(3)).toBeCloseTo(score(1) * 0.5 * 0.75, 10);
    // A nearer neighbour's own score wins the better-of when it is higher.
    index.put(2, 0, vec(`'turtl':1 'long':2 'ago':3`), { linkNeighbours: true });
    const again = index.search(['turtl'], { limit: 10, neighbour: 0.5, secondNeighbour: 0.75 });
    const own = (key: number) => index.search(['turtl'], { limit: 10 }).find((h) => h.key === key)!.score;
    expect(again.find((h) => h.key === 3)!.score).toBeCloseTo(0.5 * Math.max(own(2), 0.75 * own(1)), 10);
  });

  it('leaves out only far turns that cannot place: a short list is the head of the whole one', () => {
    // A turn two away whose speaker the query names can outrank the match itself (× 4 here).
    const named = new LexicalIndex();
    named.put(1, 0, vec(`'kayak':1`), { linkNeighbours: true, field: ['melani'] });
    named.put(2, 0, vec(`'sound':1`), { linkNeighbours: true, field: ['melani'] });
    named.put(3, 0, vec(`'year':1`), { linkNeighbours: true, field: ['carolin'] });
    for (let key = 4; key < 10; key++) named.put(key, key, vec(`'kayak':1 'lake':2 'cold':3 'wind':4`), { field: ['melani'] });
    const boosted = { neighbour: 0.5, secondNeighbour: 0.75, fieldBoost: 3 };
    expect(
      named
        .search(['kayak', 'carolin'], { ...boosted, limit: 3 })
        .map((h) => h.key)
        .slice(0, 2),
    ).toEqual([3, 1]);
    // A seeded pseudo-random chat: 400 turns in 8 conversations over a small vocabulary, two speakers, times.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
    const index = new LexicalIndex();
    for (let key = 1; key <= 400; key++) {
      const length = 1 + Math.floor(random() * 12);
      const text = Array.from({ length }, (_, i) => `'${words[Math.floor(random() * random() * words.length)]}':${i + 1}`).join(' ');
      index.put(key, key % 8, vec(text), { linkNeighbours: true, field: [key % 3 ? 'carolin' : 'melani'], time: key * 1000, asks: random() < 0.3 });
    }
    for (let q = 0; q < 60; q++) {
      const query = Array.from({ length: 1 + (q % 4) }, () => words[Math.floor(random() * words.length)]!);
      const options = {
        neighbour: 0.5,
        secondNeighbour: 0.75,
        neighbourLength: 6,
        fieldBoost: q % 2 ? 3 : 0,
        ...(q % 3 ? {} : { time: { from: 100_000, to: 200_000, inside: 3, outside: 0.9, ...(q % 2 ? {} : { latest: 2 }) } }),
        ...(q % 3 === 1 ? { time: { from: -Infinity, to: Infinity, inside: 1, outside: 1, latest: 3 } } : {}),
        // The topic before a short question reaches its answer, two away, at more than the turn two away's factor.
        ...(q % 4 === 1 ? {} : { question: { lexemes: 6, answerGain: 1.5, own: 0.8, topicGain: q % 4 === 0 ? 2 : 3 } }),
      };
      const whole = index.search([...query, 'carolin'], { ...options, limit: 1000 });
      expect(index.search([...query, 'carolin'], { ...options, limit: 5 })).toEqual(whole.slice(0, 5));
    }
  });

  it('gives a long turn a smaller neighbour share: it is matched by its own words', () => {
    // A short turn names the topic; after it a short reply and a long one (60 lexemes) without its word.
    const long = Array.from({ length: 60 }, (_, i) => `'w${i}':${i + 1}`).join(' ');
    const index = new LexicalIndex();
    index.put(1, 0, vec(`'kayak':1 'lake':2`), { linkNeighbours: true });
    index.put(2, 0, vec(`'sound':1 'fun':2`), { linkNeighbours: true });
    index.put(3, 1, vec(`'kayak':1 'river':2`), { linkNeighbours: true });
    index.put(4, 1, vec(long), { linkNeighbours: true });
    const hits = index.search(['kayak'], { limit: 10, neighbour: 0.5, neighbourLength: 30 });
    const score = (key: number) => hits.find((h) => h.key === key)!.score;
    expect(score(2)).toBeCloseTo(score(1) * 0.5, 10);
    expect(score(4)).toBeCloseTo(score(3) * 0.5 * (30 / 60), 10);
    // Without the length the long turn receives the whole share.
    const flat = index.search(['kayak'], { limit: 10, neighbour: 0.5 });
    expect(flat.find((h) => h.key === 4)!.score).toBeCloseTo(flat.find((h) => h.key === 3)!.score * 0.5, 10);
  });

  it('gives the answer to a short question more of its share, and the question less of its own score', () => {
    const long = Array.from({ length: 12 }, (_, i) => `'w${i}':${i + 2}`).join(' ');
    const index = new LexicalIndex();
    // A short question and its answer; a long request ending in a question and the reply to it.
    index.put(1, 0, vec(`'marri':1 'long':2`), { linkNeighbours: true, asks: true });
    index.put(2, 0, vec(`'year':1 'alreadi':2`), { linkNeighbours: true });
    index.put(3, 1, vec(`'marri':1 ${long}`), { linkNeighbours: true, asks: true });
    index.put(4, 1, vec(`'congratul':1`), { linkNeighbours: true });
    // A turn before the question: it is no answer to it.
    index.put(5, 2, vec(`'hello':1`), { linkNeighbours: true });
    index.put(6, 2, vec(`'marri':1 'long':2`), { linkNeighbours: true, asks: true });
    const question = { lexemes: 10, answerGain: 1.5, own: 0.8 };
    const plain = index.search(['marri', 'long'], { limit: 10, neighbour: 0.5 });
    const asked = index.search(['marri', 'long'], { limit: 10, neighbour: 0.5, question });
    const score = (hits: typeof plain, key: number) => hits.find((h) => h.key === key)!.score;
    expect(score(asked, 2)).toBeCloseTo(score(plain, 1) * 0.5 * 1.5, 10);
    expect(score(asked, 1)).toBeCloseTo(score(plain, 1) * 0.8, 10);
    // 13 lexemes: a request, not a short question — it and its reply score as without the rule.
    expect(score(asked, 3)).toBeCloseTo(score(plain, 3), 10);
    expect(score(asked, 4)).toBeCloseTo(score(plain, 4), 10);
    expect(score(asked, 5)).toBeCloseTo(score(plain, 5), 10);
  });

  it('gives the answer to a short question the score of the topic before the question, at its gain', () => {
    const index = new LexicalIndex();
    // The topic, a short question about it, the answer that holds none of the query's words.
    index.put(1, 0, vec(`'book':1 'nicol':2`), { linkNeighbours: true });
    index.put(2, 0, vec(`'take':1 'away':2`), { linkNeighbours: true, asks: true });
    index.put(3, 0, vec(`'self-accept':1 'support':2`), { linkNeighbours: true });
    // The same three turns where the one between is no question: its reply is a turn two away as any.
    index.put(4, 1, vec(`'book':1 'nicol':2`), { linkNeighbours: true });
    index.put(5, 1, vec(`'love':1 'read':2`), { linkNeighbours: true });
    index.put(6, 1, vec(`'movi':1 'tonight':2`), { linkNeighbours: true });
    // Another conversation's turn that names the book among many other words.
    index.put(7, 2, vec(`'book':1 'nicol':2 'shelf':3 'dust':4 'paint':5 'wall':6 'tabl':7 'lamp':8`), { linkNeighbours: true });
    const options = { limit: 10, neighbour: 0.5, secondNeighbour: 0.75 };
    const question = { lexemes: 10, answerGain: 1.5, own: 0.8 };
    const own = (key: number) => index.search(['book', 'nicol'], { limit: 10 }).find((h) => h.key === key)!.score;
    const without = index.search(['book', 'nicol'], { ...options, question });
    const withGain = index.search(['book', 'nicol'], { ...options, question: { ...question, topicGain: 2 } });
    const score = (hits: typeof without, key: number) => hits.find((h) => h.key === key)?.score ?? 0;
    expect(score(without, 3)).toBeCloseTo(own(1) * 0.5 * 0.75, 10);
    expect(score(withGain, 3)).toBeCloseTo(own(1) * 0.5 * 2, 10);
    expect(score(withGain, 6)).toBeCloseTo(own(4) * 0.5 * 0.75, 10);
    // Below the other conversation's mention without the gain, above it with it.
    expect(score(without, 3)).toBeLessThan(score(without, 7));
    expect(score(withGain, 3)).toBeGreaterThan(score(withGain, 7));
    // Found the same way when the limit leaves room for one far turn only.
    expect(index.search(['book', 'nicol'], { ...options, limit: 3, question: { ...question, topicGain: 2 } }).map((h) => h.key)).toContain(3);
  });

  it('boosts turns whose speaker the query names', () => {
    const index = small();
    const hits = index.search(['water', 'carolin'], { limit: 10, neighbour: 0.5, fieldBoost: 2 });
    // turn 2 (Melanie) matches "water"; its neighbours 1 and 3 are Caroline's: half of it, × 3
    expect(hits.map((h) => h.key)).toEqual([3, 1, 2]);
    expect(hits[0]!.score).toBeCloseTo(hits[2]!.score * 1.5, 10);
    expect(hits[1]!.score).toBe(hits[0]!.score);
  });

  it('boosts no speaker a related or look-alike word names', () => {
    const index = small();
    // "carolin" reached only as a weighted word (a related word, a trigram look-alike): no question about Caroline.
    const weights = new Map([['carolin', 0.08]]);
    const hits = index.search(['water', 'carolin'], { limit: 10, neighbour: 0.5, fieldBoost: 2, weights });
    expect(hits.map((h) => h.key)).toEqual([2, 3, 1]);
    expect(hits.find((h) => h.key === 3)!.score).toBeCloseTo(hits[0]!.score * 0.5, 10);
  });

  it('replaces and removes rows', () => {
    const index = small();
    index.put(2, 0, vec(`'garden':1`));
    expect(index.search(['water'], { limit: 10 })).toEqual([]);
    expect(
      index
        .search(['garden'], { limit: 10 })
        .map((h) => h.key)
        .sort(),
    ).toEqual([1, 2, 3, 4]);
    index.remove(3);
    expect(index.search(['rain'], { limit: 10 })).toEqual([]);
    expect(index.size).toBe(3);
    // removal unlinks: 2 is now next to nothing after it
    expect(index.search(['garden'], { limit: 10, only: new Set([index.slotOf(2)!]) }).map((h) => h.key)).toEqual([2]);
  });

  it('weights lexemes when asked', () => {
    const index = small();
    const full = index.search(['fenc'], { limit: 1 })[0]!.score;
    const half = index.search(['fenc'], { limit: 1, weights: new Map([['fenc', 0.5]]) })[0]!.score;
    expect(half).toBeCloseTo(full / 2, 10);
  });
});

describe('Vocabulary', () => {
  it('makes pg_trgm trigrams', () => {
    expect([...trigrams('cat')]).toEqual(['  c', ' ca', 'cat', 'at ']);
  });

  it('finds known words sharing most of an unknown word’s trigrams', () => {
    const v = new Vocabulary();
    v.addText('The education course and the educational trip; photography is fun. Support!');
    expect(v.match('educaton', 0.7, 3)).toEqual([{ word: 'education', similarity: 7 / 9 }]);
    expect(v.match('educaton', 0.6, 3)).toEqual([
      { word: 'education', similarity: 7 / 9 },
      { word: 'educational', similarity: 6 / 9 },
    ]);
    expect(v.match('photog', 0.7, 3)).toEqual([{ word: 'photography', similarity: 6 / 7 }]);
    expect(v.match('suport', 0.7, 3)).toEqual([{ word: 'support', similarity: 6 / 7 }]);
    expect(v.match('zebra', 0.7, 3)).toEqual([]);
    expect(v.has('Support')).toBe(true);
  });
});

describe('fuse (weighted reciprocal rank fusion)', () => {
  it('adds weight × strength / (k + rank) per branch and normalises per source', () => {
    const fused = fuse([
      {
        source: 'session',
        branch: 'fts',
        items: [
          { key: 1, score: 4 },
          { key: 2, score: 2 },
        ],
      },
      { source: 'session', branch: 'trigram', items: [{ key: 2, score: 1 }] },
      {
        source: 'semantic',
        branch: 'fts',
        items: [
          { key: 7, score: 9 },
          { key: 8, score: 0.9 },
        ],
      },
    ]);
    const ceiling = 1 / 61 + 0.5 / 61;
    expect(fused.map((f) => `${f.source}:${f.key}`)).toEqual(['semantic:7', 'session:1', 'session:2', 'semantic:8']);
    expect(fused[0]!.score).toBe(1);
    expect(fused[1]!.score).toBeCloseTo(1 / 61 / ceiling, 12);
    // second in full text at half the best's strength, first in trigram
    expect(fused[2]!.score).toBeCloseTo((0.5 / 62 + 0.5 / 61) / ceiling, 12);
    expect(fused[3]!.score).toBeCloseTo(0.1 / 62 / (1 / 61), 12);
  });

  it('is plain weighted RRF without the strength scaling', () => {
    const fused = fuse(
      [
        {
          source: 'session',
          branch: 'fts',
          items: [
            { key: 1, score: 4 },
            { key: 2, score: 2 },
          ],
        },
        { source: 'session', branch: 'trigram', items: [{ key: 2, score: 1 }] },
      ],
      { strength: false },
    );
    expect(fused.map((f) => f.key)).toEqual([2, 1]);
    expect(fused[0]!.score).toBeCloseTo((1 / 62 + 0.5 / 61) / (1.5 / 61), 12);
  });

  it('returns nothing for nothing', () => {
    expect(fuse([])).toEqual([]);
    expect(fuse([{ source: 'semantic', branch: 'fts', items: [] }])).toEqual([]);
  });
});
