// A step whose every model call was unusable did not do its work, whatever it returned: a night of
// prose answers used to show a green check on every step and leave the Diary empty without a word.
// Each model-calling step is wrapped: when it made calls and none gave a usable answer (every attempt
// invalid, or failed), it fails with words a person understands and its counts. A step that made no
// call (nothing to do) is untouched, and so is one with at least one usable answer.
import type { Database } from '../db/open.js';
import { StepFailure, type SleepStep } from './dag.js';

/** The failed step's words when every answer came back in a form the step could not use. */
export const UNUSABLE_ANSWERS = "The background model didn't answer in the form I need — it may be too small for this; see the calls.";
/** …and when no call got an answer at all. */
export const UNREACHABLE_MODEL = "The background model didn't answer any call — the connection failed; see the calls.";

export interface CallTally {
  ok: number;
  invalid: number;
  error: number;
}

/** The outcomes of one step's background calls in one run (repair attempts counted as calls). */
export async function callTally(db: Database, runId: number, stepId: string): Promise<CallTally> {
  const rows = (
    await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM auto_llm_runs WHERE run_id = $1 AND step_id = $2 GROUP BY status`, [
      runId,
      stepId,
    ])
  ).rows;
  const tally: CallTally = { ok: 0, invalid: 0, error: 0 };
  for (const r of rows) if (r.status === 'ok' || r.status === 'invalid' || r.status === 'error') tally[r.status] = Number(r.n);
  return tally;
}

/** The words for a step whose calls were all unusable; null when some answer was usable or there was no call. */
export function unusableWords(t: CallTally): string | null {
  if (t.ok > 0 || t.invalid + t.error === 0) return null;
  return t.invalid > 0 ? UNUSABLE_ANSWERS : UNREACHABLE_MODEL;
}

/**
 * The step, failing when it made calls and none was usable. The failure keeps what the step
 * reported plus `unusable_answers` and `failed_calls` (the counts the Sleep view reads to say why in
 * the person's language).
 */
export function failWhenUnusable(db: Database, step: SleepStep): SleepStep {
  return {
    ...step,
    async run(ctx) {
      const stats = await step.run(ctx);
      const t = await callTally(db, ctx.runId, step.id);
      const words = unusableWords(t);
      if (words !== null && !ctx.signal.aborted) {
        throw new StepFailure(words, { ...stats, unusable_answers: t.invalid, failed_calls: t.error });
      }
      return stats;
    },
  };
}
