// An in-memory BM25 index over the 'english' lexemes Postgres already computed (the generated
// tsvector columns). It is derived data: rebuilt from the database whenever it is missing, kept in
// memory only, and brought up to date before each search (see sidecar.ts). Nothing is ever read
// from it that the database does not also say: hits are fetched back by key and re-checked.
//
// Why not rank in SQL: at 100k messages an OR of a question's words matches most of the table, and
// ranking every match (ts_rank) took 68–163 ms; a BM25 with real idf over the same lexemes, computed
// in SQL, took ~26 ms on 2.8k turns (LoCoMo README). Walking posting lists here takes a few ms at
// 100k, and the scoring can use what SQL cannot cheaply: statistics of the collection actually being
// searched, the neighbouring turns and the speaker.
//
// Layout: a *slot* is one row (message, memory, diary block); a *doc* is one indexed version of a
// slot's text. Re-indexing a slot (a streamed reply that finished, an edited memory) adds a new doc
// and orphans the old one; postings of orphaned docs are skipped and swept by a rebuild once they
// are more than a quarter of all postings.

import { canonicalLexeme } from './lexemes.js';

export interface ParsedVector {
  /** lexeme → term frequency (its number of positions; 1 for a stripped vector). */
  tf: Map<string, number>;
  length: number;
}

/** One lexeme of tsvector output: 'lexeme' with '' for a quote (and \\ escapes), then :positions. */
const LEXEME = /'((?:[^'\\]|''|\\.)*)'(?::([0-9A-D,]+))?/g;

/**
 * Parses Postgres's text output of a tsvector: 'lex':1,5A 'it''s':3. Never throws. An irregular form's
 * lexeme is read as its base's (lexemes.ts: 'won' is 'win'), so every index and query agrees.
 */
export function parseTsvector(text: string | null | undefined): ParsedVector {
  const tf = new Map<string, number>();
  let length = 0;
  if (!text) return { tf, length };
  LEXEME.lastIndex = 0;
  for (let m = LEXEME.exec(text); m; m = LEXEME.exec(text)) {
    let lexeme = m[1]!;
    if (lexeme.includes("'") || lexeme.includes('\\')) lexeme = lexeme.replace(/''/g, "'").replace(/\\(.)/g, '$1');
    lexeme = canonicalLexeme(lexeme);
    let count = 1;
    const positions = m[2];
    if (positions) for (let i = 0; i < positions.length; i++) if (positions.charCodeAt(i) === 44) count++;
    tf.set(lexeme, (tf.get(lexeme) ?? 0) + count);
    length += count;
  }
  return { tf, length };
}

interface Postings {
  docs: number[];
  tfs: number[];
}

export interface SearchOptions {
  /** Which groups are searched (by group index); null = all. Statistics come from the same scope. */
  scope?: Uint8Array | null;
  /** Only these slots may match (a boolean query's matches, from SQL). */
  only?: ReadonlySet<number> | null;
  limit: number;
  /** Share of the better neighbour's own score a slot receives (0 = none). */
  neighbour?: number;
  /** How the neighbours' scores combine (measurement): 'max' (the better one, the default) or 'sum' (both). */
  neighbourMode?: 'max' | 'sum';
  /**
   * A slot longer than this many lexemes receives the neighbour share × this / its length: a long
   * turn is matched by its own words, a short one ("Yes, it was amazing!") needs its context.
   * 0 or absent: every slot receives the whole share.
   */
  neighbourLength?: number;
  /**
   * The turns two away count too, their score × this, in the same better-of (0 or absent: only the
   * adjacent ones): an answer often comes a turn later ("How long have you had them?" between).
   */
  secondNeighbour?: number;
  /**
   * A short question (a slot put with `asks`, of at most `lexemes` lexemes): the next slot takes its
   * neighbour share of it × `answerGain`, and it scores × `own` itself. Absent: no question is special.
   * `topicGain`: the answer also takes the slot before the question (the topic it asks about) at this
   * factor in the better-of, in place of `secondNeighbour`'s (absent or 0: the turn two away as any other).
   */
  question?: { lexemes: number; answerGain: number; own: number; topicGain?: number } | null;
  /** Slots whose field lexemes (a message's speaker) meet the query's own lexemes (not the weighted ones) get score × (1 + boost). */
  fieldBoost?: number;
  /** A lexeme's contribution × its weight (default 1): the trigram branch's similarities. */
  weights?: ReadonlyMap<string, number>;
  /**
   * A weighted lexeme (one in `weights`) held by more than this many of the scope's docs is left out:
   * its postings are the longest to walk, for a word at a small weight.
   */
  weightedMaxDf?: number;
  /**
   * The time the query names (time-window.ts): a slot whose time (put's `time`) lies in [from, to)
   * scores × inside, one with a time outside it × outside; a slot without a time is left as it is.
   * `latest` (a query asking for the newest): a slot also scores × (1 + latest × the rank of its time
   * among the matching slots' times, from 0 for the oldest to 1 for the newest).
   */
  time?: { from: number; to: number; inside: number; outside: number; latest?: number } | null;
}

/** Where t falls among the sorted distinct `times`: 0 at or before the oldest, 1 at or after the newest. */
function timeRank(times: Float64Array, t: number): number {
  if (times.length < 2) return 1;
  // The count of times ≤ t, by binary search.
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return Math.min(1, Math.max(0, (lo - 1) / (times.length - 1)));
}

export interface ScoredSlot {
  slot: number;
  key: number;
  score: number;
}

/** Okapi BM25 (k1 1.2, b 0.75: the LoCoMo README's baseline; 0.6–1.2 × 0.3–0.75 all lay within ±0.007 on the dev half). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export class LexicalIndex {
  // per doc
  private docSlot: number[] = [];
  private docLen: number[] = [];
  private docTerms: number[] = [];
  // per slot
  private slotKey: number[] = [];
  private slotDoc: number[] = []; // -1: no live doc
  private slotGroup: number[] = [];
  private slotPrev: number[] = [];
  private slotNext: number[] = [];
  private slotField: (string[] | null)[] = [];
  /** When the row was said or became true (epoch ms; NaN: not known). */
  private slotTime: number[] = [];
  /** 1: the row ends in a question mark (SearchOptions.question). */
  private slotAsks: number[] = [];
  private keyToSlot = new Map<number, number>();
  // per group
  private groupDocs: number[] = [];
  private groupLen: number[] = [];
  private groupLast: number[] = [];
  private postings = new Map<string, Postings>();
  private totalPostings = 0;
  private livePostings = 0;
  /**
   * Live document frequency per lexeme over the whole index, as last counted: `len` postings then,
   * `drops` docs dropped then. While nothing is dropped, every posting added since is a live doc.
   */
  private dfCounted = new Map<string, { df: number; len: number; drops: number }>();
  private drops = 0;
  private liveDocs = 0;
  private liveLen = 0;
  // scratch, reused by every search
  private acc = new Float64Array(0);
  private mark = new Uint8Array(0);
  /** The slots a search touched, then their neighbours (a buffer, not arrays grown one push at a time). */
  private order = new Int32Array(0);

  get size(): number {
    return this.liveDocs;
  }
  get slots(): number {
    return this.slotKey.length;
  }
  /** True when orphaned postings are over a quarter of all: time for a rebuild. */
  get wasteful(): boolean {
    return this.totalPostings > 50_000 && this.livePostings < this.totalPostings * 0.75;
  }

  slotOf(key: number): number | undefined {
    return this.keyToSlot.get(key);
  }
  keyOf(slot: number): number {
    return this.slotKey[slot]!;
  }
  groupOf(slot: number): number {
    return this.slotGroup[slot]!;
  }
  /** The slot's indexed length in lexemes (0: no live text). */
  lengthOf(slot: number): number {
    const doc = this.slotDoc[slot] ?? -1;
    return doc >= 0 ? this.docLen[doc]! : 0;
  }
  hasLiveDoc(slot: number): boolean {
    return (this.slotDoc[slot] ?? -1) >= 0;
  }

  private ensureGroup(group: number): void {
    while (this.groupDocs.length <= group) {
      this.groupDocs.push(0);
      this.groupLen.push(0);
      this.groupLast.push(-1);
    }
  }

  /**
   * Sets (or replaces) the indexed text of the row `key`. A new key becomes a new slot; with
   * `linkNeighbours` it is linked after the group's last slot (rows must arrive in order).
   * `vector` null leaves the slot without text (a reply still streaming): it keeps its place.
   */
  put(
    key: number,
    group: number,
    vector: ParsedVector | null,
    opts: { field?: string[] | null; linkNeighbours?: boolean; time?: number | null; asks?: boolean } = {},
  ): number {
    this.ensureGroup(group);
    let slot = this.keyToSlot.get(key);
    if (slot === undefined) {
      slot = this.slotKey.length;
      this.slotKey.push(key);
      this.slotDoc.push(-1);
      this.slotGroup.push(group);
      this.slotField.push(opts.field?.length ? opts.field : null);
      this.slotTime.push(NaN);
      this.slotAsks.push(0);
      this.slotPrev.push(-1);
      this.slotNext.push(-1);
      this.keyToSlot.set(key, slot);
      if (opts.linkNeighbours) {
        const last = this.groupLast[group]!;
        if (last >= 0) {
          this.slotPrev[slot] = last;
          this.slotNext[last] = slot;
        }
        this.groupLast[group] = slot;
      }
    } else {
      this.dropDoc(slot);
      if (this.slotGroup[slot] !== group) this.slotGroup[slot] = group;
      if (opts.field !== undefined) this.slotField[slot] = opts.field?.length ? opts.field : null;
    }
    if (opts.asks !== undefined) this.slotAsks[slot] = opts.asks ? 1 : 0;
    if (opts.time !== undefined) this.slotTime[slot] = typeof opts.time === 'number' && Number.isFinite(opts.time) ? opts.time : NaN;
    if (vector && vector.length > 0) {
      const doc = this.docSlot.length;
      this.docSlot.push(slot);
      this.docLen.push(vector.length);
      this.docTerms.push(vector.tf.size);
      for (const [lexeme, tf] of vector.tf) {
        let p = this.postings.get(lexeme);
        if (!p) {
          p = { docs: [], tfs: [] };
          this.postings.set(lexeme, p);
        }
        p.docs.push(doc);
        p.tfs.push(tf);
      }
      this.totalPostings += vector.tf.size;
      this.livePostings += vector.tf.size;
      this.slotDoc[slot] = doc;
      this.groupDocs[group]! += 1;
      this.groupLen[group]! += vector.length;
      this.liveDocs += 1;
      this.liveLen += vector.length;
    }
    return slot;
  }

  /** The row is gone from search (replaced, inactive): its text is dropped, its place unlinked. */
  remove(key: number): void {
    const slot = this.keyToSlot.get(key);
    if (slot === undefined) return;
    this.dropDoc(slot);
    const prev = this.slotPrev[slot]!;
    const next = this.slotNext[slot]!;
    if (prev >= 0) this.slotNext[prev] = next;
    if (next >= 0) this.slotPrev[next] = prev;
    const group = this.slotGroup[slot]!;
    if (this.groupLast[group] === slot) this.groupLast[group] = prev;
    this.slotPrev[slot] = -1;
    this.slotNext[slot] = -1;
  }

  private dropDoc(slot: number): void {
    const doc = this.slotDoc[slot]!;
    if (doc < 0) return;
    const len = this.docLen[doc]!;
    const group = this.slotGroup[slot]!;
    this.groupDocs[group]! -= 1;
    this.groupLen[group]! -= len;
    this.liveDocs -= 1;
    this.liveLen -= len;
    this.livePostings -= this.docTerms[doc]!;
    this.slotDoc[slot] = -1;
    this.drops++;
  }

  /** Live docs holding the lexeme, over the whole index: counted once, then kept up by what was added. */
  private liveDf(lexeme: string, p: Postings): number {
    const counted = this.dfCounted.get(lexeme);
    if (counted && counted.drops === this.drops) {
      if (counted.len !== p.docs.length) {
        counted.df += p.docs.length - counted.len;
        counted.len = p.docs.length;
      }
      return counted.df;
    }
    let n = 0;
    for (let i = 0; i < p.docs.length; i++) {
      const doc = p.docs[i]!;
      if (this.slotDoc[this.docSlot[doc]!] === doc) n++;
    }
    if (counted) Object.assign(counted, { df: n, len: p.docs.length, drops: this.drops });
    else this.dfCounted.set(lexeme, { df: n, len: p.docs.length, drops: this.drops });
    return n;
  }

  /** Document frequency of a lexeme within the scope (live docs only). */
  df(lexeme: string, scope?: Uint8Array | null, stopAt = Infinity): number {
    const p = this.postings.get(lexeme);
    if (!p) return 0;
    if (!scope) return Math.min(this.liveDf(lexeme, p), Math.max(1, stopAt));
    let n = 0;
    for (let i = 0; i < p.docs.length; i++) {
      const doc = p.docs[i]!;
      const slot = this.docSlot[doc]!;
      if (this.slotDoc[slot] !== doc) continue;
      if (scope && !scope[this.slotGroup[slot]!]) continue;
      if (++n >= stopAt) break;
    }
    return n;
  }

  /**
   * How much of a query the row `key` answers (`coverage`): the idf of the query's lexemes it contains
   * over the idf of them all (0–1). A lexeme no row has counts against it as the rarest known word
   * would — the query is about something this collection does not know — so one shared common word
   * ("blue", "17") covers little of "why is the sky blue?", while a question whose topic words a
   * memory holds is covered well. (Weighting unknown words at df 0 instead made tiny stores' coverage
   * collapse: there log(1 + N/0.5) dwarfs every known word.) `shared`: how many of the query's
   * distinct lexemes the row holds. Lexemes in `optional` (a CJK run's bigrams that guess at word
   * boundaries, Chinese question words) weigh nothing when no row holds them: a guess the collection
   * does not know is not a word of the message left unanswered.
   */
  overlap(lexemes: readonly string[], optional?: ReadonlySet<string>): (key: number) => { coverage: number; shared: number } {
    // Each lexeme's weight once per query, however many rows are asked about.
    const N = this.liveDocs;
    const weighed = [...new Set(lexemes)]
      .map((lexeme) => {
        const df = this.df(lexeme);
        const d = Math.max(df, 1);
        return { lexeme, known: df > 0, idf: Math.log(1 + (N - d + 0.5) / (d + 0.5)) };
      })
      .filter((w) => w.known || !optional?.has(w.lexeme));
    const total = weighed.reduce((sum, w) => sum + w.idf, 0);
    return (key) => {
      const slot = this.keyToSlot.get(key);
      const doc = slot === undefined ? -1 : this.slotDoc[slot]!;
      if (doc < 0 || N === 0 || total <= 0) return { coverage: 0, shared: 0 };
      let covered = 0;
      let shared = 0;
      for (const w of weighed) {
        if (!w.known || !this.contains(w.lexeme, doc)) continue;
        covered += w.idf;
        shared++;
      }
      return { coverage: covered / total, shared };
    };
  }

  /** Whether the doc holds the lexeme: postings list docs in the order they were added. */
  private contains(lexeme: string, doc: number): boolean {
    const docs = this.postings.get(lexeme)?.docs;
    if (!docs) return false;
    let lo = 0;
    let hi = docs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const d = docs[mid]!;
      if (d === doc) return true;
      if (d < doc) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** Live docs and their total length within the scope. */
  private stats(scope?: Uint8Array | null): { n: number; avgLen: number } {
    if (!scope) return { n: this.liveDocs, avgLen: this.liveDocs ? this.liveLen / this.liveDocs : 1 };
    let n = 0;
    let len = 0;
    for (let g = 0; g < this.groupDocs.length; g++) {
      if (!scope[g]) continue;
      n += this.groupDocs[g]!;
      len += this.groupLen[g]!;
    }
    return { n, avgLen: n ? len / n : 1 };
  }

  /** The distinct times of order[0, n), sorted (slots without a time left out). */
  private distinctTimes(order: Int32Array, n: number): Float64Array {
    const out = new Float64Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const t = this.slotTime[order[i]!]!;
      if (t === t) out[k++] = t;
    }
    const sorted = out.subarray(0, k).sort();
    let d = 0;
    for (let i = 0; i < k; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[d++] = sorted[i]!;
    return sorted.subarray(0, d);
  }

  /**
   * BM25 over the lexemes (each counted once), statistics from the scope; then each slot gains
   * `neighbour` × its neighbours' own scores; then the field boost. Returns the top `limit`, best
   * first, ties broken by the newer row.
   */
  search(lexemes: readonly string[], o: SearchOptions): ScoredSlot[] {
    const scope = o.scope ?? null;
    const only = o.only ?? null;
    const { n: N, avgLen } = this.stats(scope);
    if (N === 0 || o.limit <= 0) return [];
    const slots = this.slotKey.length;
    if (this.acc.length < slots) {
      this.acc = new Float64Array(Math.max(slots, this.acc.length * 2, 1024));
      this.mark = new Uint8Array(this.acc.length);
      this.order = new Int32Array(this.acc.length);
    }
    const acc = this.acc;
    const mark = this.mark;
    // order[0, touched): the slots that matched; order[touched, candidates): their neighbours that did not.
    const order = this.order;
    let touched = 0;
    const unique = [...new Set(lexemes)];
    const docSlot = this.docSlot;
    const slotDoc = this.slotDoc;
    const slotGroup = this.slotGroup;
    const docLen = this.docLen;
    for (const lexeme of unique) {
      const p = this.postings.get(lexeme);
      if (!p) continue;
      // Document frequency within the scope (idf of the collection searched): counted over the
      // postings for a scope, kept up to date for the whole index (liveDf).
      const weight = o.weights?.get(lexeme);
      const cap = weight !== undefined && o.weightedMaxDf !== undefined ? o.weightedMaxDf : Infinity;
      const df = scope ? this.df(lexeme, scope, cap + 1) : this.liveDf(lexeme, p);
      if (df === 0 || df > cap) continue;
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5)) * (weight ?? 1);
      const docs = p.docs;
      const tfs = p.tfs;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!;
        const slot = docSlot[doc]!;
        if (slotDoc[slot] !== doc) continue;
        if (scope && !scope[slotGroup[slot]!]) continue;
        if (only && !only.has(slot)) continue;
        const tf = tfs[i]!;
        const s = (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * docLen[doc]!) / avgLen));
        if (!mark[slot]) {
          mark[slot] = 1;
          order[touched++] = slot;
        }
        acc[slot]! += s;
      }
    }

    const neighbour = o.neighbour ?? 0;
    const sumNeighbours = o.neighbourMode === 'sum';
    const second = o.secondNeighbour ?? 0;
    const question = o.question ?? null;
    // Plain locals and numbers, not a closure: this runs for every candidate (tens of thousands a search).
    const asks = this.slotAsks;
    const questionLexemes = question ? question.lexemes : -1;
    const answerGain = question ? question.answerGain : 1;
    const questionOwn = question ? question.own : 1;
    const topicGain = question?.topicGain ?? 0;
    const fullLength = o.neighbourLength && o.neighbourLength > 0 ? o.neighbourLength : Infinity;
    const boost = o.fieldBoost ?? 0;
    // The query's own words only: a related or look-alike word naming a speaker ("use" → "user") is no question about them.
    const lexemeSet = boost ? new Set(unique.filter((l) => !o.weights?.has(l))) : null;
    const time = o.time ?? null;
    // The slots that matched, then their neighbours that did not (marked 2): the marks, not a Set —
    // tens of thousands of slots for a common word.
    let candidates = touched;
    if (neighbour > 0 && !only) {
      for (let t = 0; t < touched; t++) {
        const slot = order[t]!;
        const prev = this.slotPrev[slot]!;
        const next = this.slotNext[slot]!;
        if (prev >= 0 && !mark[prev] && slotDoc[prev]! >= 0) {
          mark[prev] = 2;
          order[candidates++] = prev;
        }
        if (next >= 0 && !mark[next] && slotDoc[next]! >= 0) {
          mark[next] = 2;
          order[candidates++] = next;
        }
      }
    }
    // A query asking for the newest: the matching slots' distinct times, oldest first. A rank, not the
    // time itself: "most recently" asks which came last, however far apart the two were.
    const latest = time?.latest ?? 0;
    const times = latest > 0 ? this.distinctTimes(order, touched) : null;
    // Keep the best `limit` in a small sorted buffer (candidates can be tens of thousands).
    const top: ScoredSlot[] = [];
    const better = (a: ScoredSlot, b: ScoredSlot) => a.score > b.score || (a.score === b.score && a.key > b.key);
    const consider = (slot: number) => {
      let score = acc[slot]!;
      if (neighbour > 0 && !only) {
        const prev = this.slotPrev[slot]!;
        const next = this.slotNext[slot]!;
        let before = prev >= 0 ? acc[prev]! : 0;
        if (before > 0 && asks[prev] === 1 && docLen[slotDoc[prev]!]! <= questionLexemes) before *= answerGain;
        const after = next >= 0 ? acc[next]! : 0;
        const len = this.docLen[this.slotDoc[slot]!]!;
        const share = len > fullLength ? (neighbour * fullLength) / len : neighbour;
        let near = sumNeighbours ? before + after : Math.max(before, after);
        if (second > 0 || topicGain > 0) {
          const prev2 = prev >= 0 ? this.slotPrev[prev]! : -1;
          const next2 = next >= 0 ? this.slotNext[next]! : -1;
          // The topic, a short question about it ("What did you take away from it?"), then this answer.
          const answers = topicGain > 0 && prev2 >= 0 && asks[prev] === 1 && docLen[slotDoc[prev]!]! <= questionLexemes;
          near = Math.max(near, (answers ? topicGain : second) * (prev2 >= 0 ? acc[prev2]! : 0), second * (next2 >= 0 ? acc[next2]! : 0));
        }
        score += share * near;
      }
      if (score <= 0) return;
      if (asks[slot] === 1 && docLen[slotDoc[slot]!]! <= questionLexemes) score *= questionOwn;
      if (lexemeSet) {
        const field = this.slotField[slot];
        if (field && field.some((l) => lexemeSet.has(l))) score *= 1 + boost;
      }
      if (time) {
        const t = this.slotTime[slot]!;
        if (t === t) {
          score *= t >= time.from && t < time.to ? time.inside : time.outside;
          if (times) score *= 1 + latest * timeRank(times, t);
        }
      }
      const key = this.slotKey[slot]!;
      if (top.length < o.limit) {
        top.push({ slot, key, score });
        if (top.length === o.limit) top.sort((a, b) => (better(a, b) ? -1 : 1));
      } else {
        // Most candidates fall below the last kept one: no entry is made for them.
        const last = top[top.length - 1]!;
        if (!(score > last.score || (score === last.score && key > last.key))) return;
        const entry = { slot, key, score };
        let i = top.length - 1;
        while (i > 0 && better(entry, top[i - 1]!)) i--;
        top.splice(i, 0, entry);
        top.pop();
      }
    };
    for (let c = 0; c < candidates; c++) consider(order[c]!);
    // The turns two away from a match and next to none: such a turn scores at most this × the match's
    // own score, so a match below the last kept one ÷ this cannot place its far neighbours — most of
    // them, for a common word (taking every match's two far turns raised the candidates by a third at 100k messages).
    // The answer after a short question reaches the topic before it at topicGain instead: its own bound.
    if ((second > 0 || topicGain > 0) && neighbour > 0 && !only) {
      const most = neighbour * (lexemeSet ? 1 + boost : 1) * (time ? Math.max(time.inside, 1) * (1 + latest) : 1);
      const reach = most * second;
      const answerReach = most * Math.max(second, topicGain);
      for (let t = 0; t < touched; t++) {
        const slot = order[t]!;
        const last = top.length === o.limit ? top[top.length - 1]!.score : -Infinity;
        if (answerReach * acc[slot]! < last) continue;
        const prev = this.slotPrev[slot]!;
        const next = this.slotNext[slot]!;
        // After the match, a short question: the turn after it answers about the match.
        const asked = topicGain > 0 && next >= 0 && asks[next] === 1 && docLen[slotDoc[next]!]! <= questionLexemes;
        const before = prev >= 0 ? this.slotPrev[prev]! : -1;
        const after = next >= 0 ? this.slotNext[next]! : -1;
        for (const far of [before, after]) {
          if (far < 0 || mark[far] || slotDoc[far]! < 0) continue;
          if ((far === after && asked ? answerReach : reach) * acc[slot]! < last) continue;
          mark[far] = 2;
          order[candidates++] = far;
          consider(far);
        }
      }
    }
    if (top.length < o.limit) top.sort((a, b) => (better(a, b) ? -1 : 1));
    for (let t = 0; t < touched; t++) acc[order[t]!] = 0;
    for (let c = 0; c < candidates; c++) mark[order[c]!] = 0;
    return top;
  }
}
