// Storage and search of embeddings (migration 009). The column is a float4 array (models differ in
// length, and the table must not depend on the extension); every search casts it to pgvector's type
// of the model's length and filters on the model, source and length exactly as the per-model partial
// HNSW indexes are defined, or the planner cannot use them.
import { createHash } from 'node:crypto';
import type { Database, Transaction } from '../db/database.js';
import { catalogModels } from '../models/catalog.js';

type Queryable = Database | Transaction;

export const EMBED_SOURCES = ['message', 'memory', 'diary'] as const;
export type EmbedSource = (typeof EMBED_SOURCES)[number];

/**
 * Characters of a text sent to the model. The models read at most 512 tokens (about 2,000
 * characters of English, fewer of CJK); sending a 200k-character message would only cost the worker
 * time to tokenise what it then cuts.
 */
export const MAX_EMBED_CHARS = 2000;

/** md5 of the text, as Postgres' md5(text) computes it (UTF-8): the backfill compares in SQL. */
export function contentHash(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/** The start of `text` the model reads, never ending in half a surrogate pair. */
export function clip(text: string, max = MAX_EMBED_CHARS): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * Embedding models people run on their servers that want a task prefix (their model cards say so):
 * nomic-embed-text "search_query: " / "search_document: "; the e5 family "query: " / "passage: ".
 * Matched on the server's name for the model (tags like `:latest` and versions included).
 */
const SERVER_PREFIXES: [RegExp, { query: string; passage: string }][] = [
  [/nomic-embed-text/i, { query: 'search_query: ', passage: 'search_document: ' }],
  [/(^|[/_-])e5([-_.:]|$)/i, { query: 'query: ', passage: 'passage: ' }],
];

/**
 * What a model wants in front of a query and of a stored text (e5: "query: " / "passage: "). The
 * Embedder embeds what it is given, so the caller adds them; a model the catalogue does not know
 * gets none.
 */
export function prefixesFor(modelId: string): { query: string; passage: string } {
  if (modelId.startsWith('server:')) {
    const name = modelId.slice('server:'.length);
    const known = SERVER_PREFIXES.find(([pattern]) => pattern.test(name));
    return known ? { ...known[1] } : { query: '', passage: '' };
  }
  const entry = catalogModels({ includeTestModels: true }).find((e) => e.id === modelId);
  return entry && entry.task === 'embedding' ? { query: entry.queryPrefix, passage: entry.passagePrefix } : { query: '', passage: '' };
}

/** float4 needs 9 significant digits to come back unchanged; pgvector refuses NaN and infinities. */
function numbers(v: ArrayLike<number>): string {
  const parts = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isFinite(x)) throw new Error(`vector component ${i} is ${x}`);
    parts[i] = Number(x.toPrecision(9)).toString();
  }
  return parts.join(',');
}

/** pgvector's text form, for a query vector. */
export function vectorLiteral(v: ArrayLike<number>): string {
  return `[${numbers(v)}]`;
}

/** A real[] literal, as the column stores it. */
export function arrayLiteral(v: ArrayLike<number>): string {
  return `{${numbers(v)}}`;
}

/** Either text form back to numbers. */
export function parseVector(text: string): Float32Array {
  const body = text.trim().replace(/^[[{]|[\]}]$/g, '');
  return Float32Array.from(body ? body.split(',').map(Number) : []);
}

/** A string as an SQL literal (standard_conforming_strings is on: only quotes need doubling). */
export function sqlLiteral(s: string): string {
  if (s.includes('\0')) throw new Error('a model id cannot contain NUL');
  return `'${s.replace(/'/g, "''")}'`;
}

function checkDimensions(dimensions: number): number {
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > 16_000) throw new Error(`bad vector length ${dimensions}`);
  return dimensions;
}

/** Index names carry a hash of the model id (ids have slashes, dots, any length) and the length. */
function modelKey(modelId: string): string {
  return createHash('sha256').update(modelId).digest('hex').slice(0, 12);
}

export function indexName(modelId: string, source: EmbedSource, dimensions: number): string {
  return `embeddings_hnsw_${modelKey(modelId)}_${source}_${checkDimensions(dimensions)}`;
}

/** `embedding::vector(N)` — the indexed expression. */
export function castExpr(dimensions: number, column = 'embedding'): string {
  return `(${column}::vector(${checkDimensions(dimensions)}))`;
}

/**
 * The partial indexes' predicate; a search must repeat it literally. The length is part of it: an
 * index build evaluates its expression on every row the predicate admits, dead rows not yet vacuumed
 * included, and a row of another length would fail the cast.
 */
export function predicate(modelId: string, source: EmbedSource, dimensions: number, alias = ''): string {
  const p = alias ? `${alias}.` : '';
  return `${p}model = ${sqlLiteral(modelId)} AND ${p}source = ${sqlLiteral(source)} AND ${p}dimensions = ${checkDimensions(dimensions)}`;
}

/**
 * Makes the model's indexes (one per source) exist with its current length. Vectors of the same
 * model id with another length — the files were replaced by different weights — are deleted with
 * their indexes first (an index cast to the old length would refuse the new rows).
 */
export async function prepareModel(db: Database, modelId: string, dimensions: number): Promise<{ discarded: number; previousDimensions: number[] }> {
  checkDimensions(dimensions);
  return db.transaction(async (tx) => {
    const prefix = `embeddings_hnsw_${modelKey(modelId)}_`;
    const existing = (
      await tx.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'embeddings' AND starts_with(indexname, $1)`,
        [prefix],
      )
    ).rows.map((r) => r.indexname);
    const wanted = new Set(EMBED_SOURCES.map((s) => indexName(modelId, s, dimensions)));
    for (const name of existing) if (!wanted.has(name)) await tx.exec(`DROP INDEX IF EXISTS ${name}`);
    const previousDimensions = (
      await tx.query<{ dimensions: number }>('SELECT DISTINCT dimensions FROM embeddings WHERE model = $1 AND dimensions <> $2', [modelId, dimensions])
    ).rows.map((r) => r.dimensions);
    const discarded = previousDimensions.length
      ? ((await tx.query('DELETE FROM embeddings WHERE model = $1 AND dimensions <> $2', [modelId, dimensions])).affectedRows ?? 0)
      : 0;
    for (const source of EMBED_SOURCES) {
      await tx.exec(
        `CREATE INDEX IF NOT EXISTS ${indexName(modelId, source, dimensions)} ON embeddings
         USING hnsw (${castExpr(dimensions)} vector_cosine_ops) WHERE ${predicate(modelId, source, dimensions)}`,
      );
    }
    return { discarded, previousDimensions };
  });
}

/** Deletes every vector (and index) of other models. Returns how many vectors went. */
export async function dropOtherModels(db: Database, modelId: string): Promise<number> {
  return db.transaction(async (tx) => {
    const keep = `embeddings_hnsw_${modelKey(modelId)}_`;
    const names = (
      await tx.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'embeddings'
           AND starts_with(indexname, 'embeddings_hnsw_') AND NOT starts_with(indexname, $1)`,
        [keep],
      )
    ).rows.map((r) => r.indexname);
    for (const name of names) await tx.exec(`DROP INDEX IF EXISTS ${name}`);
    return (await tx.query('DELETE FROM embeddings WHERE model <> $1', [modelId])).affectedRows ?? 0;
  });
}

export interface VectorRow {
  source: EmbedSource;
  sourceId: number;
  hash: string;
  vector: ArrayLike<number>;
}

/** Inserts or replaces the vectors of one model in one statement. */
export async function upsertVectors(db: Queryable, modelId: string, dimensions: number, rows: VectorRow[]): Promise<void> {
  if (!rows.length) return;
  for (const r of rows) if (r.vector.length !== dimensions) throw new Error(`a vector of ${r.vector.length} numbers for a model of ${dimensions}`);
  await db.query(
    `INSERT INTO embeddings (source, source_id, model, dimensions, embedding, content_hash)
     SELECT s, i, $5, $6, v::real[], h FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(s, i, v, h)
     ON CONFLICT (source, source_id, model) DO UPDATE
       SET dimensions = EXCLUDED.dimensions, embedding = EXCLUDED.embedding, content_hash = EXCLUDED.content_hash, created_at = now()`,
    [rows.map((r) => r.source), rows.map((r) => r.sourceId), rows.map((r) => arrayLiteral(r.vector)), rows.map((r) => r.hash), modelId, dimensions],
  );
}

/** Deletes the vectors of these rows under every model (a memory retired, a block hidden). */
export async function deleteVectors(db: Queryable, source: EmbedSource, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  return (await db.query('DELETE FROM embeddings WHERE source = $1 AND source_id = ANY($2::bigint[])', [source, ids])).affectedRows ?? 0;
}

export interface Neighbour {
  id: number;
  similarity: number;
}

/**
 * The `k` nearest vectors of one model and source by cosine, through its HNSW index (approximate:
 * the index's ef_search, 40 by default, bounds what one scan returns).
 */
export async function nearest(
  db: Queryable,
  o: { modelId: string; dimensions: number; source: EmbedSource; vector: ArrayLike<number>; k: number },
): Promise<Neighbour[]> {
  const rows = await db.query<{ id: number; d: number }>(
    `SELECT sid::float8 AS id, d FROM (${knnSql(o.modelId, o.dimensions, o.source, '$1', o.k)}) x ORDER BY d, sid`,
    [vectorLiteral(o.vector)],
  );
  return rows.rows.map((r) => ({ id: Number(r.id), similarity: 1 - Number(r.d) }));
}

/**
 * The k-NN in the shape the partial index serves (its expression and predicate, literally), to use as
 * a subquery or CTE: sid (bigint source_id), h (content hash), d (cosine distance = 1 − similarity).
 * `param` is the placeholder of the query vector in its text form.
 */
export function knnSql(modelId: string, dimensions: number, source: EmbedSource, param: string, k: number): string {
  const dist = `${castExpr(dimensions)} <=> ${param}::vector(${checkDimensions(dimensions)})`;
  return `SELECT source_id AS sid, content_hash AS h, ${dist} AS d FROM embeddings WHERE ${predicate(modelId, source, dimensions)} ORDER BY ${dist} LIMIT ${Math.max(1, Math.floor(k))}`;
}
