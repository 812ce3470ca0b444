// The named reads other rooms make of the memory tables — the Memories view's list and detail, what
// the entity graph records mentions of, what the sleep cycle reviews — each a function of the database
// handle. MemoryStore offers every one as a method of the same name, so callers hold one object.
import type { Memory, MemoryActor, MemoryChange, MemorySource, MemoryStatus, MemoryType } from '../../shared/api.js';
import { decodeReason } from './reasons.js';
import { COLUMNS, findMemory, iso, requireMemory, toChange, toMemory, type ChangeRow, type MemoryRow, type Queryable } from './rows.js';

export interface MemoryFilter {
  types?: MemoryType[];
  /** Default: active only. */
  statuses?: MemoryStatus[];
  pinned?: boolean;
  limit?: number;
  offset?: number;
}

/** A memory as a prompt line shows it (its dates, its words), with what a split or a profile carries on from it. */
export type MemoryOutline = Pick<Memory, 'id' | 'type' | 'content' | 'validFrom' | 'validTo' | 'createdAt' | 'sourceMessageIds' | 'entityNames'>;

/** A journal entry with its memory's text as it stands now (MemoryStore.changesWithText). */
export type ChangeWithText = Pick<MemoryChange, 'id' | 'memoryId' | 'action' | 'actor' | 'reason' | 'reasonCode' | 'undoneBy' | 'before' | 'after'> & {
  content: string;
};

// ---- one memory with its history and chain, a filtered page, a few by id ----

export async function get(db: Queryable, id: number): Promise<{ memory: Memory; history: MemoryChange[]; chain: Memory[] }> {
  const memory = await requireMemory(db, id);
  const history = (await db.query<ChangeRow>('SELECT * FROM memory_changes WHERE memory_id = $1 ORDER BY id', [id])).rows.map(toChange);
  const predecessors = (
    await db.query<MemoryRow>(
      `WITH RECURSIVE pre (id, depth) AS (
         SELECT id, 1 FROM memories WHERE superseded_by = $1
         UNION SELECT m.id, p.depth + 1 FROM memories m JOIN pre p ON m.superseded_by = p.id WHERE p.depth < 1000)
       SELECT ${COLUMNS} FROM memories WHERE id IN (SELECT id FROM pre) AND id <> $1 ORDER BY created_at, id`,
      [id],
    )
  ).rows.map(toMemory);
  const successors: Memory[] = [];
  const seen = new Set([id, ...predecessors.map((m) => m.id)]);
  for (let next = memory.supersededBy; next !== null && !seen.has(next);) {
    seen.add(next);
    const m = await findMemory(db, next);
    if (!m) break;
    successors.push(m);
    next = m.supersededBy;
  }
  return { memory, history, chain: [...predecessors, memory, ...successors] };
}

/** Pinned memories first in pin order, then the most recently updated. */
export async function list(db: Queryable, f: MemoryFilter = {}): Promise<{ items: Memory[]; total: number }> {
  const where: string[] = ['status = ANY($1::text[])'];
  const params: unknown[] = [f.statuses?.length ? f.statuses : ['active']];
  if (f.types?.length) {
    params.push(f.types);
    where.push(`type = ANY($${params.length}::text[])`);
  }
  if (f.pinned !== undefined) {
    params.push(f.pinned);
    where.push(`pinned = $${params.length}`);
  }
  const clause = where.join(' AND ');
  const total = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories WHERE ${clause}`, params)).rows[0]!.n;
  const limit = Math.min(Math.max(Math.trunc(f.limit ?? 50), 1), 200);
  const offset = Math.max(Math.trunc(f.offset ?? 0), 0);
  const rows = await db.query<MemoryRow>(
    `SELECT ${COLUMNS} FROM memories WHERE ${clause}
     ORDER BY pinned DESC, pin_order ASC NULLS LAST, updated_at DESC, id DESC
     LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  return { items: rows.rows.map(toMemory), total };
}

/** The memories with these ids, in the order asked; missing ids are skipped. */
export async function getMany(db: Queryable, ids: number[]): Promise<Memory[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE id = ANY($1::bigint[])`, [ids]);
  const byId = new Map(rows.rows.map((r) => [Number(r.id), toMemory(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

// ---- what the entity graph reads: the memories it records mentions of and shows as facts ----

/** Of these memories, at most `limit`: active ones first, then newest first. Missing ids are skipped. */
export async function activeThenNewest(db: Queryable, ids: number[], limit: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: number }>(
    `SELECT id FROM memories WHERE id = ANY($1::bigint[])
     ORDER BY (status = 'active') DESC, created_at DESC, id DESC LIMIT ${Math.max(1, Math.trunc(limit))}`,
    [ids],
  );
  return rows.rows.map((r) => Number(r.id));
}

/**
 * Every memory's id and when it last changed, in id order, as one JSON value (the graph's backfill
 * at start compares them with its scans). The times are timestamptz text, exact to the microsecond,
 * for comparing in SQL.
 */
export async function changeTimes(db: Queryable): Promise<{ ids: number[]; updatedAt: string[] }> {
  const r = await db.query<{ ids: number[] | null; at: string[] | null }>(
    `SELECT json_agg(id ORDER BY id) AS ids, json_agg(updated_at::text ORDER BY id) AS at FROM memories`,
  );
  return { ids: (r.rows[0]?.ids ?? []).map(Number), updatedAt: r.rows[0]?.at ?? [] };
}

/**
 * The active memory that stands for `id` now: itself while active; if something later superseded it
 * (a merge), the active end of its chain; if an undo took it back, the active memory it had replaced
 * (its supersede change was undone with it). Null when there is none.
 */
export async function activeVersionOf(db: Queryable, id: number): Promise<number | null> {
  const forward = (
    await db.query<{ id: number }>(
      `WITH RECURSIVE chain (id, depth) AS (
         SELECT $1::bigint, 0
         UNION ALL SELECT m.superseded_by, c.depth + 1 FROM chain c JOIN memories m ON m.id = c.id WHERE m.superseded_by IS NOT NULL AND c.depth < 50)
       SELECT c.id FROM chain c JOIN memories m ON m.id = c.id AND m.status = 'active' ORDER BY c.depth LIMIT 1`,
      [id],
    )
  ).rows[0];
  if (forward) return Number(forward.id);
  const back = (
    await db.query<{ id: number }>(
      `WITH RECURSIVE chain (id, depth) AS (
         SELECT $1::bigint, 0
         UNION ALL SELECT c.memory_id, chain.depth + 1 FROM chain JOIN memory_changes c
           ON c.action = 'supersede' AND (c.after->>'supersededBy')::bigint = chain.id WHERE chain.depth < 20)
       SELECT chain.id FROM chain JOIN memories m ON m.id = chain.id AND m.status = 'active' ORDER BY chain.depth LIMIT 1`,
      [id],
    )
  ).rows[0];
  return back ? Number(back.id) : null;
}

// ---- reviews: what the sleep cycle reads to reconsider, report and dream ----

/** The active ones of these memories, by id, in the order the database returns them. */
export async function activeOutlines(db: Queryable, ids: number[]): Promise<Map<number, MemoryOutline>> {
  if (ids.length === 0) return new Map();
  const rows = (
    await db.query<Pick<MemoryRow, 'id' | 'type' | 'content' | 'valid_from' | 'valid_to' | 'created_at' | 'source_message_ids' | 'entity_names'>>(
      `SELECT id::int AS id, type, content, valid_from, valid_to, created_at, source_message_ids, entity_names
         FROM memories WHERE id = ANY($1::bigint[]) AND status = 'active'`,
      [ids],
    )
  ).rows;
  return new Map(
    rows.map((r) => [
      Number(r.id),
      {
        id: Number(r.id),
        type: r.type,
        content: r.content,
        validFrom: iso(r.valid_from),
        validTo: iso(r.valid_to),
        createdAt: iso(r.created_at)!,
        sourceMessageIds: r.source_message_ids,
        entityNames: r.entity_names,
      },
    ]),
  );
}

/**
 * Every create or update since journal entry `after` that is not undone, by anyone but `notBy`,
 * oldest first: what a reviewer has not seen yet. A memory written twice is listed twice, so a
 * review that stops part-way knows which entry it got to.
 */
export async function writesSince(db: Queryable, after: number, notBy: MemoryActor): Promise<{ id: number; memoryId: number }[]> {
  const rows = await db.query<{ id: number; memory_id: number }>(
    `SELECT c.id::float8 AS id, c.memory_id::int AS memory_id FROM memory_changes c
      WHERE c.id > $1 AND c.action IN ('create', 'update') AND c.actor <> $2 AND c.undone_by IS NULL
      ORDER BY c.id`,
    [after, notBy],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), memoryId: Number(r.memory_id) }));
}

/** The changes these actors made since journal entry `after`, undos left out, oldest first. */
export async function changesBy(db: Queryable, actors: MemoryActor[], after: number): Promise<{ id: number; action: MemoryChange['action'] }[]> {
  const rows = await db.query<{ id: number; action: MemoryChange['action'] }>(
    `SELECT id::float8 AS id, action FROM memory_changes
      WHERE id > $1 AND actor = ANY($2::text[]) AND action <> 'undo' ORDER BY id`,
    [after, actors],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), action: r.action }));
}

/** These journal entries, oldest first, each with its memory's text as it stands now and whether it was undone. */
export async function changesWithText(db: Queryable, ids: number[]): Promise<ChangeWithText[]> {
  const rows = await db.query<Pick<ChangeRow, 'id' | 'memory_id' | 'action' | 'actor' | 'reason' | 'undone_by' | 'after' | 'before'> & { content: string }>(
    `SELECT c.id::int AS id, c.memory_id::int AS memory_id, c.action, c.actor, c.reason, c.undone_by::int AS undone_by, c.after, c.before, m.content
       FROM memory_changes c JOIN memories m ON m.id = c.memory_id WHERE c.id = ANY($1::bigint[]) ORDER BY c.id`,
    [ids],
  );
  return rows.rows.map((c) => ({
    id: c.id,
    memoryId: c.memory_id,
    action: c.action,
    actor: c.actor,
    ...decodeReason(c.reason),
    undoneBy: c.undone_by,
    after: c.after,
    before: c.before,
    content: c.content,
  }));
}

/** The id of the newest memory; 0 when there is none. */
export async function lastId(db: Queryable): Promise<number> {
  return Number((await db.query<{ id: number | null }>(`SELECT max(id)::float8 AS id FROM memories`)).rows[0]?.id ?? 0);
}

/**
 * Active memories with ids in (after, upTo] that name someone or something, oldest first, at most
 * `limit`: not from `notFrom`, and none of `except`.
 */
export async function namingSince(
  db: Queryable,
  after: number,
  upTo: number,
  o: { notFrom: MemorySource; except: number[]; limit: number },
): Promise<Pick<Memory, 'id' | 'entityNames' | 'createdAt'>[]> {
  const rows = await db.query<{ id: number; entity_names: string[]; created_at: Date }>(
    `SELECT id::float8 AS id, entity_names, created_at FROM memories
      WHERE id > $1 AND id <= $2 AND status = 'active' AND source <> $3 AND cardinality(entity_names) > 0
        AND id <> ALL($4::bigint[])
      ORDER BY id LIMIT $5`,
    [after, upTo, o.notFrom, o.except, o.limit],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), entityNames: r.entity_names, createdAt: iso(r.created_at)! }));
}

/** Of these (a, b) pairs, those where both are active, of one type, and at least `minSimilarity` alike in their words (pg_trgm). */
export async function alikePairs(db: Queryable, pairs: [number, number][], minSimilarity: number): Promise<[number, number][]> {
  if (pairs.length === 0) return [];
  const rows = await db.query<{ a: number; b: number }>(
    `SELECT a.id::int AS a, b.id::int AS b FROM unnest($1::bigint[], $2::bigint[]) AS p (x, y)
       JOIN memories a ON a.id = p.x JOIN memories b ON b.id = p.y
      WHERE a.status = 'active' AND b.status = 'active' AND a.type = b.type AND similarity(a.content, b.content) >= $3`,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1]), minSimilarity],
  );
  return rows.rows.map((r) => [Number(r.a), Number(r.b)]);
}

/** How many active memories are pinned. */
export async function pinnedCount(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories WHERE status = 'active' AND pinned`)).rows[0]!.n;
}

/**
 * Pinned active memories neither edited nor cited in the `days` days before `now`, the longest
 * uncited first (never cited before all), at most `limit`; each with when it was last cited.
 */
export async function stalePins(db: Queryable, now: Date, days: number, limit: number): Promise<{ id: number; lastCitedAt: string | null }[]> {
  const rows = await db.query<{ id: number; last: Date | null }>(
    `SELECT m.id::int AS id, max(r.created_at) AS last FROM memories m LEFT JOIN memory_references r ON r.memory_id = m.id
      WHERE m.status = 'active' AND m.pinned AND m.updated_at < $1::timestamptz - make_interval(days => $2)
      GROUP BY m.id HAVING max(r.created_at) IS NULL OR max(r.created_at) < $1::timestamptz - make_interval(days => $2)
      ORDER BY max(r.created_at) NULLS FIRST, m.id LIMIT $3`,
    [now.toISOString(), days, limit],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), lastCitedAt: iso(r.last) }));
}

/** Active memories not pinned that were cited at least `minReferences` times, the most cited first, at most `limit`. */
export async function muchCited(db: Queryable, minReferences: number, limit: number): Promise<{ id: number; referenceCount: number }[]> {
  const rows = await db.query<{ id: number; reference_count: number }>(
    `SELECT id::int AS id, reference_count FROM memories
      WHERE status = 'active' AND NOT pinned AND reference_count >= $1 ORDER BY reference_count DESC, id LIMIT $2`,
    [minReferences, limit],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), referenceCount: r.reference_count }));
}

/** `limit` active memories written before yesterday, in an order `seed` fixes: the same seed, the same ones. */
export async function olderSample(
  db: Queryable,
  seed: string,
  limit: number,
): Promise<Pick<Memory, 'id' | 'type' | 'content' | 'validFrom' | 'validTo' | 'createdAt'>[]> {
  const rows = await db.query<Pick<MemoryRow, 'id' | 'type' | 'content' | 'valid_from' | 'valid_to' | 'created_at'>>(
    `SELECT id::int AS id, type, content, valid_from, valid_to, created_at FROM memories
      WHERE status = 'active' AND created_at < now() - interval '1 day'
      ORDER BY md5(id::text || $1) LIMIT $2`,
    [seed, limit],
  );
  return rows.rows.map((r) => ({
    id: Number(r.id),
    type: r.type,
    content: r.content,
    validFrom: iso(r.valid_from),
    validTo: iso(r.valid_to),
    createdAt: iso(r.created_at)!,
  }));
}
