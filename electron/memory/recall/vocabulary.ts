// The trigram branch's dictionary: the distinct words a source's texts contain, with pg_trgm's
// trigrams of each, in memory beside the BM25 index. A query word full text does not know (a typo,
// a partial word) is matched word_similarity-style — the share of the query word's trigrams found in
// a known word — and the best matches are searched instead.
//
// Why not pg_trgm in SQL (`word <% content` on the GIN trigram indexes): word_similarity has to be
// re-checked on every candidate row against the whole text, ~60 µs a row in PGlite (WASM). Measured:
// 25–100 ms per query at 100k messages through the GIN index, 40–110 ms on one LoCoMo conversation
// of 663 turns — alone over the 50 ms budget. Matching words against words here takes < 1 ms.

/** pg_trgm's trigrams of one word: lowercased, padded with two spaces before and one after. */
export function trigrams(word: string): Set<string> {
  const chars = [' ', ' ', ...word.toLowerCase(), ' '];
  const out = new Set<string>();
  for (let i = 0; i + 2 < chars.length; i++) out.add(chars[i]! + chars[i + 1]! + chars[i + 2]!);
  return out;
}

const WORDS = /[\p{L}\p{N}\p{M}]+/gu;
const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
/** Words shorter than this are neither indexed nor looked up: their trigrams match too much. */
export const MIN_FUZZY_CHARS = 4;
const MAX_WORD_CHARS = 40;

export interface FuzzyMatch {
  word: string;
  similarity: number;
}

export class Vocabulary {
  private words: string[] = [];
  private ids = new Map<string, number>();
  private grams = new Map<string, number[]>();
  private counts = new Int32Array(0);

  get size(): number {
    return this.words.length;
  }

  /** Adds the words of a text (Latin-script and other alphabetic words; CJK is left to full text). */
  addText(text: string | null | undefined): void {
    if (!text) return;
    const found = text.toLowerCase().match(WORDS);
    if (!found) return;
    for (const w of found) {
      if (w.length < MIN_FUZZY_CHARS || w.length > MAX_WORD_CHARS || this.ids.has(w) || CJK.test(w) || /^\d+$/.test(w)) continue;
      const id = this.words.length;
      this.words.push(w);
      this.ids.set(w, id);
      for (const g of trigrams(w)) {
        let list = this.grams.get(g);
        if (!list) this.grams.set(g, (list = []));
        list.push(id);
      }
    }
  }

  has(word: string): boolean {
    return this.ids.has(word.toLowerCase());
  }

  /**
   * Known words similar to `word`: similarity = the share of `word`'s trigrams the known word has
   * (pg_trgm's word_similarity for one word against one word), at least `threshold`; best first,
   * then the closest in length. The word itself is never returned.
   */
  match(word: string, threshold: number, max: number): FuzzyMatch[] {
    const query = word.toLowerCase();
    const grams = trigrams(query);
    if (grams.size === 0 || this.words.length === 0) return [];
    if (this.counts.length < this.words.length) this.counts = new Int32Array(Math.max(this.words.length, this.counts.length * 2, 1024));
    const counts = this.counts;
    const touched: number[] = [];
    for (const g of grams) {
      const list = this.grams.get(g);
      if (!list) continue;
      for (let i = 0; i < list.length; i++) {
        const id = list[i]!;
        if (counts[id] === 0) touched.push(id);
        counts[id]! += 1;
      }
    }
    const need = Math.ceil(threshold * grams.size - 1e-9);
    const out: FuzzyMatch[] = [];
    for (const id of touched) {
      const c = counts[id]!;
      counts[id] = 0;
      if (c < need) continue;
      const w = this.words[id]!;
      if (w === query) continue;
      out.push({ word: w, similarity: c / grams.size });
    }
    out.sort(
      (a, b) => b.similarity - a.similarity || Math.abs(a.word.length - query.length) - Math.abs(b.word.length - query.length) || (a.word < b.word ? -1 : 1),
    );
    return out.slice(0, max);
  }
}
