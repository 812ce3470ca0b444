// deep-sleep: after light sleep, the companion reconsiders what it knows, in rounds —
//   1. contradictions and expiry: a newer fact supersedes an older one, or closes its valid time;
//   2. split: a compound memory becomes atomic ones;
//   3. merge: near-duplicates (close, but below the automatic duplicate threshold) become one;
//   4. pin review: stale pins and much-used memories become proposals for the person (no model);
// and in the entity graph: typed relations whose memories were superseded or expired, or that a
// newer relation of a single-valued kind replaced, are closed (valid_to; journalled, undoable), and
// the entities that gained facts get a short profile — an 'observation' memory per entity, written in
// one batched call, a newer one superseding the older.
// It looks only at memories written since it last ran (a cursor on the change journal) and at their
// neighbours found by recall over the whole store — so two memories written months apart that
// disagree are found, yet the number of calls per night is capped and does not grow with the store.
// Nothing is deleted: every change is a supersede or an expiry with a link, journalled, undoable one
// by one (each operation is its own batch).
// The rounds live in deep-sleep/: review.ts (what is reviewed), rounds.ts (1–3), pins.ts (4),
// profiles.ts; night.ts holds what they share (the call, the budget, one batch per operation).
import type { SleepStep } from '../dag.js';
import { saveCursor } from './cursors.js';
import { openNight } from './deep-sleep/night.js';
import { reviewPins } from './deep-sleep/pins.js';
import { profileRound } from './deep-sleep/profiles.js';
import { nearestNeighbours, Review, REVIEW_CURSOR } from './deep-sleep/review.js';
import { contradictionRound, mergeRound, splitRound } from './deep-sleep/rounds.js';
import { LIGHT_SLEEP } from './light-sleep.js';
import { SNAPSHOT } from './simple.js';
import type { modelForRun, SleepStepDeps } from './deps.js';

export { MAX_REVIEWED_PER_NIGHT } from './deep-sleep/review.js';
export { MAX_CALLS_PER_ROUND } from './deep-sleep/rounds.js';
export { MAX_PROFILES_PER_NIGHT } from './deep-sleep/profiles.js';

export const DEEP_SLEEP = 'deep-sleep';

/**
 * Relations that hold one other end at a time. By source: someone lives in one place, works at one
 * place, studies at one school (a city has many people). Symmetric: one partner or spouse, whichever
 * way it was said. When light sleep adds a second open one, the older one ends where the newer
 * one begins; relations not listed here (likes, friend_of, sister_of) simply add up.
 */
export const SINGLE_VALUED_RELATIONS = ['lives_in', 'works_at', 'studies_at'] as const;
export const SYMMETRIC_SINGLE_VALUED_RELATIONS = ['partner_of', 'married_to', 'engaged_to'] as const;

export function deepSleepStep(deps: SleepStepDeps, model: ReturnType<typeof modelForRun>): SleepStep {
  return {
    id: DEEP_SLEEP,
    dependsOn: [LIGHT_SLEEP, SNAPSHOT],
    async run(ctx): Promise<Record<string, number>> {
      const night = openNight(deps, ctx, model);
      const review = await Review.gather(deps, night.stats);
      if (review.memories.size > 0) {
        const neighbours = await nearestNeighbours(deps, review);
        // A night stopped inside a round ends here: its cursor stays, the next night reviews again.
        if ((await contradictionRound(deps, ctx, night, review, neighbours)) === 'stopped') return night.stats;
        if ((await splitRound(deps, ctx, night, review)) === 'stopped') return night.stats;
        if ((await mergeRound(deps, ctx, night, review, neighbours)) === 'stopped') return night.stats;
      }

      // Relations of a single-valued kind that a newer one replaced end where it begins (no model).
      const replaced = await deps.graph.closeReplaced(SINGLE_VALUED_RELATIONS, SYMMETRIC_SINGLE_VALUED_RELATIONS, 'deep-sleep');
      night.bump('relations_closed', replaced.length);

      // Round 4: pin review — proposals only; pins are the person's.
      night.stats.proposals = await reviewPins(deps, ctx);
      // The review is done: its cursor moves before the profiles' call, which may find the budget spent.
      await saveCursor(deps.db, REVIEW_CURSOR, review.cursor());

      // Round 5: profiles of the entities that gained facts, in one call.
      if (ctx.signal.aborted) return night.stats;
      await profileRound(deps, ctx, night);
      return night.stats;
    },
  };
}
