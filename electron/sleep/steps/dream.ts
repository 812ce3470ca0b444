// dream: one creative entry per sleep day, woven from the day's imprints and a few older memories
// (the night's own day, or after a catch-up over older days the newest one it wrote about).
// A dream is the companion's own writing, never fact: it is not extracted, not recalled as knowledge
// and never in the system prompt (recall leaves dreams out; light sleep reads only messages).
import { findSecret } from '../../memory/secret-filter.js';
import { segmentForIndex } from '../../memory/segment.js';
import { BudgetExhaustedError } from '../background.js';
import { CycleStop, nightRuns, StepFailure, type SleepStep } from '../dag.js';
import { dreamAnswer, memoryLine } from '../schemas.js';
import { LIGHT_SLEEP } from './light-sleep.js';
import { modelForRun, type SleepStepDeps } from './deps.js';
import type { BackgroundPurpose } from '../../../shared/background-purposes.js';

export const DREAM: BackgroundPurpose = 'dream';

const INSTRUCTIONS = `Tonight I dream. From the moments of my day and a few older memories below, write one dream:
{"title", "body"} — first person, present tense, dreamlike (images, shifts, feelings more than facts),
120 to 300 words, in the language of the moments. It is a dream: nothing in it is claimed to have happened.
The answer is that JSON object alone.`;

export function dreamStep(deps: SleepStepDeps, model: ReturnType<typeof modelForRun>): SleepStep {
  return {
    id: DREAM,
    dependsOn: [LIGHT_SLEEP],
    async run(ctx): Promise<Record<string, number>> {
      // The night's own day; after a catch-up over older days, the newest day this night wrote about
      // (in this run, or in the interrupted run it resumes, whose light sleep it carried over).
      const day =
        (
          await deps.db.query<{ day: string }>(
            `SELECT day FROM diary_blocks b
              WHERE kind IN ('imprint', 'narrative', 'anchor') AND hidden_at IS NULL AND (day = $1 OR run_id = ANY($2::bigint[]))
                AND NOT EXISTS (SELECT 1 FROM diary_blocks d WHERE d.kind = 'dream' AND d.day = b.day)
              ORDER BY day = $1 DESC, day DESC LIMIT 1`,
            [ctx.sleepDay, await nightRuns(deps.db, ctx.sleepDay, ctx.runId)],
          )
        ).rows[0]?.day ?? null;
      if (!day) return { dreams: 0, nothing_to_dream: 1 };
      const moments = (
        await deps.db.query<{ kind: string; title: string | null; body: string }>(
          `SELECT kind, title, body FROM diary_blocks
            WHERE day = $1 AND kind IN ('imprint', 'narrative', 'anchor') AND hidden_at IS NULL
            ORDER BY CASE kind WHEN 'imprint' THEN 0 WHEN 'anchor' THEN 1 ELSE 2 END, id LIMIT 16`,
          [day],
        )
      ).rows;
      // A few older memories, the same ones if the night is re-run (chosen by a hash of the day).
      const older = await deps.store.olderSample(day, 5);
      const material = [
        '## Moments of my day',
        ...moments.map((m) => `- (${m.kind}) ${m.title ? `${m.title}: ` : ''}${m.body.replace(/\s+/g, ' ').slice(0, 600)}`),
        ...(older.length ? ['', '## Older memories', ...older.map((m) => memoryLine(m))] : []),
      ].join('\n');
      const bg = await model(ctx);
      let result;
      try {
        result = await bg.call({
          purpose: DREAM,
          stepId: ctx.stepId,
          runId: ctx.runId,
          instructions: INSTRUCTIONS,
          material,
          schema: dreamAnswer,
          maxTokens: 1200,
          signal: ctx.signal,
        });
      } catch (err) {
        if (err instanceof BudgetExhaustedError) throw new CycleStop(err.message, { calls: 0, dreams: 0 });
        throw err;
      }
      if (!result.ok) {
        if (result.kind === 'error') throw new StepFailure(`No dream tonight: ${result.error}`, { calls: 1, dreams: 0 });
        return { calls: 1, dreams: 0, invalid: 1 };
      }
      const { title, body } = result.value;
      if (findSecret(`${title}\n${body}`)) return { calls: 1, dreams: 0, refused_secrets: 1 };
      const inserted = await deps.db.query(
        `INSERT INTO diary_blocks (day, kind, title, body, run_id, fts_segmented) VALUES ($1, 'dream', $2, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING id`,
        [day, title.trim(), body.trim(), ctx.runId, segmentForIndex(`${title} ${body}`)],
      );
      if (inserted.rows.length) deps.events.emit('diary.changed', { day });
      return { calls: 1, dreams: inserted.rows.length };
    },
  };
}
