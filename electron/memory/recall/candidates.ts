// Candidate gathering for one search: the words normalised to lexemes with the tables' high-water
// marks (prepare), then per source the branches that rank its rows — full text (in memory, or the
// GIN index for boolean queries), trigram for the words full text does not know, and the items
// about the entities asked for. search.ts runs them as one wave and fuses what they return.
import type { RecallSource } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import type { BranchList } from './fusion.js';
import type { EntityItems } from './graph-walk.js';
import { parseTsvector, type LexicalIndex, type ScoredSlot, type SearchOptions } from './lexical-index.js';
import type { BuiltQuery } from './query.js';
import type { RecallInternals, RecallOptions } from './search-types.js';
import type { TimeWindow } from './time-window.js';
import { AUTOBIOGRAPHICAL_KINDS, INDEXED_DIARY_KINDS, DiaryIndex, LIMBIC_KINDS, MemoryIndex, type Maxima, type Sidecar } from './sidecar.js';
import { MIN_FUZZY_CHARS, type Vocabulary } from './vocabulary.js';

/**
 * Share of its better neighbour's own score a turn receives (the better of the previous and the next
 * turn, not both: summing both let a reply between two turns on the topic outrank them, and filled
 * the top of a long topical session with its middle turns). Chosen on both dev sets together,
 * docs/recall-tuning.md.
 */
export const NEIGHBOUR_SHARE = 0.5;
/**
 * A turn two away counts in that better-of at this much of its score: a reply often answers a turn
 * later, with the other person's question between ("For how long have you had them?"). 0.6–0.8 give
 * the same on both dev sets; docs/recall-tuning.md ("Neighbouring turns").
 */
export const SECOND_NEIGHBOUR = 0.75;
/**
 * A short question (a turn of at most QUESTION_LEXEMES lexemes ending in a question mark) is answered by
 * the turn after it, which holds the fact ("How long have you been married?" — "5 years already!"): that
 * turn takes its share of the question's score × ANSWER_GAIN, and the question itself scores
 * × QUESTION_OWN. A long turn ending in a question (a request with its own facts) is neither. Chosen on
 * both dev sets together, docs/recall-tuning.md ("A short question and its answer").
 */
export const QUESTION_LEXEMES = 10;
export const ANSWER_GAIN = 1.5;
export const QUESTION_OWN = 0.8;
/**
 * The turn before such a short question is the topic it asks about ("I loved 'Becoming Nicole'" —
 * "What did you take away from it?" — "It taught me self-acceptance…"): the answer takes the topic's
 * score × TOPIC_GAIN in its neighbours' better-of, in place of SECOND_NEIGHBOUR's. Chosen on both
 * dev sets together, docs/recall-tuning.md ("The topic a short question asks about").
 */
export const TOPIC_GAIN = 1.9;
/**
 * A turn longer than this many lexemes receives the neighbour share scaled by this / its length: a long
 * turn is matched by its own words; a short chat turn needs its neighbours. docs/recall-tuning.md.
 */
export const NEIGHBOUR_FULL_LENGTH = 50;
/**
 * The session branch also searches each query word's related words (related-words.json: its 5 nearest
 * words by GloVe word vectors among the 30k most frequent, built by scripts/build-related-words.py),
 * each at this weight against the query's own words' 1: the question's words are often not the turn's
 * ("kids" / "children"). Chosen on both dev sets together, docs/recall-tuning.md ("Related words", and
 * measured again with TOPIC_GAIN).
 */
export const RELATED_WORD_WEIGHT = 0.1;
/**
 * A related word held by more than this many of the searched turns is left out (SearchOptions
 * weightedMaxDf): walking the postings of the common ones doubled recall's time at 100k messages.
 * No dev set's conversation is that long, and a cap relative to the turns searched lost there (both
 * measured in docs/recall-tuning.md, "Related words"): it bounds the cost of a long history only.
 */
export const RELATED_WORD_MAX_DF = 1000;
/** A turn whose speaker the query names scores × (1 + this). */
export const SPEAKER_BOOST = 0.5;
/**
 * Share of an unknown word's trigrams a known word must have. Dev half, recall@10 cat 1–4:
 * 0.5 → 0.716, 0.6 → 0.716, 0.7 → 0.717, 0.8 → 0.717 (weight 0.5). 0.7 is the lowest at the top: it
 * still joins "educaton" to "education" (7 of its 9 trigrams, 0.78) and "suport" to "support" (0.86).
 */
export const TRIGRAM_THRESHOLD = 0.7;
/**
 * A row inside the window the query names (time-window.ts) scores × (1 + TIME_GAIN); one outside
 * it × (1 − TIME_PENALTY): a soft factor, never a filter. Chosen on both dev sets together,
 * docs/recall-tuning.md ("Time the question names").
 */
export const TIME_GAIN = 1;
export const TIME_PENALTY = 0.1;
/** The gain when the window is a date named outright ("on 8 May, 2023"): nothing in it depends on when it was asked. */
export const TIME_GAIN_NAMED = 2;
/**
 * The window reaches this many days past its end: what happened is often told a little later ("I went
 * camping last week" is said after the week).
 */
export const TIME_SLACK_DAYS = 7;
/**
 * Whether the time words are left out of the words matched. Off: turns say them too ("last weekend I
 * went camping", "in June"), and leaving them out lost more than it kept out (docs/recall-tuning.md).
 */
export const TIME_STRIP = false;

/**
 * A question that asks for the newest ("Which did I take most recently, a bus or a train?",
 * time-window.ts `latest`): a matching turn scores × (1 + LATEST_GAIN × the rank of its time among the
 * matching turns', 0 the oldest, 1 the newest). Chosen on both dev sets together, docs/recall-tuning.md
 * ("The newest, when a question asks for it").
 */
export const LATEST_GAIN = 2;

/** The index's time factor for a window (and a question asking for the newest), with the measurement's overrides (RecallInternals). */
export function timeFactor(
  window: TimeWindow | null,
  o: Pick<RecallInternals, 'timeGain' | 'timeGainNamed' | 'timePenalty' | 'timeSlackDays' | 'latestGain'> = {},
  named = false,
  latest = false,
): SearchOptions['time'] {
  // 0: no question for the newest (the index's `latest` is off at 0).
  const latestGain = latest ? (o.latestGain ?? LATEST_GAIN) : 0;
  const gain = named ? (o.timeGainNamed ?? o.timeGain ?? TIME_GAIN_NAMED) : (o.timeGain ?? TIME_GAIN);
  const penalty = o.timePenalty ?? TIME_PENALTY;
  if (!window || (gain === 0 && penalty === 0)) return latestGain > 0 ? { from: -Infinity, to: Infinity, inside: 1, outside: 1, latest: latestGain } : null;
  const slack = (o.timeSlackDays ?? TIME_SLACK_DAYS) * 86_400_000;
  return { from: window.from, to: window.to + slack, inside: 1 + gain, outside: Math.max(0, 1 - penalty), latest: latestGain };
}

/**
 * Multi-hop from the first hits (measured, off: docs/recall-tuning.md): the other turns of the
 * sessions of the best `seeds` hits gain `share` × that hit's score, ranked from a list this many
 * times deeper than asked.
 */
export const SESSION_HOP_SHARE = 0;
const SESSION_HOP_SEEDS = 3;
const SESSION_HOP_DEPTH = 5;

/** The other turns of the best hits' sessions gain a share of the best hit's score in their session; re-ranked, cut to `depth`. */
function sessionHop(hits: ScoredSlot[], index: LexicalIndex, share: number, seeds: number, depth: number, fullLength = 0): ScoredSlot[] {
  if (!(share > 0) || hits.length === 0) return hits.slice(0, depth);
  const seedScore = new Map<number, { slot: number; score: number }>();
  for (const h of hits.slice(0, seeds)) {
    const g = index.groupOf(h.slot);
    if (!seedScore.has(g)) seedScore.set(g, { slot: h.slot, score: h.score });
  }
  const out = hits.map((h) => {
    const seed = seedScore.get(index.groupOf(h.slot));
    if (!seed || seed.slot === h.slot) return h;
    // Like the neighbour share: a long turn is matched by its own words (fullLength 0: no scaling).
    const len = index.lengthOf(h.slot);
    const scaled = fullLength > 0 && len > fullLength ? (share * fullLength) / len : share;
    return { ...h, score: h.score + scaled * seed.score };
  });
  out.sort((a, b) => b.score - a.score || b.key - a.key);
  return out.slice(0, depth);
}

/** The table of related words (related-words.json), read on the first search that uses it. */
let relatedWordTable: Promise<Record<string, string>> | null = null;

function relatedWords(): Promise<Record<string, string>> {
  relatedWordTable ??= import('./related-words.json').then((m) => (m.default as { words: Record<string, string> }).words);
  return relatedWordTable;
}

/** The lexemes of the query words' related words that are not the query's own, each at `weight`. */
async function relatedLexemes(db: Database, p: Prepared, weight: number): Promise<Map<string, number>> {
  const weights = new Map<string, number>();
  if (!(weight > 0)) return weights;
  const table = await relatedWords();
  const words = [...new Set(p.q.positiveWords.flatMap((w) => (Object.hasOwn(table, w) ? table[w]!.split(' ') : [])))];
  if (!words.length) return weights;
  const own = new Set(p.lexemes);
  for (const lexemes of (await lexemesOfWords(db, words)).values()) for (const l of lexemes) if (!own.has(l)) weights.set(l, weight);
  return weights;
}

/** The trigram branch looks at most at this many unknown words (the longest)… */
const TRIGRAM_WORDS = 3;
/** …and searches at most this many known words for each. */
const TRIGRAM_EXPANSIONS = 3;
/** A boolean query ranks at most this many of its matches (newest first). */
const BOOLEAN_CANDIDATES = 2000;

export interface Prepared {
  q: BuiltQuery;
  /** word → its lexemes */
  lexemesOf: Map<string, string[]>;
  /** all positive lexemes, for ranking */
  lexemes: string[];
  /** the lexemes coverage weighs (lexical-index.ts overlap): all positive ones but BuiltQuery.asking's */
  coverageLexemes: string[];
  /** the lexemes of BuiltQuery.optional (coverage counts them only where the collection knows them) */
  optionalLexemes: Set<string>;
  maxima: Maxima;
}

/**
 * Lexemes of words, by word ('english' to_tsvector of the word alone): a word's lexemes never change.
 * Shared by the search words and the trigram branch's matches; bounded, cleared when full.
 */
const wordLexemes = new Map<string, string[]>();
const WORD_LEXEME_CACHE = 50_000;

/** The words' remembered lexemes (taken now: the cache may be cleared while the others are read) and the words not remembered. */
function lookUpLexemes(words: readonly string[]): { known: Map<string, string[]>; missing: string[] } {
  const known = new Map<string, string[]>();
  const missing: string[] = [];
  for (const w of new Set(words)) {
    const lex = wordLexemes.get(w);
    if (lex) known.set(w, lex);
    else missing.push(w);
  }
  return { known, missing };
}

function rememberLexemes(read: ReadonlyMap<string, string[]>): void {
  if (!read.size) return;
  if (wordLexemes.size + read.size > WORD_LEXEME_CACHE) wordLexemes.clear();
  for (const [w, lex] of read) wordLexemes.set(w, lex);
}

/**
 * Normalises the words and reads the tables' high-water marks in one round trip. Words met before
 * are not sent again (their lexemes are remembered: wordLexemes).
 */
export async function prepare(db: Database, q: BuiltQuery): Promise<Prepared> {
  const words = q.positiveWords;
  const { known, missing } = lookUpLexemes(words);
  const row = (
    await db.query<{ lex: string[] | null; seq: number | null; mem: number | null; chg: number | null; dia: number | null }>(
      `SELECT ${missing.length ? `ARRAY(SELECT to_tsvector('english', w)::text FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i)` : 'NULL::text[]'} AS lex,
              (SELECT max(seq) FROM messages)::float8 AS seq, (SELECT max(id) FROM memories)::float8 AS mem,
              (SELECT max(id) FROM memory_changes)::float8 AS chg, (SELECT max(id) FROM diary_blocks)::float8 AS dia`,
      missing.length ? [missing] : [],
    )
  ).rows[0]!;
  const read = new Map(missing.map((w, i) => [w, [...parseTsvector(row.lex?.[i] ?? '').tf.keys()]]));
  rememberLexemes(read);
  const lexemesOf = new Map<string, string[]>();
  const all = new Set<string>();
  words.forEach((w) => {
    const lex = read.get(w) ?? known.get(w) ?? [];
    lexemesOf.set(w, lex);
    for (const l of lex) all.add(l);
  });
  const asking = new Set(q.asking.flatMap((w) => lexemesOf.get(w) ?? []));
  return {
    q,
    lexemesOf,
    lexemes: [...all],
    coverageLexemes: [...all].filter((l) => !asking.has(l)),
    optionalLexemes: new Set(q.optional.flatMap((w) => lexemesOf.get(w) ?? [])),
    maxima: { seq: Number(row.seq ?? 0), memoryId: Number(row.mem ?? 0), changeId: Number(row.chg ?? 0), diaryId: Number(row.dia ?? 0) },
  };
}

export type SourcePlan = {
  source: RecallSource;
  /** Rank in memory (plain OR) or from SQL matches (boolean). */
  fts: () => Promise<ScoredSlot[]>;
  /** Words full text does not know in this source's scope: the trigram branch's input. */
  unknown: string[];
  vocab: Vocabulary;
  /** Ranks the fuzzy matches' lexemes, each weighted by its similarity. */
  trigram: (lexemes: string[], weights: Map<string, number>) => ScoredSlot[];
};

/** Words full text cannot find in this scope: they go to the trigram branch. */
function unknownWords(p: Prepared, isKnown: (lexeme: string) => boolean): string[] {
  const words = p.q.trigramText ? p.q.trigramText.split(' ') : [];
  return words
    .filter((w) => [...w].length >= MIN_FUZZY_CHARS && !/[\u3400-\u9fff]/.test(w))
    .filter((w) => {
      const lex = p.lexemesOf.get(w) ?? [];
      return lex.length > 0 && lex.every((l) => !isKnown(l));
    })
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
    .slice(0, TRIGRAM_WORDS);
}

/** The slots of these keys in an index (keys it does not hold are left out). */
export function slotsOf(index: { slotOf(k: number): number | undefined }, keys: Iterable<number>): Set<number> {
  const set = new Set<number>();
  for (const k of keys) {
    const s = index.slotOf(k);
    if (s !== undefined) set.add(s);
  }
  return set;
}

/** The entity restriction as slots of each in-memory index. */
export interface Restriction {
  session: Set<number>;
  semantic: Set<number>;
  diary: Set<number>;
}

const intersect = (a: Set<number>, b: Set<number> | null | undefined): Set<number> => (b ? new Set([...a].filter((x) => b.has(x))) : a);

/**
 * A boolean query's matches (the rows SQL found, restricted to `only`) ranked by the in-memory index:
 * SQL decides which rows match, the index scores them like every other branch.
 */
function rankMatches(
  index: LexicalIndex,
  rows: readonly { key: number }[],
  only: Set<number> | null | undefined,
  lexemes: readonly string[],
  scope: Uint8Array | null,
  depth: number,
  time: SearchOptions['time'],
): ScoredSlot[] {
  const matched = intersect(
    slotsOf(
      index,
      rows.map((r) => Number(r.key)),
    ),
    only,
  );
  return matched.size ? index.search(lexemes, { scope, only: matched, limit: depth, time }) : [];
}

export function plan(
  db: Database,
  side: Sidecar,
  p: Prepared,
  o: RecallOptions & RecallInternals,
  source: RecallSource,
  depth: number,
  restrict: Restriction | null = null,
  /** The time the query names, as the index's factor (search.ts); null: none. */
  time: SearchOptions['time'] = null,
): SourcePlan | null {
  const { q } = p;
  const tsquery = q.tsquery!;

  if (source === 'session') {
    const s = side.session;
    const restricted = o.conversationIds !== undefined;
    const scope = restricted ? s.scope(o.conversationIds!) : null;
    if (restricted && !scope) return null; // none of those conversations has anything to search
    const searchOpts = {
      scope,
      limit: depth,
      neighbour: o.neighbourShare ?? NEIGHBOUR_SHARE,
      neighbourMode: o.neighbourMode,
      neighbourLength: o.neighbourLength ?? NEIGHBOUR_FULL_LENGTH,
      secondNeighbour: o.secondNeighbour ?? SECOND_NEIGHBOUR,
      question: {
        lexemes: o.questionLexemes ?? QUESTION_LEXEMES,
        answerGain: o.answerGain ?? ANSWER_GAIN,
        own: o.questionOwn ?? QUESTION_OWN,
        topicGain: o.topicGain ?? TOPIC_GAIN,
      },
      fieldBoost: o.speakerBoost ?? SPEAKER_BOOST,
      only: restrict?.session ?? null,
      time,
    };
    const convFilter = restricted ? 'AND m.conversation_id = ANY($2::text[])' : '';
    return {
      source,
      fts: async () => {
        const hop = o.sessionHopShare ?? SESSION_HOP_SHARE;
        if (q.plainOr && hop > 0)
          return sessionHop(
            s.index.search(p.lexemes, { ...searchOpts, limit: depth * SESSION_HOP_DEPTH }),
            s.index,
            hop,
            o.sessionHopSeeds ?? SESSION_HOP_SEEDS,
            depth,
            o.sessionHopLength ?? 0,
          );
        if (q.plainOr) {
          const related = await relatedLexemes(db, p, o.relatedWordWeight ?? RELATED_WORD_WEIGHT);
          return related.size
            ? s.index.search([...p.lexemes, ...related.keys()], {
                ...searchOpts,
                weights: related,
                weightedMaxDf: o.relatedMaxDf ?? RELATED_WORD_MAX_DF,
              })
            : s.index.search(p.lexemes, searchOpts);
        }
        const rows = await db.query<{ key: number }>(
          `SELECT m.seq::float8 AS key FROM messages m
           WHERE m.content_fts @@ to_tsquery('english', $1) AND m.replaced_by IS NULL AND m.status <> 'streaming' ${convFilter}
           ORDER BY m.seq DESC LIMIT ${BOOLEAN_CANDIDATES}`,
          restricted ? [tsquery, o.conversationIds] : [tsquery],
        );
        const only = intersect(
          slotsOf(
            s.index,
            rows.rows.map((r) => Number(r.key)),
          ),
          restrict?.session,
        );
        return only.size ? s.index.search(p.lexemes, { ...searchOpts, only }) : [];
      },
      unknown: unknownWords(p, (l) => s.index.df(l, scope, 1) > 0),
      vocab: s.vocab,
      trigram: (lexemes, weights) => s.index.search(lexemes, { ...searchOpts, weights }),
    };
  }

  if (source === 'semantic') {
    const m = side.memory;
    const types = o.memoryTypes?.length ? o.memoryTypes : null;
    const scope = MemoryIndex.scope(types);
    const exclude = o.excludeMemoryIds?.length ? new Set(o.excludeMemoryIds) : null;
    const typeFilter = types ? 'AND type = ANY($2::text[])' : '';
    const exclFilter = exclude ? `AND NOT (id = ANY($${types ? 3 : 2}::bigint[]))` : '';
    const params = (first: unknown) => [first, ...(types ? [types] : []), ...(exclude ? [[...exclude]] : [])];
    // The ranking reaches deeper by the number excluded, so excluding never shortens the list.
    const deeper = depth + (exclude ? exclude.size : 0);
    const dropExcluded = (hits: ScoredSlot[]) => (exclude ? hits.filter((h) => !exclude.has(h.key)).slice(0, depth) : hits);
    const only = restrict?.semantic ?? null;
    return {
      source,
      fts: async () => {
        if (q.plainOr) return dropExcluded(m.index.search(p.lexemes, { scope, limit: deeper, only, time }));
        const rows = await db.query<{ key: number }>(
          // No status condition here: with it the planner (no statistics in PGlite) walked the status
          // index instead of the GIN one — 13.6 ms vs 1–2 ms at 20k. Retired memories are not in the
          // in-memory index, so they cannot rank, and every hit is re-read with status = 'active'.
          `SELECT id::float8 AS key FROM memories WHERE search_fts @@ to_tsquery('english', $1) ${typeFilter} ${exclFilter}
           ORDER BY id DESC LIMIT ${BOOLEAN_CANDIDATES}`,
          params(tsquery),
        );
        return rankMatches(m.index, rows.rows, only, p.lexemes, scope, depth, time);
      },
      unknown: unknownWords(p, (l) => m.index.df(l, scope, 1) > 0),
      vocab: m.vocab,
      trigram: (lexemes, weights) => dropExcluded(m.index.search(lexemes, { scope, limit: deeper, weights, only, time })),
    };
  }

  const d = side.diary;
  const kinds = source === 'limbic' ? LIMBIC_KINDS : AUTOBIOGRAPHICAL_KINDS;
  const scope = DiaryIndex.scope(kinds);
  const only = restrict?.diary ?? null;
  return {
    source,
    fts: async () => {
      if (q.plainOr) return d.index.search(p.lexemes, { scope, limit: depth, only, time });
      const rows = await db.query<{ key: number }>(
        `SELECT id::float8 AS key FROM diary_blocks WHERE search_fts @@ to_tsquery('english', $1) AND kind = ANY($2::text[]) AND hidden_at IS NULL
         ORDER BY id DESC LIMIT ${BOOLEAN_CANDIDATES}`,
        [tsquery, kinds],
      );
      return rankMatches(d.index, rows.rows, only, p.lexemes, scope, depth, time);
    },
    unknown: unknownWords(p, (l) => d.index.df(l, scope, 1) > 0),
    vocab: d.vocab,
    trigram: (lexemes, weights) => d.index.search(lexemes, { scope, limit: depth, weights, only, time }),
  };
}

async function lexemesOfWords(db: Database, words: string[]): Promise<Map<string, string[]>> {
  const { known, missing } = lookUpLexemes(words);
  const read = new Map<string, string[]>();
  if (missing.length) {
    const rows = (await db.query<{ w: string; v: string }>(`SELECT w, to_tsvector('english', w)::text AS v FROM unnest($1::text[]) AS w`, [missing])).rows;
    for (const r of rows) read.set(r.w, [...parseTsvector(r.v).tf.keys()]);
    rememberLexemes(read);
  }
  return new Map(words.map((w) => [w, read.get(w) ?? known.get(w) ?? []]));
}

/** The trigram branch of one source: unknown words → similar known words → their lexemes, ranked. */
export async function trigramBranch(db: Database, pl: SourcePlan, threshold = TRIGRAM_THRESHOLD): Promise<ScoredSlot[]> {
  const matches = pl.unknown.flatMap((w) => pl.vocab.match(w, threshold, TRIGRAM_EXPANSIONS));
  if (!matches.length) return [];
  const lexemes = await lexemesOfWords(
    db,
    matches.map((m) => m.word),
  );
  const weights = new Map<string, number>();
  for (const m of matches) for (const l of lexemes.get(m.word) ?? []) weights.set(l, Math.max(weights.get(l) ?? 0, m.similarity));
  return weights.size ? pl.trigram([...weights.keys()], weights) : [];
}

/**
 * The items about the entities asked for, newest first, as one 'entity' branch per source — with the
 * filters the other branches have (in the index = searchable; the conversations, types and
 * exclusions asked for; a diary block of the source's kinds).
 */
export function entityBranches(side: Sidecar, about: EntityItems, sources: RecallSource[], o: RecallOptions & RecallInternals, depth: number): BranchList[] {
  const out: BranchList[] = [];
  const take = (
    source: RecallSource,
    keys: number[],
    ok: (slot: number, key: number) => boolean,
    index: { slotOf(k: number): number | undefined; hasLiveDoc(s: number): boolean },
  ) => {
    const items: { key: number; score: number }[] = [];
    for (const key of keys) {
      if (items.length >= depth) break;
      const slot = index.slotOf(key);
      if (slot === undefined || !index.hasLiveDoc(slot) || !ok(slot, key)) continue;
      items.push({ key, score: 1 });
    }
    if (items.length) out.push({ source, branch: 'entity', items });
  };
  for (const source of sources) {
    if (source === 'session') {
      const s = side.session;
      const scope = o.conversationIds !== undefined ? s.scope(o.conversationIds) : null;
      if (o.conversationIds !== undefined && !scope) continue;
      take(source, about.session, (slot) => !scope || scope[s.index.groupOf(slot)] === 1, s.index);
    } else if (source === 'semantic') {
      const m = side.memory;
      const scope = MemoryIndex.scope(o.memoryTypes?.length ? o.memoryTypes : null);
      const exclude = new Set(o.excludeMemoryIds ?? []);
      take(source, about.semantic, (slot, key) => !exclude.has(key) && (!scope || scope[m.index.groupOf(slot)] === 1), m.index);
    } else {
      const kinds = source === 'limbic' ? LIMBIC_KINDS : AUTOBIOGRAPHICAL_KINDS;
      const d = side.diary;
      take(source, about.diary, (slot) => kinds.includes(INDEXED_DIARY_KINDS[d.index.groupOf(slot)]!), d.index);
    }
  }
  return out;
}
