// Reading the fused winners back from their tables: each re-checked (an active memory, a reply not
// replaced, a diary block not hidden) and returned with its text, time and a link to its source. A
// row the in-memory index still held but the table no longer offers is taken out of the index.
import type { MemoryType, RecallSource } from '../../../shared/api.js';
import { READABLE_MESSAGE } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import type { Prepared } from './candidates.js';
import type { fuse } from './fusion.js';
import type { DetailedHit, RecallInternals, RecallOptions } from './search-types.js';
import { AUTOBIOGRAPHICAL_KINDS, LIMBIC_KINDS, type IndexedDiaryKind, type Sidecar } from './sidecar.js';

/** Longest text a hit carries (a window around the first matching word). */
export const HIT_TEXT_CHARS = 1200;

/** A window of `text` around the first of `words` it contains, at most `max` characters. */
export function snippet(text: string, words: readonly string[], max = HIT_TEXT_CHARS): string {
  if (text.length <= max) return text;
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - Math.floor(max / 3), text.length - max));
  const end = Math.min(text.length, start + max);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

export async function fetchHits(
  db: Database,
  side: Sidecar,
  fused: ReturnType<typeof fuse>,
  p: Prepared,
  o: RecallOptions & RecallInternals,
): Promise<{ hits: DetailedHit[]; stale: boolean }> {
  let stale = false;
  const keys = (source: RecallSource) => fused.filter((f) => f.source === source).map((f) => f.key);
  const words = p.q.positiveWords;
  const found = new Map<string, DetailedHit>();
  const tasks: Promise<void>[] = [];

  const sessionKeys = keys('session');
  if (sessionKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{
            seq: number;
            id: string;
            conversation_id: string;
            role: 'user' | 'assistant';
            speaker: string | null;
            content: string;
            created_at: Date;
            replaced: boolean;
            withheld: boolean;
            status: string;
          }>(
            `SELECT seq::float8 AS seq, id, conversation_id, role, speaker, content, created_at, replaced_by IS NOT NULL AS replaced, status,
                    NOT (${READABLE_MESSAGE('messages')}) AS withheld
             FROM messages WHERE seq = ANY($1::bigint[])`,
            [sessionKeys],
          )
        ).rows;
        for (const r of rows) {
          const key = Number(r.seq);
          if (r.replaced || r.withheld || r.status === 'streaming' || (o.conversationIds && !o.conversationIds.includes(r.conversation_id))) {
            // Deleted, off the record or hidden from recall: out of the index too (a restore or an undo rebuilds it).
            if (r.replaced || r.withheld) {
              side.session.index.remove(key);
              stale = true;
            }
            continue;
          }
          const text = snippet(r.content, words);
          found.set(`session:${key}`, {
            hit: {
              source: 'session',
              memoryType: 'session',
              text: r.speaker ? `${r.speaker}: ${text}` : text,
              time: new Date(r.created_at).toISOString(),
              score: 0,
              link: { kind: 'message', conversationId: r.conversation_id, messageId: r.id },
            },
            role: r.role,
            speaker: r.speaker,
            conversationId: r.conversation_id,
          });
        }
      })(),
    );
  }

  // Only passive recall asks how much of the query a memory answers: other searches skip the work.
  const overlap = o.withCoverage ? side.memory.index.overlap(p.coverageLexemes, p.optionalLexemes) : null;
  const semanticKeys = keys('semantic');
  if (semanticKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{ id: number; type: MemoryType; status: string; content: string; updated_at: Date }>(
            // By id alone, the status checked here: with `status = 'active'` in the query the planner
            // (no statistics in PGlite) also walked the status index over every active memory and
            // intersected the two — 2.1 against 0.9 ms of CPU a fetch at 20k memories.
            `SELECT id::float8 AS id, type, status, content, updated_at FROM memories WHERE id = ANY($1::bigint[])`,
            [semanticKeys],
          )
        ).rows.filter((r) => r.status === 'active');
        for (const r of rows) {
          const id = Number(r.id);
          if (o.memoryTypes?.length && !o.memoryTypes.includes(r.type)) continue;
          if (o.excludeMemoryIds?.includes(id)) continue;
          const answered = overlap?.(id);
          found.set(`semantic:${id}`, {
            coverage: answered?.coverage,
            shared: answered?.shared,
            hit: {
              source: 'semantic',
              memoryType: r.type,
              text: r.content,
              time: new Date(r.updated_at).toISOString(),
              score: 0,
              link: { kind: 'memory', memoryId: id },
            },
          });
        }
        // Not active any more (a change the journal pull has not seen yet): out of the index too.
        for (const k of semanticKeys) {
          if (!rows.some((r) => Number(r.id) === k)) {
            side.memory.index.remove(k);
            stale = true;
          }
        }
      })(),
    );
  }

  const diaryKeys = [...keys('limbic'), ...keys('autobiographical')];
  if (diaryKeys.length) {
    tasks.push(
      (async () => {
        const rows = (
          await db.query<{ id: number; day: string; kind: IndexedDiaryKind; title: string | null; body: string; created_at: Date }>(
            // A block the person hid stays in the derived index until it is rebuilt; it is dropped here.
            `SELECT id::float8 AS id, day, kind, title, body, created_at FROM diary_blocks WHERE id = ANY($1::bigint[]) AND hidden_at IS NULL`,
            [diaryKeys],
          )
        ).rows;
        for (const r of rows) {
          const id = Number(r.id);
          const source: RecallSource | null = LIMBIC_KINDS.includes(r.kind) ? 'limbic' : AUTOBIOGRAPHICAL_KINDS.includes(r.kind) ? 'autobiographical' : null;
          if (!source) continue;
          const body = snippet(r.body, words);
          found.set(`${source}:${id}`, {
            hit: {
              source,
              memoryType: source,
              text: r.title ? `${r.title} — ${body}` : body,
              time: new Date(r.created_at).toISOString(),
              score: 0,
              link: { kind: 'diary', day: r.day, blockId: id },
            },
            kind: r.kind,
          });
        }
      })(),
    );
  }
  await Promise.all(tasks);

  const out: DetailedHit[] = [];
  for (const f of fused) {
    const d = found.get(`${f.source}:${f.key}`);
    if (!d) continue;
    d.hit.score = Math.round(f.score * 10_000) / 10_000;
    out.push(d);
  }
  return { hits: out, stale };
}
