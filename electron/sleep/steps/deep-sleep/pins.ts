// Pin review (no model): pins unused for a long while, pins carried for weeks and never cited, and
// memories cited often become proposals for the person, who accepts or dismisses them in the digest —
// pins are the person's.
import { MAX_RESIDENT_PINNED } from '../../../memory/resident.js';
import type { MemoryChange } from '../../../../shared/api.js';
import type { ProposalReason } from '../../../../shared/api/sleep.js';
import type { StepContext } from '../../dag.js';
import { encodeProposalReason } from '../../proposal-reasons.js';
import type { SleepStepDeps } from '../deps.js';

/** A pin not cited for this long is proposed for unpinning; a memory cited this often, for pinning. */
const STALE_PIN_DAYS = 45;
const MUCH_USED_REFERENCES = 5;
const MAX_PROPOSALS = 5;
/**
 * A pin carried this long and put before the model at least this often (injected_count counts every
 * request that showed it) without one citation is weight in every prompt that earns nothing: proposed
 * for unpinning, long before the 45-day rule would notice.
 */
export const CARRIED_PIN_DAYS = 21;
export const CARRIED_PIN_SHOWN = 30;

/** When a memory became pinned: the newest journal entry that left it pinned (a pin, or a save made pinned). */
function pinnedSince(history: MemoryChange[], createdAt: string): string {
  const last = history.filter((c) => c.after?.pinned === true && c.undoneBy === null).at(-1);
  return last?.createdAt ?? createdAt;
}

/** Pins carried at least CARRIED_PIN_DAYS and shown at least CARRIED_PIN_SHOWN times, never cited; the most shown first. */
export async function carriedUncitedPins(deps: SleepStepDeps, now: Date, limit: number): Promise<{ id: number; shown: number; days: number }[]> {
  const { items } = await deps.store.list({ pinned: true, limit: 1_000 });
  const out: { id: number; shown: number; days: number }[] = [];
  for (const m of items) {
    if (m.referenceCount > 0 || m.injectedCount < CARRIED_PIN_SHOWN) continue;
    const { history } = await deps.store.get(m.id);
    const days = Math.floor((now.getTime() - Date.parse(pinnedSince(history, m.createdAt))) / 86_400_000);
    if (days >= CARRIED_PIN_DAYS) out.push({ id: m.id, shown: m.injectedCount, days });
  }
  return out.sort((a, b) => b.shown - a.shown || a.id - b.id).slice(0, limit);
}

/** Writes tonight's pin proposals (one open proposal per memory and action); returns how many are new. */
export async function reviewPins(deps: SleepStepDeps, ctx: StepContext): Promise<number> {
  const now = deps.now();
  const pinned = await deps.store.pinnedCount();
  const stale = await deps.store.stalePins(now, STALE_PIN_DAYS, MAX_PROPOSALS);
  const staleIds = new Set(stale.map((r) => r.id));
  const carried = (await carriedUncitedPins(deps, now, MAX_PROPOSALS)).filter((r) => !staleIds.has(r.id));
  // Never propose more pins than the resident block carries (unpin proposals make room first).
  const room = Math.max(0, MAX_RESIDENT_PINNED - pinned);
  const used = await deps.store.muchCited(MUCH_USED_REFERENCES, Math.min(room, MAX_PROPOSALS));
  const proposals: { id: number; action: 'pin' | 'unpin'; reason: ProposalReason }[] = [
    ...stale.map((r) => ({
      id: r.id,
      action: 'unpin' as const,
      reason: r.lastCitedAt ? { code: 'unused_since' as const, day: r.lastCitedAt.slice(0, 10) } : { code: 'never_used' as const },
    })),
    ...carried.map((r) => ({ id: r.id, action: 'unpin' as const, reason: { code: 'carried_uncited' as const, days: r.days, shown: r.shown } })),
    ...used.map((r) => ({ id: r.id, action: 'pin' as const, reason: { code: 'much_used' as const, replies: r.referenceCount } })),
  ];
  let added = 0;
  for (const p of proposals) {
    const r = await deps.db.query(
      `INSERT INTO sleep_proposals (run_id, memory_id, action, reason) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id`,
      [ctx.runId, p.id, p.action, encodeProposalReason(p.reason)],
    );
    added += r.rows.length;
  }
  return added;
}
