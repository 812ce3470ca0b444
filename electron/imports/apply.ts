// Storing a parsed import: the conversations one transaction each, in the file's order, with progress
// and a cancel between conversations; a character card's blocks only when the person confirms.
//
// - Each conversation is written by the conversations room (import-transcript.ts) in one
//   transaction, and the sleep room marks its messages as already read in that same transaction
//   (sleep/imported-history.ts): a big import never sets off a month of sleep, and a conversation is
//   never in without its marks.
// - A conversation already imported (the same export id, or the same content when the export has
//   none) is skipped and counted: importing a file twice says "already imported", it copies nothing.
//   One the export carries further (the person went on chatting there) gets only its new messages,
//   marked as history like the rest; one whose earlier messages the export tells differently keeps
//   ours, and a note says so (import-transcript.ts decides which is which).
// - Cancel and errors stop between conversations: what was committed stays and is reported (a later
//   import of the same file skips it and goes on from there); the conversation in hand leaves nothing.
import type { Transaction } from '../db/database.js';
import { ApiError, SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../shared/api.js';
import type { SelfLayer } from '../companion/self-layer.js';
import { importSourceKey, type TranscriptImports } from '../conversations/import-transcript.js';
import { findSecret } from '../memory/secret-filter.js';
import { storedConversations } from './apply-summary.js';
import type { ParseResult } from './types.js';

export { describeApplied, describeSummary, summarise, type ImportSummary } from './apply-summary.js';

export interface ApplyDeps {
  transcripts: TranscriptImports;
  /** The sleep room's mark (markImportedHistoryRead), run inside each conversation's transaction. */
  markRead: (tx: Transaction, conversationId: string, lastSeq: number) => Promise<void>;
  /** Told of each stored conversation's main-line messages once it commits (the graph, the embedder). Must not throw. */
  onStored?: (messageIds: string[]) => void;
}

export interface ApplyProgress {
  /** Conversations in the file (with messages). */
  total: number;
  /** Conversations handled so far: imported or skipped as already here. */
  done: number;
  imported: number;
  /** Skipped: already in the data folder (`inTrash` of them in the trash). */
  already: number;
  inTrash: number;
  /** Messages and earlier versions stored so far (in grown conversations too). */
  messages: number;
  versions: number;
  /** Conversations here already that got new messages, and how many (part of `messages`); absent: none. */
  grown?: number;
  added?: number;
  /** Conversations here already whose earlier messages the export tells differently: ours kept, their new messages not added. */
  diverged?: number;
}

export interface ApplyResult extends ApplyProgress {
  status: 'done' | 'cancelled' | 'failed';
  /** The conversations stored, in the file's order. */
  conversationIds: string[];
  /** Why it stopped, when it failed (the conversation in hand left nothing). */
  error: Error | null;
  /** The title of the conversation that failed. */
  failedAt: string | null;
  /** What the person should know about conversations that were not simply stored (a diverged one, by title). */
  notes?: string[];
}

export interface ApplyOptions {
  onProgress?: (progress: ApplyProgress) => void;
  /** Checked between conversations: the one in hand is finished (or not begun), never cut. */
  signal?: AbortSignal;
}

/** Stores the conversations of a parse, one transaction each. Never throws for a conversation's failure: it ends as `failed`. */
export async function apply(
  result: ParseResult,
  deps: ApplyDeps,
  opts: ApplyOptions = {},
): Promise<ApplyResult & Required<Pick<ApplyResult, 'grown' | 'added' | 'diverged' | 'notes'>>> {
  const conversations = storedConversations(result);
  const out: ApplyResult & Required<Pick<ApplyResult, 'grown' | 'added' | 'diverged' | 'notes'>> = {
    status: 'done',
    total: conversations.length,
    done: 0,
    imported: 0,
    already: 0,
    inTrash: 0,
    messages: 0,
    versions: 0,
    grown: 0,
    added: 0,
    diverged: 0,
    conversationIds: [],
    error: null,
    failedAt: null,
    notes: [],
  };
  const report = () => {
    const { status: _s, conversationIds: _c, error: _e, failedAt: _f, notes: _n, ...progress } = out;
    opts.onProgress?.(progress);
  };
  report();
  for (const conversation of conversations) {
    if (opts.signal?.aborted) {
      out.status = 'cancelled';
      break;
    }
    try {
      const stored = await deps.transcripts.write(conversation, {
        format: result.format,
        sourceKey: importSourceKey(conversation),
        within: (tx, s) => deps.markRead(tx, s.conversationId, s.lastSeq),
      });
      if ('already' in stored) {
        out.already++;
        if (stored.already.inTrash) out.inTrash++;
      } else if ('grown' in stored) {
        const g = stored.grown;
        if (g.messages > 0) {
          out.grown++;
          out.added += g.messages;
        } else out.already++;
        out.messages += g.messages;
        out.versions += g.versions;
        deps.onStored?.(g.messageIds);
      } else if ('diverged' in stored) {
        out.diverged++;
        out.already++;
        const d = stored.diverged;
        out.notes.push(
          `“${d.title || conversation.title || 'A conversation'}” is told differently from message ${d.at} on in this file (edited or regenerated there, or continued here): the conversation here was kept as it is, without the file's new messages.`,
        );
      } else {
        out.imported++;
        out.messages += stored.messages;
        out.versions += stored.versions;
        out.conversationIds.push(stored.conversationId);
        deps.onStored?.(stored.messageIds);
      }
    } catch (err) {
      out.status = 'failed';
      out.error = err instanceof Error ? err : new Error(String(err));
      out.failedAt = conversation.title || conversation.sourceId || `conversation ${out.done + 1}`;
      break;
    }
    out.done++;
    report();
    // PGlite answers in microtasks: without a turn of the event loop between conversations, a long
    // import would hold back every socket (the progress events, a chat turn) until it ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return out;
}

export interface AppliedCard {
  /** The blocks as they are now. */
  blocks: SelfBlock[];
  /** What each written block held before (its content and whether it was the default): what "undo" puts back. */
  previous: { key: SelfBlockKey; content: string; isDefault: boolean }[];
}

/**
 * Writes a card's blocks (as the person reviewed them) through the self layer. Every block is
 * checked for credentials before any is written, so a refused card changes nothing; a write that
 * fails half-way puts the blocks already written back.
 */
export async function applyCard(selfLayer: SelfLayer, blocks: Partial<Record<SelfBlockKey, string>>): Promise<AppliedCard> {
  const wanted = SELF_BLOCK_KEYS.filter((k) => typeof blocks[k] === 'string' && blocks[k].trim() !== '');
  if (!wanted.length) throw new ApiError('invalid_input', 'The card has no text for any of the companion’s blocks.', 'blocks');
  for (const key of wanted) {
    const secret = findSecret(blocks[key]!);
    if (secret) {
      throw new ApiError(
        'invalid_input',
        `Not saved: the card's “${key}” text holds what looks like a credential (${secret.kind}); the companion's blocks are sent with every message. Remove it and try again.`,
        `blocks.${key}`,
      );
    }
  }
  const before = new Map((await selfLayer.list()).map((b) => [b.key, b]));
  const previous: AppliedCard['previous'] = [];
  try {
    for (const key of wanted) {
      const old = before.get(key);
      await selfLayer.update(key, blocks[key]!.trim());
      previous.push({ key, content: old?.content ?? '', isDefault: old?.isDefault ?? true });
    }
  } catch (err) {
    for (const p of previous.reverse()) {
      await (p.isDefault ? selfLayer.reset(p.key) : selfLayer.update(p.key, p.content)).catch(() => {});
    }
    throw err;
  }
  return { blocks: await selfLayer.list(), previous };
}
