// What the archive reads: every table a person would want back, page by page, as JSON text made by
// Postgres itself. The archive reads every table to export it and never writes one
// (scripts/check-sql-owners.mjs allows these reads and nothing else).
//
// Left out on purpose: derived columns (the full-text vectors and their segmented text), the
// embeddings (derived; rebuilt from the text), the sleep cycle's bookkeeping and its model-call log,
// the graph's mention rows (rebuilt by its indexer) — and every secret: API keys live in the
// secret store, which the archive never opens; a provider row carries no key.
import type { Database } from '../db/open.js';
import type { VaultMemory } from './vault.js';

export interface Section {
  /** The key in anima.json's `sections`. */
  name: string;
  /** One page: `rows` JSON objects after the key `after` (null: from the start), in key order. */
  page: (db: Database, after: unknown[] | null, limit: number) => Promise<{ key: unknown[]; json: string }[]>;
  count: (db: Database) => Promise<number>;
}

type Row = { k1: unknown; k2?: unknown; j: string };

/** Derived columns no section exports: the full-text vectors and the segmented text they are made from. */
const DERIVED = new Set(['fts_segmented', 'content_fts', 'search_fts']);
const columnCache = new WeakMap<Database, Promise<Map<string, string[]>>>();

/** Every table's columns in order, read once per database from the catalogue (one query, not one a table). */
function columnsByTable(db: Database): Promise<Map<string, string[]>> {
  let known = columnCache.get(db);
  if (!known) {
    known = db
      .query<{ rel: string; name: string; generated: string }>(
        `SELECT c.relname AS rel, a.attname AS name, a.attgenerated::text AS generated
           FROM pg_catalog.pg_attribute a
           JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
          ORDER BY c.relname, a.attnum`,
      )
      .then(({ rows }) => {
        const map = new Map<string, string[]>();
        for (const r of rows) if (!r.generated && !DERIVED.has(r.name)) map.set(r.rel, [...(map.get(r.rel) ?? []), r.name]);
        return map;
      });
    columnCache.set(db, known);
  }
  return known;
}

/**
 * The JSON of a row `t` of `table`: json_build_object over its columns as the database has them now
 * (a column a later migration adds is exported without a change here), derived ones left out — a third
 * of the time to_jsonb takes, which also renders every tsvector.
 */
async function rowJson(db: Database, table: string): Promise<string> {
  const columns = (await columnsByTable(db)).get(table);
  if (!columns?.length) throw new Error(`archive: the table ${table} has no columns to export`);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  // json_build_object takes at most 100 arguments; a wider table goes through jsonb.
  return columns.length <= 50
    ? `json_build_object(${columns.map((c) => `'${c.replace(/'/g, "''")}', t.${quote(c)}`).join(', ')})::text`
    : `(to_jsonb(t) ${[...DERIVED].map((c) => `- '${c}'`).join(' ')})::text`;
}

/** A section paged by one or two key columns: `select` yields k1 (and k2) from the row `t` of `from`. */
function section(name: string, select: string, from: string, keys: string[], countSql: string, where?: string): Section {
  const order = keys.join(', ');
  const after = keys.length === 1 ? `${keys[0]} > $1` : `(${order}) > ($1, $2)`;
  return {
    name,
    async page(db, afterKey, limit) {
      const conditions = [where, afterKey ? after : undefined].filter(Boolean);
      const sql = `${select}, ${await rowJson(db, name)} AS j ${from}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${Math.floor(limit)}`;
      const { rows } = await db.query<Row>(sql, afterKey ?? []);
      return rows.map((r) => ({ key: keys.length === 1 ? [r.k1] : [r.k1, r.k2], json: r.j }));
    },
    async count(db) {
      const { rows } = await db.query<{ n: number }>(countSql);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/** In the order anima.json lists them (and an import would want them: parents first). */
export const SECTIONS: Section[] = [
  section('settings', 'SELECT t.key AS k1', 'FROM settings t', ['t.key'], 'SELECT count(*)::int AS n FROM settings'),
  // The row only: kind, name, address, model, context size. The key is in the secret store (and an
  // address never carries one: the providers room refuses a user or password in it).
  section('providers', 'SELECT t.id AS k1', 'FROM providers t', ['t.id'], 'SELECT count(*)::int AS n FROM providers'),
  section('self_blocks', 'SELECT t.key AS k1', 'FROM self_blocks t', ['t.key'], 'SELECT count(*)::int AS n FROM self_blocks'),
  // A conversation in the trash (or purged) has left the person's data: its messages are not exported.
  // Off-the-record ones are theirs to keep and go with their flag.
  section(
    'conversations',
    'SELECT t.id AS k1',
    'FROM conversations t',
    ['t.id'],
    'SELECT count(*)::int AS n FROM conversations WHERE deleted_at IS NULL',
    't.deleted_at IS NULL',
  ),
  // Every version: a regenerated or edited message keeps its earlier text with replaced_by set.
  section(
    'messages',
    `SELECT t.seq AS k1`,
    'FROM messages t',
    ['t.seq'],
    'SELECT count(*)::int AS n FROM messages WHERE deleted_at IS NULL',
    't.deleted_at IS NULL',
  ),
  section('memories', `SELECT t.id AS k1`, 'FROM memories t', ['t.id'], 'SELECT count(*)::int AS n FROM memories'),
  section('memory_changes', 'SELECT t.id AS k1', 'FROM memory_changes t', ['t.id'], 'SELECT count(*)::int AS n FROM memory_changes'),
  section(
    'memory_references',
    'SELECT t.memory_id AS k1, t.message_id AS k2',
    'FROM memory_references t',
    ['t.memory_id', 't.message_id'],
    'SELECT count(*)::int AS n FROM memory_references r WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id AND m.deleted_at IS NOT NULL)',
    'NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = t.message_id AND m.deleted_at IS NOT NULL)',
  ),
  // Anchors, imprints, narratives, dreams and digests; hidden ones too, with their hidden_at.
  section('diary_blocks', `SELECT t.id AS k1`, 'FROM diary_blocks t', ['t.id'], 'SELECT count(*)::int AS n FROM diary_blocks'),
  section('mood_days', 'SELECT t.day AS k1', 'FROM mood_days t', ['t.day'], 'SELECT count(*)::int AS n FROM mood_days'),
  section('entities', 'SELECT t.id AS k1', 'FROM entities t', ['t.id'], 'SELECT count(*)::int AS n FROM entities'),
  section(
    'entity_aliases',
    'SELECT t.entity_id AS k1, t.alias_key AS k2',
    'FROM entity_aliases t',
    ['t.entity_id', 't.alias_key'],
    'SELECT count(*)::int AS n FROM entity_aliases',
  ),
  // Co-mentions and typed relations, each with its valid time and evidence.
  section('entity_edges', 'SELECT t.id AS k1', 'FROM entity_edges t', ['t.id'], 'SELECT count(*)::int AS n FROM entity_edges'),
];

/** The last migration this database applied. */
export async function schemaVersion(db: Database): Promise<number> {
  const { rows } = await db.query<{ v: number | null }>('SELECT max(version)::int AS v FROM schema_migrations');
  return Number(rows[0]?.v ?? 0);
}

// --- what the vault reads ----------------------------------------------------------------------

export async function vaultMemories(db: Database, afterId: number, limit: number) {
  const { rows } = await db.query<VaultMemory>(
    `SELECT m.id::int AS id, m.type, m.status, m.content, m.valid_from::text AS valid_from, m.valid_to::text AS valid_to,
            m.superseded_by::int AS superseded_by, m.pinned, m.source, m.reference_count, m.injected_count, m.entity_names,
            m.created_at::text AS created_at, m.updated_at::text AS updated_at,
            (SELECT count(*)::int FROM memory_changes c WHERE c.memory_id = m.id) AS changes,
            (SELECT count(*)::int FROM memory_references r WHERE r.memory_id = m.id) AS "references"
       FROM memories m WHERE m.id > $1 ORDER BY m.id LIMIT ${Math.floor(limit)}`,
    [afterId],
  );
  return rows;
}

type DiaryRow = {
  id: number;
  day: string;
  kind: string;
  title: string | null;
  body: string;
  mood: unknown;
  conversation_id: string | null;
  created_at: string;
};

/** Visible diary blocks in (day, id) order; dreams only, or everything but dreams. */
export async function vaultDiary(db: Database, dreams: boolean, after: { day: string; id: number } | null, limit: number): Promise<DiaryRow[]> {
  const { rows } = await db.query<DiaryRow>(
    `SELECT d.id::int AS id, d.day, d.kind, d.title, d.body, d.mood, d.conversation_id, d.created_at::text AS created_at
       FROM diary_blocks d
      WHERE d.hidden_at IS NULL AND (d.kind = 'dream') = $1 AND ($2::text IS NULL OR (d.day, d.id) > ($2::text, $3::bigint))
      ORDER BY d.day, d.id LIMIT ${Math.floor(limit)}`,
    [dreams, after?.day ?? null, after?.id ?? 0],
  );
  return rows;
}

export async function vaultConversations(db: Database, afterId: string | null, limit: number) {
  const { rows } = await db.query<{
    id: string;
    kind: string;
    title: string;
    archived: boolean;
    created_at: string;
    updated_at: string;
    messages: number;
  }>(
    `SELECT c.id, c.kind, c.title, c.archived, c.created_at::text AS created_at, c.updated_at::text AS updated_at,
            (SELECT count(*)::int FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL) AS messages
       FROM conversations c WHERE c.deleted_at IS NULL AND ($1::text IS NULL OR c.id > $1) ORDER BY c.id LIMIT ${Math.floor(limit)}`,
    [afterId],
  );
  return rows;
}

/**
 * The images the exported messages carry (files in the data folder; the rows hold their references):
 * each id once, in order.
 */
export async function attachmentIds(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT DISTINCT i->>'id' AS id FROM messages m, jsonb_array_elements(m.images) AS i
      WHERE m.images IS NOT NULL AND m.deleted_at IS NULL ORDER BY 1`,
  );
  return rows.map((r) => r.id);
}

/** A conversation's current messages (not the earlier versions a regenerate or edit replaced), by seq. */
export async function vaultMessages(db: Database, conversationId: string, afterSeq: number, limit: number) {
  const { rows } = await db.query<{ seq: number; id: string; role: string; speaker: string | null; content: string; status: string; created_at: string }>(
    `SELECT m.seq::float8 AS seq, m.id, m.role, m.speaker, m.content, m.status, m.created_at::text AS created_at
       FROM messages m WHERE m.conversation_id = $1 AND m.replaced_by IS NULL AND m.deleted_at IS NULL AND m.seq > $2 ORDER BY m.seq LIMIT ${Math.floor(limit)}`,
    [conversationId, afterSeq],
  );
  return rows;
}

export async function vaultSelf(db: Database) {
  const { rows } = await db.query<{ key: string; content: string; is_default: boolean; updated_at: string }>(
    `SELECT s.key, s.content, s.is_default, s.updated_at::text AS updated_at FROM self_blocks s
      ORDER BY array_position(ARRAY['identity','personality','values','relationship','voice','narrative'], s.key)`,
  );
  return rows;
}
