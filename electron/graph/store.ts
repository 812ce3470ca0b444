// The entity graph: the only code that writes entities, their aliases, mentions and edges. EntityStore
// is what the rest of the app holds; each of its jobs lives in its own module:
//   resolution.ts  which entity a name means (key, alias, trigram), entities made for new names
//   mention-rows.ts  the mentions of each message and memory, counts, co-mention edges
//   edits.ts       the person's rename, alias, hide and merge; the journal (entity_changes) and undo
//   relations.ts   typed relations and their valid time (relate, strengthen, close)
//   views.ts       the whole map, ego graphs, search, one entity in detail
//   import.ts      loading a graph from outside; walk-reads.ts what recall's graph walk reads
// Mentions come in from the write path (graph/indexer.ts queues every stored message and memory);
// the person's changes are journalled and undone from there; co-mention edges are derived from the
// mentions and recomputed. Messages and memories are read through their own rooms (GraphSources).
import type { Transaction } from '../db/database.js';
import type { EntityEdge, EntityKind, MemoryActor } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { checkId } from './checks.js';
import type { GraphContext, GraphSources, Log } from './context.js';
import * as edits from './edits.js';
import { importGraph } from './import.js';
import { recordMentionsBatch, type RecordedMention, type RecordInput } from './mention-rows.js';
import { selfNames } from './mentions.js';
import * as relations from './relations.js';
import { ensureEntities, resolveName, type Resolution } from './resolution.js';
import { entitiesByIds, requireEntity, type StoredEntity, type StoredEntityChange } from './rows.js';
import * as views from './views.js';

export { ENTITY_KINDS, type Entity, type EntityChange, type EntityDetail, type EntityEdge, type EntityKind } from '../../shared/api.js';
export type { GraphSources } from './context.js';
export type { EntityChangeResult } from './edits.js';
export { MAX_NAMES_PER_SOURCE, type RecordedMention, type RecordInput } from './mention-rows.js';
export { AMBIGUOUS_SIMILARITY, SAME_ENTITY_SIMILARITY, type Resolution } from './resolution.js';
export { SELF_ENTITY_ID, USER_ENTITY_ID, type EntityStatus, type StoredEntity, type StoredEntityChange } from './rows.js';
export type { GraphFilter, GraphNode, GraphView, StoredEntityDetail } from './views.js';

export class EntityStore {
  private readonly ctx: GraphContext;
  /** The context mention recording runs in: on the database `recordOn`. */
  private readonly recordCtx: GraphContext;

  /**
   * `sources`: the rooms that own messages and memories, which the graph reads through them.
   * `onChange` hears which entities changed (new mentions, an edit, a merge), after the commit.
   * `recordOn`: where mentions are recorded — the host's background connection (db/database.ts
   * backgroundConnection), so that the indexer's batches, a whole history's at start, do not hold
   * up the person's calls on PostgreSQL.
   */
  constructor(
    db: Database,
    readonly sources: GraphSources,
    log: Log = () => {},
    onChange: (entityIds: number[]) => void = () => {},
    recordOn: Database = db,
  ) {
    this.ctx = {
      db,
      sources,
      log,
      changed: (ids) => {
        const list = [...new Set(ids)];
        if (!list.length) return;
        try {
          onChange(list);
        } catch (err) {
          log('error', `an entity change listener failed: ${(err as Error).message}`);
        }
      },
    };
    this.recordCtx = { ...this.ctx, db: recordOn };
  }

  // ---- reading ----

  /** The entity with aliases, or ApiError('not_found'). A merged one is returned as it is (see mergedInto). */
  async entity(id: number): Promise<StoredEntity> {
    return requireEntity(this.ctx.db, checkId(id, 'id'));
  }

  /** One entity with its heaviest relations, the memories and chats that mention it, its journal and profile. */
  get(id: number, opts: { relations?: number; facts?: number; conversations?: number } = {}): Promise<views.StoredEntityDetail> {
    return views.detail(this.ctx, id, opts);
  }

  /** What a name means, without changing anything (resolution.ts). */
  resolve(name: string, kind?: EntityKind): Promise<Resolution> {
    return resolveName(this.ctx.db, name, kind);
  }

  /** Live entities whose name or alias matches: the same key, then names starting with it, then similar ones. */
  search(query: string, limit = 20): Promise<StoredEntity[]> {
    return views.searchEntities(this.ctx.db, query, limit);
  }

  /** The most mentioned active entities and the edges among them. */
  graph(opts: views.GraphFilter & { limit?: number; edgesPerNode?: number } = {}): Promise<views.GraphView> {
    return views.graph(this.ctx.db, opts);
  }

  /** The earliest instant any relation's valid time names (the time slider's start), or null without relations. */
  earliestValidTime(): Promise<string | null> {
    return views.earliestValidTime(this.ctx.db);
  }

  /** Where a neighbourhood view opens when no one chose. */
  defaultCentre(): Promise<number> {
    return views.defaultCentre(this.ctx.db);
  }

  /** The graph around one entity, `hops` steps out (1–3), each node's heaviest edges only. */
  ego(id: number, opts: views.GraphFilter & { hops?: number; limit?: number; fanout?: number } = {}): Promise<views.GraphView> {
    return views.ego(this.ctx.db, id, opts);
  }

  /** Entities by id, in the order asked; missing ids are skipped. */
  entities(ids: number[], db: Parameters<typeof entitiesByIds>[0] = this.ctx.db): Promise<StoredEntity[]> {
    return entitiesByIds(db, ids);
  }

  history(id: number): Promise<StoredEntityChange[]> {
    return edits.history(this.ctx.db, id);
  }

  /** The entity's profile memory as it stands now, or null. */
  profileOf(id: number): Promise<number | null> {
    return views.profileOf(this.ctx, id);
  }

  // ---- mentions ----

  /** Records the entities a message or memory mentions, in one transaction (mention-rows.ts). */
  async recordMentions(input: RecordInput): Promise<RecordedMention[]> {
    return (await this.recordMentionsBatch([input]))[0]!;
  }

  /**
   * recordMentions for many texts in one transaction, a fixed number of statements (the indexer's
   * batches). The person's own words that give their name ("I'm Marek", "我叫马雷克") first make it
   * an alias of the person, so the name resolves to "You".
   */
  async recordMentionsBatch(inputs: RecordInput[]): Promise<RecordedMention[][]> {
    for (const input of inputs) if (input.role === 'user' && typeof input.text === 'string') await edits.namePerson(this.recordCtx, selfNames(input.text));
    return recordMentionsBatch(this.recordCtx, inputs);
  }

  /** The entities these names mean, made when unknown, resolved as recordMentions resolves given names. */
  ensureEntities(names: string[], at: Date | null = null): Promise<Map<string, number>> {
    return ensureEntities(this.ctx, names, at);
  }

  // ---- the person's changes ----

  rename(id: number, newName: string, actor: MemoryActor = 'person'): Promise<edits.EntityChangeResult> {
    return edits.rename(this.ctx, id, newName, actor);
  }

  addAlias(id: number, alias: string, actor: MemoryActor = 'person'): Promise<edits.EntityChangeResult> {
    return edits.addAlias(this.ctx, id, alias, actor);
  }

  hide(id: number, hidden = true, actor: MemoryActor = 'person'): Promise<edits.EntityChangeResult> {
    return edits.hide(this.ctx, id, hidden, actor);
  }

  /** "These are the same": `goneId` is merged into `keepId`; undo moves everything back. */
  merge(keepId: number, goneId: number, actor: MemoryActor = 'person'): Promise<edits.EntityChangeResult> {
    return edits.merge(this.ctx, keepId, goneId, actor);
  }

  /** Reverses a change from the journal, newest first. */
  undo(changeId: number, actor: MemoryActor = 'person'): Promise<StoredEntity> {
    return edits.undo(this.ctx, changeId, actor);
  }

  /** Points an entity at its profile, inside the caller's transaction (deep sleep writes both together). */
  setProfileIn(tx: Transaction, entityId: number, memoryId: number): Promise<void> {
    return edits.setProfileIn(tx, entityId, memoryId);
  }

  // ---- typed relations from the sleep cycle ----

  relate(
    input: {
      sourceId: number;
      targetId: number;
      relation: string;
      weight?: number;
      validFrom?: string | null;
      validTo?: string | null;
      evidenceMemoryIds?: number[];
    },
    actor: MemoryActor = 'graph',
  ): Promise<EntityEdge> {
    return relations.relate(this.ctx, input, actor);
  }

  /** Says a relation again (weight + 1, more evidence); null when there is no such edge. */
  strengthen(
    input: { sourceId: number; targetId: number; relation: string; validFrom?: string | null; validTo?: string | null; evidenceMemoryIds?: number[] },
    actor: MemoryActor = 'graph',
  ): Promise<EntityEdge | null> {
    return relations.strengthen(this.ctx, input, actor);
  }

  closeRelation(edgeId: number, validTo: string, actor: MemoryActor = 'graph', cause: Record<string, unknown> = {}): Promise<EntityEdge> {
    return relations.closeRelation(this.ctx, edgeId, validTo, actor, cause);
  }

  /** Closes the open relations that rested only on these memories, now inactive. */
  closeUnsupported(memoryIds: number[], fallback: string, actor: MemoryActor = 'deep-sleep'): Promise<EntityEdge[]> {
    return relations.closeUnsupported(this.ctx, memoryIds, fallback, actor);
  }

  /** Of two open edges of a single-valued relation, closes the older where the newer begins. */
  closeReplaced(bySource: readonly string[], symmetric: readonly string[] = [], actor: MemoryActor = 'deep-sleep'): Promise<EntityEdge[]> {
    return relations.closeReplaced(this.ctx, bySource, symmetric, actor);
  }

  /** Memories that carry on what others said become evidence wherever those were. */
  carryEvidence(fromIds: number[], toIds: number[]): Promise<number> {
    return relations.carryEvidence(this.ctx, fromIds, toIds);
  }

  // ---- import ----

  importGraph(input: Parameters<typeof importGraph>[1]): Promise<{ entities: number; edges: number }> {
    return importGraph(this.ctx, input);
  }
}
