// What deep sleep's profiles read of the graph: which memories are profiles (entities.profile_memory_id),
// the entities that may get one, and the facts an entity's profile is written from. The links are
// written by EntityStore.setProfileIn, inside the batch that writes the profile memory.
import type { Database } from '../db/open.js';
import type { EntityKind } from './store.js';

/** The memories entities point at as their profiles: the companion's own summaries, never new facts. */
export async function profileMemoryIds(db: Database): Promise<number[]> {
  const rows = await db.query<{ id: number }>(`SELECT profile_memory_id::float8 AS id FROM entities WHERE profile_memory_id IS NOT NULL`);
  return rows.rows.map((r) => Number(r.id));
}

export interface ProfileCandidate {
  id: number;
  name: string;
  kind: EntityKind;
  /** The memory its profile link points at; null when it has none yet. */
  profileMemoryId: number | null;
}

/** Of these entities, the active ones other than the companion itself, with their profile links. */
export async function profileCandidates(db: Database, ids: number[]): Promise<ProfileCandidate[]> {
  const rows = await db.query<{ id: number; name: string; kind: EntityKind; profile_memory_id: number | null }>(
    `SELECT id::float8 AS id, name, kind, profile_memory_id::float8 AS profile_memory_id FROM entities
      WHERE id = ANY($1::bigint[]) AND status = 'active' AND kind <> 'self'`,
    [ids],
  );
  return rows.rows.map((e) => ({
    id: Number(e.id),
    name: e.name,
    kind: e.kind,
    profileMemoryId: e.profile_memory_id === null ? null : Number(e.profile_memory_id),
  }));
}

/**
 * The newest `limit` active memories about an entity — those that mention it, and `fresh` (facts
 * named for it that the indexer may not have reached yet) — leaving out its profile `current` and
 * every other profile, newest first.
 * One statement over memories and mentions, as EntityStore.get reads an entity's facts: an entity
 * the person speaks of every day has thousands of mentions, and only the newest few are wanted.
 */
export async function newestFacts(db: Database, entityId: number, fresh: number[], current: number | null, limit: number): Promise<number[]> {
  const rows = await db.query<{ id: number }>(
    `SELECT m.id::float8 AS id FROM memories m
      WHERE m.status = 'active' AND m.id IS DISTINCT FROM $3::bigint
        AND (m.id = ANY($2::bigint[]) OR m.id IN (SELECT memory_id FROM entity_mentions WHERE entity_id = $1 AND memory_id IS NOT NULL))
        AND m.id NOT IN (SELECT profile_memory_id FROM entities WHERE profile_memory_id IS NOT NULL)
      ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
    [entityId, fresh, current, limit],
  );
  return rows.rows.map((r) => Number(r.id));
}
