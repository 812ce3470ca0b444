// Restoring model connections from Anima's own archive (electron/imports/anima-archive.ts), inside
// the importer's transaction: the row only (kind, name, address, model, context size). An archive
// never holds a key, so a restored cloud connection asks for its key again; a connection already
// here (same id) is left as it is, with its key.
import type { Transaction } from '@electric-sql/pglite';

type Row = Record<string, unknown>;

/** An address carrying a user or password is never written (the room refuses one in any save). */
function cleanAddress(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return !url.username && !url.password;
  } catch {
    return false;
  }
}

/** The ids written. */
export async function restoreProviders(tx: Transaction, rows: Row[]): Promise<string[]> {
  const kept = rows.filter((r) => typeof r.id === 'string' && (r.kind === 'local' ? typeof r.base_url === 'string' : cleanAddress(r.base_url)));
  if (!kept.length) return [];
  const r = await tx.query<{ id: string }>(
    `INSERT INTO providers (id, kind, name, base_url, model, context_tokens, created_at, updated_at)
     SELECT r.id, r.kind, r.name, r.base_url, r.model, r.context_tokens, r.created_at, r.updated_at
       FROM json_populate_recordset(NULL::providers, $1::json) AS r
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [JSON.stringify(kept)],
  );
  return r.rows.map((x) => x.id);
}

/** How many of these connection ids are here already. */
export async function providersHere(tx: Pick<Transaction, 'query'>, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const r = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM providers WHERE id = ANY($1::text[])', [ids]);
  return Number(r.rows[0]?.n ?? 0);
}
