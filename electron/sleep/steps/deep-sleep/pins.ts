// Pin review (no model): pins unused for a long while and memories cited often become proposals for
// the person, who accepts or dismisses them in the digest — pins are the person's.
import { MAX_RESIDENT_PINNED } from '../../../memory/resident.js';
import type { StepContext } from '../../dag.js';
import type { SleepStepDeps } from '../deps.js';

/** A pin not cited for this long is proposed for unpinning; a memory cited this often, for pinning. */
const STALE_PIN_DAYS = 45;
const MUCH_USED_REFERENCES = 5;
const MAX_PROPOSALS = 5;

/** Writes tonight's pin proposals (one open proposal per memory and action); returns how many are new. */
export async function reviewPins(deps: SleepStepDeps, ctx: StepContext): Promise<number> {
  const now = deps.now();
  const pinned = await deps.store.pinnedCount();
  const stale = await deps.store.stalePins(now, STALE_PIN_DAYS, MAX_PROPOSALS);
  // Never propose more pins than the resident block carries (unpin proposals make room first).
  const room = Math.max(0, MAX_RESIDENT_PINNED - pinned);
  const used = await deps.store.muchCited(MUCH_USED_REFERENCES, Math.min(room, MAX_PROPOSALS));
  const proposals = [
    ...stale.map((r) => ({
      id: r.id,
      action: 'unpin',
      reason: r.lastCitedAt ? `not used since ${r.lastCitedAt.slice(0, 10)}` : 'pinned, but never used in a reply',
    })),
    ...used.map((r) => ({ id: r.id, action: 'pin', reason: `used in ${r.referenceCount} replies` })),
  ];
  let added = 0;
  for (const p of proposals) {
    const r = await deps.db.query(
      `INSERT INTO sleep_proposals (run_id, memory_id, action, reason) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id`,
      [ctx.runId, p.id, p.action, p.reason],
    );
    added += r.rows.length;
  }
  return added;
}
