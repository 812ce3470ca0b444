// Cursors (sleep_cursors): how far a step has read a journal or a table, so the next night starts
// where this one stopped.
import type { Transaction } from '../../db/database.js';
import type { Database } from '../../db/open.js';

/** Where the named cursor stands; 0 before its first night. */
export async function readCursor(db: Database, name: string): Promise<number> {
  const row = (await db.query<{ value: number }>(`SELECT value::float8 AS value FROM sleep_cursors WHERE name = $1`, [name])).rows[0];
  return row ? Number(row.value) : 0;
}

/**
 * Moves the named cursor to `value`, never back: a night that resumes an interrupted one must not
 * read again what the first already passed. `db` may be the transaction the step's writes are in.
 */
export async function saveCursor(db: Database | Transaction, name: string, value: number): Promise<void> {
  await db.query(
    `INSERT INTO sleep_cursors (name, value) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET value = greatest(sleep_cursors.value, EXCLUDED.value), updated_at = now()`,
    [name, value],
  );
}
