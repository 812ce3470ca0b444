// Which rows have a vector, and of what text: active memories, the diary blocks recall can return,
// messages whose words are final. One rule, read three ways — for the rows a batch names, as SQL
// for the rows the backfill finds missing, and as SQL for the vectors of rows that no longer qualify.
import type { Database } from '../db/open.js';
import { RECALLED_DIARY_KINDS } from '../memory/recall/sidecar.js';
import { findSecret } from '../memory/secret-filter.js';
import { sqlLiteral, type EmbedSource } from './vectors.js';

/** A row to embed, as queued (messages by id or seq) with its failures so far. */
export type Item = { source: EmbedSource; id: string | number; attempts?: number; failedAt?: number };

/** Only what recall can return gets a vector: dreams never come back from recall and digests are not indexed. */
const EMBEDDED_DIARY_KINDS: readonly string[] = RECALLED_DIARY_KINDS;
const EMBEDDED_DIARY_KINDS_SQL = EMBEDDED_DIARY_KINDS.map(sqlLiteral).join(', ');

export interface RowText {
  source: EmbedSource;
  sourceId: number;
  text: string;
}

/** The texts of the named rows that should have a vector, and the rows that must not have one (a credential among them). */
export async function readRows(db: Database, items: Item[]): Promise<{ texts: RowText[]; drop: Record<EmbedSource, number[]> }> {
  const texts: RowText[] = [];
  const drop: Record<EmbedSource, number[]> = { message: [], memory: [], diary: [] };

  const messageIds = items.filter((i) => i.source === 'message' && typeof i.id === 'string').map((i) => i.id as string);
  const messageSeqs = items.filter((i) => i.source === 'message' && typeof i.id === 'number').map((i) => i.id as number);
  if (messageIds.length || messageSeqs.length) {
    const rows = await db.query<{ seq: number; content: string; speaker: string | null; status: string; replaced: boolean; withheld: boolean }>(
      `SELECT seq::float8 AS seq, content, speaker, status, replaced_by IS NOT NULL AS replaced,
              (deleted_at IS NOT NULL OR off_record) AS withheld FROM messages
       WHERE id = ANY($1::text[]) OR seq = ANY($2::bigint[])`,
      [messageIds, messageSeqs],
    );
    for (const r of rows.rows) {
      // A reply still streaming is queued again when it finishes; an error has no words.
      if (r.status === 'streaming') continue;
      // Off the record or in the trash: never searched by meaning.
      if (r.replaced || r.withheld || r.status === 'error' || !r.content.trim()) drop.message.push(Number(r.seq));
      else texts.push({ source: 'message', sourceId: Number(r.seq), text: messageText(r.content, r.speaker) });
    }
  }
  const memoryIds = items.filter((i) => i.source === 'memory').map((i) => Number(i.id));
  if (memoryIds.length) {
    const rows = await db.query<{ id: number; content: string; status: string }>(
      'SELECT id::float8 AS id, content, status FROM memories WHERE id = ANY($1::bigint[])',
      [memoryIds],
    );
    const seen = new Set<number>();
    for (const r of rows.rows) {
      seen.add(Number(r.id));
      // Only active memories are recalled or compared; undo or restore queues it again.
      if (r.status === 'active') texts.push({ source: 'memory', sourceId: Number(r.id), text: r.content });
      else drop.memory.push(Number(r.id));
    }
    for (const id of memoryIds) if (!seen.has(id)) drop.memory.push(id);
  }
  const diaryIds = items.filter((i) => i.source === 'diary').map((i) => Number(i.id));
  if (diaryIds.length) {
    const rows = await db.query<{ id: number; kind: string; title: string | null; body: string; hidden: boolean }>(
      'SELECT id::float8 AS id, kind, title, body, hidden_at IS NOT NULL AS hidden FROM diary_blocks WHERE id = ANY($1::bigint[])',
      [diaryIds],
    );
    for (const r of rows.rows) {
      if (r.hidden || !EMBEDDED_DIARY_KINDS.includes(r.kind)) drop.diary.push(Number(r.id));
      else texts.push({ source: 'diary', sourceId: Number(r.id), text: r.title ? `${r.title}\n${r.body}` : r.body });
    }
  }
  // A text holding a credential gets no vector (and loses one it had): a message keeps its words as
  // written, but search by meaning never hands a credential back. The backfill meets it again only
  // when it walks everything anew.
  const kept = texts.filter((t) => {
    if (!findSecret(t.text)) return true;
    drop[t.source].push(t.sourceId);
    return false;
  });
  return { texts: kept, drop };
}

/**
 * `FROM … WHERE …` of the rows of a source lacking a vector of model $1 with length $2, aliased `m`
 * (messages keyed by seq, the others by id).
 */
export const MISSING: Record<EmbedSource, string> = {
  message: `FROM messages m WHERE m.status IN ('complete', 'partial') AND m.replaced_by IS NULL AND btrim(m.content) <> ''
    AND m.deleted_at IS NULL AND NOT m.off_record
    AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'message' AND e.source_id = m.seq AND e.model = $1 AND e.dimensions = $2)`,
  // A memory whose words changed since its vector was made counts as missing.
  memory: `FROM memories m WHERE m.status = 'active'
    AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'memory' AND e.source_id = m.id AND e.model = $1 AND e.dimensions = $2 AND e.content_hash = md5(m.content))`,
  diary: `FROM diary_blocks m WHERE m.kind IN (${EMBEDDED_DIARY_KINDS_SQL}) AND m.hidden_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.source = 'diary' AND e.source_id = m.id AND e.model = $1 AND e.dimensions = $2)`,
};

/** Deletes the vectors of rows that no longer qualify (retired memories, hidden blocks, replaced, deleted or off-the-record messages); returns how many. */
export async function deleteUnqualified(db: Database): Promise<number> {
  const swept = await db.query(
    `DELETE FROM embeddings e WHERE
       (e.source = 'memory' AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.source_id AND m.status = 'active'))
    OR (e.source = 'diary' AND NOT EXISTS (SELECT 1 FROM diary_blocks d WHERE d.id = e.source_id AND d.hidden_at IS NULL AND d.kind IN (${EMBEDDED_DIARY_KINDS_SQL})))
    OR (e.source = 'message' AND NOT EXISTS (
      SELECT 1 FROM messages m WHERE m.seq = e.source_id AND m.replaced_by IS NULL AND m.deleted_at IS NULL AND NOT m.off_record))`,
  );
  return swept.affectedRows ?? 0;
}

/** A session turn as recall shows it: the speaker's name is part of what it is about. */
function messageText(content: string, speaker: string | null): string {
  return speaker ? `${speaker}: ${content}` : content;
}
