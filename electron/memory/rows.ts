// The memory room's rows: how memories and journal entries come out of the database (MemoryRow,
// ChangeRow → Memory, MemoryChange), the journalled fields and their columns, the before/after pairs
// the journal records, one memory or journal entry by id, and the small SQL helpers every write
// shares. Only electron/memory/ uses these.
import type { Database, Transaction } from '../db/database.js';
import { ApiError, type Memory, type MemoryActor, type MemoryChange, type MemorySource, type MemoryStatus, type MemoryType } from '../../shared/api.js';
import { decodeReason } from './reasons.js';
import { segmentForIndex } from './segment.js';

export type Queryable = Database | Transaction;

/** The journalled fields, with their columns. Counters (references, injections) are not journalled. */
export const FIELDS = {
  type: 'type',
  content: 'content',
  status: 'status',
  supersededBy: 'superseded_by',
  validFrom: 'valid_from',
  validTo: 'valid_to',
  pinned: 'pinned',
  pinOrder: 'pin_order',
  source: 'source',
  sourceMessageIds: 'source_message_ids',
  entityNames: 'entity_names',
} as const;
export type Field = keyof typeof FIELDS;
export type Fields = Partial<Pick<Memory, Field>>;

export const COLUMNS =
  'id, type, content, status, superseded_by, valid_from, valid_to, pinned, pin_order, reference_count, injected_count, source, source_message_ids, entity_names, created_at, updated_at';

export interface MemoryRow {
  id: number;
  type: MemoryType;
  content: string;
  status: MemoryStatus;
  superseded_by: number | null;
  valid_from: Date | null;
  valid_to: Date | null;
  pinned: boolean;
  pin_order: number | null;
  reference_count: number;
  injected_count: number;
  source: MemorySource;
  source_message_ids: string[];
  entity_names: string[];
  created_at: Date;
  updated_at: Date;
}

export interface ChangeRow {
  id: number;
  memory_id: number;
  action: MemoryChange['action'];
  actor: MemoryActor;
  before: Fields | null;
  after: Fields | null;
  batch_id: string | null;
  reason: string | null;
  undone_by: number | null;
  created_at: Date;
}

export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function toMemory(r: MemoryRow): Memory {
  return {
    id: Number(r.id),
    type: r.type,
    content: r.content,
    status: r.status,
    supersededBy: r.superseded_by === null ? null : Number(r.superseded_by),
    validFrom: iso(r.valid_from),
    validTo: iso(r.valid_to),
    pinned: r.pinned,
    pinOrder: r.pin_order,
    referenceCount: r.reference_count,
    injectedCount: r.injected_count,
    source: r.source,
    sourceMessageIds: r.source_message_ids,
    entityNames: r.entity_names,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export function toChange(r: ChangeRow): MemoryChange {
  return {
    id: Number(r.id),
    memoryId: Number(r.memory_id),
    action: r.action,
    actor: r.actor,
    before: r.before,
    after: r.after,
    batchId: r.batch_id,
    ...decodeReason(r.reason),
    undoneBy: r.undone_by === null ? null : Number(r.undone_by),
    createdAt: iso(r.created_at)!,
  };
}

function pick(m: Memory, keys: Field[]): Fields {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = m[k];
  return out as Fields;
}

/** The fields of `patch` that differ from `m`, as a journal before/after pair. */
export function diff(m: Memory, patch: Fields): { before: Fields; after: Fields } {
  const keys = (Object.keys(patch) as Field[]).filter((k) => JSON.stringify(m[k]) !== JSON.stringify(patch[k]));
  return { before: pick(m, keys), after: pick({ ...m, ...patch }, keys) };
}

/** What a create journals: every journalled field of the new memory. */
export function snapshot(m: Memory): Fields {
  return pick(m, Object.keys(FIELDS) as Field[]);
}

export function touchedFields(c: MemoryChange): Field[] {
  if (c.action === 'create') return ['status', 'validTo'];
  return Object.keys(c.after ?? c.before ?? {}) as Field[];
}

export function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}

export async function journalMark(db: Queryable): Promise<number> {
  return Number((await db.query<{ n: number }>('SELECT coalesce(max(id), 0)::float8 AS n FROM memory_changes')).rows[0]!.n);
}

export async function nextPinOrder(db: Queryable): Promise<number> {
  const row = (await db.query<{ n: number }>(`SELECT coalesce(max(pin_order), 0)::int + 1 AS n FROM memories WHERE pinned AND status = 'active'`)).rows[0];
  return row!.n;
}

/** Writes journalled fields (re-segmenting content for search) and returns the memory as stored. */
export async function applyFields(db: Queryable, id: number, fields: Fields, touch = true): Promise<Memory> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [key, value] of Object.entries(fields) as [Field, unknown][]) {
    params.push(value);
    sets.push(`${FIELDS[key]} = $${params.length}`);
  }
  // segmentForIndex returns null rather than throwing: a segmentation failure never blocks a write.
  if (fields.content !== undefined) {
    params.push(segmentForIndex(fields.content));
    sets.push(`fts_segmented = $${params.length}`);
  }
  // Reordering pins is arrangement, not an edit: it does not make a memory "recently updated".
  if (touch) sets.push('updated_at = now()');
  const sql = sets.length ? `UPDATE memories SET ${sets.join(', ')} WHERE id = $1 RETURNING ${COLUMNS}` : `SELECT ${COLUMNS} FROM memories WHERE id = $1`;
  return toMemory((await db.query<MemoryRow>(sql, params)).rows[0]!);
}

// ---- one memory or journal entry by id, and the other lookups the writes make ----

export async function findMemory(db: Queryable, id: number): Promise<Memory | null> {
  const row = (await db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE id = $1`, [id])).rows[0];
  return row ? toMemory(row) : null;
}

export async function requireMemory(db: Queryable, id: number): Promise<Memory> {
  const memory = await findMemory(db, id);
  if (!memory) throw new ApiError('not_found', `There is no memory ${id}.`);
  return memory;
}

export async function requireActive(db: Queryable, id: number, verb: string): Promise<Memory> {
  const memory = await requireMemory(db, id);
  if (memory.status === 'superseded') {
    throw new ApiError('conflict', `Memory ${id} was superseded by memory ${memory.supersededBy}; only active memories can be ${verb}.`);
  }
  if (memory.status === 'expired') {
    throw new ApiError('conflict', `Memory ${id} is forgotten (expired); only active memories can be ${verb}. Undo the forget to bring it back.`);
  }
  return memory;
}

export async function requireChange(db: Queryable, id: number): Promise<MemoryChange> {
  const row = (await db.query<ChangeRow>('SELECT * FROM memory_changes WHERE id = $1', [id])).rows[0];
  if (!row) throw new ApiError('not_found', `There is no change ${id} in the memory journal.`);
  return toChange(row);
}

/** Undo restores old values; if a later change (outside the batch) wrote the same fields, that would silently discard it. */
export async function assertNotChangedSince(db: Queryable, c: MemoryChange): Promise<void> {
  const touched = touchedFields(c);
  const later = await db.query<ChangeRow>(
    `SELECT * FROM memory_changes
     WHERE memory_id = $1 AND id > $2 AND undone_by IS NULL AND action <> 'undo' AND ($3::text IS NULL OR batch_id IS DISTINCT FROM $3)
     ORDER BY id`,
    [c.memoryId, c.id, c.batchId],
  );
  const clash = later.rows.map(toChange).find((l) => touchedFields(l).some((f) => touched.includes(f)));
  if (clash) {
    throw new ApiError('conflict', `Memory ${c.memoryId} was changed again after change ${c.id} (change ${clash.id}, ${clash.action}); undo that first.`);
  }
}

export async function pinnedActive(db: Queryable): Promise<Memory[]> {
  const rows = await db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE status = 'active' AND pinned ORDER BY pin_order ASC NULLS LAST, id`);
  return rows.rows.map(toMemory);
}
