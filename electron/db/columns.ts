// The columns a bulk restore writes (Anima's own archive, electron/imports/anima-archive-restore.ts):
// a table's columns as the database has them now, read from the catalogue once per table, less the
// generated ones (the search vectors). So a column a later migration adds is restored without a
// change in the rooms — and one an older archive lacks is left to its default.
import type { Transaction } from './database.js';

const known = new Map<string, Promise<string[]>>();

async function tableColumns(tx: Pick<Transaction, 'query'>, table: string): Promise<string[]> {
  let columns = known.get(table);
  if (!columns) {
    columns = tx
      .query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_catalog.pg_attribute a
           JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated::text = ''
          ORDER BY a.attnum`,
        [table],
      )
      .then(({ rows }) => {
        if (!rows.length) throw new Error(`no table ${table}`);
        return rows.map((r) => r.name);
      });
    known.set(table, columns);
    columns.catch(() => known.delete(table));
  }
  return columns;
}

/**
 * The columns of `table` the rows carry (judged by the first row: an archive's rows all have the same
 * keys), less `drop`; each a plain identifier, so it can be named in SQL as it is.
 */
export async function restoreColumns(
  tx: Pick<Transaction, 'query'>,
  table: string,
  rows: readonly Record<string, unknown>[],
  drop: readonly string[] = [],
): Promise<string[]> {
  const first = rows[0] ?? {};
  const columns = (await tableColumns(tx, table)).filter((c) => c in first && !drop.includes(c));
  for (const c of columns) if (!/^[a-z_][a-z0-9_]*$/.test(c)) throw new Error(`column ${table}.${c} cannot be restored by name`);
  return columns;
}
