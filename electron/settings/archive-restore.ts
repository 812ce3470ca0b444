// What an archive's settings find here (electron/imports/anima-archive-restore.ts's preview): a
// key set here already stays as it is (SettingsStore.restoreMissing writes only the others).
import type { Transaction } from '../db/database.js';

/** How many of these keys are set here already. */
export async function settingKeysHere(tx: Pick<Transaction, 'query'>, keys: string[]): Promise<number> {
  if (!keys.length) return 0;
  const r = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM settings WHERE key = ANY($1::text[])', [keys]);
  return Number(r.rows[0]?.n ?? 0);
}
