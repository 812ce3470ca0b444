// The public shape of a search: what it reads (SearchContext), what it is asked (RecallOptions and the
// internal RecallInternals), and what each hit carries beside itself (DetailedHit). search.ts runs it.
import type { MemoryType, RecallHit, RecallSource } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import type { ActiveVectors } from '../../embed/active.js';
import type { FuseOptions } from './fusion.js';
import type { GraphWalkParams } from './graph-walk.js';
import type { IndexedDiaryKind, Sidecar } from './sidecar.js';

/** What one search reads: the database, the in-memory indexes derived from it, the embedding model in use. */
export interface SearchContext {
  db: Database;
  sidecar: Sidecar;
  vectors: ActiveVectors | null;
}

export interface RecallOptions {
  query: string;
  /** Default: all four. */
  sources?: RecallSource[];
  /** Default 10. */
  limit?: number;
  /** Semantic hits of these types only. */
  memoryTypes?: MemoryType[];
  /** Session hits from these conversations only; part of the search (statistics included), not a filter afterwards. */
  conversationIds?: string[];
  /**
   * Walk the entity graph from the best direct hits and fuse the items that mention what it reached
   * as one more branch (graph-walk.ts). Default GRAPH_WALK_DEFAULT.
   */
  graphWalk?: boolean;
  /** Weight of that branch in the fusion (default GRAPH_WEIGHT, fusion.ts); 0 turns it off too. */
  graphWeight?: number;
  /**
   * Only what is about these entities: messages and memories that mention one of them (an alias is
   * the same entity), diary blocks whose words name one. Each still ranks by the query; with no
   * searchable words (or to fill up), they come newest first. Resolve a name with resolveEntityName.
   */
  entityIds?: number[];
  /**
   * Weight of the vector branch (vector.ts) in the fusion. Default: the embedding service's
   * (settings.memory.vectorWeight; 0 = off). Without an embedding model it never runs.
   */
  vectorWeight?: number;
  /**
   * When the query was asked: the time of the person's message (epoch ms, a Date or an ISO string;
   * default: the clock). A time the query names ("last May", 两周前) is read from it, and what lies in
   * that window ranks a little higher (time-window.ts).
   */
  now?: number | Date | string;
  signal?: AbortSignal;
}

/** Internal options the passive recall and the benchmarks use. */
export interface RecallInternals {
  /** Memories never to return (passive recall's resident exclusion): the ranking reaches deeper by their number, so excluding never shortens the list. */
  excludeMemoryIds?: number[];
  fuse?: FuseOptions;
  neighbourShare?: number;
  /** How a turn's two neighbours' scores combine (measurement; default 'max', see candidates.ts). */
  neighbourMode?: 'max' | 'sum';
  /** Turn length (lexemes) past which the neighbour share shrinks (measurement; default NEIGHBOUR_FULL_LENGTH, 0 = never). */
  neighbourLength?: number;
  /** The factor of a turn two away in the neighbour share's better-of (default SECOND_NEIGHBOUR, 0 = only adjacent; measurement). */
  secondNeighbour?: number;
  /** A short question and its answer (defaults QUESTION_LEXEMES, ANSWER_GAIN, QUESTION_OWN, TOPIC_GAIN in candidates.ts; measurement). */
  questionLexemes?: number;
  answerGain?: number;
  questionOwn?: number;
  topicGain?: number;
  /** The gain of the newest matching turn when a question asks for it (default LATEST_GAIN in candidates.ts; measurement). */
  latestGain?: number;
  speakerBoost?: number;
  /** Fill in DetailedHit.coverage and DetailedHit.shared for semantic hits (passive recall's relevance rule). */
  withCoverage?: boolean;
  /** Skip the trigram branch (measurement only). */
  noTrigram?: boolean;
  trigramThreshold?: number;
  /** The graph walk's parameters (measurement). */
  graph?: Partial<GraphWalkParams>;
  /** Filled in when given: time spent in the graph walk (ms) and the number of walks, summed over calls. */
  timings?: { graphMs: number; walks: number };
  /** The model to embed the query with, instead of the one in use (null: none). */
  vectors?: ActiveVectors | null;
  /** How long the query's embedding may take from the start of the search (default VECTOR_BUDGET_MS). */
  vectorBudgetMs?: number;
  /** Cosine similarity a neighbour needs (default VECTOR_FLOOR). */
  vectorFloor?: number;
  /** Read the time the query names (default true; measurement). */
  timeAware?: boolean;
  /** Leave the time words out of the words matched (default true; measurement). */
  timeStrip?: boolean;
  /** The window's factors and reach (default TIME_GAIN, TIME_PENALTY, TIME_SLACK_DAYS; measurement). */
  timeGain?: number;
  /** The gain for a date named outright (default TIME_GAIN_NAMED; measurement). */
  timeGainNamed?: number;
  timePenalty?: number;
  timeSlackDays?: number;
  /** Multi-hop from the first hits: share and seeds (default SESSION_HOP_SHARE, off; measurement). */
  sessionHopShare?: number;
  sessionHopSeeds?: number;
  /** Turn length (lexemes) past which the hop's share shrinks, as the neighbour share does (0: never; measurement). */
  sessionHopLength?: number;
  /** Weight of a query word's related words in the session branch (default RELATED_WORD_WEIGHT, candidates.ts; 0 = off; measurement). */
  relatedWordWeight?: number;
  /** A related word held by more than this many of the searched turns is left out (default RELATED_WORD_MAX_DF, candidates.ts; measurement). */
  relatedMaxDf?: number;
  /** The calendar's offset from UTC in minutes (default: this machine's at `now`); the benches' dates are UTC. */
  timeOffsetMinutes?: number;
}

/** A hit with what the tools show beside it. */
export interface DetailedHit {
  hit: RecallHit;
  /** session hits */
  role?: 'user' | 'assistant';
  speaker?: string | null;
  conversationId?: string;
  /** diary hits */
  kind?: IndexedDiaryKind;
  /** semantic hits, with RecallInternals.withCoverage: how much of the query the memory answers (lexical-index.ts coverage, 0–1). */
  coverage?: number;
  /** semantic hits, with RecallInternals.withCoverage: how many of the query's distinct lexemes the memory holds. */
  shared?: number;
}
