// Recall: the companion's memory search, as one service built by createHost from what it reads — the
// database, the in-memory indexes derived from it (held here, one set per Recall), and the embedding
// model in use (the host's vector slot). The search itself is search.ts; passive recall is passive.ts.
import type { MemoryType, RecallHit, RecallSource } from '../../../shared/api.js';
import { RECALL_SOURCES } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import { VectorSlot } from '../../embed/active.js';
import { passiveRecall, type PassiveOptions, type PassiveResult } from './passive.js';
import { searchDetailed, warmIndexes, type DetailedHit, type RecallInternals, type RecallOptions, type SearchContext } from './search.js';
import { Sidecar } from './sidecar.js';

export { buildQuery, type BuiltQuery } from './query.js';
export { GRAPH_WALK_DEFAULT, type DetailedHit, type RecallInternals, type RecallOptions } from './search.js';
export type { PassiveOptions, PassiveResult } from './passive.js';

export interface RecallDeps {
  db: Database;
  /** The embedding model for the vector branch; without one (or an empty slot) recall is by words. */
  vectors?: VectorSlot;
}

export class Recall {
  private sidecar: Sidecar;
  private readonly vectors: VectorSlot;

  constructor(private readonly deps: RecallDeps) {
    this.sidecar = new Sidecar(deps.db);
    this.vectors = deps.vectors ?? new VectorSlot();
  }

  private context(): SearchContext {
    return { db: this.deps.db, sidecar: this.sidecar, vectors: this.vectors.get() };
  }

  /** One ranked list over the sources asked for, with what the tools print beside each hit. */
  detailed(o: RecallOptions & RecallInternals): Promise<DetailedHit[]> {
    return searchDetailed(this.context(), o);
  }

  /** One parallel wave over the sources asked for, weighted RRF, one ranked list. Active memories only. */
  async search(o: RecallOptions & RecallInternals): Promise<RecallHit[]> {
    return (await this.detailed(o)).map((d) => d.hit);
  }

  /** Semantic memory only (active), optionally of some types. */
  semantic(o: { query: string; types?: MemoryType[]; limit?: number; signal?: AbortSignal }): Promise<RecallHit[]> {
    return this.search({ query: o.query, sources: ['semantic'], memoryTypes: o.types, limit: o.limit ?? 10, signal: o.signal });
  }

  /** Before a turn: the memories the person's latest message calls up, within a time budget. */
  passive(o: PassiveOptions): Promise<PassiveResult> {
    return passiveRecall((search) => this.detailed(search), o);
  }

  /** Builds (or brings up to date) the in-memory indexes now, so the first search does not pay for it. */
  warm(sources: readonly RecallSource[] = RECALL_SOURCES): Promise<void> {
    return warmIndexes(this.context(), sources);
  }

  /** Forgets the derived indexes; the next search rebuilds them from the tables. */
  drop(): void {
    this.sidecar = new Sidecar(this.deps.db);
  }
}
