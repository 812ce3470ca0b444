// What every part of the graph works with: the database, the rooms that own what mentions and
// evidence point at, the log, and the listener that hears which entities changed.
import type { Transaction } from '../db/database.js';
import type { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/open.js';
import type { MemoryStore } from '../memory/store.js';
import type { Log } from '../../shared/log.js';

export type Queryable = Database | Transaction;
export type { Log } from '../../shared/log.js';

/**
 * The owners of the rows the graph points at. The graph names only its own tables: a mention's time,
 * an entity's facts and conversations, a relation's evidence and the texts the indexer reads come
 * through these.
 */
export interface GraphSources {
  conversations: Pick<Conversations, 'findMessage' | 'findMessages' | 'finishedMessageIds' | 'chatsHolding'>;
  memories: Pick<MemoryStore, 'getMany' | 'activeThenNewest' | 'changeTimes' | 'activeVersionOf'>;
}

export interface GraphContext {
  db: Database;
  sources: GraphSources;
  log: Log;
  /** Reports these entities to the change listener (after the commit that changed them). */
  changed(ids: Iterable<number>): void;
}
