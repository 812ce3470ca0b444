// The derived in-memory indexes recall ranks with, one set per open database. They are rebuilt from
// the database whenever missing (first use, after dropRecallIndex, or when orphaned postings pile up)
// and brought up to date before every search by a cheap pull: the writers (Conversations, MemoryStore,
// the sleep cycle) need not know they exist. What the pull relies on:
// - messages: `seq` only grows; a reply is indexed once it stops streaming (streaming rows are
//   re-checked by seq on each pull); a row replaced later (regenerate, edit) is dropped when a fetch
//   finds it replaced. Background conversations are not searched. A deleted or off-the-record
//   message counts as replaced (never indexed; dropped when a fetch finds it; a restore rebuilds).
// - memories: every change is journalled in memory_changes (MemoryStore writes the journal in the
//   same transaction), so "ids changed since journal id J" plus "ids above I" is the whole delta.
//   A hit is re-read with `status = 'active'` before it is returned, so a missed change can never
//   surface an inactive memory.
// - diary blocks: append-only (002_memory.sql); digests are not recalled.
// Cost of one pull when nothing changed: a single query of four index-only max() lookups, folded into
// the query that normalises the search words (index.ts).
import { READABLE_MESSAGE } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import { DIARY_KINDS, MEMORY_TYPES, type DiaryKind, type MemoryType } from '../../../shared/api.js';
import { LexicalIndex, parseTsvector } from './lexical-index.js';
import { Vocabulary } from './vocabulary.js';

/**
 * Rows are read in key ranges of this width: each read blocks PGlite (and the host's event loop: it is
 * WASM in-process) for ≤ ~50 ms at 100k messages, and the whole build of 100k takes ~1.5 s.
 * Ranges, not `ORDER BY … LIMIT`: without planner statistics a LIMIT over an open range was planned
 * as a full scan and sort, 130 ms a chunk — 14 s to build 100k messages in chunks of 1000.
 */
const CHUNK = 2000;
/** A turn that ends asking (Latin or full-width question mark, closing quotes and brackets after it): SearchOptions.question. */
const ENDS_ASKING = /[?？][\s"'”’)）]*$/u;

/** Lets queued work (IPC, a streaming reply) run between two chunks of a build. */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The diary kinds the recall index holds, in the order of their group numbers: all but digests (a list of changes, not something lived). */
export const INDEXED_DIARY_KINDS = DIARY_KINDS.filter((k): k is Exclude<DiaryKind, 'digest'> => k !== 'digest');
export type IndexedDiaryKind = (typeof INDEXED_DIARY_KINDS)[number];
/** Anchors and imprints are limbic memory; narratives and dreams are autobiographical. */
export const LIMBIC_KINDS: IndexedDiaryKind[] = ['anchor', 'imprint'];
// Dreams are indexed but never recalled: they are the companion's inventions, not something that happened.
export const AUTOBIOGRAPHICAL_KINDS: IndexedDiaryKind[] = ['narrative'];
/** The diary kinds recall can return. */
export const RECALLED_DIARY_KINDS: readonly IndexedDiaryKind[] = [...LIMBIC_KINDS, ...AUTOBIOGRAPHICAL_KINDS];

export interface Maxima {
  seq: number;
  memoryId: number;
  changeId: number;
  diaryId: number;
}

export type SidecarSource = 'session' | 'semantic' | 'diary';

class SessionIndex {
  index = new LexicalIndex();
  vocab = new Vocabulary();
  lastSeq = 0;
  /** Replies still streaming when seen: indexed once they finish. */
  pending = new Set<number>();
  convIdx = new Map<string, number>();
  /** Conversation id → whether it is a chat (background conversations are not searched). Kinds never change. */
  isChat = new Map<string, boolean>();
  speakerLexemes = new Map<string, string[]>();

  group(conversationId: string): number {
    let g = this.convIdx.get(conversationId);
    if (g === undefined) {
      g = this.convIdx.size;
      this.convIdx.set(conversationId, g);
    }
    return g;
  }

  /** A group mask for these conversations; null when none of them has indexed messages. */
  scope(conversationIds: readonly string[]): Uint8Array | null {
    const mask = new Uint8Array(Math.max(1, this.convIdx.size));
    let any = false;
    for (const id of conversationIds) {
      const g = this.convIdx.get(id);
      if (g !== undefined) {
        mask[g] = 1;
        any = true;
      }
    }
    return any ? mask : null;
  }
}

class MemoryIndex {
  index = new LexicalIndex();
  vocab = new Vocabulary();
  lastId = 0;
  lastChange = 0;
  built = false;
  static group(type: string): number {
    const g = MEMORY_TYPES.indexOf(type as MemoryType);
    return g < 0 ? MEMORY_TYPES.length : g;
  }
  static scope(types?: readonly MemoryType[] | null): Uint8Array | null {
    if (!types) return null;
    const mask = new Uint8Array(MEMORY_TYPES.length + 1);
    for (const t of types) mask[MemoryIndex.group(t)] = 1;
    return mask;
  }
}

class DiaryIndex {
  index = new LexicalIndex();
  vocab = new Vocabulary();
  lastId = 0;
  static scope(kinds: readonly IndexedDiaryKind[]): Uint8Array {
    const mask = new Uint8Array(INDEXED_DIARY_KINDS.length);
    for (const k of kinds) mask[INDEXED_DIARY_KINDS.indexOf(k)] = 1;
    return mask;
  }
}

interface SessionRow {
  seq: number;
  conversation_id: string;
  status: string;
  replaced: boolean;
  speaker: string | null;
  v: string | null;
  content: string | null;
  /** created_at, epoch ms */
  t: number;
}

export class Sidecar {
  session = new SessionIndex();
  memory = new MemoryIndex();
  diary = new DiaryIndex();
  private locks: Record<SidecarSource, Promise<void>> = { session: Promise.resolve(), semantic: Promise.resolve(), diary: Promise.resolve() };

  constructor(private readonly db: Database) {}

  /** Brings one index up to what the database held at `maxima`; concurrent calls queue. */
  sync(source: SidecarSource, maxima: Maxima): Promise<void> {
    const run = async () => {
      if (source === 'session') await this.syncSession(maxima.seq);
      else if (source === 'semantic') await this.syncMemories(maxima.memoryId, maxima.changeId);
      else await this.syncDiary(maxima.diaryId);
    };
    const next = this.locks[source].then(run, run);
    // A failed pull must not wedge the queue; the caller still sees the error.
    this.locks[source] = next.catch(() => {});
    return next;
  }

  private async speakerLexemes(names: string[]): Promise<void> {
    const unknown = [...new Set(names)].filter((n) => !this.session.speakerLexemes.has(n));
    if (!unknown.length) return;
    const rows = await this.db.query<{ s: string; v: string }>(`SELECT s, to_tsvector('english', s)::text AS v FROM unnest($1::text[]) AS s`, [unknown]);
    for (const r of rows.rows) this.session.speakerLexemes.set(r.s, [...parseTsvector(r.v).tf.keys()]);
  }

  private async conversationKinds(ids: string[]): Promise<void> {
    const unknown = [...new Set(ids)].filter((id) => !this.session.isChat.has(id));
    if (!unknown.length) return;
    const rows = await this.db.query<{ id: string; kind: string }>(`SELECT id, kind FROM conversations WHERE id = ANY($1::text[])`, [unknown]);
    for (const r of rows.rows) this.session.isChat.set(r.id, r.kind === 'chat');
  }

  private putMessage(r: SessionRow): void {
    const s = this.session;
    const key = Number(r.seq);
    if (r.replaced) {
      s.index.remove(key);
      s.pending.delete(key);
      return;
    }
    const field = r.speaker ? (s.speakerLexemes.get(r.speaker) ?? null) : null;
    if (r.status === 'streaming') {
      s.index.put(key, s.group(r.conversation_id), null, { field, linkNeighbours: true, time: Number(r.t) });
      s.pending.add(key);
      return;
    }
    s.pending.delete(key);
    s.index.put(key, s.group(r.conversation_id), parseTsvector(r.v), {
      field,
      linkNeighbours: true,
      time: Number(r.t),
      asks: ENDS_ASKING.test(r.content ?? ''),
    });
    s.vocab.addText(r.content);
  }

  private async syncSession(maxSeq: number): Promise<void> {
    const s = this.session;
    if (s.index.wasteful) this.session = new SessionIndex();
    const session = this.session;
    for (let from = session.lastSeq; from < maxSeq; from += CHUNK) {
      // By seq alone (the unique index): joining conversations here made the planner, which has no
      // statistics in PGlite, loop over every conversation — 19 ms for a 3-row pull at 100k.
      const rows = (
        await this.db.query<SessionRow>(
          `SELECT seq::float8 AS seq, conversation_id, status, replaced_by IS NOT NULL OR NOT (${READABLE_MESSAGE('messages')}) AS replaced, speaker,
                  content_fts::text AS v, content, extract(epoch FROM created_at)::float8 * 1000 AS t
           FROM messages WHERE seq > $1 AND seq <= $2 ORDER BY seq`,
          [from, Math.min(maxSeq, from + CHUNK)],
        )
      ).rows;
      await this.conversationKinds(rows.map((r) => r.conversation_id));
      await this.speakerLexemes(rows.flatMap((r) => (r.speaker ? [r.speaker] : [])));
      for (const r of rows) if (session.isChat.get(r.conversation_id)) this.putMessage(r);
      if (from + CHUNK < maxSeq) await breathe();
    }
    session.lastSeq = Math.max(session.lastSeq, maxSeq);
    if (session.pending.size) {
      const rows = (
        await this.db.query<SessionRow>(
          `SELECT seq::float8 AS seq, conversation_id, status, replaced_by IS NOT NULL OR NOT (${READABLE_MESSAGE('messages')}) AS replaced, speaker,
                  content_fts::text AS v, content, extract(epoch FROM created_at)::float8 * 1000 AS t
           FROM messages WHERE seq = ANY($1::bigint[])`,
          [[...session.pending]],
        )
      ).rows;
      for (const r of rows) if (r.status !== 'streaming' || r.replaced) this.putMessage(r);
    }
  }

  private async syncMemories(maxId: number, maxChange: number): Promise<void> {
    if (this.memory.index.wasteful) this.memory = new MemoryIndex();
    const m = this.memory;
    // t: when the memory became true (valid_from), else when it was written; epoch ms.
    type Row = { id: number; type: string; status: string; v: string | null; content: string; t: number };
    const apply = (r: Row) => {
      if (r.status === 'active') {
        m.index.put(Number(r.id), MemoryIndex.group(r.type), parseTsvector(r.v), { time: Number(r.t) });
        m.vocab.addText(r.content);
      } else m.index.remove(Number(r.id));
    };
    // Rows already read in full below need no journal replay: a first build starts at the journal's end.
    const changedSince = m.built ? m.lastChange : maxChange;
    if (maxChange > changedSince) {
      const rows = (
        await this.db.query<Row>(
          `SELECT id::float8 AS id, type, status, search_fts::text AS v, content, extract(epoch FROM coalesce(valid_from, created_at))::float8 * 1000 AS t FROM memories
           WHERE id IN (SELECT memory_id FROM memory_changes WHERE id > $1 AND id <= $2) AND id <= $3`,
          [changedSince, maxChange, m.lastId],
        )
      ).rows;
      for (const r of rows) apply(r);
    }
    for (let from = m.lastId; from < maxId; from += CHUNK) {
      const rows = (
        await this.db.query<Row>(
          `SELECT id::float8 AS id, type, status, search_fts::text AS v, content, extract(epoch FROM coalesce(valid_from, created_at))::float8 * 1000 AS t FROM memories
           WHERE id > $1 AND id <= $2 ORDER BY id`,
          [from, Math.min(maxId, from + CHUNK)],
        )
      ).rows;
      for (const r of rows) apply(r);
      if (from + CHUNK < maxId) await breathe();
    }
    m.lastId = Math.max(m.lastId, maxId);
    m.lastChange = Math.max(m.lastChange, maxChange);
    m.built = true;
  }

  private async syncDiary(maxId: number): Promise<void> {
    const d = this.diary;
    for (let from = d.lastId; from < maxId; from += CHUNK) {
      const rows = (
        await this.db.query<{ id: number; kind: string; v: string | null; text: string; day: string }>(
          `SELECT id::float8 AS id, kind, search_fts::text AS v, coalesce(title, '') || ' ' || body AS text, day FROM diary_blocks
           WHERE id > $1 AND id <= $2 ORDER BY id`,
          [from, Math.min(maxId, from + CHUNK)],
        )
      ).rows;
      for (const r of rows) {
        const g = INDEXED_DIARY_KINDS.indexOf(r.kind as IndexedDiaryKind);
        if (g >= 0) {
          // The day the block is about, at noon of this machine's calendar.
          d.index.put(Number(r.id), g, parseTsvector(r.v), { time: new Date(`${r.day}T12:00:00`).getTime() });
          d.vocab.addText(r.text);
        }
      }
      if (from + CHUNK < maxId) await breathe();
    }
    d.lastId = Math.max(d.lastId, maxId);
  }
}

export async function readMaxima(db: Database): Promise<Maxima> {
  const r = (
    await db.query<{ seq: number | null; mem: number | null; chg: number | null; dia: number | null }>(
      `SELECT (SELECT max(seq) FROM messages)::float8 AS seq, (SELECT max(id) FROM memories)::float8 AS mem,
              (SELECT max(id) FROM memory_changes)::float8 AS chg, (SELECT max(id) FROM diary_blocks)::float8 AS dia`,
    )
  ).rows[0]!;
  return { seq: Number(r.seq ?? 0), memoryId: Number(r.mem ?? 0), changeId: Number(r.chg ?? 0), diaryId: Number(r.dia ?? 0) };
}

export { MemoryIndex, DiaryIndex, SessionIndex };
