// Restoring the self layer from Anima's own archive (electron/imports/anima-archive.ts), inside the
// importer's transaction: a block the person never changed here (still the default, or missing)
// takes the archive's; a block they wrote here is theirs and stays. Every block is checked for
// credentials first, as any write of the self layer is (it is sent with every message).
import type { Transaction } from '../db/database.js';
import { ApiError, SELF_BLOCK_KEYS, type SelfBlockKey } from '../../shared/api.js';
import { findSecret } from '../memory/secret-filter.js';

type Row = Record<string, unknown>;

/** The keys of the blocks written. Throws (and the importer's transaction goes back) when a block holds a credential. */
export async function restoreSelfBlocks(tx: Transaction, rows: Row[]): Promise<SelfBlockKey[]> {
  const blocks = rows.filter(
    (r): r is Row & { key: SelfBlockKey; content: string } => SELF_BLOCK_KEYS.includes(r.key as SelfBlockKey) && typeof r.content === 'string',
  );
  for (const b of blocks) {
    const secret = findSecret(b.content);
    if (secret)
      throw new ApiError('invalid_input', `The archive's “${b.key}” block holds what looks like a credential (${secret.kind}); nothing was imported.`);
  }
  if (!blocks.length) return [];
  const r = await tx.query<{ key: SelfBlockKey }>(
    `INSERT INTO self_blocks (key, content, is_default, updated_at)
     SELECT r.key, r.content, coalesce(r.is_default, false), coalesce(r.updated_at, now())
       FROM json_populate_recordset(NULL::self_blocks, $1::json) AS r
     ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, is_default = EXCLUDED.is_default, updated_at = EXCLUDED.updated_at
      WHERE self_blocks.is_default
     RETURNING key`,
    [JSON.stringify(blocks)],
  );
  return r.rows.map((x) => x.key);
}

/** How many of the archive's blocks are here already: the same text, or a block the person wrote here (kept as it is). */
export async function selfBlocksHere(tx: Pick<Transaction, 'query'>, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const r = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM self_blocks s JOIN json_to_recordset($1::json) AS a(key text, content text) ON a.key = s.key
      WHERE s.content = a.content OR NOT s.is_default`,
    [JSON.stringify(rows.map((b) => ({ key: b.key, content: b.content })))],
  );
  return Number(r.rows[0]?.n ?? 0);
}
