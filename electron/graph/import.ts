// Loading a graph from outside (a fixture, another app's export).
import { ApiError, type EntityKind } from '../../shared/api.js';
import { checkKind, checkTime, invalid, isRelationWord, RELATION_WORD } from './checks.js';
import type { GraphContext } from './context.js';
import { checkName } from './names.js';
import { resolveKeys } from './resolution.js';
import { SELF_ENTITY_ID, USER_ENTITY_ID } from './rows.js';

/**
 * Loads entities and relations through the same name resolution as mentions, in one transaction: a
 * name that is already known joins that entity instead of making a copy. Edges refer to entities by
 * their index in the list. Nothing is journalled: this is new knowledge, not a change to what the
 * person curated.
 */
export async function importGraph(
  ctx: GraphContext,
  input: {
    entities: { name: string; kind: EntityKind; aliases?: string[] }[];
    edges: { source: number; target: number; relation: string; weight?: number; validFrom?: string | null; validTo?: string | null }[];
  },
): Promise<{ entities: number; edges: number }> {
  const items = input.entities.map((e, i) => {
    checkKind(e.kind, `entities.${i}.kind`);
    return { ...checkName(e.name, `entities.${i}.name`), kind: e.kind, aliases: (e.aliases ?? []).map((a, j) => checkName(a, `entities.${i}.aliases.${j}`)) };
  });
  const edges = input.edges.map((e, i) => {
    for (const end of ['source', 'target'] as const) {
      if (!Number.isInteger(e[end]) || e[end] < 0 || e[end] >= items.length) {
        throw new ApiError('not_found', `edges.${i}.${end}: there is no entity ${e[end]} in this import.`, `edges.${i}.${end}`);
      }
    }
    const relation = e.relation.trim();
    if (!isRelationWord(relation)) invalid(`edges.${i}.relation`, RELATION_WORD);
    const weight = e.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) invalid(`edges.${i}.weight`, 'weight must be a number ≥ 0.');
    const validFrom = checkTime(e.validFrom, `edges.${i}.validFrom`);
    const validTo = checkTime(e.validTo, `edges.${i}.validTo`);
    if (validFrom && validTo && validTo < validFrom) invalid(`edges.${i}.validTo`, 'validTo is before validFrom.');
    return { ...e, relation, weight, validFrom, validTo };
  });
  return ctx.db.transaction(async (tx) => {
    const resolved = await resolveKeys(
      tx,
      items.filter((it) => it.kind !== 'self' && it.kind !== 'user').map((it) => ({ key: it.key, kind: it.kind })),
    );
    // 'self' and 'user' are the two fixed nodes, whatever name the import gives them.
    const fixedId = (kind: EntityKind) => (kind === 'self' ? SELF_ENTITY_ID : kind === 'user' ? USER_ENTITY_ID : null);
    // New names go in with one statement (keys are unique among them, so RETURNING is matched by key).
    const fresh = new Map<string, (typeof items)[number]>();
    for (const it of items) {
      if (fixedId(it.kind) === null && (resolved.get(it.key)?.entityId ?? null) === null && !fresh.has(it.key)) fresh.set(it.key, it);
    }
    const made = new Map<string, number>();
    const list = [...fresh.values()];
    for (let i = 0; i < list.length; i += 5_000) {
      const chunk = list.slice(i, i + 5_000);
      const r = await tx.query<{ id: number; name_key: string }>(
        `INSERT INTO entities (kind, name, name_key) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) RETURNING id, name_key`,
        [chunk.map((it) => it.kind), chunk.map((it) => it.name), chunk.map((it) => it.key)],
      );
      for (const row of r.rows) made.set(row.name_key, Number(row.id));
    }
    const ids = items.map((it) => fixedId(it.kind) ?? resolved.get(it.key)?.entityId ?? made.get(it.key)!);
    const aliases = items.flatMap((it, i) => (fixedId(it.kind) === null ? it.aliases.filter((a) => a.key !== it.key).map((a) => ({ id: ids[i]!, ...a })) : []));
    if (aliases.length) {
      await tx.query(
        `INSERT INTO entity_aliases (entity_id, alias, alias_key) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
        [aliases.map((a) => a.id), aliases.map((a) => a.name), aliases.map((a) => a.key)],
      );
    }
    const created = made.size;
    // Co-mention edges are stored once, smaller id first; a self-loop (two names of one entity) is dropped.
    const rows = edges
      .map((e) => {
        let [a, b] = [ids[e.source]!, ids[e.target]!];
        if (e.relation === 'co_mention' && a > b) [a, b] = [b, a];
        return { ...e, a, b };
      })
      .filter((e) => e.a !== e.b);
    let inserted = 0;
    for (let i = 0; i < rows.length; i += 5_000) {
      const chunk = rows.slice(i, i + 5_000);
      const r = await tx.query(
        `INSERT INTO entity_edges (source_id, target_id, relation, weight, valid_from, valid_to)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::real[], $5::timestamptz[], $6::timestamptz[])
         ON CONFLICT DO NOTHING`,
        [
          chunk.map((e) => e.a),
          chunk.map((e) => e.b),
          chunk.map((e) => e.relation),
          chunk.map((e) => e.weight),
          chunk.map((e) => e.validFrom),
          chunk.map((e) => e.validTo),
        ],
      );
      inserted += r.affectedRows ?? 0;
    }
    // PGlite has no autovacuum: without statistics a big import leaves the planner guessing (seq scans for trigram probes).
    await tx.query('ANALYZE entities, entity_aliases, entity_edges');
    return { entities: created, edges: inserted };
  });
}
