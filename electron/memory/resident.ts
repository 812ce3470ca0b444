// Resident memory: what the system prompt always carries — the pinned memories and the ones the
// conversation keeps coming back to. Each line ends with its citation marker so the model can cite
// exactly what it used.
import type { MemoryType, ResidentPreview } from '../../shared/api.js';
import { estimateTokens } from '../llm/context.js';
import type { Database } from '../db/open.js';

/** Pinning is a person's and the deep sleep's judgement; the prompt's budget still needs a ceiling. */
export const MAX_RESIDENT_PINNED = 40;

export const RESIDENT_HEADING = 'Resident memory (pinned first, then the most cited; cite one you use with its marker):';

export interface ResidentOptions {
  /** How many most-referenced memories to carry besides the pinned ones (settings.memory.residentTopN). */
  topN: number;
  maxPinned?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Row {
  id: number;
  type: MemoryType;
  content: string;
}

export function residentLine(m: Row): string {
  return `- (${m.type}) ${m.content.replace(/\s+/g, ' ').trim()} [[anima:${Number(m.id)}]]`;
}

/**
 * Pinned memories in pin order, up to the cap (the rest are cut here, at read time, with a warning —
 * the data is left alone for the person or the deep sleep to review), then the top N active memories
 * by reference count that are not already listed. A memory never cited is not "most referenced":
 * an empty block is better than an arbitrary one.
 */
export async function buildResident(db: Database, opts: ResidentOptions): Promise<ResidentPreview & { ids: number[] }> {
  const maxPinned = opts.maxPinned ?? MAX_RESIDENT_PINNED;
  const pinnedAll = (await db.query<Row>(`SELECT id, type, content FROM memories WHERE status = 'active' AND pinned ORDER BY pin_order ASC NULLS LAST, id`))
    .rows;
  const pinned = pinnedAll.slice(0, maxPinned);
  const pinnedCut = pinnedAll.length - pinned.length;
  if (pinnedCut > 0) {
    opts.log?.(
      'warn',
      `resident memory: ${pinnedAll.length} memories are pinned, only the first ${maxPinned} are carried; ${pinnedCut} left out until some are unpinned`,
    );
  }
  const pinnedIds = pinned.map((r) => Number(r.id));
  const referenced =
    opts.topN > 0
      ? (
          await db.query<Row>(
            `SELECT id, type, content FROM memories
             WHERE status = 'active' AND reference_count > 0 AND id <> ALL($1::bigint[])
             ORDER BY reference_count DESC, updated_at DESC, id DESC
             LIMIT $2`,
            [pinnedIds, Math.trunc(opts.topN)],
          )
        ).rows
      : [];
  const rows = [...pinned, ...referenced];
  const text = rows.length ? [RESIDENT_HEADING, ...rows.map(residentLine)].join('\n') : '';
  return {
    text,
    chars: text.length,
    estimatedTokens: estimateTokens(text),
    pinned: pinned.length,
    referenced: referenced.length,
    pinnedCut,
    ids: rows.map((r) => Number(r.id)),
  };
}
