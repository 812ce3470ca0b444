// Conversations and messages: the episodic record. Rows here are the person's words and the
// companion's replies. Deleting a conversation puts it in the trash (restorable); only the purge,
// TRASH_DAYS after, removes its messages. Off the record: its messages are kept for the person and
// left out of every reader below that feeds memory (the sleep cycle, the graph, the embedder).
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  TRASH_DAYS,
  type ApiErrorShape,
  type Conversation,
  type ConversationSummary,
  type Message,
  type MessageStatus,
  type TrashedConversation,
} from '../../shared/api.js';
import type { ImageRef } from '../../shared/api/attachments.js';
import { storableText } from '../../shared/text.js';
import type { Database } from '../db/open.js';
import { segmentForIndex } from '../memory/segment.js';
import { buildTree, currentLeaf, lineChanges, lineThrough, versionsOf, type TreeRow } from './versions.js';

export const DEFAULT_TITLE = 'New conversation';
/** Rows per INSERT statement of `appendMany` (all of them in its one transaction). */
export const APPEND_BATCH_ROWS = 500;

interface ConversationRow {
  id: string;
  title: string;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
  message_count: number | string;
  preview: string | null;
  match_snippet?: string | null;
  system_prompt: string;
  system_prompt_day: string | null;
  system_prompt_built_at: Date | null;
  off_record: boolean;
}

interface MessageRow {
  id: string;
  conversation_id: string;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
  error: ApiErrorShape | null;
  model: string | null;
  created_at: Date;
  replaced_by: string | null;
  speaker: string | null;
  injected_memory_ids: (number | string)[] | null;
  off_record: boolean;
  images: ImageRef[] | null;
}

const MESSAGE_COLUMNS = 'id, conversation_id, role, content, status, error, model, created_at, replaced_by, speaker, injected_memory_ids, off_record, images';

/**
 * What a reader that gets no image bytes reads for a message's images: the sleep cycle and the nap,
 * and a model that cannot see. The message's words (its caption) follow.
 */
export function photoNote(images: number, caption: string): string {
  if (images <= 0) return caption;
  const note = images === 1 ? '[photo shared]' : `[${images} photos shared]`;
  return caption.trim() ? `${note} ${caption}` : note;
}

/**
 * What a message must be for anything that feeds memory to read it: not in a deleted conversation,
 * not said off the record, not hidden from recall by a forgotten memory it was behind, not a copy a
 * branch made (its original is read). On the messages table alone (the delete stamps its messages
 * too). `alias` may be the table's own name. Readers of the chosen line add `replaced_by IS NULL`.
 */
export const READABLE_MESSAGE = (alias: string) =>
  `${alias}.deleted_at IS NULL AND NOT ${alias}.off_record AND ${alias}.recall_hidden_at IS NULL AND ${alias}.copied_from IS NULL`;

/** A chat message as the sleep cycle reads it: with its conversation's title and its place in the order (seq). */
export interface TranscriptMessage {
  id: string;
  conversationId: string;
  title: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
  speaker: string | null;
  replacedBy: string | null;
  createdAt: Date;
}

/** A long conversation's summary of the turns that left the model's view, through message seq `throughSeq`. */
export interface RollingSummary {
  text: string;
  throughSeq: number;
}

interface TranscriptRow {
  id: string;
  conversation_id: string;
  title: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
  speaker: string | null;
  replaced_by: string | null;
  created_at: Date;
  images: number | null;
}

const TRANSCRIPT_COLUMNS =
  'm.id, m.conversation_id, c.title, m.seq::float8 AS seq, m.role, m.content, m.status, m.speaker, m.replaced_by, m.created_at, jsonb_array_length(m.images) AS images';

function toTranscript(r: TranscriptRow): TranscriptMessage {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    title: r.title,
    seq: Number(r.seq),
    role: r.role,
    // The sleep cycle and the nap read a note that a photo was shared, never its bytes.
    content: photoNote(r.images ?? 0, r.content),
    status: r.status,
    speaker: r.speaker,
    replacedBy: r.replaced_by,
    createdAt: r.created_at,
  };
}

/** Watermarks as unnest() reads them: conversation ids and the last seq read in each. */
const watermarkParams = (after: Map<string, number>) => [[...after.keys()], [...after.values()]];

export function toMessage(r: MessageRow): Message {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    role: r.role,
    content: r.content,
    status: r.status,
    error: r.error,
    model: r.model,
    createdAt: r.created_at.toISOString(),
    replacedBy: r.replaced_by,
    speaker: r.speaker,
    injectedMemoryIds: (r.injected_memory_ids ?? []).map(Number),
    ...(r.off_record ? { offRecord: true } : {}),
    ...(r.images?.length ? { images: r.images } : {}),
  };
}

function toSummary(r: ConversationRow): ConversationSummary {
  const summary: ConversationSummary = {
    id: r.id,
    title: r.title,
    archived: r.archived,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    messageCount: Number(r.message_count),
    preview: (r.preview ?? '').slice(0, 140),
  };
  if (r.match_snippet) summary.matchSnippet = r.match_snippet;
  if (r.off_record) summary.offRecord = true;
  return summary;
}

function toConversation(r: ConversationRow): Conversation {
  return { ...toSummary(r), systemPrompt: r.system_prompt, systemPromptDay: r.system_prompt_day };
}

/** Escape LIKE wildcards so a search for "50%" means the text "50%". */
function likePattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A short window of text around the first match, for the search results list. */
export function snippetAround(text: string, query: string, radius = 60): string {
  const at = text.toLowerCase().indexOf(query.toLowerCase());
  if (at < 0) return text.slice(0, radius * 2);
  const start = Math.max(0, at - radius);
  const end = Math.min(text.length, at + query.length + radius);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ')}${end < text.length ? '…' : ''}`;
}

const SUMMARY_SELECT = `
  SELECT c.id, c.title, c.archived, c.created_at, c.updated_at, c.system_prompt, c.system_prompt_day, c.system_prompt_built_at, c.off_record,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL) AS message_count,
    (SELECT m.content FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL ORDER BY m.seq DESC LIMIT 1) AS preview`;

const DAY_MS = 86_400_000;

interface TrashRow {
  id: string;
  title: string;
  deleted_at: Date;
  message_count: number | string;
  preview: string | null;
}

const TRASH_SELECT = `
  SELECT c.id, c.title, c.deleted_at,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL) AS message_count,
    (SELECT m.content FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL ORDER BY m.seq DESC LIMIT 1) AS preview`;

function toTrashed(r: TrashRow): TrashedConversation {
  return {
    id: r.id,
    title: r.title,
    messageCount: Number(r.message_count),
    preview: (r.preview ?? '').slice(0, 140),
    deletedAt: r.deleted_at.toISOString(),
    purgeAt: new Date(r.deleted_at.getTime() + TRASH_DAYS * DAY_MS).toISOString(),
  };
}

/**
 * The finished person/companion messages on the chosen line of chat conversations (not a branch's
 * copy) whose body contains `marker` — what the
 * memory room counts citations from. Takes the caller's transaction: the recount reads and writes in one.
 */
export async function chatMessagesContaining(q: Pick<Database, 'query'>, marker: string): Promise<{ id: string; content: string; shown: number[] | null }[]> {
  const like = `%${marker.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await q.query<{ id: string; content: string; shown: (number | string)[] | null }>(
    `SELECT m.id, m.content, m.shown_memory_ids AS shown FROM messages m JOIN conversations c ON c.id = m.conversation_id
     WHERE c.kind = 'chat' AND m.status <> 'streaming' AND m.replaced_by IS NULL AND m.copied_from IS NULL AND m.content LIKE $1`,
    [like],
  );
  return rows.rows.map((r) => ({ id: r.id, content: r.content, shown: r.shown === null ? null : r.shown.map(Number) }));
}

export class Conversations {
  /**
   * `onStored` hears of every message whose words are stored (appended, or a reply finished), after
   * the write commits — the entity graph's queue. It must not throw or wait; a failure is logged.
   */
  constructor(
    private readonly db: Database,
    private readonly onStored: (message: Message) => void = () => {},
    private readonly log: (level: 'warn', message: string) => void = () => {},
  ) {}

  private stored(message: Message): Message {
    try {
      this.onStored(message);
    } catch (err) {
      this.log('warn', `a message listener failed: ${(err as Error).message}`);
    }
    return message;
  }

  async list(opts: { query?: string; archived?: boolean }): Promise<ConversationSummary[]> {
    const archived = opts.archived ?? false;
    const query = opts.query?.trim();
    if (!query) {
      const rows = await this.db.query<ConversationRow>(
        `${SUMMARY_SELECT} FROM conversations c WHERE c.kind = 'chat' AND c.deleted_at IS NULL AND c.archived = $1 ORDER BY c.updated_at DESC LIMIT 500`,
        [archived],
      );
      return rows.rows.map(toSummary);
    }
    // Search covers titles and message content, archived or not: a person looking for something
    // rarely remembers where they filed it.
    const rows = await this.db.query<ConversationRow>(
      `${SUMMARY_SELECT},
         (SELECT m.content FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL
            AND m.content ILIKE $1 ORDER BY m.seq DESC LIMIT 1) AS match_snippet
       FROM conversations c
       WHERE c.kind = 'chat' AND c.deleted_at IS NULL AND (c.title ILIKE $1 OR EXISTS (
         SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.replaced_by IS NULL AND m.content ILIKE $1))
       ORDER BY c.updated_at DESC LIMIT 200`,
      [likePattern(query)],
    );
    return rows.rows.map((r) => {
      const s = toSummary(r);
      if (r.match_snippet) s.matchSnippet = snippetAround(r.match_snippet, query);
      return s;
    });
  }

  async create(title?: string, opts: { offRecord?: boolean } = {}): Promise<Conversation> {
    const id = randomUUID();
    const userTitle = title?.trim();
    await this.db.query('INSERT INTO conversations (id, title, title_set_by_user, off_record) VALUES ($1, $2, $3, $4)', [
      id,
      userTitle || DEFAULT_TITLE,
      Boolean(userTitle),
      opts.offRecord ?? false,
    ]);
    return this.get(id);
  }

  /** A chat conversation that is not in the trash. */
  async get(id: string): Promise<Conversation> {
    const row = (
      await this.db.query<ConversationRow>(`${SUMMARY_SELECT} FROM conversations c WHERE c.id = $1 AND c.kind = 'chat' AND c.deleted_at IS NULL`, [id])
    ).rows[0];
    if (!row) throw new ApiError('not_found', 'That conversation does not exist.', 'id');
    return toConversation(row);
  }

  // ---- off the record ----

  /**
   * Off the record: new messages are stored off it, and so are the ones already said (what was read
   * of them before stays where it went). Back on: only messages said from now on are read; earlier
   * ones stay off. Returns the ids and seqs of the messages switched off (their vectors go).
   */
  async setOffRecord(id: string, offRecord: boolean): Promise<{ conversation: Conversation; switchedOff: { id: string; seq: number }[] }> {
    await this.get(id);
    const switchedOff = await this.db.transaction(async (tx) => {
      await tx.query('UPDATE conversations SET off_record = $2 WHERE id = $1', [id, offRecord]);
      if (!offRecord) return [];
      const r = await tx.query<{ id: string; seq: number }>(
        'UPDATE messages SET off_record = true WHERE conversation_id = $1 AND NOT off_record RETURNING id, seq::float8 AS seq',
        [id],
      );
      return r.rows.map((x) => ({ id: x.id, seq: Number(x.seq) }));
    });
    return { conversation: await this.get(id), switchedOff };
  }

  // ---- hidden from recall: forgetting a memory "…and what it came from" ----

  /** Of these message ids, the ones that still exist outside the trash (what a forget can hide), in id order. */
  async liveMessageIds(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const r = await this.db.query<{ id: string }>('SELECT id FROM messages WHERE id = ANY($1::text[]) AND deleted_at IS NULL ORDER BY id', [ids]);
    return r.rows.map((x) => x.id);
  }

  /**
   * Hides these messages from recall on behalf of the forget `changeId` (a memory journal entry), in
   * the caller's transaction; the conversation view still shows them. Returns the seqs of the
   * messages now hidden by it.
   */
  async hideFromRecall(q: Pick<Database, 'query'>, ids: string[], changeId: number, at: Date): Promise<number[]> {
    if (!ids.length) return [];
    const r = await q.query<{ seq: number }>(
      `UPDATE messages SET recall_hidden_at = coalesce(recall_hidden_at, $3), recall_hidden_by = array_append(coalesce(recall_hidden_by, '{}'), $2::bigint)
        WHERE id = ANY($1::text[]) AND deleted_at IS NULL AND NOT coalesce(recall_hidden_by, '{}') @> ARRAY[$2::bigint]
        RETURNING seq::float8 AS seq`,
      [ids, changeId, at.toISOString()],
    );
    return r.rows.map((x) => Number(x.seq));
  }

  /**
   * Takes back what these forgets (memory journal ids) hid, in the caller's transaction: a message
   * returns to recall once no forget that still stands hides it. Returns how many returned.
   */
  async unhideFromRecall(q: Pick<Database, 'query'>, changeIds: number[]): Promise<number> {
    if (!changeIds.length) return 0;
    await q.query(
      `UPDATE messages SET recall_hidden_by = (SELECT array_agg(x ORDER BY x) FROM unnest(recall_hidden_by) x WHERE x <> ALL($1::bigint[]))
        WHERE recall_hidden_at IS NOT NULL AND recall_hidden_by && $1::bigint[]`,
      [changeIds],
    );
    const r = await q.query(`UPDATE messages SET recall_hidden_at = NULL WHERE recall_hidden_at IS NOT NULL AND recall_hidden_by IS NULL`);
    return r.affectedRows ?? 0;
  }

  // ---- the trash ----

  /** Every message of a chat conversation (earlier versions too), trashed or not: what a delete or a restore walks. */
  async messageRefs(conversationId: string): Promise<{ id: string; seq: number; content: string; offRecord: boolean }[]> {
    const r = await this.db.query<{ id: string; seq: number; content: string; off_record: boolean }>(
      `SELECT m.id, m.seq::float8 AS seq, m.content, m.off_record FROM messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.conversation_id = $1 AND c.kind = 'chat' AND c.purged_at IS NULL ORDER BY m.seq`,
      [conversationId],
    );
    return r.rows.map((x) => ({ id: x.id, seq: Number(x.seq), content: x.content, offRecord: x.off_record }));
  }

  /**
   * Puts a conversation and its messages in the trash at `at`, with `derived` (what the delete took
   * along, for the restore). A conversation already in the trash is not_found.
   */
  async trash(id: string, at: Date, derived: unknown): Promise<TrashedConversation> {
    await this.get(id);
    await this.db.transaction(async (tx) => {
      await tx.query('UPDATE conversations SET deleted_at = $2, deleted_derived = $3 WHERE id = $1', [id, at.toISOString(), JSON.stringify(derived)]);
      await tx.query('UPDATE messages SET deleted_at = $2 WHERE conversation_id = $1', [id, at.toISOString()]);
    });
    return (await this.trashed(id)).trashed;
  }

  /** A conversation in the trash with what its delete took along; not_found when it is not there (or purged). */
  async trashed(id: string): Promise<{ trashed: TrashedConversation; derived: unknown }> {
    const row = (
      await this.db.query<TrashRow & { deleted_derived: unknown }>(
        `${TRASH_SELECT}, c.deleted_derived FROM conversations c WHERE c.id = $1 AND c.kind = 'chat' AND c.deleted_at IS NOT NULL AND c.purged_at IS NULL`,
        [id],
      )
    ).rows[0];
    if (!row) throw new ApiError('not_found', 'That conversation is not in the trash.', 'id');
    return { trashed: toTrashed(row), derived: row.deleted_derived };
  }

  /** Takes a conversation and its messages out of the trash. */
  async untrash(id: string): Promise<Conversation> {
    await this.trashed(id);
    await this.db.transaction(async (tx) => {
      await tx.query('UPDATE conversations SET deleted_at = NULL, deleted_derived = NULL WHERE id = $1', [id]);
      await tx.query('UPDATE messages SET deleted_at = NULL WHERE conversation_id = $1', [id]);
    });
    return this.get(id);
  }

  /** The trash, newest first. */
  async trashList(): Promise<TrashedConversation[]> {
    const rows = await this.db.query<TrashRow>(
      `${TRASH_SELECT} FROM conversations c WHERE c.kind = 'chat' AND c.deleted_at IS NOT NULL AND c.purged_at IS NULL ORDER BY c.deleted_at DESC LIMIT 1000`,
    );
    return rows.rows.map(toTrashed);
  }

  /** Conversations whose time in the trash is over at `now`, oldest first. */
  async purgeDue(now: Date): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(
      `SELECT id FROM conversations WHERE deleted_at IS NOT NULL AND purged_at IS NULL AND deleted_at <= $1 ORDER BY deleted_at`,
      [new Date(now.getTime() - TRASH_DAYS * DAY_MS).toISOString()],
    );
    return r.rows.map((x) => x.id);
  }

  /**
   * Removes a trashed conversation's messages for good, in the caller's transaction (whose other
   * statements first remove what other rooms keep of them). The row stays as a tombstone with its
   * words blanked: append-only diary blocks may name it.
   */
  async purge(q: Pick<Database, 'query'>, id: string, at: Date): Promise<number> {
    const removed = await q.query(
      `DELETE FROM messages WHERE conversation_id = $1 AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = $1 AND c.deleted_at IS NOT NULL)`,
      [id],
    );
    await q.query(
      `UPDATE conversations SET purged_at = $2, title = '', system_prompt = '', rolling_summary = '', deleted_derived = NULL,
              rolling_summary_set_aside = NULL, rolling_summary_set_aside_seq = NULL, rolling_summary_set_aside_at = NULL, rolling_summary_forgotten_by = NULL
        WHERE id = $1 AND deleted_at IS NOT NULL`,
      [id, at.toISOString()],
    );
    return removed.affectedRows ?? 0;
  }

  async rename(id: string, title: string): Promise<Conversation> {
    await this.get(id);
    await this.db.query('UPDATE conversations SET title = $2, title_set_by_user = true WHERE id = $1', [id, title]);
    return this.get(id);
  }

  async archive(id: string, archived: boolean): Promise<Conversation> {
    await this.get(id);
    await this.db.query('UPDATE conversations SET archived = $2 WHERE id = $1', [id, archived]);
    return this.get(id);
  }

  /** A first title from the person's first words, until they name it themselves. */
  async autoTitle(id: string, firstMessage: string): Promise<void> {
    const title = titleFrom(firstMessage);
    await this.db.query(`UPDATE conversations SET title = $2 WHERE id = $1 AND NOT title_set_by_user AND title = $3`, [id, title, DEFAULT_TITLE]);
  }

  async saveSystemPrompt(id: string, prompt: string, day: string): Promise<void> {
    await this.db.query('UPDATE conversations SET system_prompt = $2, system_prompt_day = $3, system_prompt_built_at = now() WHERE id = $1', [id, prompt, day]);
  }

  async promptBuiltAt(id: string): Promise<Date | null> {
    const row = (await this.db.query<{ system_prompt_built_at: Date | null }>('SELECT system_prompt_built_at FROM conversations WHERE id = $1', [id])).rows[0];
    return row?.system_prompt_built_at ?? null;
  }

  // ---- the rolling summary of turns that left the context window (written by the nap) ----

  /** The conversation's rolling summary and the last message seq it covers, or null when there is none. */
  async rollingSummary(id: string): Promise<RollingSummary | null> {
    const row = (
      await this.db.query<{ text: string; seq: number }>(
        'SELECT rolling_summary AS text, rolling_summary_seq::float8 AS seq FROM conversations WHERE id = $1',
        [id],
      )
    ).rows[0];
    return row && row.text ? { text: row.text, throughSeq: Number(row.seq) } : null;
  }

  /**
   * Replaces the rolling summary with one that covers the messages through `throughSeq`, written
   * carrying on from the live summary through `carriedFromSeq` (0: from none). Saved only while that
   * summary is still the live one: not when a forget set it aside meanwhile (the new one may say the
   * forgotten fact again, read from it), a branch change dropped it or a newer one replaced it; returns
   * whether it was saved. A summary a forget set aside (forgotten-summaries.ts) is dropped: the newer
   * one stays even if that forget is undone. `q`: the caller's transaction, if any.
   */
  async saveRollingSummary(id: string, text: string, throughSeq: number, carriedFromSeq = 0, q: Pick<Database, 'query'> = this.db): Promise<boolean> {
    const r = await q.query(
      `UPDATE conversations SET rolling_summary = $2, rolling_summary_seq = $3, rolling_summary_at = now(),
              rolling_summary_set_aside = NULL, rolling_summary_set_aside_seq = NULL, rolling_summary_set_aside_at = NULL, rolling_summary_forgotten_by = NULL
        WHERE id = $1 AND rolling_summary_seq = $4 AND rolling_summary_seq < $3`,
      [id, text, throughSeq, carriedFromSeq],
    );
    return (r.affectedRows ?? 0) > 0;
  }

  /** Every image id a message row names (in the trash, replaced or removed too): the files still in use. */
  async imageIdsInUse(): Promise<Set<string>> {
    const r = await this.db.query<{ id: string }>(
      `SELECT DISTINCT image->>'id' AS id FROM messages, jsonb_array_elements(messages.images) AS image WHERE messages.images IS NOT NULL`,
    );
    return new Set(r.rows.map((x) => x.id));
  }

  /** A message's place in the order (seq), or null when there is no such message. */
  async seqOf(messageId: string): Promise<number | null> {
    const row = (await this.db.query<{ seq: number }>('SELECT seq::float8 AS seq FROM messages WHERE id = $1', [messageId])).rows[0];
    return row ? Number(row.seq) : null;
  }

  // ---- messages ----

  async messages(conversationId: string, opts: { includeReplaced?: boolean; versions?: boolean } = {}): Promise<Message[]> {
    const rows = await this.db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ${opts.includeReplaced ? '' : 'AND replaced_by IS NULL'} ORDER BY seq`,
      [conversationId],
    );
    const messages = rows.rows.map(toMessage);
    if (!opts.versions) return messages;
    const versions = versionsOf(
      buildTree(await this.treeRows(this.db, conversationId)),
      messages.map((m) => m.id),
    );
    return messages.map((m) => (versions.has(m.id) ? { ...m, versionIds: versions.get(m.id)! } : m));
  }

  // ---- versions and branches (versions.ts): the chosen line is replaced_by IS NULL ----

  private async treeRows(q: Pick<Database, 'query'>, conversationId: string): Promise<TreeRow[]> {
    const r = await q.query<{ id: string; parent_id: string | null; role: 'user' | 'assistant'; seq: number; removed: boolean; replaced_by: string | null }>(
      `SELECT id, parent_id, role, seq::float8 AS seq, removed_at IS NOT NULL AS removed, replaced_by FROM messages WHERE conversation_id = $1 ORDER BY seq`,
      [conversationId],
    );
    return r.rows.map((x) => ({ id: x.id, parentId: x.parent_id, role: x.role, seq: Number(x.seq), removed: x.removed, replacedBy: x.replaced_by }));
  }

  /** Makes the line through `target` (null: from the root) the chosen line, in the caller's transaction. Returns how many messages changed. */
  private async chooseLine(q: Pick<Database, 'query'>, conversationId: string, target: string | null): Promise<number> {
    const rows = await this.treeRows(q, conversationId);
    const tree = buildTree(rows);
    const changes = lineChanges(tree, lineThrough(tree, target));
    if (!changes.length) return 0;
    await q.query(`UPDATE messages m SET replaced_by = u.replaced_by FROM unnest($1::text[], $2::text[]) AS u (id, replaced_by) WHERE m.id = u.id`, [
      changes.map((c) => c.id),
      changes.map((c) => c.replacedBy),
    ]);
    const seqOf = new Map(rows.map((r) => [r.id, r.seq]));
    await this.dropSummaryFrom(q, conversationId, Math.min(...changes.map((c) => seqOf.get(c.id) ?? Infinity)));
    return changes.length;
  }

  /**
   * The rolling summary describes the line it was written from: once a message it covers leaves or
   * joins the chosen line, it would tell the model about words no longer on it. Dropped, the next
   * turn that outgrows the window has the nap summarise the chosen line afresh. One a forget set aside
   * goes too: undoing the forget must not bring it back.
   */
  private async dropSummaryFrom(q: Pick<Database, 'query'>, conversationId: string, seq: number): Promise<void> {
    if (!Number.isFinite(seq)) return;
    await q.query(
      `UPDATE conversations SET rolling_summary = '', rolling_summary_seq = 0 WHERE id = $1 AND rolling_summary <> '' AND rolling_summary_seq >= $2`,
      [conversationId, seq],
    );
    await q.query(
      `UPDATE conversations SET rolling_summary_set_aside = NULL, rolling_summary_set_aside_seq = NULL, rolling_summary_set_aside_at = NULL, rolling_summary_forgotten_by = NULL
        WHERE id = $1 AND rolling_summary_set_aside_seq >= $2`,
      [conversationId, seq],
    );
  }

  /** A message of a chat conversation that is not in the trash and not removed. */
  private async liveMessage(q: Pick<Database, 'query'>, id: string): Promise<Message & { parentId: string | null; removed: boolean }> {
    const row = (
      await q.query<MessageRow & { parent_id: string | null; removed: boolean }>(
        `SELECT ${MESSAGE_COLUMNS.split(', ')
          .map((c) => `m.${c}`)
          .join(', ')}, m.parent_id, m.removed_at IS NOT NULL AS removed
           FROM messages m JOIN conversations c ON c.id = m.conversation_id
          WHERE m.id = $1 AND c.kind = 'chat' AND c.deleted_at IS NULL`,
        [id],
      )
    ).rows[0];
    if (!row) throw new ApiError('not_found', 'That message does not exist.', 'messageId');
    return { ...toMessage(row), parentId: row.parent_id, removed: row.removed };
  }

  /** The message a message follows on the tree (removed ones skipped), or null for a first message. */
  async parentOf(messageId: string): Promise<string | null> {
    const m = await this.liveMessage(this.db, messageId);
    return buildTree(await this.treeRows(this.db, m.conversationId)).parentOf(messageId);
  }

  /**
   * Chooses a version: the line through this message (and below it, the versions chosen before, or
   * the newest) becomes the one the conversation continues from. Returns its conversation id.
   */
  async choose(messageId: string): Promise<string> {
    const m = await this.liveMessage(this.db, messageId);
    if (m.removed) throw new ApiError('not_found', 'That message was deleted.', 'messageId');
    await this.db.transaction((tx) => this.chooseLine(tx, m.conversationId, messageId));
    return m.conversationId;
  }

  /** After a new version was written (a regenerated reply, an edited message): the line through it. */
  async chooseNew(conversationId: string, messageId: string): Promise<void> {
    await this.db.transaction((tx) => this.chooseLine(tx, conversationId, messageId));
  }

  /**
   * Deletes one message the person chose (undoable: restoreMessage). It stays on disk, off the line
   * and out of the tree; what followed it follows the message before it. Returns its conversation id.
   */
  async removeMessage(messageId: string, at: Date): Promise<string> {
    const m = await this.liveMessage(this.db, messageId);
    if (m.removed) return m.conversationId;
    if (m.status === 'streaming') throw new ApiError('conflict', 'That reply is still being written — stop it first.');
    await this.db.transaction(async (tx) => {
      const rows = await this.treeRows(tx, m.conversationId);
      const leaf = currentLeaf(rows);
      const tree = buildTree(rows);
      const parent = tree.parentOf(messageId);
      await tx.query('UPDATE messages SET removed_at = $2, removed_on_line = $3, replaced_by = id WHERE id = $1', [
        messageId,
        at.toISOString(),
        m.replacedBy === null,
      ]);
      if (m.replacedBy === null) await this.dropSummaryFrom(tx, m.conversationId, rows.find((r) => r.id === messageId)?.seq ?? Infinity);
      await this.chooseLine(tx, m.conversationId, leaf === messageId ? parent : leaf);
    });
    return m.conversationId;
  }

  /** Takes back a delete: the message returns where it was (on the chosen line if it was on it). Returns its conversation id. */
  async restoreMessage(messageId: string): Promise<string> {
    const m = await this.liveMessage(this.db, messageId);
    if (!m.removed) return m.conversationId;
    await this.db.transaction(async (tx) => {
      const onLine = (await tx.query<{ on: boolean }>('SELECT removed_on_line AS on FROM messages WHERE id = $1', [messageId])).rows[0]!.on;
      const leaf = currentLeaf(await this.treeRows(tx, m.conversationId));
      await tx.query('UPDATE messages SET removed_at = NULL, removed_on_line = false WHERE id = $1', [messageId]);
      await this.chooseLine(tx, m.conversationId, onLine ? messageId : leaf);
    });
    return m.conversationId;
  }

  /**
   * "Branch from here": a new conversation holding a copy of the chosen line through this message
   * (the copies name their originals in `copied_from` and never feed memory a second time).
   */
  async branch(messageId: string, title?: string): Promise<Conversation> {
    const m = await this.liveMessage(this.db, messageId);
    if (m.removed || m.replacedBy !== null) throw new ApiError('conflict', 'Choose this version first, then branch from it.', 'messageId');
    const source = await this.get(m.conversationId);
    const line = (await this.messages(m.conversationId)).filter((x) => x.status !== 'streaming');
    const through = line.findIndex((x) => x.id === messageId);
    if (through < 0) throw new ApiError('conflict', 'That reply is still being written — stop it first.');
    const copies = line.slice(0, through + 1);
    const id = randomUUID();
    const newIds = copies.map(() => randomUUID());
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO conversations (id, title, title_set_by_user, off_record, created_at, updated_at)
         SELECT $1, $2, true, c.off_record, now(), now() FROM conversations c WHERE c.id = $3`,
        [id, title?.trim() || source.title, m.conversationId],
      );
      // One statement, in order: each copy follows the copy before it (the first is a root).
      await tx.query(
        `INSERT INTO messages (id, conversation_id, role, content, status, error, model, speaker, injected_memory_ids, shown_memory_ids,
                               fts_segmented, created_at, updated_at, off_record, images, parent_id, copied_from)
         SELECT t.new_id, $1, o.role, o.content, o.status, o.error, o.model, o.speaker, o.injected_memory_ids, o.shown_memory_ids,
                o.fts_segmented, o.created_at, o.updated_at, o.off_record, o.images, t.parent_id, o.id
           FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t (old_id, new_id, parent_id, n)
           JOIN messages o ON o.id = t.old_id ORDER BY t.n`,
        [id, copies.map((c) => c.id), newIds, newIds.map((_, i) => (i === 0 ? null : newIds[i - 1]!))],
      );
    });
    return this.get(id);
  }

  async message(id: string): Promise<Message> {
    const row = (await this.db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1`, [id])).rows[0];
    if (!row) throw new ApiError('not_found', 'That message does not exist.');
    return toMessage(row);
  }

  // ---- what the entity graph reads: the messages it records mentions of, the chats it shows ----

  /** The message, or null when there is none. */
  async findMessage(id: string): Promise<Message | null> {
    const row = (await this.db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1`, [id])).rows[0];
    return row ? toMessage(row) : null;
  }

  /** These messages, in one read (those that exist, in no particular order): the graph's indexer reads a batch at a time. */
  async findMessages(ids: string[]): Promise<Message[]> {
    if (!ids.length) return [];
    return (await this.db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ANY($1::text[])`, [ids])).rows.map(toMessage);
  }

  /**
   * Every finished message's id (complete or partial), in write order, as one JSON value: the graph's
   * backfill at start checks them all against its scans, and a page at a time (LIMIT over the status
   * filter is planned as a full scan and sort without statistics) cost a full scan per page.
   */
  async finishedMessageIds(): Promise<string[]> {
    const r = await this.db.query<{ ids: string[] }>(
      `SELECT coalesce(json_agg(id ORDER BY seq), '[]'::json) AS ids FROM messages m WHERE m.status IN ('complete', 'partial') AND ${READABLE_MESSAGE('m')}`,
    );
    return r.rows[0]!.ids;
  }

  /**
   * The chat conversations that hold any of these messages, latest first, at most `limit`: per
   * conversation, how many of them it holds and the latest of their times (`at[i]` is `ids[i]`'s, a
   * timestamptz as text, as the caller counts it). Background conversations are left out.
   */
  async chatsHolding(ids: string[], at: string[], limit: number): Promise<{ id: string; title: string; messages: number; lastAt: Date }[]> {
    if (!ids.length) return [];
    const rows = await this.db.query<{ id: string; title: string; messages: number; last_at: Date }>(
      `SELECT c.id, c.title, count(DISTINCT x.id)::int AS messages, max(x.at) AS last_at
       FROM unnest($1::text[], $2::timestamptz[]) AS x(id, at) JOIN messages m ON m.id = x.id JOIN conversations c ON c.id = m.conversation_id
       WHERE c.kind = 'chat' AND ${READABLE_MESSAGE('m')}
       GROUP BY c.id, c.title ORDER BY max(x.at) DESC LIMIT ${Math.max(1, Math.trunc(limit))}`,
      [ids, at],
    );
    return rows.rows.map((r) => ({ id: r.id, title: r.title, messages: r.messages, lastAt: r.last_at }));
  }

  /** Appends a message and touches the conversation, in one transaction. */
  async append(m: {
    conversationId: string;
    role: 'user' | 'assistant';
    content: string;
    status: MessageStatus;
    model?: string | null;
    error?: ApiErrorShape | null;
    speaker?: string | null;
    /** When it was said, for imported history; now otherwise. */
    createdAt?: Date;
    /** Images the person attached (their files are in the data folder already). */
    images?: ImageRef[];
    /**
     * The message it follows: by default the last of the chosen line; a new version names the
     * parent of the one it stands beside (null: a first message). It is not on the line until chosen.
     */
    parentId?: string | null;
  }): Promise<Message> {
    const id = randomUUID();
    const row = await this.db.transaction(async (tx) => {
      // A message takes its conversation's record status; none is added to a conversation in the trash.
      const inserted = await tx.query<MessageRow>(
        `INSERT INTO messages (id, conversation_id, role, content, status, model, error, speaker, fts_segmented, created_at, off_record, images, parent_id)
         SELECT $1, c.id, $3, $4, $5, $6, $7, $8, $9, coalesce($10, now()), c.off_record, $11::jsonb, $12 FROM conversations c WHERE c.id = $2 AND c.deleted_at IS NULL
         RETURNING ${MESSAGE_COLUMNS}`,
        [
          id,
          m.conversationId,
          m.role,
          m.content,
          m.status,
          m.model ?? null,
          m.error ? JSON.stringify(m.error) : null,
          m.speaker ?? null,
          segmentForIndex(m.content),
          m.createdAt ?? null,
          m.images?.length ? JSON.stringify(m.images) : null,
          m.parentId ?? null,
        ],
      );
      if (!inserted.rows[0]) throw new ApiError('not_found', 'That conversation does not exist.', 'conversationId');
      // A new first message: the trigger gave it the line's last message; it follows nothing.
      if (m.parentId === null) await tx.query('UPDATE messages SET parent_id = NULL WHERE id = $1', [id]);
      await tx.query('UPDATE conversations SET updated_at = greatest(updated_at, $2::timestamptz) WHERE id = $1', [
        m.conversationId,
        m.createdAt ?? new Date(),
      ]);
      return inserted.rows[0];
    });
    const message = toMessage(row);
    // A streaming placeholder has no words yet; finish() reports it.
    return message.status === 'streaming' ? message : this.stored(message);
  }

  /**
   * Appends messages to one conversation as the bulk paths need it (a long history loaded at once):
   * one transaction for all of them, APPEND_BATCH_ROWS rows an INSERT, instead of a transaction per
   * message. The rows are the ones `append` would write one by one — the same columns, the
   * segmentation, the conversation's record status, seq in the given order and each message
   * following the one before it (the parent trigger sees the rows of its own statement) — with the
   * text made storable (shared/text.ts), as an import's is. `onStored` hears of each message once,
   * after the commit. A conversation that is gone or in the trash gets nothing (not_found).
   */
  async appendMany(
    conversationId: string,
    messages: readonly {
      role: 'user' | 'assistant';
      content: string;
      status?: Exclude<MessageStatus, 'streaming'>;
      model?: string | null;
      speaker?: string | null;
      createdAt?: Date;
    }[],
  ): Promise<Message[]> {
    if (!messages.length) return [];
    const rows = messages.map((m) => {
      const content = storableText(m.content);
      return {
        id: randomUUID(),
        role: m.role,
        content,
        status: m.status ?? 'complete',
        model: m.model ?? null,
        speaker: m.speaker == null ? null : storableText(m.speaker),
        segmented: segmentForIndex(content),
        at: m.createdAt?.toISOString() ?? null,
      };
    });
    const latest = messages.reduce((t, m) => Math.max(t, m.createdAt?.getTime() ?? Date.now()), 0);
    const stored = await this.db.transaction(async (tx) => {
      const out: MessageRow[] = [];
      for (let i = 0; i < rows.length; i += APPEND_BATCH_ROWS) {
        const batch = rows.slice(i, i + APPEND_BATCH_ROWS);
        const inserted = await tx.query<MessageRow>(
          `INSERT INTO messages (id, conversation_id, role, content, status, model, speaker, fts_segmented, created_at, off_record)
           SELECT t.id, c.id, t.role, t.content, t.status, t.model, t.speaker, t.segmented, coalesce(t.at, now()), c.off_record
             FROM conversations c,
                  unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
                    WITH ORDINALITY AS t (id, role, content, status, model, speaker, segmented, at, n)
            WHERE c.id = $1 AND c.deleted_at IS NULL
            ORDER BY t.n
           RETURNING ${MESSAGE_COLUMNS}`,
          [
            conversationId,
            batch.map((r) => r.id),
            batch.map((r) => r.role),
            batch.map((r) => r.content),
            batch.map((r) => r.status),
            batch.map((r) => r.model),
            batch.map((r) => r.speaker),
            batch.map((r) => r.segmented),
            batch.map((r) => r.at),
          ],
        );
        if (inserted.rows.length !== batch.length) throw new ApiError('not_found', 'That conversation does not exist.', 'conversationId');
        out.push(...inserted.rows);
      }
      await tx.query('UPDATE conversations SET updated_at = greatest(updated_at, $2::timestamptz) WHERE id = $1', [conversationId, new Date(latest)]);
      return out;
    });
    const byId = new Map(stored.map((r) => [r.id, toMessage(r)]));
    return rows.map((r) => this.stored(byId.get(r.id)!));
  }

  /** "Continue": a finished reply is written to again (its text so far kept, what comes next appended). */
  async reopen(id: string): Promise<Message> {
    const row = (
      await this.db.query<MessageRow>(
        `UPDATE messages SET status = 'streaming', error = NULL, updated_at = now() WHERE id = $1 AND status IN ('complete', 'partial') RETURNING ${MESSAGE_COLUMNS}`,
        [id],
      )
    ).rows[0];
    if (!row) throw new ApiError('conflict', 'That reply cannot be continued.', 'messageId');
    return toMessage(row);
  }

  /** Saves streamed text so far; a crash after this keeps it. */
  async saveProgress(id: string, content: string): Promise<void> {
    await this.db.query('UPDATE messages SET content = $2, updated_at = now() WHERE id = $1', [id, content]);
  }

  async finish(id: string, r: { content: string; status: MessageStatus; error: ApiErrorShape | null; model: string | null }): Promise<Message> {
    const row = (
      await this.db.query<MessageRow>(
        `UPDATE messages SET content = $2, status = $3, error = $4, model = coalesce($5, model), fts_segmented = $6,
           updated_at = now()
         WHERE id = $1 RETURNING ${MESSAGE_COLUMNS}`,
        [id, r.content, r.status, r.error ? JSON.stringify(r.error) : null, r.model, segmentForIndex(r.content)],
      )
    ).rows[0]!;
    return this.stored(toMessage(row));
  }

  /** Which memories passive recall showed the model for this reply (for the "remembered N things" line). */
  /** The memories a reply's requests showed the model (citations are credited only for these). */
  async setShown(messageId: string, memoryIds: number[]): Promise<void> {
    await this.db.query('UPDATE messages SET shown_memory_ids = $2::bigint[] WHERE id = $1', [messageId, memoryIds]);
  }

  async setInjected(messageId: string, memoryIds: number[]): Promise<void> {
    await this.db.query('UPDATE messages SET injected_memory_ids = $2::bigint[] WHERE id = $1', [messageId, memoryIds]);
  }

  async markReplaced(ids: string[], by: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('UPDATE messages SET replaced_by = $2 WHERE id = ANY($1::text[])', [ids, by]);
  }

  /** After a crash: replies that were being written are kept as partial. */
  async recoverInterrupted(): Promise<number> {
    const res = await this.db.query(
      `UPDATE messages SET status = 'partial',
         error = '{"code":"interrupted","message":"This reply was interrupted when Anima closed."}'::jsonb
       WHERE status = 'streaming'`,
    );
    return res.affectedRows ?? 0;
  }

  // ---- past a watermark: what the sleep cycle has not read yet ----

  /**
   * The messages of chat conversations past each one's watermark (`after`: conversation id → the
   * last seq read; a conversation not in it is read from its start), by conversation, in order.
   */
  async chatMessagesAfter(after: Map<string, number>): Promise<TranscriptMessage[]> {
    const rows = await this.db.query<TranscriptRow>(
      `SELECT ${TRANSCRIPT_COLUMNS}
         FROM messages m
         JOIN conversations c ON c.id = m.conversation_id
         LEFT JOIN unnest($1::text[], $2::bigint[]) AS w (conversation_id, last_seq) ON w.conversation_id = m.conversation_id
        WHERE c.kind = 'chat' AND m.seq > coalesce(w.last_seq, 0) AND ${READABLE_MESSAGE('m')}
        ORDER BY m.conversation_id, m.seq`,
      watermarkParams(after),
    );
    return rows.rows.map(toTranscript);
  }

  /** One chat conversation's messages after `afterSeq`, in order (what a nap of it reads). */
  async chatMessagesOf(conversationId: string, afterSeq: number): Promise<TranscriptMessage[]> {
    const rows = await this.db.query<TranscriptRow>(
      `SELECT ${TRANSCRIPT_COLUMNS}
         FROM messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.conversation_id = $1 AND c.kind = 'chat' AND m.seq > $2 AND ${READABLE_MESSAGE('m')}
        ORDER BY m.seq`,
      [conversationId, afterSeq],
    );
    return rows.rows.map(toTranscript);
  }

  /** Whether a chat message past its conversation's watermark (as chatMessagesAfter) was written before `before`. */
  async hasChatMessageAfter(after: Map<string, number>, before: Date): Promise<boolean> {
    const r = await this.db.query(
      `SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id
         LEFT JOIN unnest($1::text[], $2::bigint[]) AS w (conversation_id, last_seq) ON w.conversation_id = m.conversation_id
        WHERE c.kind = 'chat' AND m.seq > coalesce(w.last_seq, 0) AND m.created_at < $3 AND ${READABLE_MESSAGE('m')} LIMIT 1`,
      [...watermarkParams(after), before.toISOString()],
    );
    return r.rows.length > 0;
  }
}

export function titleFrom(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line || DEFAULT_TITLE;
  const cut = line.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
