// Stores a conversation brought in from another app's export (ChatGPT, Claude, SillyTavern, …): the
// conversations room's half of an import. The parsers (electron/imports/) have already turned the
// file into plain conversations; this writes one of them, whole or not at all:
// - ONE transaction per conversation: the conversation row, every message, and whatever the caller
//   adds in the same transaction (the sleep cycle's "already read" marks) — an error anywhere leaves
//   nothing of it;
// - the real timestamps and speakers; a message without a date takes the one before it (else the
//   conversation's), so the order and the day stay plausible;
// - earlier versions (regenerations, edits, other swipes) are kept the way regenerate/edit keep them:
//   rows before the chosen one, `replaced_by` pointing at it;
// - notes (tool calls, images, attachments) are kept as bracketed lines after the text;
// - text is made storable once more (shared/text.ts) and segmented for the index like any message;
// - the source is recorded (migration 015): `imported_from`, `source_id` (the export's id, or a digest
//   of the content when it has none), so the same conversation imported twice is found, not copied;
// - a conversation found again with more messages (the person went on chatting in the other app and
//   exported again) gets only the new ones, after ours, with their dates — when ours are the start of
//   the export's main line. When an earlier message differs (edited or regenerated there), ours are
//   kept: a different last message becomes an earlier version of ours, anything else is left alone
//   and said (`diverged`);
// - the sleep cycle's catch-up reads imported history through `historyStamps` / `historyMessages`.
import { createHash, randomUUID } from 'node:crypto';
import type { Transaction } from '../db/database.js';
import { storableText } from '../../shared/text.js';
import { checkpoint, type Database } from '../db/open.js';
import { segmentForIndex } from '../memory/segment.js';
import { READABLE_MESSAGE, titleFrom, type TranscriptMessage } from './conversations.js';

/** One message as an export gives it (the shape of electron/imports' ImportedMessage). */
export interface TranscriptMessageIn {
  role: 'user' | 'assistant';
  text: string;
  /** ISO 8601; null when the export has no (plausible) date. */
  at: string | null;
  speaker?: string;
  model?: string;
  /** Earlier versions, oldest first; `text` is the chosen one. */
  versions?: string[];
  /** Tool calls, images, attachments as short sentences. */
  notes?: string[];
}

/** One conversation as an export gives it (the shape of electron/imports' ImportedConversation). */
export interface TranscriptIn {
  sourceId: string | null;
  title: string;
  createdAt: string | null;
  updatedAt: string | null;
  messages: TranscriptMessageIn[];
}

/** What one stored conversation holds. */
export interface StoredTranscript {
  conversationId: string;
  /** The messages of the main line. */
  messages: number;
  /** Earlier versions kept beside them. */
  versions: number;
  /** The seq of the last message written (0 when the conversation is empty). */
  lastSeq: number;
  /** Ids of the messages of the main line, in order (what the graph and the embedder are told of). */
  messageIds: string[];
  from: string | null;
  to: string | null;
}

/** An import already in the data folder: its conversation, and whether it waits in the trash. */
export interface ExistingImport {
  conversationId: string;
  inTrash: boolean;
}

/** A conversation here already that the export carries further: what was added to it. */
export interface GrownTranscript extends StoredTranscript {
  /** Main-line messages added (0 when only an earlier version was added). */
  messages: number;
}

/** A conversation here already whose earlier messages the export tells differently: ours are kept, nothing added. */
export interface DivergedTranscript extends ExistingImport {
  title: string;
  /** The first of our messages (1-based) the export does not have as it is here. */
  at: number;
}

export type TranscriptWrite = StoredTranscript | { already: ExistingImport } | { grown: GrownTranscript } | { diverged: DivergedTranscript };

/** One imported message as the catch-up plans its days: where it is and when it was said. */
export interface HistoryStamp {
  conversationId: string;
  seq: number;
  createdAt: Date;
  /** Characters of text (the estimate of what reading it costs). */
  chars: number;
}

/** Rows per INSERT statement: big conversations go in several, all in the conversation's one transaction. */
export const IMPORT_BATCH_ROWS = 500;
/** Format names are short words; a longer one is a caller's mistake. */
const FORMAT = /^[a-z][a-z0-9-]{0,31}$/;
/** Where an export gives no title and no first words. */
export const IMPORTED_TITLE = 'Imported conversation';

/**
 * The key that finds this conversation again on a later import: the export's own id when it has one,
 * else a digest of what it says (titles, roles, texts, dates, versions) — the same file gives the same keys.
 */
export function importSourceKey(conversation: TranscriptIn): string {
  const id = conversation.sourceId?.trim();
  if (id) return `id:${id}`;
  const hash = createHash('sha256');
  hash.update(JSON.stringify([conversation.title, conversation.createdAt]));
  for (const m of conversation.messages) hash.update(`\u0000${JSON.stringify([m.role, m.at, m.speaker ?? null, m.text, m.versions ?? [], m.notes ?? []])}`);
  return `sha256:${hash.digest('hex')}`;
}

/** A message's stored text: its words, then each note on a line of its own in brackets. */
export function importedContent(text: string, notes: readonly string[] | undefined): string {
  const kept = (notes ?? []).map((n) => n.replace(/\s+/g, ' ').trim()).filter(Boolean);
  const body = storableText(text);
  if (!kept.length) return body;
  const lines = kept.map((n) => `[${storableText(n)}]`).join('\n');
  return body.trim() ? `${body}\n\n${lines}` : lines;
}

interface Row {
  id: string;
  role: string;
  content: string;
  model: string | null;
  speaker: string | null;
  segmented: string | null;
  at: string;
  replacedBy: string | null;
}

/** The rows of a conversation, versions before the version they lead to, each with its date. */
function rowsOf(conversation: TranscriptIn, fallbackAt: string): { rows: Row[]; main: string[]; versions: number; from: string | null; to: string | null } {
  const rows: Row[] = [];
  const main: string[] = [];
  let versions = 0;
  let previous = conversation.createdAt ?? fallbackAt;
  let from: string | null = null;
  let to: string | null = null;
  for (const m of conversation.messages) {
    const at = m.at ?? previous;
    previous = at;
    if (m.at) {
      if (from === null || Date.parse(m.at) < Date.parse(from)) from = m.at;
      if (to === null || Date.parse(m.at) > Date.parse(to)) to = m.at;
    }
    const id = randomUUID();
    const speaker = m.speaker?.trim() ? storableText(m.speaker.trim()).slice(0, 200) : null;
    const model = m.model?.trim() ? storableText(m.model.trim()).slice(0, 200) : null;
    for (const earlier of m.versions ?? []) {
      const content = storableText(earlier);
      rows.push({ id: randomUUID(), role: m.role, content, model, speaker, segmented: segmentForIndex(content), at, replacedBy: id });
      versions++;
    }
    const content = importedContent(m.text, m.notes);
    rows.push({ id, role: m.role, content, model, speaker, segmented: segmentForIndex(content), at, replacedBy: null });
    main.push(id);
  }
  return { rows, main, versions, from, to };
}

/** Inserts rows after the conversation's last message, IMPORT_BATCH_ROWS a statement; returns the last seq written. */
async function insertRows(tx: Transaction, conversationId: string, rows: Row[]): Promise<number> {
  let lastSeq = 0;
  for (let i = 0; i < rows.length; i += IMPORT_BATCH_ROWS) {
    const batch = rows.slice(i, i + IMPORT_BATCH_ROWS);
    // One statement per batch; the ORDER BY keeps seq in the file's order (versions before the
    // message they lead to), and a version's replaced_by may name a row of the same statement.
    const r = await tx.query<{ last: number | null }>(
      `WITH inserted AS (
         INSERT INTO messages (id, conversation_id, role, content, status, model, speaker, fts_segmented, created_at, updated_at, replaced_by)
         SELECT t.id, $1, t.role, t.content, 'complete', t.model, t.speaker, t.segmented, t.at, t.at, t.replaced_by
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[])
             WITH ORDINALITY AS t (id, role, content, model, speaker, segmented, at, replaced_by, n)
          ORDER BY t.n
         RETURNING seq)
       SELECT max(seq)::float8 AS last FROM inserted`,
      [
        conversationId,
        batch.map((r) => r.id),
        batch.map((r) => r.role),
        batch.map((r) => r.content),
        batch.map((r) => r.model),
        batch.map((r) => r.speaker),
        batch.map((r) => r.segmented),
        batch.map((r) => r.at),
        batch.map((r) => r.replacedBy),
      ],
    );
    lastSeq = Math.max(lastSeq, Number(r.rows[0]?.last ?? 0));
  }
  return lastSeq;
}

/** How the file's main line relates to ours: the same, ours and then more, only the last message different, or different further back (at: the first that differs, 0-based). */
export function compareMainLines(
  ours: readonly { role: string; content: string }[],
  theirs: readonly TranscriptMessageIn[],
): { kind: 'same' | 'grown' | 'last' | 'diverged'; at: number } {
  const same = (i: number) => ours[i]!.role === theirs[i]!.role && ours[i]!.content === importedContent(theirs[i]!.text, theirs[i]!.notes);
  let k = 0;
  while (k < ours.length && k < theirs.length && same(k)) k++;
  if (k === ours.length && k === theirs.length) return { kind: 'same', at: k };
  if (k === ours.length && k > 0) return { kind: 'grown', at: k };
  if (k === ours.length - 1 && theirs.length === ours.length && ours[k]!.role === theirs[k]!.role) return { kind: 'last', at: k };
  return { kind: 'diverged', at: k };
}

/** Every timestamp as Postgres reads it; an unreadable one is the caller's mistake (parsers give ISO or null). */
function checkedIso(value: string | null, what: string): string | null {
  if (value === null) return null;
  if (Number.isNaN(Date.parse(value))) throw new Error(`${what} is not a date: ${value.slice(0, 40)}`);
  return value;
}

export class TranscriptImports {
  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Which of these source keys (see importSourceKey) of this format are in the data folder already. */
  async existing(format: string, keys: readonly string[]): Promise<Map<string, ExistingImport>> {
    if (!keys.length) return new Map();
    const rows = await this.db.query<{ source_id: string; id: string; in_trash: boolean }>(
      `SELECT source_id, id, deleted_at IS NOT NULL AS in_trash FROM conversations
        WHERE imported_from = $1 AND source_id = ANY($2::text[]) AND purged_at IS NULL`,
      [format, [...keys]],
    );
    return new Map(rows.rows.map((r) => [r.source_id, { conversationId: r.id, inTrash: r.in_trash }]));
  }

  /**
   * Writes one conversation and its messages in one transaction, then `within(tx, stored)` in the same
   * transaction (the sleep room marks the messages read there). When this source key of this format
   * is here already: `{ already }` (nothing new, nothing written), `{ grown }` (the new messages added
   * after ours, `within` run for them) or `{ diverged }` (ours kept, nothing written). Anything that
   * throws rolls it all back.
   */
  async write(
    conversation: TranscriptIn,
    opts: { format: string; sourceKey?: string; within?: (tx: Transaction, stored: StoredTranscript) => Promise<void> },
  ): Promise<TranscriptWrite> {
    if (!FORMAT.test(opts.format)) throw new Error(`not an import format name: ${opts.format}`);
    const sourceKey = opts.sourceKey ?? importSourceKey(conversation);
    const importedAt = this.now().toISOString();
    const createdIn = checkedIso(conversation.createdAt, 'createdAt');
    const updatedIn = checkedIso(conversation.updatedAt, 'updatedAt');
    for (const m of conversation.messages) checkedIso(m.at, 'a message date');
    const { rows, main, versions, from, to } = rowsOf(conversation, createdIn ?? updatedIn ?? importedAt);
    const createdAt = createdIn ?? from ?? updatedIn ?? importedAt;
    const updatedAt = [updatedIn, to, createdAt].filter((d): d is string => d !== null).sort((a, b) => Date.parse(b) - Date.parse(a))[0]!;
    const sourceTitle = storableText(conversation.title.replace(/\s+/g, ' ').trim()).slice(0, 200);
    const firstWords = conversation.messages.find((m) => m.role === 'user' && m.text.trim())?.text ?? '';
    const title = sourceTitle || (firstWords ? titleFrom(storableText(firstWords)) : IMPORTED_TITLE);
    const id = randomUUID();

    return this.db.transaction(async (tx) => {
      const existing = await tx.query<{ id: string; in_trash: boolean }>(
        `SELECT id, deleted_at IS NOT NULL AS in_trash FROM conversations WHERE imported_from = $1 AND source_id = $2 AND purged_at IS NULL`,
        [opts.format, sourceKey],
      );
      const here = existing.rows[0];
      if (here) {
        const found = { conversationId: here.id, inTrash: here.in_trash };
        // One in the trash stays as it is: restoring it is the person's choice, and growing it is not.
        return here.in_trash ? { already: found } : this.grow(tx, found, conversation, opts.within);
      }
      await tx.query(
        `INSERT INTO conversations (id, title, title_set_by_user, created_at, updated_at, imported_from, source_id, imported_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [id, title, Boolean(sourceTitle), createdAt, updatedAt, opts.format, sourceKey, importedAt],
      );
      const lastSeq = await insertRows(tx, id, rows);
      const stored: StoredTranscript = { conversationId: id, messages: main.length, versions, lastSeq, messageIds: main, from, to };
      if (opts.within) await opts.within(tx, stored);
      return stored;
    });
  }

  /**
   * The export's conversation against ours (inside write's transaction). Ours is compared by its main
   * line (role and text, as stored): when ours is the start of the export's, the rest is added after
   * our last message with its dates and versions, and `within` marks it as imported history; when
   * only the last message differs, the export's is kept as an earlier version of ours; otherwise
   * nothing is written.
   */
  private async grow(
    tx: Transaction,
    found: ExistingImport,
    conversation: TranscriptIn,
    within?: (tx: Transaction, stored: StoredTranscript) => Promise<void>,
  ): Promise<{ already: ExistingImport } | { grown: GrownTranscript } | { diverged: DivergedTranscript }> {
    const ours = (
      await tx.query<{ id: string; role: string; content: string; created_at: Date }>(
        `SELECT id, role, content, created_at FROM messages WHERE conversation_id = $1 AND replaced_by IS NULL ORDER BY seq`,
        [found.conversationId],
      )
    ).rows;
    const theirs = conversation.messages;
    const { kind, at: k } = compareMainLines(ours, theirs);
    if (kind === 'same') return { already: found };
    const title = (await tx.query<{ title: string }>('SELECT title FROM conversations WHERE id = $1', [found.conversationId])).rows[0]?.title ?? '';
    const last = ours.at(-1);
    let rows: Row[];
    let main: string[] = [];
    let versions = 0;
    let from: string | null = null;
    let to: string | null = null;
    if (kind === 'grown' && last) {
      // Ours is where the export began: what follows is new. Undated ones take the date before them.
      ({ rows, main, versions, from, to } = rowsOf({ ...conversation, createdAt: null, messages: theirs.slice(k) }, last.created_at.toISOString()));
    } else if (kind === 'last' && last) {
      // Only the last message differs (regenerated or edited there, nothing after it): ours stays the
      // chosen one, theirs becomes an earlier version of it — unless it is one already.
      const content = importedContent(theirs[k]!.text, theirs[k]!.notes);
      const known = await tx.query(`SELECT 1 FROM messages WHERE replaced_by = $1 AND content = $2 LIMIT 1`, [last.id, content]);
      if (known.rows.length) return { already: found };
      const at = checkedIso(theirs[k]!.at, 'a message date') ?? last.created_at.toISOString();
      rows = [{ id: randomUUID(), role: last.role, content, model: null, speaker: null, segmented: segmentForIndex(content), at, replacedBy: last.id }];
      versions = 1;
    } else {
      return { diverged: { ...found, title, at: k + 1 } };
    }
    const lastSeq = await insertRows(tx, found.conversationId, rows);
    if (to) await tx.query(`UPDATE conversations SET updated_at = greatest(updated_at, $2) WHERE id = $1`, [found.conversationId, to]);
    const grown: GrownTranscript = { conversationId: found.conversationId, messages: main.length, versions, lastSeq, messageIds: main, from, to };
    if (within) await within(tx, grown);
    return { grown };
  }

  /**
   * Where and when each readable message of imported history was said: per conversation, the messages
   * after `read` through `through` (seqs), in order — what the sleep cycle's catch-up plans its days by.
   */
  async historyStamps(ranges: Map<string, { read: number; through: number }>): Promise<HistoryStamp[]> {
    if (!ranges.size) return [];
    const rows = await this.db.query<{ conversation_id: string; seq: number; created_at: Date; chars: number }>(
      `SELECT m.conversation_id, m.seq::float8 AS seq, m.created_at, length(m.content) AS chars
         FROM messages m JOIN unnest($1::text[], $2::bigint[], $3::bigint[]) AS r (conversation_id, read_seq, through_seq)
           ON r.conversation_id = m.conversation_id
        WHERE m.seq > r.read_seq AND m.seq <= r.through_seq AND ${READABLE_MESSAGE('m')}
        ORDER BY m.conversation_id, m.seq`,
      [[...ranges.keys()], [...ranges.values()].map((r) => r.read), [...ranges.values()].map((r) => r.through)],
    );
    return rows.rows.map((r) => ({ conversationId: r.conversation_id, seq: Number(r.seq), createdAt: r.created_at, chars: Number(r.chars) }));
  }

  /** One imported conversation's readable messages after `afterSeq` through `throughSeq`, in order, as the sleep cycle reads them. */
  async historyMessages(conversationId: string, afterSeq: number, throughSeq: number): Promise<TranscriptMessage[]> {
    const rows = await this.db.query<{
      id: string;
      title: string;
      seq: number;
      role: 'user' | 'assistant';
      content: string;
      status: TranscriptMessage['status'];
      speaker: string | null;
      replaced_by: string | null;
      created_at: Date;
    }>(
      `SELECT m.id, c.title, m.seq::float8 AS seq, m.role, m.content, m.status, m.speaker, m.replaced_by, m.created_at
         FROM messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.conversation_id = $1 AND m.seq > $2 AND m.seq <= $3 AND ${READABLE_MESSAGE('m')}
        ORDER BY m.seq`,
      [conversationId, afterSeq, throughSeq],
    );
    return rows.rows.map((r) => ({
      id: r.id,
      conversationId,
      title: r.title,
      seq: Number(r.seq),
      role: r.role,
      content: r.content,
      status: r.status,
      speaker: r.speaker,
      replacedBy: r.replaced_by,
      createdAt: r.created_at,
    }));
  }

  /**
   * What importing these conversations again would do, asked before anything is stored (the preview):
   * per source key here already, whether the file has it the same, carries it further (and by how
   * many messages), differs only in the last message, or tells it differently further back.
   */
  async compare(
    format: string,
    conversations: readonly TranscriptIn[],
  ): Promise<Map<string, { kind: 'same' | 'grown' | 'last' | 'diverged'; added: number; inTrash: boolean }>> {
    const byKey = new Map(conversations.map((c) => [importSourceKey(c), c]));
    if (!byKey.size) return new Map();
    const rows = await this.db.query<{ source_id: string; in_trash: boolean; role: string | null; content: string | null }>(
      `SELECT c.source_id, c.deleted_at IS NOT NULL AS in_trash, m.role, m.content
         FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id AND m.replaced_by IS NULL
        WHERE c.imported_from = $1 AND c.source_id = ANY($2::text[]) AND c.purged_at IS NULL
        ORDER BY c.source_id, m.seq`,
      [format, [...byKey.keys()]],
    );
    const ours = new Map<string, { inTrash: boolean; lines: { role: string; content: string }[] }>();
    for (const r of rows.rows) {
      const entry = ours.get(r.source_id) ?? { inTrash: r.in_trash, lines: [] };
      if (r.role !== null && r.content !== null) entry.lines.push({ role: r.role, content: r.content });
      ours.set(r.source_id, entry);
    }
    const out = new Map<string, { kind: 'same' | 'grown' | 'last' | 'diverged'; added: number; inTrash: boolean }>();
    for (const [key, here] of ours) {
      const theirs = byKey.get(key)!.messages;
      // One in the trash is left as it is by write(): "the same", whatever the file says.
      const { kind, at } = here.inTrash ? { kind: 'same' as const, at: 0 } : compareMainLines(here.lines, theirs);
      out.set(key, { kind, added: kind === 'grown' ? theirs.length - at : 0, inTrash: here.inTrash });
    }
    return out;
  }

  /**
   * After an import has stored its conversations: a checkpoint, so the WAL the import wrote leaves
   * the data folder now rather than at the next close (db/open.ts; PGlite only).
   */
  async settle(): Promise<void> {
    await checkpoint(this.db);
  }

  /** Where an imported conversation came from, or null for one had in Anima (or no such conversation). */
  async sourceOf(conversationId: string): Promise<{ format: string; sourceKey: string; importedAt: string } | null> {
    const row = (
      await this.db.query<{ imported_from: string | null; source_id: string | null; imported_at: Date | null }>(
        'SELECT imported_from, source_id, imported_at FROM conversations WHERE id = $1',
        [conversationId],
      )
    ).rows[0];
    if (!row?.imported_from || !row.source_id || !row.imported_at) return null;
    return { format: row.imported_from, sourceKey: row.source_id, importedAt: row.imported_at.toISOString() };
  }
}
