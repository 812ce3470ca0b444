// Typed relations ("works_at", "sister_of") and their valid time. Light sleep adds relations (relate)
// or says one again (strengthen); deep sleep closes them (close). Every change to an edge is
// journalled and undone from the journal; nothing here deletes an edge.
import { ApiError, type EntityEdge, type MemoryActor } from '../../shared/api.js';
import { checkId, checkTime, invalid, isRelationWord, RELATION_WORD } from './checks.js';
import type { GraphContext } from './context.js';
import { change } from './edits.js';
import { EDGE_COLUMNS, iso, requireLive, toEdge, type EdgeRow } from './rows.js';

/** The edge `$col` was not reopened by the person: no undone close of it in the journal. */
const NOT_REOPENED = (col: string) =>
  `NOT EXISTS (SELECT 1 FROM entity_changes c WHERE c.action = 'close' AND c.undone_by IS NOT NULL AND (c.after->'edge'->>'id')::bigint = ${col})`;

/**
 * A typed, directed relation between two entities ("works_at", "sister_of"), with valid time and
 * the memories it rests on. Filling these is the background model's job (a later part); the
 * checks live here so nothing can point at a missing or merged entity.
 */
export async function relate(
  ctx: GraphContext,
  input: {
    sourceId: number;
    targetId: number;
    relation: string;
    weight?: number;
    validFrom?: string | null;
    validTo?: string | null;
    evidenceMemoryIds?: number[];
  },
  actor: MemoryActor,
): Promise<EntityEdge> {
  const sourceId = checkId(input.sourceId, 'sourceId');
  const targetId = checkId(input.targetId, 'targetId');
  if (sourceId === targetId) invalid('targetId', 'A relation needs two different entities.');
  const relation = typeof input.relation === 'string' ? input.relation.trim() : '';
  if (!isRelationWord(relation)) invalid('relation', RELATION_WORD);
  if (relation === 'co_mention') invalid('relation', 'co_mention edges come from mentions; they cannot be added by hand.');
  const weight = input.weight ?? 1;
  if (!Number.isFinite(weight) || weight < 0) invalid('weight', 'weight must be a number ≥ 0.');
  const validFrom = checkTime(input.validFrom, 'validFrom');
  const validTo = checkTime(input.validTo, 'validTo');
  if (validFrom && validTo && validTo < validFrom) invalid('validTo', 'validTo is before validFrom.');
  const evidence = [...new Set(input.evidenceMemoryIds ?? [])].map((m) => checkId(m, 'evidenceMemoryIds'));
  // Read before the transaction opens (the memory store's query would wait for it to end), refused
  // inside it after the entities: a missing entity is still the error a caller sees first.
  const found = evidence.length ? new Set((await ctx.sources.memories.getMany(evidence)).map((m) => m.id)) : null;
  const missing = evidence.find((m) => !found?.has(m));
  return change(ctx, async (tx, journal) => {
    await requireLive(tx, sourceId, 'related', 'sourceId');
    await requireLive(tx, targetId, 'related', 'targetId');
    if (missing !== undefined) throw new ApiError('not_found', `There is no memory ${missing}.`, 'evidenceMemoryIds');
    const edge = toEdge(
      (
        await tx.query<EdgeRow>(
          `INSERT INTO entity_edges (source_id, target_id, relation, weight, valid_from, valid_to, evidence_memory_ids)
           VALUES ($1, $2, $3, $4, $5, $6, $7::bigint[]) RETURNING ${EDGE_COLUMNS}`,
          [sourceId, targetId, relation, weight, validFrom, validTo, evidence],
        )
      ).rows[0]!,
    );
    await journal(tx, { entityId: sourceId, otherId: targetId, action: 'relate', actor, before: null, after: { edge } });
    return edge;
  });
}

/**
 * Says a relation again: the edge with the same source, relation and target whose valid time ends
 * the same way (still open, for an open one) gains weight 1 and the evidence memories, and starts
 * at the earlier of the two starts when both are known. Journalled ('strengthen'); undo takes back
 * exactly what it added. Null when there is no such edge — relate() adds it then.
 */
export async function strengthen(
  ctx: GraphContext,
  input: { sourceId: number; targetId: number; relation: string; validFrom?: string | null; validTo?: string | null; evidenceMemoryIds?: number[] },
  actor: MemoryActor,
): Promise<EntityEdge | null> {
  const sourceId = checkId(input.sourceId, 'sourceId');
  const targetId = checkId(input.targetId, 'targetId');
  const relation = typeof input.relation === 'string' ? input.relation.trim() : '';
  if (!isRelationWord(relation) || relation === 'co_mention') invalid('relation', RELATION_WORD);
  const validFrom = checkTime(input.validFrom, 'validFrom');
  const validTo = checkTime(input.validTo, 'validTo');
  const evidence = [...new Set(input.evidenceMemoryIds ?? [])].map((m) => checkId(m, 'evidenceMemoryIds'));
  return change(ctx, async (tx, journal) => {
    const row = (
      await tx.query<EdgeRow>(
        `SELECT ${EDGE_COLUMNS} FROM entity_edges
         WHERE source_id = $1 AND target_id = $2 AND relation = $3 AND valid_to IS NOT DISTINCT FROM $4::timestamptz
         ORDER BY id LIMIT 1`,
        [sourceId, targetId, relation, validTo],
      )
    ).rows[0];
    if (!row) return null;
    const before = toEdge(row);
    const known = new Set(before.evidenceMemoryIds);
    const start =
      before.validFrom && validFrom ? (Date.parse(validFrom) < Date.parse(before.validFrom) ? validFrom : before.validFrom) : (before.validFrom ?? validFrom);
    // An unknown start stays unknown: the relation was known before this memory said when it began.
    const keepStart = before.validFrom === null ? null : start;
    const edge = toEdge(
      (
        await tx.query<EdgeRow>(
          `UPDATE entity_edges SET weight = weight + 1, valid_from = $2, evidence_memory_ids = $3::bigint[], updated_at = now()
           WHERE id = $1 RETURNING ${EDGE_COLUMNS}`,
          [before.id, keepStart, [...before.evidenceMemoryIds, ...evidence.filter((m) => !known.has(m))]],
        )
      ).rows[0]!,
    );
    await journal(tx, { entityId: sourceId, otherId: targetId, action: 'strengthen', actor, before: { edge: before }, after: { edge } });
    return edge;
  });
}

/**
 * Ends an open typed relation at `validTo` (never before it began). Journalled ('close', with
 * `cause` in its after); undo reopens it. The edge stays: on the time slider it is history.
 */
export async function closeRelation(
  ctx: GraphContext,
  edgeId: number,
  validTo: string,
  actor: MemoryActor,
  cause: Record<string, unknown>,
): Promise<EntityEdge> {
  checkId(edgeId, 'edgeId');
  const end = checkTime(validTo, 'validTo')!;
  return change(ctx, async (tx, journal) => {
    const row = (await tx.query<EdgeRow>(`SELECT ${EDGE_COLUMNS} FROM entity_edges WHERE id = $1`, [edgeId])).rows[0];
    if (!row) throw new ApiError('not_found', `There is no relation ${edgeId}.`, 'edgeId');
    const before = toEdge(row);
    if (before.relation === 'co_mention') invalid('edgeId', 'Co-mention edges have no valid time to close.');
    if (before.validTo !== null) throw new ApiError('conflict', `Relation ${edgeId} already ended on ${before.validTo}.`, 'edgeId');
    const at = before.validFrom && Date.parse(before.validFrom) > Date.parse(end) ? before.validFrom : end;
    const edge = toEdge(
      (await tx.query<EdgeRow>(`UPDATE entity_edges SET valid_to = $2, updated_at = now() WHERE id = $1 RETURNING ${EDGE_COLUMNS}`, [edgeId, at])).rows[0]!,
    );
    await journal(tx, { entityId: edge.source, otherId: edge.target, action: 'close', actor, before: { edge: before }, after: { ...cause, edge } });
    return edge;
  });
}

/**
 * Closes the open typed relations that rested on these memories and now rest on no active memory
 * at all (deep sleep superseded or expired them): each ends when the latest of those memories
 * stopped being true (their valid_to: where the newer memory began, or the expiry), else at
 * `fallback`. A relation the person reopened (an undone close) is left open. Returns the closed edges.
 */
export async function closeUnsupported(ctx: GraphContext, memoryIds: number[], fallback: string, actor: MemoryActor): Promise<EntityEdge[]> {
  if (!memoryIds.length) return [];
  const rows = (
    await ctx.db.query<EdgeRow & { gone: number[] }>(
      `SELECT ${EDGE_COLUMNS.split(', ')
        .map((c) => `e.${c}`)
        .join(', ')},
              ARRAY(SELECT x FROM unnest(e.evidence_memory_ids) AS x WHERE x = ANY($1::bigint[])) AS gone
       FROM entity_edges e
       WHERE e.relation <> 'co_mention' AND e.valid_to IS NULL AND e.evidence_memory_ids && $1::bigint[]
         AND ${NOT_REOPENED('e.id')}
       ORDER BY e.id`,
      [memoryIds],
    )
  ).rows;
  if (!rows.length) return [];
  // The evidence as the memory store has it: an edge with any active memory behind it stays open.
  const evidence = new Map(
    (await ctx.sources.memories.getMany([...new Set(rows.flatMap((r) => (r.evidence_memory_ids ?? []).map(Number)))])).map((m) => [m.id, m]),
  );
  const asked = new Set(memoryIds);
  const closed: EntityEdge[] = [];
  for (const r of rows) {
    const behind = (r.evidence_memory_ids ?? []).map(Number).flatMap((id) => evidence.get(id) ?? []);
    if (behind.some((m) => m.status === 'active')) continue;
    const ends = behind
      .filter((m) => asked.has(m.id) && m.validTo !== null)
      .map((m) => Date.parse(m.validTo!))
      .reduce<number | null>((latest, t) => (latest === null || t > latest ? t : latest), null);
    const end = ends !== null ? new Date(ends).toISOString() : fallback;
    closed.push(await closeRelation(ctx, Number(r.id), end, actor, { cause: 'evidence', memoryIds: (r.gone ?? []).map(Number) }));
  }
  return closed;
}

/**
 * Relations that hold one partner at a time: when an entity has two open edges of one such relation
 * to different others (lives_in Lisbon and lives_in Porto), each older one (by valid_from, else
 * when it was learned) ends where the next newer one to another entity begins. `bySource` ones are
 * one per source (someone lives in one place; a city has many people); `symmetric` ones are one per
 * entity at either end (partner_of: whichever way it was said). Older open edges to the newest
 * one's other end are the same fact and stay; a relation the person reopened stays open.
 * Returns the closed edges.
 */
export async function closeReplaced(ctx: GraphContext, bySource: readonly string[], symmetric: readonly string[], actor: MemoryActor): Promise<EntityEdge[]> {
  const relations = [...new Set([...bySource, ...symmetric])];
  if (!relations.length) return [];
  const rows = (
    await ctx.db.query<EdgeRow & { created_at: Date }>(
      `SELECT ${EDGE_COLUMNS}, created_at FROM entity_edges
       WHERE relation = ANY($1::text[]) AND relation <> 'co_mention' AND valid_to IS NULL ORDER BY id`,
      [relations],
    )
  ).rows;
  if (rows.length < 2) return [];
  type Held = { edge: EntityEdge; since: string; other: number };
  const groups = new Map<string, Held[]>();
  const add = (holder: number, h: Held) => {
    const key = `${holder}:${h.edge.relation}`;
    groups.set(key, [...(groups.get(key) ?? []), h]);
  };
  for (const r of rows) {
    const edge = toEdge(r);
    const since = edge.validFrom ?? iso(r.created_at)!;
    if (bySource.includes(edge.relation)) add(edge.source, { edge, since, other: edge.target });
    if (symmetric.includes(edge.relation)) {
      add(edge.source, { edge, since, other: edge.target });
      add(edge.target, { edge, since, other: edge.source });
    }
  }
  const contested = [...groups.values()].filter((list) => new Set(list.map((h) => h.other)).size > 1);
  if (!contested.length) return [];
  const reopened = new Set(
    (
      await ctx.db.query<{ id: number }>(
        `SELECT DISTINCT (c.after->'edge'->>'id')::bigint AS id FROM entity_changes c
         WHERE c.action = 'close' AND c.undone_by IS NOT NULL AND (c.after->'edge'->>'id')::bigint = ANY($1::bigint[])`,
        [contested.flatMap((list) => list.map((h) => h.edge.id))],
      )
    ).rows.map((r) => Number(r.id)),
  );
  const closed = new Map<number, EntityEdge>();
  for (const list of contested) {
    list.sort((a, b) => Date.parse(a.since) - Date.parse(b.since) || a.edge.id - b.edge.id);
    const newest = list[list.length - 1]!;
    for (const [i, held] of list.slice(0, -1).entries()) {
      if (held.other === newest.other || reopened.has(held.edge.id) || closed.has(held.edge.id)) continue;
      const next = list.slice(i + 1).find((n) => n.other !== held.other)!;
      closed.set(held.edge.id, await closeRelation(ctx, held.edge.id, next.since, actor, { cause: 'replaced', by: next.edge.id }));
    }
  }
  return [...closed.values()];
}

/**
 * Memories that carry on what others said (a merge, a split) become evidence wherever those were,
 * so a relation is not left resting on superseded memories only. Bookkeeping, not journalled.
 */
export async function carryEvidence(ctx: GraphContext, fromIds: number[], toIds: number[]): Promise<number> {
  if (!fromIds.length || !toIds.length) return 0;
  const r = await ctx.db.query(
    `UPDATE entity_edges SET evidence_memory_ids = evidence_memory_ids || ARRAY(SELECT unnest($2::bigint[]) EXCEPT SELECT unnest(evidence_memory_ids)), updated_at = now()
     WHERE relation <> 'co_mention' AND evidence_memory_ids && $1::bigint[] AND NOT (evidence_memory_ids @> $2::bigint[])`,
    [fromIds, toIds],
  );
  return r.affectedRows ?? 0;
}
