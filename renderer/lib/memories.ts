// Pure helpers behind the Memories and Pins views and the memory chips: filters, list updates,
// pin order, and the change journal in words. No React, no transport — tested in Node.
import {
  MEMORY_STATUSES,
  MEMORY_TYPES,
  type ApiInput,
  type Memory,
  type MemoryActor,
  type MemoryChange,
  type MemoryStatus,
  type MemoryType,
  type RecallHit,
} from '../../shared/api.js';

export interface MemoryFilters {
  /** Empty means every type. */
  types: MemoryType[];
  /** Never empty: at least one status is always shown. */
  statuses: MemoryStatus[];
  pinnedOnly: boolean;
}

export const DEFAULT_FILTERS: MemoryFilters = { types: [], statuses: ['active'], pinnedOnly: false };

export function filtersAreDefault(f: MemoryFilters): boolean {
  return f.types.length === 0 && !f.pinnedOnly && f.statuses.length === 1 && f.statuses[0] === 'active';
}

/** Toggle one value in a set kept in its canonical order (so equal filters compare equal). */
export function toggleIn<T extends string>(values: readonly T[], value: T, order: readonly T[]): T[] {
  const next = values.includes(value) ? values.filter((v) => v !== value) : [...values, value];
  return order.filter((v) => next.includes(v));
}

export function toggleType(f: MemoryFilters, type: MemoryType): MemoryFilters {
  return { ...f, types: toggleIn(f.types, type, MEMORY_TYPES) };
}

/** The last shown status cannot be switched off: a list of nothing is never what anyone means. */
export function toggleStatus(f: MemoryFilters, status: MemoryStatus): MemoryFilters {
  const statuses = toggleIn(f.statuses, status, MEMORY_STATUSES);
  return statuses.length ? { ...f, statuses } : f;
}

export function matchesFilters(m: Memory, f: MemoryFilters): boolean {
  if (f.types.length && !f.types.includes(m.type)) return false;
  if (!f.statuses.includes(m.status)) return false;
  if (f.pinnedOnly && !m.pinned) return false;
  return true;
}

export function listInput(f: MemoryFilters, offset: number, limit: number): ApiInput<'memories.list'> {
  return {
    ...(f.types.length ? { types: f.types } : {}),
    statuses: f.statuses,
    ...(f.pinnedOnly ? { pinned: true } : {}),
    limit,
    ...(offset ? { offset } : {}),
  };
}

/**
 * A memory changed (an edit, pin, forget here, or a fresh copy from the host): put it into the list
 * being shown. It replaces its old card; a card that no longer matches the filters leaves; a new
 * memory that matches goes to the top when `addNew` says so.
 */
export function upsertInList(items: readonly Memory[], memory: Memory, f: MemoryFilters, addNew = false): Memory[] {
  const at = items.findIndex((m) => m.id === memory.id);
  const fits = matchesFilters(memory, f);
  if (at >= 0) {
    if (!fits) return items.filter((m) => m.id !== memory.id);
    if (items[at] === memory) return items as Memory[];
    const next = items.slice();
    next[at] = memory;
    return next;
  }
  return fits && addNew ? [memory, ...items] : (items as Memory[]);
}

// ---- pins ----

export function sortPins(items: readonly Memory[]): Memory[] {
  return items
    .filter((m) => m.pinned)
    .slice()
    .sort((a, b) => (a.pinOrder ?? Number.MAX_SAFE_INTEGER) - (b.pinOrder ?? Number.MAX_SAFE_INTEGER) || a.id - b.id);
}

/** Move one item from an index to another; out-of-range moves change nothing (same array back). */
export function moveTo<T>(items: readonly T[], from: number, to: number): T[] {
  if (from === to || from < 0 || from >= items.length || to < 0 || to >= items.length) return items as T[];
  const next = items.slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

/** Up (-1) or down (+1) by one place. */
export function moveBy<T>(items: readonly T[], index: number, delta: -1 | 1): T[] {
  return moveTo(items, index, index + delta);
}

/** Apply a new order (by id) to a list of memories, keeping anything the order does not mention at the end. */
export function orderById(items: readonly Memory[], ids: readonly number[]): Memory[] {
  const byId = new Map(items.map((m) => [m.id, m]));
  const ordered = ids.map((id) => byId.get(id)).filter((m): m is Memory => Boolean(m));
  const rest = items.filter((m) => !ids.includes(m.id));
  return [...ordered, ...rest].map((m, i) => (m.pinOrder === i ? m : { ...m, pinOrder: i }));
}

// ---- the memory cache behind chips and popovers ----

export type CacheEntry =
  | { status: 'loading'; memory: Memory | null }
  | { status: 'ok'; memory: Memory }
  /** The host does not know this id (or it can never be a memory id). */
  | { status: 'missing'; memory: null }
  /** The lookup itself failed (not the same as "gone"): the chip stays neutral. */
  | { status: 'error'; memory: Memory | null; error: unknown };

export type ChipState = 'active' | 'missing';

/** A chip is "missing" when the memory is gone or no longer current (forgotten, expired, replaced). */
export function chipState(entry: CacheEntry | undefined): ChipState {
  if (!entry) return 'active';
  if (entry.status === 'missing') return 'missing';
  if (entry.memory && entry.memory.status !== 'active') return 'missing';
  return 'active';
}

// ---- search ----

/** The memories a recall search found, best first, each once. */
export function memoryIdsOfHits(hits: readonly RecallHit[]): number[] {
  const ids: number[] = [];
  for (const h of [...hits].sort((a, b) => b.score - a.score)) {
    if (h.link.kind === 'memory' && !ids.includes(h.link.memoryId)) ids.push(h.link.memoryId);
  }
  return ids;
}

/**
 * A search result as a card: the full memory when it has been fetched (counts, status, pin), else
 * what the hit itself says. Filters apply only to what is known — a hit still loading is kept.
 */
export function hitPassesFilters(hit: RecallHit, memory: Memory | null | undefined, f: MemoryFilters): boolean {
  if (memory) return matchesFilters(memory, f);
  if (f.types.length && !f.types.includes(hit.memoryType as MemoryType)) return false;
  if (f.pinnedOnly) return false;
  return true;
}

// ---- the change journal in words ----

export type ActorGroup = 'person' | 'companion' | 'sleep' | 'system';

export function actorGroup(actor: MemoryActor): ActorGroup {
  if (actor === 'person' || actor === 'companion') return actor;
  if (actor === 'light-sleep' || actor === 'deep-sleep') return 'sleep';
  return 'system';
}

/** The i18n key for one journal entry: memories.history.<action>.<actor group>. */
export function historyKey(change: Pick<MemoryChange, 'action' | 'actor'>): string {
  return `memories.history.${change.action}.${actorGroup(change.actor)}`;
}

/** The text a change replaced, when an edit changed the words. */
export function replacedText(change: MemoryChange): string | null {
  if (change.action !== 'update' && change.action !== 'merge') return null;
  const before = change.before?.content;
  const after = change.after?.content;
  return typeof before === 'string' && before !== after ? before : null;
}

/** The type a change replaced, when an edit changed it. */
export function replacedType(change: MemoryChange): MemoryType | null {
  const before = change.before?.type;
  const after = change.after?.type;
  return change.action === 'update' && before && after && before !== after ? before : null;
}

/** Newest first, for reading. */
export function historyNewestFirst(history: readonly MemoryChange[]): MemoryChange[] {
  return [...history].sort((a, b) => (a.createdAt === b.createdAt ? b.id - a.id : a.createdAt < b.createdAt ? 1 : -1));
}

/** The change an Undo next to the history would take back: the newest one still standing. */
export function latestUndoable(history: readonly MemoryChange[]): MemoryChange | null {
  return historyNewestFirst(history).find((c) => c.undoneBy === null && c.action !== 'undo' && c.action !== 'reorder') ?? null;
}

/** For a forgotten memory: the forget that "Bring back" undoes. */
export function latestForget(history: readonly MemoryChange[]): MemoryChange | null {
  const c = latestUndoable(history);
  return c && (c.action === 'forget' || c.action === 'expire') ? c : null;
}

/** Where a memory came from, as an i18n key. */
export function sourceKey(m: Pick<Memory, 'source'>): string {
  return `memories.source.${m.source}`;
}

// ---- errors in words ----

/**
 * The host explains a refused save in its own sentence ("Invalid input for memories.update —
 * content: that looks like a password…"); the person needs only the last part.
 */
export function refusalText(message: string): string {
  return message
    .replace(/^Invalid input for [\w.]+\s*[—-]\s*/, '')
    .replace(/^(content|type|validFrom|validTo|id|entityNames)\s*:\s*/, '')
    .replace(/^Not saved\s*[:—-]\s*/i, '')
    .trim()
    .replace(/^./, (c) => c.toUpperCase());
}

// ---- sizes ----

/** "1,234" in the person's locale. */
export function formatCount(n: number, locale: string): string {
  try {
    return new Intl.NumberFormat(locale).format(n);
  } catch {
    return String(n);
  }
}

// ---- settings ----

export interface Bounds {
  min: number;
  max: number;
  integer?: boolean;
}

/** A number typed into a settings field, or null when it is not one the host would accept. */
export function parseBounded(raw: string, b: Bounds): number | null {
  const text = raw.trim().replace(',', '.');
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(text)) return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n < b.min || n > b.max) return null;
  if (b.integer && !Number.isInteger(n)) return null;
  return n;
}
