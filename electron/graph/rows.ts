// The graph's rows and what they become: the API's Entity, EntityEdge and EntityChange
// (shared/api.ts), which the handlers pass through, with the few fields more the store keeps.
import { ApiError, type Entity, type EntityChange, type EntityEdge, type EntityKind, type MemoryActor } from '../../shared/api.js';
import type { Queryable } from './context.js';

export type EntityStatus = Entity['status'];

/** The two fixed nodes, seeded by migration 006. */
export const SELF_ENTITY_ID = 1;
export const USER_ENTITY_ID = 2;

/** An entity as the store reads it; createdAt and updatedAt do no harm where the API's Entity goes. */
export type StoredEntity = Entity & { createdAt: string; updatedAt: string };

/** A journal entry as the store keeps it: with the other entity of a merge or relation, and who made it. */
export type StoredEntityChange = EntityChange & {
  otherId: number | null;
  actor: MemoryActor;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

export interface EntityRow {
  id: number;
  kind: EntityKind;
  name: string;
  name_key: string;
  status: EntityStatus;
  merged_into: number | null;
  first_seen: Date | string | null;
  last_seen: Date | string | null;
  mention_count: number;
  created_at: Date | string;
  updated_at: Date | string;
  aliases?: string[] | null;
}

export interface EdgeRow {
  id: number;
  source_id: number;
  target_id: number;
  relation: string;
  weight: number;
  valid_from: Date | string | null;
  valid_to: Date | string | null;
  evidence_memory_ids: number[];
}

export interface ChangeRow {
  id: number;
  entity_id: number;
  other_id: number | null;
  action: EntityChange['action'];
  actor: MemoryActor;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  undone_by: number | null;
  created_at: Date | string;
}

export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * A query's rows as one JSON value. PGlite hands a result over field by field, which for the few
 * hundred entities or edges of a graph view costs more than the query itself; one json_agg value
 * parsed by JSON.parse costs about half. Timestamps then arrive as strings, which iso() reads.
 */
export async function rowsAsJson<T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const result = await db.query<{ rows: T[] }>(`SELECT coalesce(json_agg(x), '[]'::json) AS rows FROM (${sql}) x`, params);
  return result.rows[0]!.rows;
}

export const ENTITY_COLUMNS = `e.id, e.kind, e.name, e.name_key, e.status, e.merged_into, e.first_seen, e.last_seen, e.mention_count, e.created_at, e.updated_at,
  ARRAY(SELECT a.alias FROM entity_aliases a WHERE a.entity_id = e.id ORDER BY a.created_at, a.alias_key) AS aliases`;
export const EDGE_COLUMNS = 'id, source_id, target_id, relation, weight, valid_from, valid_to, evidence_memory_ids';

/** An edge holds at `$n` (a timestamptz parameter, or null for "now and always"). */
export const VALID_AT = (p: string) =>
  `(${p}::timestamptz IS NULL OR ((valid_from IS NULL OR valid_from <= ${p}::timestamptz) AND (valid_to IS NULL OR valid_to > ${p}::timestamptz)))`;

export function toEntity(r: EntityRow): StoredEntity {
  return {
    id: Number(r.id),
    kind: r.kind,
    name: r.name,
    aliases: r.aliases ?? [],
    status: r.status,
    mergedInto: r.merged_into === null ? null : Number(r.merged_into),
    firstSeen: iso(r.first_seen),
    lastSeen: iso(r.last_seen),
    mentionCount: r.mention_count,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export function toEdge(r: EdgeRow): EntityEdge {
  return {
    id: Number(r.id),
    source: Number(r.source_id),
    target: Number(r.target_id),
    relation: r.relation,
    weight: Number(r.weight),
    validFrom: iso(r.valid_from),
    validTo: iso(r.valid_to),
    evidenceMemoryIds: (r.evidence_memory_ids ?? []).map(Number),
  };
}

export function toChange(r: ChangeRow): StoredEntityChange {
  return {
    id: Number(r.id),
    entityId: Number(r.entity_id),
    otherId: r.other_id === null ? null : Number(r.other_id),
    action: r.action,
    actor: r.actor,
    before: r.before,
    after: r.after,
    undoneBy: r.undone_by === null ? null : Number(r.undone_by),
    createdAt: iso(r.created_at)!,
  };
}

// ---- entities by id ----

/** Entities by id, in the order asked; missing ids are skipped. */
export async function entitiesByIds(db: Queryable, ids: number[]): Promise<StoredEntity[]> {
  if (!ids.length) return [];
  const rows = await rowsAsJson<EntityRow>(db, `SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.id = ANY($1::bigint[])`, [ids]);
  const byId = new Map(rows.map((r) => [Number(r.id), toEntity(r)]));
  return ids.flatMap((i) => byId.get(i) ?? []);
}

export async function findEntity(db: Queryable, id: number): Promise<StoredEntity | null> {
  const row = (await db.query<EntityRow>(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.id = $1`, [id])).rows[0];
  return row ? toEntity(row) : null;
}

export async function requireEntity(db: Queryable, id: number, field = 'id'): Promise<StoredEntity> {
  const e = await findEntity(db, id);
  if (!e) throw new ApiError('not_found', `There is no entity ${id}.`, field);
  return e;
}

/** An entity that exists and is not merged away. */
export async function requireLive(db: Queryable, id: number, verb: string, field = 'id'): Promise<StoredEntity> {
  const e = await requireEntity(db, id, field);
  if (e.status === 'merged') {
    throw new ApiError('conflict', `Entity ${id} was merged into entity ${e.mergedInto}; only entities that were not merged can be ${verb}.`, field);
  }
  return e;
}
