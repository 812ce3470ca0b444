// The trigram probe of a name new to the graph (graph_names_similar, migration 034): short keys ask
// only the index of short names, longer ones every name, and either must find exactly what comparing
// the key with every name finds. Checked on real PGlite over a few thousand names built to crowd the
// probe — many sharing a first syllable, of every length, in two scripts — against a full scan.
import { describe, expect, it } from 'vitest';
import { AMBIGUOUS_SIMILARITY } from './resolution.js';
import { db, useGraphStore } from './testing/store-harness.js';

useGraphStore();

/** A seeded generator, so a failure names the same keys on every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const FIRST = ['mar', 'mel', 'jo', 'an', 'gre', 'ka', 'li', 'pe', 'to', 'be'];
const MIDDLE = ['', 'i', 'ta', 'ri', 'na', 'ck', 'ni', 'lo', 'ie', 'th'];
const LAST = ['', ' lee', ' novak', ' kowal', ' smith', ' o brien', ' dvorak', ' jensen', ' ng', ' garcia lopez', ' garcia lopez de la vega y santos'];
const HAN = ['王', '李', '张', '马', '雷', '克', '小', '明', '华', '芳'];

function names(rand: () => number, n: number): string[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const out = new Set<string>();
  while (out.size < n) {
    if (rand() < 0.1) out.add(Array.from({ length: 2 + Math.floor(rand() * 2) }, () => pick(HAN)).join(''));
    else out.add(pick(FIRST) + pick(MIDDLE) + (rand() < 0.5 ? pick(MIDDLE) : '') + pick(LAST));
  }
  return [...out];
}

/** A key near a name: a letter changed, dropped or added, a word left out, or the name as it is. */
function near(rand: () => number, name: string): string {
  const at = Math.floor(rand() * name.length);
  switch (Math.floor(rand() * 5)) {
    case 0:
      return name.slice(0, at) + 'e' + name.slice(at + 1);
    case 1:
      return name.slice(0, at) + name.slice(at + 1);
    case 2:
      return name.slice(0, at) + 'a' + name.slice(at);
    case 3:
      return name.split(' ')[0]!;
    default:
      return name;
  }
}

type Row = { id: string; sim: number };

describe('the trigram probe of a new name', () => {
  it('finds exactly the names a comparison with every name finds, at any length and in either script', async () => {
    const rand = seeded(38);
    const all = names(rand, 3000);
    await db.query(`INSERT INTO entities (kind, name, name_key, mention_count) SELECT 'person', n, n, 1 FROM unnest($1::text[]) AS n`, [all]);
    const keys = [
      ...new Set([
        ...Array.from({ length: 200 }, () => near(rand, all[Math.floor(rand() * all.length)]!)),
        'mel',
        'jon',
        'marta',
        '马雷克',
        'x',
        'maria garcia lopez de la vega y santos',
      ]),
    ];
    let found = 0;
    for (const key of keys) {
      const probed = await db.query<Row>('SELECT id::text, sim FROM graph_names_similar($1::text[], $2::real)', [[key], AMBIGUOUS_SIMILARITY]);
      // Every name compared with the key, no index: what pg_trgm's `%` answers at this threshold.
      const scanned = await db.transaction(async (tx) => {
        await tx.query(
          `SELECT set_config('pg_trgm.similarity_threshold', $1, true), set_config('enable_indexscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`,
          [String(AMBIGUOUS_SIMILARITY)],
        );
        return tx.query<Row>(
          `SELECT id::text, similarity(name_key, $1) AS sim FROM entities
            WHERE name_key % $1 AND status <> 'merged' AND kind NOT IN ('self', 'user') ORDER BY sim DESC, entities.id LIMIT 10`,
          [key],
        );
      });
      expect(probed.rows, key).toEqual(scanned.rows);
      found += probed.rows.length;
    }
    // The keys are near names that exist: most find some (the check above is not of empty lists).
    expect(found).toBeGreaterThan(keys.length);
  });
});
