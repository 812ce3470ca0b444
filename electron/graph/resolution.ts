// Which entity a name means: its name key, then an alias, then trigram similarity among kinds that
// agree — and the entities made when nothing matches. Mentions, sleep's relations and imports all
// resolve here, so one name lands on one entity whichever way it came in.
import type { Transaction } from '../db/database.js';
import { ApiError, type EntityKind } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { checkKind } from './checks.js';
import type { GraphContext } from './context.js';
import { detectMentionsAsync } from './mentions.js';
import { checkName, cleanName } from './names.js';
import { requireEntity, type StoredEntity } from './rows.js';

/**
 * Trigram similarity (pg_trgm, on name keys) at or above which a new name is the same entity as an
 * existing one of a compatible kind. Measured pairs: spellings of one name score 0.58–0.83
 * ("melanie"/"melani" 0.67, "caroline"/"carolin" 0.70, "nimbus labs"/"nimbus lab" 0.77, "john smith"/
 * "jon smith" 0.62, "patrick rothfuss"/"pat rothfuss" 0.67, "george r. r. martin"/"george rr martin"
 * 0.83, "microsoft"/"microsft" 0.58); different names in the same frame score 0.14–0.58 ("maria"/
 * "mario" 0.50, "ana"/"anna" 0.50, "caroline"/"carol" 0.50, "mark"/"mary" 0.43, "new york"/"york" 0.56,
 * "nimbus labs"/"nimbus" 0.58, "john"/"joan" 0.25, "emma watson"/"emma stone" 0.28). The one bad pair
 * above 0.6 is "paris"/"parisa" (0.63), a place and a person — kinds must agree, which keeps them
 * apart. 0.6 errs towards a second entity (a typo like "microsft", 0.58, lands among the ambiguous
 * ones): a merge is one click, a wrong match hides a person. The companion and the person are
 * matched by their exact names and aliases only ("Animal" is 0.63 alike to "Anima").
 */
export const SAME_ENTITY_SIMILARITY = 0.6;
/**
 * From here up to SAME_ENTITY_SIMILARITY a name is close but not close enough ("carol" beside
 * "caroline", "nimbus" beside "nimbus labs"): a new entity is made and the candidates are recorded in
 * entity_ambiguities for the background model to judge later. Below it, names are just different.
 */
export const AMBIGUOUS_SIMILARITY = 0.45;

export interface Resolution {
  /** The entity the name means, or null: nothing matched, or it was ambiguous. */
  entity: StoredEntity | null;
  via: 'name' | 'alias' | 'similar' | 'ambiguous' | 'none';
  similarity?: number;
  /** Close entities that were not chosen (ambiguous), best first. */
  candidates: { id: number; name: string; similarity: number }[];
}

/** What a key resolved to: an entity id, or null with the close candidates. */
export interface KeyResolution {
  entityId: number | null;
  via: Resolution['via'];
  similarity?: number;
  candidates: Resolution['candidates'];
}

interface Candidate {
  id: number;
  kind: EntityKind;
  name: string;
  mentionCount: number;
  similarity: number;
  via: 'name' | 'alias';
}

/** Kinds that may be the same thing: the same kind; a person and the person (or the companion); anything and a vague kind. */
function kindsAgree(a: EntityKind, b: EntityKind): boolean {
  if (a === b) return true;
  const vague = (k: EntityKind) => k === 'thing' || k === 'topic';
  if (vague(a) || vague(b)) return true;
  const personal = (k: EntityKind) => k === 'person' || k === 'user' || k === 'self';
  return personal(a) && personal(b);
}

/**
 * What a name means, without changing anything: the entity whose name or alias has the same key,
 * else the one entity of a compatible kind at least SAME_ENTITY_SIMILARITY alike. Close candidates
 * that are not chosen come back as `ambiguous`.
 */
export async function resolveName(db: Database, name: string, kind?: EntityKind): Promise<Resolution> {
  const { key } = checkName(name);
  if (kind !== undefined) checkKind(kind, 'kind');
  return db.transaction(async (tx) => {
    const found = (await resolveKeys(tx, [{ key, kind }])).get(key)!;
    const entity = found.entityId === null ? null : await requireEntity(tx, found.entityId);
    return { entity, via: found.via, similarity: found.similarity, candidates: found.candidates };
  });
}

/**
 * Resolves keys: exact name or alias key first (one query for all keys), then trigram
 * similarity for the rest (one more, a probe per key inside it). Merged entities never match (their names are their
 * survivor's aliases). Hidden ones do: a hidden entity mentioned again stays one entity, still hidden.
 */
export async function resolveKeys(tx: Transaction, items: { key: string; kind?: EntityKind }[]): Promise<Map<string, KeyResolution>> {
  if (!items.length) return new Map();
  const exact = await tx.query<ExactRow>(exactKeysSql('$1'), [[...new Set(items.map((i) => i.key))]]);
  return resolveKeysWith(tx, items, exact.rows);
}

/** A live entity whose name or alias has one of the keys asked (exactKeysSql). */
export interface ExactRow {
  key: string;
  id: number;
  kind: EntityKind;
  name: string;
  mention_count: number;
  via: 'name' | 'alias';
}

/** A live name (or alias) a trigram probe found close to `key` (migration 032's graph_names_similar). */
export interface SimilarRow {
  key: string;
  id: number;
  kind: EntityKind;
  name: string;
  mention_count: number;
  sim: number;
}

/** The exact half of resolution as SQL: live entities whose name or alias key is in `param` (a text[]), as ExactRow rows. */
export function exactKeysSql(param: string): string {
  return `SELECT key, id, kind, name, mention_count, via FROM graph_names_exact(${param}::text[])`;
}

/** The keys a trigram probe can compare: names of one or two characters have too few trigrams ("jo", "王芳" are exact-only). */
export function probeableKeys(keys: Iterable<string>): string[] {
  return [...new Set(keys)].filter((k) => [...k.replace(/\s/g, '')].length >= 3);
}

/**
 * resolveKeys with the exact lookup already read (a caller that reads it within a statement of
 * its own): the trigram probe for the rest. `similarRows`: the caller's statement probed already
 * (graph_names_similar on the probeable keys that matched nothing exactly, a superset of the ones asked).
 */
export async function resolveKeysWith(
  tx: Transaction,
  items: { key: string; kind?: EntityKind }[],
  exactRows: ExactRow[],
  similarRows?: SimilarRow[],
): Promise<Map<string, KeyResolution>> {
  const out = new Map<string, KeyResolution>();
  if (!items.length) return out;
  const byKey = new Map<string, Candidate[]>();
  for (const r of exactRows) {
    const list = byKey.get(r.key) ?? [];
    if (!list.some((c) => c.id === Number(r.id))) {
      list.push({ id: Number(r.id), kind: r.kind, name: r.name, mentionCount: r.mention_count, similarity: 1, via: r.via });
    }
    byKey.set(r.key, list);
  }
  const rest: typeof items = [];
  for (const item of items) {
    if (out.has(item.key)) continue;
    const list = byKey.get(item.key);
    if (list?.length) {
      // Renames, aliases and merges refuse a key another entity holds, so two are a leftover of
      // kinds (a "Jordan" person and place): prefer the asked kind, then the most mentioned.
      const pool = item.kind ? list.filter((c) => kindsAgree(c.kind, item.kind!)) : list;
      const pick = (pool.length ? pool : list).sort((a, b) => b.mentionCount - a.mentionCount || a.id - b.id)[0]!;
      out.set(item.key, { entityId: pick.id, via: pick.via, similarity: 1, candidates: [] });
      continue;
    }
    rest.push(item);
  }
  if (rest.length) {
    const similar = similarCandidates(
      similarRows ??
        (await probeSimilar(
          tx,
          rest.map((i) => i.key),
        )),
    );
    for (const item of rest) {
      if (out.has(item.key)) continue;
      out.set(item.key, decideSimilar(similar.get(item.key) ?? [], item.kind));
    }
  }
  return out;
}

/**
 * The ten most similar live names (or aliases) for each key, by trigram similarity, in one query
 * (migration 032: the probe's threshold and sequential scans off are set for the rest of the
 * transaction — the planner cannot guess how many names a trigram probe of an unnest matches and
 * chose to read every entity, 0.5 s a probe at 20,000 entities).
 */
async function probeSimilar(tx: Transaction, keys: string[]): Promise<SimilarRow[]> {
  const probed = probeableKeys(keys);
  if (!probed.length) return [];
  return (
    await tx.query<SimilarRow>('SELECT key, id, kind, name, mention_count, sim FROM graph_names_similar($1::text[], $2::real)', [probed, AMBIGUOUS_SIMILARITY])
  ).rows;
}

/** Probe rows as each key's candidates, most alike first. */
function similarCandidates(rows: SimilarRow[]): Map<string, Candidate[]> {
  const out = new Map<string, Candidate[]>();
  for (const r of rows) {
    const list = out.get(r.key) ?? [];
    list.push({
      id: Number(r.id),
      kind: r.kind,
      name: r.name,
      mentionCount: r.mention_count,
      similarity: Math.round(Number(r.sim) * 1000) / 1000,
      via: 'name',
    });
    out.set(r.key, list);
  }
  for (const list of out.values()) list.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
  return out;
}

/** One entity at least SAME_ENTITY_SIMILARITY alike (of a compatible kind) is the same; any other close names are ambiguous. */
function decideSimilar(all: Candidate[], kind: EntityKind | undefined): KeyResolution {
  if (!all.length) return { entityId: null, via: 'none', candidates: [] };
  const strong = all.filter((c) => c.similarity >= SAME_ENTITY_SIMILARITY && (!kind || kindsAgree(c.kind, kind)));
  if (strong.length === 1) return { entityId: strong[0]!.id, via: 'similar', similarity: strong[0]!.similarity, candidates: [] };
  return { entityId: null, via: 'ambiguous', candidates: all.map(({ id, name, similarity }) => ({ id, name, similarity })) };
}

/** The kind detection gives a name on its own ("Lisbon" → place), if it finds the whole name. */
export async function kindOfName(name: string): Promise<EntityKind | null> {
  const found = await detectMentionsAsync(name);
  const whole = found.find((m) => m.start === 0 && m.end === name.length);
  return whole?.kind ?? (found.length === 1 ? found[0]!.kind : null);
}

/**
 * A new entity for a name nothing matched. Later texts find it by its key; the close names it was
 * not matched to (`candidates`) wait in entity_ambiguities for a judge.
 */
export async function createEntity(
  tx: Transaction,
  w: { name: string; key: string; kind: EntityKind },
  at: Date | null,
  candidates: Resolution['candidates'],
): Promise<number> {
  const row = (
    await tx.query<{ id: number }>(`INSERT INTO entities (kind, name, name_key, first_seen, last_seen) VALUES ($1, $2, $3, $4, $4) RETURNING id`, [
      w.kind === 'self' || w.kind === 'user' ? 'person' : w.kind,
      w.name,
      w.key,
      at,
    ])
  ).rows[0]!;
  const id = Number(row.id);
  if (candidates.length) {
    await tx.query('INSERT INTO entity_ambiguities (entity_id, surface, candidate_ids, similarities) VALUES ($1, $2, $3::bigint[], $4::real[])', [
      id,
      w.name,
      candidates.map((c) => c.id),
      candidates.map((c) => c.similarity),
    ]);
  }
  return id;
}

/**
 * createEntity for many names in two statements (the entities, then the ambiguities of those that
 * have close candidates). Returns the new ids in the order of `items`, whose keys are distinct.
 */
export async function createEntities(
  tx: Transaction,
  items: { name: string; key: string; kind: EntityKind; at: Date | null; candidates: Resolution['candidates'] }[],
): Promise<number[]> {
  if (!items.length) return [];
  const rows = (
    await tx.query<{ id: number; name_key: string }>(
      `INSERT INTO entities (kind, name, name_key, first_seen, last_seen)
       SELECT k, n, nk, a, a FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(k, n, nk, a)
       RETURNING id, name_key`,
      [
        items.map((w) => (w.kind === 'self' || w.kind === 'user' ? 'person' : w.kind)),
        items.map((w) => w.name),
        items.map((w) => w.key),
        items.map((w) => w.at),
      ],
    )
  ).rows;
  const idOf = new Map(rows.map((r) => [r.name_key, Number(r.id)]));
  const ids = items.map((w) => idOf.get(w.key)!);
  const ambiguous = items.flatMap((w, i) =>
    w.candidates.length
      ? [{ entity_id: ids[i], surface: w.name, candidate_ids: w.candidates.map((c) => c.id), similarities: w.candidates.map((c) => c.similarity) }]
      : [],
  );
  if (ambiguous.length) {
    await tx.query(
      `INSERT INTO entity_ambiguities (entity_id, surface, candidate_ids, similarities)
       SELECT (a->>'entity_id')::bigint, a->>'surface', ARRAY(SELECT jsonb_array_elements_text(a->'candidate_ids')::bigint),
              ARRAY(SELECT jsonb_array_elements_text(a->'similarities')::real)
       FROM jsonb_array_elements($1::jsonb) AS a`,
      [JSON.stringify(ambiguous)],
    );
  }
  return ids;
}

/**
 * The entities these names mean, made when unknown — resolved the way recordMentions resolves the
 * names given with a memory (key, alias, then trigram among kinds that agree; a close but uncertain
 * name gets a new entity and an entity_ambiguities row), so the graph indexer, reading the same
 * memory later, lands on the same entities. Returns name keys (names.ts nameKey) to entity ids;
 * strings that are not names are left out.
 */
export async function ensureEntities(ctx: GraphContext, names: string[], at: Date | null = null): Promise<Map<string, number>> {
  const wanted = new Map<string, { name: string; key: string; kind: EntityKind }>();
  for (const raw of names) {
    const clean = typeof raw === 'string' ? cleanName(raw) : null;
    if (!clean || wanted.has(clean.key)) continue;
    // A name on its own: the kind detection gives it, else a thing (as for given names).
    wanted.set(clean.key, { ...clean, kind: (await kindOfName(clean.name)) ?? 'thing' });
  }
  const out = new Map<string, number>();
  if (!wanted.size) return out;
  const created: number[] = [];
  await ctx.db.transaction(async (tx) => {
    const resolved = await resolveKeys(tx, [...wanted.values()]);
    for (const w of wanted.values()) {
      const r = resolved.get(w.key)!;
      let id = r.entityId;
      if (id === null) {
        id = await createEntity(tx, w, at, r.candidates);
        created.push(id);
      }
      out.set(w.key, id);
    }
  });
  ctx.changed(created);
  return out;
}

/**
 * SQL for the live entity whose name or alias has the key in parameter `key` (at most one row: id,
 * name), leaving out the entity in parameter `except` when given.
 */
export function keyHolderSql(key: string, except?: string): string {
  const other = except ? ` AND e.id <> ${except}` : '';
  return `SELECT e.id, e.name FROM entities e WHERE e.name_key = ${key} AND e.status <> 'merged'${other}
       UNION ALL
       SELECT e.id, e.name FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
       WHERE a.alias_key = ${key} AND e.status <> 'merged'${other}
       LIMIT 1`;
}

/** Refuses a key that already names (or is an alias of) another live entity. */
export async function assertKeyFree(tx: Transaction, key: string, selfId: number, field = 'name'): Promise<void> {
  const other = (await tx.query<{ id: number; name: string }>(keyHolderSql('$1', '$2'), [key, selfId])).rows[0];
  if (other) {
    throw new ApiError('conflict', `That name already belongs to entity ${other.id} (“${other.name}”). If they are the same, merge them instead.`, field);
  }
}
