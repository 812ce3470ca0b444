// The person's changes — rename, alias, hide, merge — and the journal every change to the graph is
// written to (entity_changes), and undone from, newest first. Nothing the person did is ever deleted:
// a merged entity keeps its row (status 'merged', merged_into) and the journal lists the mentions
// and edges that moved, so undo moves them back.
import type { Transaction } from '../db/database.js';
import { ApiError, type EntityEdge, type MemoryActor } from '../../shared/api.js';
import { checkId, invalid } from './checks.js';
import type { GraphContext, Queryable } from './context.js';
import { foldCoMentions, refreshStats, unfoldCoMentions, type FoldedCoMention } from './mention-rows.js';
import { checkName, cleanName } from './names.js';
import { assertKeyFree, keyHolderSql } from './resolution.js';
import { requireEntity, requireLive, toChange, USER_ENTITY_ID, type ChangeRow, type EntityStatus, type StoredEntity, type StoredEntityChange } from './rows.js';

/** What a journalled change returns. */
export interface EntityChangeResult {
  entity: StoredEntity;
  changeId: number;
}

export type Journal = (
  tx: Transaction,
  c: { entityId: number; otherId?: number | null; action: StoredEntityChange['action']; actor: MemoryActor; before: unknown; after: unknown },
) => Promise<StoredEntityChange>;

/** Runs `fn` in one transaction with the journal at hand; the entities it journalled are reported after the commit. */
export async function change<T>(ctx: GraphContext, fn: (tx: Transaction, journal: Journal) => Promise<T>): Promise<T> {
  const touched: number[] = [];
  const result = await ctx.db.transaction((tx) =>
    fn(tx, async (t, c) => {
      touched.push(c.entityId, ...(c.otherId ? [c.otherId] : []));
      const after = c.after;
      const row = (
        await t.query<ChangeRow>(
          `INSERT INTO entity_changes (entity_id, other_id, action, actor, before, after) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb) RETURNING *`,
          [
            c.entityId,
            c.otherId ?? null,
            c.action,
            c.actor,
            c.before === null ? null : JSON.stringify(c.before),
            after === null ? null : JSON.stringify(after),
          ],
        )
      ).rows[0]!;
      return toChange(row);
    }),
  );
  ctx.changed(touched);
  return result;
}

export async function history(db: Queryable, id: number): Promise<StoredEntityChange[]> {
  const rows = await db.query<ChangeRow>('SELECT * FROM entity_changes WHERE entity_id = $1 OR other_id = $1 ORDER BY id', [checkId(id, 'id')]);
  return rows.rows.map(toChange);
}

/** Renames an entity; the old name stays as an alias so mentions of it still find the entity. */
export async function rename(ctx: GraphContext, id: number, newName: string, actor: MemoryActor): Promise<EntityChangeResult> {
  checkId(id, 'id');
  const { name, key } = checkName(newName);
  return change(ctx, async (tx, journal) => {
    const current = await requireLive(tx, id, 'renamed');
    if (current.name === name) invalid('name', `Entity ${id} is already called “${name}”.`);
    await assertKeyFree(tx, key, id);
    const oldKey = (await tx.query<{ name_key: string }>('SELECT name_key FROM entities WHERE id = $1', [id])).rows[0]!.name_key;
    // Renaming to one of its own aliases turns that alias into the name.
    const ownAlias = (
      await tx.query<{ alias: string; alias_key: string }>('SELECT alias, alias_key FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key])
    ).rows[0];
    if (ownAlias) await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key]);
    let aliasAdded: { alias: string; key: string } | null = null;
    if (oldKey !== key) {
      const inserted = await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        id,
        current.name,
        oldKey,
      ]);
      if (inserted.affectedRows) aliasAdded = { alias: current.name, key: oldKey };
    }
    await tx.query('UPDATE entities SET name = $2, name_key = $3, updated_at = now() WHERE id = $1', [id, name, key]);
    const entry = await journal(tx, {
      entityId: id,
      action: 'rename',
      actor,
      before: { name: current.name, nameKey: oldKey, aliasRemoved: ownAlias ? { alias: ownAlias.alias, key: ownAlias.alias_key } : null },
      after: { name, nameKey: key, aliasAdded },
    });
    return { entity: await requireEntity(tx, id), changeId: entry.id };
  });
}

/**
 * Another name for an entity. A name that already belongs to another entity is refused (merge them
 * instead): two entities answering to one name, or aliases pointing at each other in a cycle,
 * would make every later mention of it ambiguous.
 */
export async function addAlias(ctx: GraphContext, id: number, alias: string, actor: MemoryActor): Promise<EntityChangeResult> {
  checkId(id, 'id');
  const { name, key } = checkName(alias, 'alias');
  return change(ctx, async (tx, journal) => {
    await requireLive(tx, id, 'given an alias');
    const own = (await tx.query<{ name_key: string }>('SELECT name_key FROM entities WHERE id = $1', [id])).rows[0]!.name_key;
    if (own === key) invalid('alias', `“${name}” is already entity ${id}'s name.`);
    const dup = await tx.query('SELECT 1 FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [id, key]);
    if (dup.rows.length) throw new ApiError('conflict', `“${name}” is already an alias of entity ${id}.`, 'alias');
    await assertKeyFree(tx, key, id, 'alias');
    await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3)', [id, name, key]);
    const entry = await journal(tx, { entityId: id, action: 'alias', actor, before: null, after: { alias: name, key } });
    return { entity: await requireEntity(tx, id), changeId: entry.id };
  });
}

/** Hides an entity from views (or shows it again). Its mentions and edges stay; undo reverses it. */
export async function hide(ctx: GraphContext, id: number, hidden: boolean, actor: MemoryActor): Promise<EntityChangeResult> {
  checkId(id, 'id');
  return change(ctx, async (tx, journal) => {
    const current = await requireLive(tx, id, hidden ? 'hidden' : 'shown');
    if (hidden && (current.kind === 'self' || current.kind === 'user')) {
      throw new ApiError('conflict', `Entity ${id} is ${current.kind === 'self' ? 'the companion' : 'the person'} and cannot be hidden.`);
    }
    if ((current.status === 'hidden') === hidden) throw new ApiError('conflict', `Entity ${id} is already ${hidden ? 'hidden' : 'shown'}.`);
    const status = hidden ? 'hidden' : 'active';
    await tx.query('UPDATE entities SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
    const entry = await journal(tx, { entityId: id, action: hidden ? 'hide' : 'unhide', actor, before: { status: current.status }, after: { status } });
    return { entity: await requireEntity(tx, id), changeId: entry.id };
  });
}

/**
 * "These are the same": `goneId` is merged into `keepId`. Its names become keep's aliases, its
 * mentions and typed edges move to keep, its co-mention edges fold into keep's; its row stays
 * (status merged, merged_into keep). The journal entry lists what moved, and undo moves it back.
 */
export async function merge(ctx: GraphContext, keepId: number, goneId: number, actor: MemoryActor): Promise<EntityChangeResult> {
  checkId(keepId, 'keepId');
  checkId(goneId, 'mergeId');
  if (keepId === goneId) invalid('mergeId', 'An entity cannot be merged with itself.');
  return change(ctx, async (tx, journal) => {
    await requireLive(tx, keepId, 'merged into', 'keepId');
    const gone = await requireLive(tx, goneId, 'merged', 'mergeId');
    if (gone.kind === 'self' || gone.kind === 'user') {
      throw new ApiError(
        'conflict',
        `Entity ${goneId} is ${gone.kind === 'self' ? 'the companion' : 'the person'}; merge the other entity into it instead.`,
        'mergeId',
      );
    }
    const keepKeys = new Set(
      (
        await tx.query<{ k: string }>('SELECT name_key AS k FROM entities WHERE id = $1 UNION SELECT alias_key FROM entity_aliases WHERE entity_id = $1', [
          keepId,
        ])
      ).rows.map((r) => r.k),
    );
    const goneNames = (
      await tx.query<{ name: string; k: string }>(
        'SELECT name, name_key AS k FROM entities WHERE id = $1 UNION ALL SELECT alias, alias_key FROM entity_aliases WHERE entity_id = $1',
        [goneId],
      )
    ).rows;
    const aliasKeys: string[] = [];
    for (const n of goneNames) {
      if (keepKeys.has(n.k)) continue;
      keepKeys.add(n.k);
      await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3)', [keepId, n.name, n.k]);
      aliasKeys.push(n.k);
    }
    const mentionIds = (await tx.query<{ id: number }>('SELECT id FROM entity_mentions WHERE entity_id = $1', [goneId])).rows.map((r) => Number(r.id));
    // Typed edges move unless they would point at keep itself ("Ana Sousa sister_of Ana") or repeat
    // one keep already has (same relation, other end and valid time): those stay on the merged row,
    // which no view or walk reads, and come back with it on undo.
    const movable = `relation <> 'co_mention' AND NOT EXISTS (
         SELECT 1 FROM entity_edges k WHERE k.relation = x.relation
           AND k.source_id = CASE WHEN x.source_id = $2 THEN $1 ELSE x.source_id END
           AND k.target_id = CASE WHEN x.target_id = $2 THEN $1 ELSE x.target_id END
           AND k.valid_from IS NOT DISTINCT FROM x.valid_from AND k.valid_to IS NOT DISTINCT FROM x.valid_to)`;
    const sourceEdgeIds = (
      await tx.query<{ id: number }>(
        `UPDATE entity_edges x SET source_id = $1, updated_at = now() WHERE source_id = $2 AND target_id <> $1 AND ${movable} RETURNING id`,
        [keepId, goneId],
      )
    ).rows.map((r) => Number(r.id));
    const targetEdgeIds = (
      await tx.query<{ id: number }>(
        `UPDATE entity_edges x SET target_id = $1, updated_at = now() WHERE target_id = $2 AND source_id <> $1 AND ${movable} RETURNING id`,
        [keepId, goneId],
      )
    ).rows.map((r) => Number(r.id));
    const coMentions = await foldCoMentions(tx, keepId, goneId);
    await tx.query('UPDATE entity_mentions SET entity_id = $1 WHERE id = ANY($2::bigint[])', [keepId, mentionIds]);
    await tx.query(`UPDATE entities SET status = 'merged', merged_into = $2, updated_at = now() WHERE id = $1`, [goneId, keepId]);
    // Until deep sleep writes one for the merged whole, keep shows what was known as the other.
    const profileTaken = (
      await tx.query<{ p: number }>(
        `UPDATE entities k SET profile_memory_id = g.profile_memory_id FROM entities g
         WHERE k.id = $1 AND g.id = $2 AND k.profile_memory_id IS NULL AND g.profile_memory_id IS NOT NULL
         RETURNING k.profile_memory_id AS p`,
        [keepId, goneId],
      )
    ).rows[0]?.p;
    await refreshStats(tx, [keepId, goneId]);
    const entry = await journal(tx, {
      entityId: keepId,
      otherId: goneId,
      action: 'merge',
      actor,
      before: { gone: { status: gone.status, mergedInto: null } },
      after: {
        gone: { status: 'merged', mergedInto: keepId },
        aliasKeys,
        mentionIds,
        sourceEdgeIds,
        targetEdgeIds,
        coMentions,
        profileTaken: profileTaken === undefined ? null : Number(profileTaken),
      },
    });
    return { entity: await requireEntity(tx, keepId), changeId: entry.id };
  });
}

/**
 * Reverses a change: a rename gets its old name back (and loses the alias it left), an alias goes,
 * a hide is shown again, a merge puts the merged entity's mentions, edges and status back, a
 * relation is removed (the journal keeps it). Changes are undone newest first: a later change to
 * either entity that is not undone is a conflict. Mentions recorded after a merge under the merged
 * entity's names stay with the kept one: nothing says which of the two they meant.
 */
export async function undo(ctx: GraphContext, changeId: number, actor: MemoryActor): Promise<StoredEntity> {
  checkId(changeId, 'changeId');
  return change(ctx, async (tx, journal) => {
    const row = (await tx.query<ChangeRow>('SELECT * FROM entity_changes WHERE id = $1', [changeId])).rows[0];
    if (!row) throw new ApiError('not_found', `There is no change ${changeId} in the entity journal.`, 'changeId');
    const c = toChange(row);
    if (c.action === 'undo') invalid('changeId', 'An undo cannot itself be undone; make the change again instead.');
    if (c.undoneBy !== null) throw new ApiError('conflict', `Change ${changeId} was already undone.`);
    const involved = c.otherId === null ? [c.entityId] : [c.entityId, c.otherId];
    const later = (
      await tx.query<{ id: number; action: string }>(
        `SELECT id, action FROM entity_changes
         WHERE id > $1 AND undone_by IS NULL AND action <> 'undo' AND (entity_id = ANY($2::bigint[]) OR other_id = ANY($2::bigint[]))
         ORDER BY id DESC LIMIT 1`,
        [changeId, involved],
      )
    ).rows[0];
    if (later) throw new ApiError('conflict', `Entity ${involved.join(' or ')} changed again since (change ${later.id}, ${later.action}); undo that first.`);

    const before = c.before ?? {};
    const after = c.after ?? {};
    switch (c.action) {
      case 'rename': {
        const oldKey = String(before.nameKey);
        const added = after.aliasAdded as { alias: string; key: string } | null;
        if (added) await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [c.entityId, added.key]);
        await assertKeyFree(tx, oldKey, c.entityId);
        await tx.query('UPDATE entities SET name = $2, name_key = $3, updated_at = now() WHERE id = $1', [c.entityId, before.name, oldKey]);
        const removed = before.aliasRemoved as { alias: string; key: string } | null;
        if (removed) {
          await tx.query('INSERT INTO entity_aliases (entity_id, alias, alias_key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
            c.entityId,
            removed.alias,
            removed.key,
          ]);
        }
        break;
      }
      case 'alias':
        await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = $2', [c.entityId, after.key]);
        break;
      case 'hide':
      case 'unhide':
        await tx.query('UPDATE entities SET status = $2, updated_at = now() WHERE id = $1', [c.entityId, (before as { status: string }).status]);
        break;
      case 'merge': {
        const goneId = c.otherId!;
        const restore = (before.gone as { status: EntityStatus }).status;
        await tx.query('UPDATE entities SET status = $2, merged_into = NULL, updated_at = now() WHERE id = $1', [goneId, restore]);
        const ids = (k: string) => ((after[k] as number[] | undefined) ?? []).map(Number);
        await tx.query('UPDATE entity_mentions SET entity_id = $1 WHERE id = ANY($2::bigint[]) AND entity_id = $3', [goneId, ids('mentionIds'), c.entityId]);
        await tx.query('UPDATE entity_edges SET source_id = $1, updated_at = now() WHERE id = ANY($2::bigint[]) AND source_id = $3', [
          goneId,
          ids('sourceEdgeIds'),
          c.entityId,
        ]);
        await tx.query('UPDATE entity_edges SET target_id = $1, updated_at = now() WHERE id = ANY($2::bigint[]) AND target_id = $3', [
          goneId,
          ids('targetEdgeIds'),
          c.entityId,
        ]);
        await tx.query('DELETE FROM entity_aliases WHERE entity_id = $1 AND alias_key = ANY($2::text[])', [c.entityId, (after.aliasKeys as string[]) ?? []]);
        await unfoldCoMentions(tx, c.entityId, goneId, (after.coMentions as FoldedCoMention[] | undefined) ?? []);
        if (typeof after.profileTaken === 'number') {
          // Only while keep still shows the taken profile: a newer one written since stays.
          await tx.query('UPDATE entities SET profile_memory_id = NULL WHERE id = $1 AND profile_memory_id = $2', [c.entityId, after.profileTaken]);
        }
        await refreshStats(tx, [c.entityId, goneId]);
        break;
      }
      case 'relate': {
        const edge = after.edge as { id: number } | undefined;
        if (edge) await tx.query(`DELETE FROM entity_edges WHERE id = $1 AND relation <> 'co_mention'`, [edge.id]);
        break;
      }
      case 'strengthen': {
        // Takes back what it added (weight 1, its evidence, an earlier start), keeping evidence carried in since.
        const was = before.edge as EntityEdge;
        const now = after.edge as EntityEdge;
        const added = now.evidenceMemoryIds.filter((m) => !was.evidenceMemoryIds.includes(m));
        await tx.query(
          `UPDATE entity_edges SET weight = greatest(0, weight - $2), valid_from = $3,
             evidence_memory_ids = ARRAY(SELECT x FROM unnest(evidence_memory_ids) WITH ORDINALITY AS u (x, n) WHERE NOT (x = ANY($4::bigint[])) ORDER BY n),
             updated_at = now()
           WHERE id = $1`,
          [was.id, now.weight - was.weight, was.validFrom, added],
        );
        break;
      }
      case 'close': {
        const was = before.edge as EntityEdge;
        await tx.query('UPDATE entity_edges SET valid_to = $2, updated_at = now() WHERE id = $1', [was.id, was.validTo]);
        break;
      }
    }
    const entry = await journal(tx, {
      entityId: c.entityId,
      otherId: c.otherId,
      action: 'undo',
      actor,
      // The undo entry says what it undid: its before is what the change wrote, its after what came back.
      before: { undoes: c.id, action: c.action, ...(c.after ?? {}) },
      after: c.before,
    });
    await tx.query('UPDATE entity_changes SET undone_by = $2 WHERE id = $1', [c.id, entry.id]);
    return requireEntity(tx, c.entityId);
  });
}

/**
 * Points an entity at its profile, inside the caller's transaction: deep sleep writes the profile
 * memory and the link together. Not journalled here: the memory's own journal says what changed.
 */
export async function setProfileIn(tx: Transaction, entityId: number, memoryId: number): Promise<void> {
  const r = await tx.query('UPDATE entities SET profile_memory_id = $2, updated_at = now() WHERE id = $1', [
    checkId(entityId, 'entityId'),
    checkId(memoryId, 'memoryId'),
  ]);
  if (!r.affectedRows) throw new ApiError('not_found', `There is no entity ${entityId}.`, 'entityId');
}

/**
 * Makes each name an alias of the person ("You"), journalled as the graph's change (undo takes it
 * back). A name that is already the person's stays; a name another entity holds is left to the
 * person to merge (a wrong automatic merge would hide someone).
 */
export async function namePerson(ctx: GraphContext, names: string[]): Promise<void> {
  for (const raw of names) {
    const clean = cleanName(raw);
    if (!clean) continue;
    const holder = (await ctx.db.query<{ id: number }>(keyHolderSql('$1'), [clean.key])).rows[0];
    if (holder && Number(holder.id) === USER_ENTITY_ID) continue;
    if (holder) {
      ctx.log('info', `graph: the person calls themself “${clean.name}”, which is entity ${holder.id}'s name; left for the person to merge`);
      continue;
    }
    // addAlias's change in two statements: the person always exists and the key was free just now —
    // the insert checks it again, in the transaction. This runs in the recording of a message.
    await change(ctx, async (tx, journal) => {
      const added = await tx.query(`INSERT INTO entity_aliases (entity_id, alias, alias_key) SELECT $1, $2, $3 WHERE NOT EXISTS (${keyHolderSql('$3')})`, [
        USER_ENTITY_ID,
        clean.name,
        clean.key,
      ]);
      if (added.affectedRows)
        await journal(tx, { entityId: USER_ENTITY_ID, action: 'alias', actor: 'graph', before: null, after: { alias: clean.name, key: clean.key } });
    });
  }
}
