// Long-term memory: memories, the change journal, the resident block, recall over all four sources,
// and the memories.* and recall.* methods.
import { z } from 'zod';
import { empty, isoDate } from './fields.js';

export const MEMORY_TYPES = ['world', 'experience', 'opinion', 'observation', 'preference', 'procedural'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];
export const MEMORY_STATUSES = ['active', 'superseded', 'expired'] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];
export type MemorySource = 'tool' | 'light-sleep' | 'deep-sleep' | 'user';
export type MemoryActor = 'companion' | 'person' | 'light-sleep' | 'deep-sleep' | 'graph' | 'system';

export interface Memory {
  id: number;
  type: MemoryType;
  content: string;
  status: MemoryStatus;
  supersededBy: number | null;
  validFrom: string | null;
  validTo: string | null;
  pinned: boolean;
  pinOrder: number | null;
  referenceCount: number;
  injectedCount: number;
  source: MemorySource;
  sourceMessageIds: string[];
  entityNames: string[];
  createdAt: string;
  updatedAt: string;
}

/** One entry of the change journal: what changed, before and after, by whom, when. */
export interface MemoryChange {
  id: number;
  memoryId: number;
  action: 'create' | 'update' | 'forget' | 'restore' | 'pin' | 'unpin' | 'reorder' | 'supersede' | 'expire' | 'merge' | 'undo';
  actor: MemoryActor;
  before: Partial<Memory> | null;
  after: Partial<Memory> | null;
  batchId: string | null;
  /** Why, in words (English for the host's own reasons; a model's or a legacy row's as stored). */
  reason: string | null;
  /** The host's own reasons as a code and its values, so the window says them in its language; absent for a reason in words. */
  reasonCode?: MemoryReason | null;
  undoneBy: number | null;
  createdAt: string;
}

/**
 * The host's own reasons. The memory store's: a new value for the same slot replaced `memoryId`; saved
 * again into a near-duplicate; an edit to a new value replaced `memoryId`; the undo of change `changeId`.
 * The sleep's (stored as their English sentence, read back as a code): kept by the nap of `day`; by the
 * light sleep of `days`; by reading the imported history of `days`; split from `memoryId`; split into
 * `memoryIds`; a merge of `memoryIds`; merged into `memoryId`; the profile of entity `entityId` (`name`)
 * written from `memoryIds`. `why` is the model's own words, as it wrote them. Days are YYYY-MM-DD.
 */
export type MemoryReason =
  | { code: 'same_slot'; memoryId: number }
  | { code: 'near_duplicate' }
  | { code: 'edited_new_value'; memoryId: number }
  | { code: 'undo'; changeId: number; action: MemoryChange['action'] }
  | { code: 'nap'; day: string }
  | { code: 'light_sleep'; days: string[] }
  | { code: 'imported_history'; days: string[] }
  | { code: 'split'; memoryId: number }
  | { code: 'split_into'; memoryIds: number[]; why: string }
  | { code: 'merge'; memoryIds: number[]; why: string }
  | { code: 'merged_into'; memoryId: number }
  | { code: 'profile'; name: string; entityId: number; memoryIds: number[] };

export const RECALL_SOURCES = ['semantic', 'session', 'limbic', 'autobiographical'] as const;
export type RecallSource = (typeof RECALL_SOURCES)[number];

export type RecallLink =
  { kind: 'memory'; memoryId: number } | { kind: 'message'; conversationId: string; messageId: string } | { kind: 'diary'; day: string; blockId: number };

export interface RecallHit {
  source: RecallSource;
  /** For semantic hits the memory's type; otherwise the source name. */
  memoryType: string;
  text: string;
  /** When it was said or written (ISO 8601). */
  time: string;
  score: number;
  link: RecallLink;
}

export interface ResidentPreview {
  /** The exact block the system prompt carries. */
  text: string;
  chars: number;
  estimatedTokens: number;
  pinned: number;
  referenced: number;
  /** Pinned memories beyond the cap of 40 that were left out. */
  pinnedCut: number;
}

export interface SaveMemoryResult {
  /** The memory written, updated — or, when skipped, the forgotten one the save would have brought back. */
  memory: Memory;
  /**
   * 'updated' when an active near-duplicate existed and was updated instead of adding a copy;
   * 'skipped' when an automatic save (the sleep cycle) would have brought back a forgotten memory.
   */
  outcome: 'created' | 'updated' | 'skipped';
  /** The journal entry undo takes back (for a skip: the forget that stands). */
  changeId: number;
  /** The memory this one replaced: the same slot with a new value ("lives in Brno" → "lives in Prague"), linked and undoable. */
  superseded?: number;
  /** Why nothing was written. */
  skipped?: 'forgotten';
  /** A forget "…and what it came from": how many messages it hid from recall (they stay in their conversations). */
  hiddenMessages?: number;
}

const memoryId = z.number().int().positive();
export const MAX_MEMORY_CHARS = 4000;

export const memoryInputs = {
  'memories.list': z
    .object({
      query: z.string().max(2000).optional(),
      types: z.array(z.enum(MEMORY_TYPES)).max(6).optional(),
      statuses: z.array(z.enum(MEMORY_STATUSES)).max(3).optional(),
      pinned: z.boolean().optional(),
      limit: z.number().int().min(1).max(200).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  'memories.get': z.object({ id: memoryId }).strict(),
  'memories.create': z
    .object({
      type: z.enum(MEMORY_TYPES),
      content: z.string().trim().min(1).max(MAX_MEMORY_CHARS),
      pinned: z.boolean().optional(),
      validFrom: isoDate.nullable().optional(),
      validTo: isoDate.nullable().optional(),
    })
    .strict(),
  'memories.update': z
    .object({
      id: memoryId,
      type: z.enum(MEMORY_TYPES).optional(),
      content: z.string().trim().min(1).max(MAX_MEMORY_CHARS).optional(),
      validFrom: isoDate.nullable().optional(),
      validTo: isoDate.nullable().optional(),
    })
    .strict(),
  /**
   * Forget: the memory is expired (kept, out of recall) and can be brought back with undo. With
   * `withSources`, the messages it came from and the replies that cited it leave recall too (the
   * conversation still shows them); the same undo brings them back.
   */
  'memories.forget': z.object({ id: memoryId, withSources: z.boolean().optional() }).strict(),
  'memories.pin': z.object({ id: memoryId, pinned: z.boolean() }).strict(),
  'memories.reorderPins': z.object({ ids: z.array(memoryId).max(500) }).strict(),
  /** Undo one journal entry (and the rest of its batch). */
  'memories.undo': z.object({ changeId: z.number().int().positive() }).strict(),
  'memories.resident': empty,
  /** The companion's recall over all four sources, as the Memories view's search. */
  'recall.search': z
    .object({
      query: z.string().max(2000),
      sources: z.array(z.enum(RECALL_SOURCES)).max(4).optional(),
      limit: z.number().int().min(1).max(100).optional(),
    })
    .strict(),
} as const;

export interface MemoryOutputs {
  'memories.list': { items: Memory[]; total: number };
  'memories.get': {
    memory: Memory;
    history: MemoryChange[];
    /** oldest first: what it superseded, it, what superseded it */
    chain: Memory[];
    /** How many messages a forget "…and what it came from" would hide: those it came from and those that cited it. */
    sourceMessages?: number;
  };
  'memories.create': SaveMemoryResult;
  'memories.update': SaveMemoryResult;
  'memories.forget': SaveMemoryResult;
  'memories.pin': SaveMemoryResult;
  'memories.reorderPins': Memory[];
  'memories.undo': Memory;
  'memories.resident': ResidentPreview;
  'recall.search': RecallHit[];
}
