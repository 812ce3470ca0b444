// Deleting a conversation for real, and off the record: the steps that cross rooms, each asked of
// the room that owns the rows.
//
// Delete (into the trash): what the sleep cycle derived from this conversation alone goes with it —
// active memories whose every source message is one of its messages (expired in one journalled
// batch, so one undo brings them all back), its anchors and imprints (hidden: diary blocks are
// append-only), its messages' entity mentions (recorded again with no text: counts and co-mention
// edges follow) and its vectors. Anything it shares with another conversation stays. What was taken
// is kept on the conversation row; restore puts exactly that back. TRASH_DAYS after, the purge
// removes its messages and every row that still names them.
//
// Off the record: the messages are stamped (Conversations), their vectors and mentions go; the
// readers (recall, the sleep cycle, the embedder, the graph indexer) leave stamped messages out.
import { randomUUID } from 'node:crypto';
import { ApiError, type Conversation, type DeleteResult, type Memory, type SaveMemoryResult, type TrashedConversation } from '../../shared/api.js';
import type { Log } from '../../shared/log.js';
import { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/open.js';
import { dropMessageVectors } from '../embed/forget.js';
import { dropMessageRows, messagesWithMentions } from '../graph/forget.js';
import type { EntityStore } from '../graph/store.js';
import { dropReferencesOf, memoriesOnlyFrom } from '../memory/sources.js';
import type { MemoryStore } from '../memory/store.js';
import { hideBlocksOnlyFrom, unhideBlocks } from '../sleep/forget.js';
import { diaryFollowsForgets } from './diary.js';
import { summariesFollowForgets } from './summaries.js';
import { forgetMemory, memorySources, undoMemoryChange } from './with-sources.js';

/** How often the host looks for conversations whose time in the trash is over. */
export const PURGE_EVERY_MS = 24 * 3_600_000;

/** What a delete took along, kept on the conversation row until restore or purge. */
interface Derived {
  /** A journal change of the batch that expired its memories (undo restores the whole batch). */
  memoryChangeId: number | null;
  memoryIds: number[];
  diaryBlockIds: number[];
  /** Its messages that had entity mentions: recorded again on restore. */
  mentionMessageIds: string[];
}

export interface TrashDeps {
  db: Database;
  conversations: Conversations;
  memories: MemoryStore;
  graph: EntityStore;
  /** Waits until the graph's queue is empty, so a mention recorded late is not left behind. */
  graphIdle: () => Promise<void>;
  /** The recall index drops a deleted message when a search meets it; a restore has it rebuilt. */
  dropRecallIndex: () => void;
  /** The embedding queue makes vectors again for a restored conversation. */
  embedCatchUp: () => void;
  /** After a purge: the image files no message names any more go too (attachments/store.ts). */
  removeUnusedImages?: () => Promise<number>;
  now: () => Date;
  log: Log;
}

function isDerived(v: unknown): v is Derived {
  return typeof v === 'object' && v !== null && Array.isArray((v as Derived).diaryBlockIds) && Array.isArray((v as Derived).mentionMessageIds);
}

export class Trash {
  private timer: ReturnType<typeof setInterval> | null = null;
  private purging: Promise<number> | null = null;
  /** One delete, restore or off-the-record switch at a time: each reads, then writes, several rooms. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: TrashDeps) {
    // Every forget of the host's memories (the person's, the companion's on their word, the vault's)
    // takes the diary's and the rolling summaries' restatements of the fact along, and its undo brings
    // them back (diary.ts, summaries.ts).
    deps.memories.followForgets(diaryFollowsForgets);
    deps.memories.followForgets(summariesFollowForgets);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  /** Puts a conversation in the trash with what was derived from it alone. */
  delete(id: string): Promise<DeleteResult> {
    return this.serial(async () => {
      const { conversations, memories, graph, db } = this.deps;
      await conversations.get(id);
      const messages = await conversations.messageRefs(id);
      const ids = messages.map((m) => m.id);
      // Memories learned from these messages alone: expired together, one batch to undo.
      const memoryIds = await memoriesOnlyFrom(db, ids);
      const at = this.realNow();
      const reason = `deleted with conversation ${id}`;
      let memoryChangeId: number | null = null;
      const expired: number[] = [];
      if (memoryIds.length) {
        const batchId = randomUUID();
        await memories.batch(async (b) => {
          for (const memoryId of memoryIds) {
            try {
              const r = await b.expire(memoryId, at.toISOString(), 'person', batchId, reason);
              memoryChangeId ??= r.changeId ?? null;
              expired.push(memoryId);
            } catch (err) {
              // A guard's refusal (a valid time that starts later) skips that one memory.
              if (!(err instanceof ApiError)) throw err;
              this.deps.log('warn', `trash: memory ${memoryId} stays: ${err.message}`);
            }
          }
        });
      }
      const diaryBlockIds = await hideBlocksOnlyFrom(db, id, ids);
      // Mentions queued before the delete are recorded first, then taken out with the rest.
      await this.deps.graphIdle();
      const mentionMessageIds = await messagesWithMentions(db, ids);
      for (const messageId of mentionMessageIds) await graph.recordMentions({ messageId, text: '' });
      await dropMessageVectors(
        db,
        messages.map((m) => m.seq),
      );
      const derived: Derived = { memoryChangeId, memoryIds: expired, diaryBlockIds, mentionMessageIds };
      const trashed = await conversations.trash(id, this.deps.now(), derived);
      return { trashed, memoriesExpired: expired.length, diaryHidden: diaryBlockIds.length, mentionsCleared: mentionMessageIds.length };
    });
  }

  /** Takes a conversation out of the trash and puts back what its delete took along. */
  restore(id: string): Promise<Conversation> {
    return this.serial(async () => {
      const { conversations, memories, graph, db } = this.deps;
      const { derived } = await conversations.trashed(id);
      const conversation = await conversations.untrash(id);
      if (isDerived(derived)) {
        if (derived.memoryChangeId !== null) {
          try {
            await memories.undo(derived.memoryChangeId, 'person');
          } catch (err) {
            // Changed again since (the person edited or restored one by hand): the rest comes back, that one stays as it is.
            this.deps.log('warn', `trash: the memories deleted with conversation ${id} could not all come back: ${(err as Error).message}`);
          }
        }
        await unhideBlocks(db, derived.diaryBlockIds);
        const messages = new Map((await conversations.messageRefs(id)).map((m) => [m.id, m]));
        for (const messageId of derived.mentionMessageIds) {
          const m = messages.get(messageId);
          if (m && !m.offRecord) await graph.recordMentions({ messageId, text: m.content });
        }
      }
      this.deps.dropRecallIndex();
      this.deps.embedCatchUp();
      return conversation;
    });
  }

  /** The messages a forget "…and what it came from" would hide (with-sources.ts). */
  memorySources(memoryId: number): Promise<string[]> {
    return memorySources(this.deps, memoryId);
  }

  /** The person forgets a memory, with the messages it came from when `withSources` (with-sources.ts). */
  forgetMemory(id: number, withSources: boolean): Promise<SaveMemoryResult> {
    return this.serial(() => forgetMemory(this.deps, id, withSources));
  }

  /** The person undoes a memory change; what an undone forget hid from recall comes back (with-sources.ts). */
  undoMemoryChange(changeId: number): Promise<Memory> {
    return this.serial(() => undoMemoryChange(this.deps, changeId));
  }

  list(): Promise<TrashedConversation[]> {
    return this.deps.conversations.trashList();
  }

  /** Off the record (its messages so far too: their vectors and mentions go) or back on for what is said next. */
  setOffRecord(id: string, offRecord: boolean): Promise<Conversation> {
    return this.serial(async () => {
      const { conversations, graph, db } = this.deps;
      const { conversation, switchedOff } = await conversations.setOffRecord(id, offRecord);
      if (switchedOff.length) {
        await this.deps.graphIdle();
        for (const messageId of await messagesWithMentions(
          db,
          switchedOff.map((m) => m.id),
        ))
          await graph.recordMentions({ messageId, text: '' });
        await dropMessageVectors(
          db,
          switchedOff.map((m) => m.seq),
        );
      }
      return conversation;
    });
  }

  /** Removes for good the conversations whose time in the trash is over; returns how many. */
  purgeDue(): Promise<number> {
    this.purging ??= this.serial(async () => {
      let purged = 0;
      for (const id of await this.deps.conversations.purgeDue(this.deps.now())) {
        await this.purgeOne(id);
        purged++;
      }
      if (purged) {
        this.deps.log('info', `trash: removed ${purged} conversation${purged === 1 ? '' : 's'} for good after their time in the trash`);
        const images = (await this.deps.removeUnusedImages?.()) ?? 0;
        if (images) this.deps.log('info', `trash: removed ${images} image file${images === 1 ? '' : 's'} only those conversations held`);
      }
      return purged;
    }).finally(() => {
      this.purging = null;
    });
    return this.purging;
  }

  private purgeOne(id: string): Promise<void> {
    return purgeConversation(this.deps.db, this.deps.conversations, id, this.deps.now());
  }

  /** Purges now (at host start) and then every PURGE_EVERY_MS while the host runs. */
  start(): void {
    const run = () =>
      void this.purgeDue().catch((err: Error) => {
        this.deps.log('warn', `trash: the purge failed: ${err.message}`);
      });
    run();
    this.timer ??= setInterval(run, PURGE_EVERY_MS);
    this.timer.unref?.();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.chain;
  }

  /** A memory's valid time closes now, never in the future (an injected clock ahead of real time would keep it active). */
  private realNow(): Date {
    return new Date(Math.min(this.deps.now().getTime(), Date.now()));
  }
}

/** Removes a trashed conversation's messages and every row that still names them, in one transaction; the row stays as a tombstone. */
async function purgeConversation(db: Database, conversations: Conversations, id: string, at: Date): Promise<void> {
  const messages = await conversations.messageRefs(id);
  const ids = messages.map((m) => m.id);
  await db.transaction(async (tx) => {
    await dropReferencesOf(tx, ids);
    await dropMessageRows(tx, ids);
    await dropMessageVectors(
      tx,
      messages.map((m) => m.seq),
    );
    await conversations.purge(tx, id, at);
  });
}

/**
 * Purges everything in the trash at once — only ever in a copy of the database about to be dumped
 * (the export's anima.sql leaves the trash out, as anima.json does): on the live database it would
 * take away the 30 days in which a delete can be undone. Returns how many conversations it purged.
 */
export async function purgeTrashInCopy(copy: Database, at: Date): Promise<number> {
  const conversations = new Conversations(copy);
  const ids = await conversations.purgeDue(new Date('9999-12-31T00:00:00Z'));
  for (const id of ids) await purgeConversation(copy, conversations, id, at);
  return ids.length;
}
