// digest: "while I slept" — what the night added, changed, superseded and proposed, for the person to
// read in the morning, each change with undo. It reads the change journal past its own cursor, so a
// digest covers everything since the last one (a "sleep now" in the evening included) exactly once.
import { segmentForIndex } from '../../memory/segment.js';
import { nightRuns, type SleepStep } from '../dag.js';
import { readCursor, saveCursor } from './cursors.js';
import { LIGHT_SLEEP } from './light-sleep.js';
import type { SleepStepDeps } from './deps.js';

export const DIGEST = 'digest';
const CHANGE_CURSOR = 'digest:memory_changes';
const DIARY_CURSOR = 'digest:diary_blocks';

export interface DigestDetails {
  changeIds: number[];
  proposalIds: number[];
  diary: { anchors: number; imprints: number; narratives: number; dreams: number };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function digestStep(deps: SleepStepDeps): SleepStep {
  return {
    id: DIGEST,
    dependsOn: [LIGHT_SLEEP],
    async run(ctx): Promise<Record<string, number>> {
      const changeCursor = await readCursor(deps.db, CHANGE_CURSOR);
      const diaryCursor = await readCursor(deps.db, DIARY_CURSOR);
      const changes = await deps.store.changesBy(['light-sleep', 'deep-sleep'], changeCursor);
      const blocks = (
        await deps.db.query<{ kind: string; n: number; max: number }>(
          `SELECT kind, count(*)::int AS n, max(id)::float8 AS max FROM diary_blocks
            WHERE id > $1 AND kind IN ('anchor', 'imprint', 'narrative', 'dream') GROUP BY kind`,
          [diaryCursor],
        )
      ).rows;
      // Tonight's proposals: deep sleep may have made them in the interrupted run this one resumes.
      const proposals = (
        await deps.db.query<{ id: number }>(`SELECT id::float8 AS id FROM sleep_proposals WHERE run_id = ANY($1::bigint[]) AND status = 'open' ORDER BY id`, [
          await nightRuns(deps.db, ctx.sleepDay, ctx.runId),
        ])
      ).rows.map((r) => Number(r.id));
      const count = (kind: string) => blocks.find((b) => b.kind === kind)?.n ?? 0;
      const diary = { anchors: count('anchor'), imprints: count('imprint'), narratives: count('narrative'), dreams: count('dream') };
      if (changes.length === 0 && proposals.length === 0 && Object.values(diary).every((n) => n === 0)) return { items: 0 };

      const added = changes.filter((c) => c.action === 'create').length;
      const superseded = changes.filter((c) => c.action === 'supersede').length;
      const changed = changes.length - added - superseded;
      const parts = [
        added && `kept ${plural(added, 'new memory', 'new memories')}`,
        changed && `updated ${plural(changed, 'memory', 'memories')}`,
        superseded && `let ${plural(superseded, 'older memory', 'older memories')} be replaced by newer ones`,
        diary.anchors + diary.imprints + diary.narratives > 0 &&
          `wrote ${[diary.narratives && plural(diary.narratives, 'diary entry', 'diary entries'), diary.anchors && plural(diary.anchors, 'mood', 'moods'), diary.imprints && plural(diary.imprints, 'moment', 'moments')].filter(Boolean).join(', ')}`,
        diary.dreams && 'had a dream',
        proposals.length && `have ${plural(proposals.length, 'suggestion', 'suggestions')} about pins for you`,
      ].filter(Boolean);
      const summary = `While I slept I ${parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : parts[0]}.`;
      const details: DigestDetails = { changeIds: changes.map((c) => c.id), proposalIds: proposals, diary };

      await deps.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO diary_blocks (day, kind, title, body, run_id, details, fts_segmented)
           VALUES ($1, 'digest', 'While I slept', $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [ctx.sleepDay, summary, ctx.runId, JSON.stringify(details), segmentForIndex(summary)],
        );
        if (changes.length) await saveCursor(tx, CHANGE_CURSOR, changes[changes.length - 1]!.id);
        const maxDiary = Math.max(0, ...blocks.map((b) => Number(b.max)));
        if (maxDiary) await saveCursor(tx, DIARY_CURSOR, maxDiary);
      });
      deps.events.emit('diary.changed', { day: ctx.sleepDay });
      return { items: changes.length + proposals.length, added, changed, superseded, proposals: proposals.length };
    },
  };
}
