// Keeps the entity graph up to date with the write path without slowing it: a stored message or a
// changed memory is queued by id and recorded right after its write commits, one at a time, on a
// later turn of the event loop — the chat path never waits for it, and a failure is logged, never
// shown as a chat error. What the queue never saw (written before the graph existed, or left in the
// queue when the app closed) is found at start by the backfill: messages and memories without a
// scan, and memories changed since theirs.
import type { MemoryChange } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { memoriesToRead, unscannedMessages } from './mention-rows.js';
import type { RecordInput } from './mention-rows.js';
import type { EntityStore } from './store.js';
import type { Log } from '../../shared/log.js';

type Item = { kind: 'message'; id: string } | { kind: 'memory'; id: number };

/** Rows read per backfill step: the queue never holds more than this many at start. */
const BACKFILL_BATCH = 200;

/**
 * Queued rows recorded together, in one transaction (mention-rows.ts recordMentionsBatch). Each
 * batch plans its statements afresh: 100 cost ~11% less CPU than 50 on a long import (200 no less
 * than 100), and hold the database ~0.3 s a batch.
 */
const RECORD_BATCH = 100;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Gathers changed entity ids and reports them at most every `ms`: a backfill records thousands of
 * messages, and a view listening for graph changes needs one note, not one per message.
 */
export function batchedEntityChanges(report: (entityIds: number[]) => void, ms = 500): (entityIds: number[]) => void {
  let pending = new Set<number>();
  let timer: NodeJS.Timeout | null = null;
  return (entityIds) => {
    for (const id of entityIds) pending.add(id);
    timer ??= setTimeout(() => {
      timer = null;
      const ids = [...pending];
      pending = new Set();
      report(ids);
    }, ms);
    // Never the reason the process stays up.
    timer.unref?.();
  };
}

export class GraphIndexer {
  private readonly queue = new Map<string, Item>();
  private draining: Promise<void> | null = null;
  private backfilling: Promise<void> | null = null;
  private closed = false;
  /** Counts for tests and logs. */
  readonly stats = { recorded: 0, failed: 0, backfilled: 0 };

  constructor(
    private readonly db: Database,
    private readonly store: EntityStore,
    private readonly log: Log = () => {},
  ) {}

  /** A message was stored or finished. Streaming placeholders are skipped until they finish. */
  message(id: string): void {
    this.push({ kind: 'message', id });
  }

  /** A memory changed; only changes to its words or its names need a new reading. */
  memoryChanged(change: MemoryChange): void {
    const touched = { ...(change.before ?? {}), ...(change.after ?? {}) };
    if (change.action === 'create' || 'content' in touched || 'entityNames' in touched) this.push({ kind: 'memory', id: change.memoryId });
  }

  memory(id: number): void {
    this.push({ kind: 'memory', id });
  }

  /** Resolves once the queue is empty (tests; the backfill between batches). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Starts the backfill in the background. */
  start(): void {
    this.backfilling ??= this.backfillAndSay();
  }

  /**
   * Reads again, in the background, whatever has no scan yet: rows written without a word to the
   * indexer (Anima's own archive, restored room by room). After the backfill in hand, if any.
   */
  catchUp(): void {
    const before = this.backfilling ?? Promise.resolve();
    this.backfilling = before.then(() => this.backfillAndSay());
  }

  private backfillAndSay(): Promise<void> {
    return this.backfill()
      .then(({ messages, memories }) => {
        if (messages || memories) this.log('info', `graph: read ${messages} earlier messages and ${memories} memories for entity mentions`);
      })
      .catch((err: Error) => this.log('warn', `graph: the mention backfill stopped: ${err.message}`));
  }

  /** Stops taking work and waits for the item in hand; what is left is found by the next backfill. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
    await this.backfilling;
  }

  /**
   * Queues every message and memory that has no scan (or a memory changed since its scan), a batch
   * at a time in write order, waiting for each batch to be recorded before reading the next.
   */
  async backfill(): Promise<{ messages: number; memories: number }> {
    const { conversations, memories: memoryStore } = this.store.sources;
    // The ids come from their rooms and are checked against the scans in one statement each: a
    // page at a time read the whole messages table per page (its status filter defeats the index).
    const messageIds = this.closed ? [] : await unscannedMessages(this.db, await conversations.finishedMessageIds());
    const messages = await this.queueInBatches(messageIds.map((id): Item => ({ kind: 'message', id })));
    const times = this.closed ? { ids: [], updatedAt: [] } : await memoryStore.changeTimes();
    const memoryIds = this.closed ? [] : await memoriesToRead(this.db, times.ids, times.updatedAt);
    const memories = await this.queueInBatches(memoryIds.map((id): Item => ({ kind: 'memory', id })));
    this.stats.backfilled += messages + memories;
    return { messages, memories };
  }

  /** Queues items BACKFILL_BATCH at a time, each batch recorded before the next; returns how many were queued. */
  private async queueInBatches(items: Item[]): Promise<number> {
    let queued = 0;
    for (let i = 0; i < items.length && !this.closed; i += BACKFILL_BATCH) {
      const batch = items.slice(i, i + BACKFILL_BATCH);
      for (const item of batch) this.push(item);
      queued += batch.length;
      await this.idle();
    }
    return queued;
  }

  private push(item: Item): void {
    if (this.closed) return;
    // One entry per row: a memory saved three times in a burst is read once, as it ends up.
    const key = `${item.kind}:${item.id}`;
    this.queue.delete(key);
    this.queue.set(key, item);
    this.kick();
  }

  private kick(): void {
    if (this.draining || this.closed) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      // Something queued in the moment between the last item and here.
      if (this.queue.size) this.kick();
    });
  }

  private async drain(): Promise<void> {
    // First let the write's caller have its result: the queue runs after, not inside, the write.
    await tick();
    while (this.queue.size && !this.closed) {
      // What has piled up (a backfill, an import) is recorded RECORD_BATCH at a time, one
      // transaction each; a chat message alone is a batch of one.
      const items: Item[] = [];
      for (const [key, item] of this.queue) {
        if (items.length >= RECORD_BATCH) break;
        this.queue.delete(key);
        items.push(item);
      }
      try {
        await this.indexMany(items);
      } catch (err) {
        // One bad row must not cost the others their mentions: the batch again, one at a time.
        if (items.length === 1) this.failed(items[0]!, err);
        else
          for (const item of items) {
            try {
              await this.indexMany([item]);
            } catch (e) {
              this.failed(item, e);
            }
          }
      }
      // Between batches, whatever else is waiting (a chat write, a stream) goes first.
      await tick();
    }
  }

  private failed(item: Item, err: unknown): void {
    this.stats.failed++;
    this.log('warn', `graph: could not record the mentions of ${item.kind} ${item.id}: ${(err as Error).message}`);
  }

  private async indexMany(items: Item[]): Promise<void> {
    const { conversations, memories } = this.store.sources;
    const inputs: RecordInput[] = [];
    const memoryIds = items.flatMap((i) => (i.kind === 'memory' ? [i.id] : []));
    const memoryRows = new Map((memoryIds.length ? await memories.getMany(memoryIds) : []).map((m) => [m.id, m]));
    // The batch's messages in one read: a statement costs more than the lookup in it.
    const messageIds = items.flatMap((i) => (i.kind === 'message' ? [i.id] : []));
    const messageRows = new Map((messageIds.length ? await conversations.findMessages(messageIds) : []).map((m) => [m.id, m]));
    for (const item of items) {
      if (item.kind === 'message') {
        const message = messageRows.get(item.id);
        // A reply still streaming is recorded when it finishes (Conversations.finish queues it again).
        // Off the record: never in the graph.
        if (!message || message.status === 'streaming' || message.offRecord) continue;
        inputs.push({ messageId: item.id, text: message.content, at: new Date(message.createdAt), role: message.role });
      } else {
        const memory = memoryRows.get(item.id);
        if (!memory) continue;
        inputs.push({ memoryId: item.id, text: memory.content, names: memory.entityNames, at: new Date(memory.createdAt) });
      }
    }
    if (!inputs.length) return;
    await this.store.recordMentionsBatch(inputs);
    this.stats.recorded += inputs.length;
  }
}
