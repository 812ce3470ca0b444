// The entity graph: who and what the companion knows about, their relations over valid time, the
// edit history, and the graph.* methods.
import { z } from 'zod';
import { isoDate } from './fields.js';
import type { Memory } from './memory.js';

export const ENTITY_KINDS = ['person', 'place', 'org', 'thing', 'topic', 'self', 'user'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Someone or something the companion knows about; 'self' (the companion) and 'user' (the person) always exist. */
export interface Entity {
  id: number;
  kind: EntityKind;
  name: string;
  aliases: string[];
  mentionCount: number;
  firstSeen: string | null;
  lastSeen: string | null;
  status: 'active' | 'merged' | 'hidden';
  /** For a merged entity: the one it became part of. */
  mergedInto: number | null;
}

export interface EntityEdge {
  id: number;
  source: number;
  target: number;
  /** 'co_mention', or a typed relation such as 'lives_in', 'works_at', 'sister_of', 'likes'. */
  relation: string;
  weight: number;
  /** When the relation held; an edge whose valid time closed is history, still shown on the time slider. */
  validFrom: string | null;
  validTo: string | null;
  evidenceMemoryIds: number[];
}

export interface GraphSlice {
  /** 'whole' up to the drawing limit; above it, 'ego': the neighbourhood of `centerId`. */
  mode: 'whole' | 'ego';
  centerId: number | null;
  nodes: Entity[];
  edges: EntityEdge[];
  totalEntities: number;
  totalEdges: number;
  /** The earliest valid time on any edge: where the time slider starts. */
  earliest: string | null;
}

export interface EntityChange {
  id: number;
  entityId: number;
  /** 'strengthen': a relation said again (weight + 1, more evidence); 'close': a relation's valid time ended. */
  action: 'rename' | 'alias' | 'merge' | 'hide' | 'unhide' | 'relate' | 'strengthen' | 'close' | 'undo';
  before: unknown;
  after: unknown;
  undoneBy: number | null;
  createdAt: string;
}

export interface EntityDetail {
  entity: Entity;
  /** The observation memory deep sleep keeps about it, when there is one. */
  profile: Memory | null;
  /** Active memories that mention it, newest first. */
  facts: Memory[];
  relations: (EntityEdge & { other: Pick<Entity, 'id' | 'name' | 'kind'> })[];
  conversations: { id: string; title: string; mentions: number; lastAt: string }[];
  history: EntityChange[];
}

export const graphInputs = {
  /** The graph to draw: whole up to 2,000 entities, else the ego graph of `centerId` (default: the most mentioned). */
  'graph.view': z
    .object({
      centerId: z.number().int().positive().optional(),
      hops: z.number().int().min(1).max(3).optional(),
      /** Show the graph as it was then (valid time). */
      at: isoDate.optional(),
      kinds: z.array(z.enum(ENTITY_KINDS)).max(7).optional(),
      limit: z.number().int().min(1).max(20_000).optional(),
    })
    .strict(),
  'graph.search': z.object({ query: z.string().max(200), limit: z.number().int().min(1).max(50).optional() }).strict(),
  'graph.entity': z.object({ id: z.number().int().positive() }).strict(),
  'graph.rename': z.object({ id: z.number().int().positive(), name: z.string().max(500) }).strict(),
  'graph.addAlias': z.object({ id: z.number().int().positive(), alias: z.string().max(500) }).strict(),
  /** "These are the same": `mergeId` becomes part of `keepId` (undoable). */
  'graph.merge': z.object({ keepId: z.number().int().positive(), mergeId: z.number().int().positive() }).strict(),
  'graph.hide': z.object({ id: z.number().int().positive(), hidden: z.boolean() }).strict(),
  'graph.undo': z.object({ changeId: z.number().int().positive() }).strict(),
  /** Load entities and edges through the same resolution as mentions (a fixture, another app's export). */
  'graph.import': z
    .object({
      entities: z
        .array(z.object({ name: z.string().max(500), kind: z.enum(ENTITY_KINDS), aliases: z.array(z.string().max(500)).max(20).optional() }).strict())
        .max(20_000),
      edges: z
        .array(
          z
            .object({
              /** Indexes into `entities`. */
              source: z.number().int().min(0),
              target: z.number().int().min(0),
              relation: z.string().min(1).max(60),
              weight: z.number().positive().max(1_000_000).optional(),
              validFrom: isoDate.nullable().optional(),
              validTo: isoDate.nullable().optional(),
            })
            .strict(),
        )
        .max(200_000),
    })
    .strict(),
} as const;

export interface GraphOutputs {
  'graph.view': GraphSlice;
  'graph.search': Entity[];
  'graph.entity': EntityDetail;
  'graph.rename': { entity: Entity; changeId: number };
  'graph.addAlias': { entity: Entity; changeId: number };
  'graph.merge': { entity: Entity; changeId: number };
  'graph.hide': { entity: Entity; changeId: number };
  'graph.undo': Entity;
  'graph.import': { entities: number; edges: number };
}
