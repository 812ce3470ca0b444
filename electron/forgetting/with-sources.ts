// Forgetting a memory "…and what it came from": the memory is forgotten (expired, journalled) and, in
// the same transaction, the messages behind it — those it was learned from and the replies that cited
// it — are hidden from recall on behalf of that journal entry. Hidden means out of every reader that
// feeds memory (READABLE_MESSAGE: recall and its index, search by meaning, the sleep cycle and the
// nap); the conversation view still shows them. Undoing the forget takes back exactly what it hid: a
// message that another standing forget also hid stays hidden.
import type { SaveMemoryResult } from '../../shared/api.js';
import type { Conversations } from '../conversations/conversations.js';
import type { Database } from '../db/open.js';
import { messagesBehind } from '../memory/sources.js';
import type { MemoryStore } from '../memory/store.js';

export interface WithSourcesDeps {
  db: Database;
  conversations: Conversations;
  memories: MemoryStore;
  /** The recall index re-reads everything: a message that returns to recall is indexed again. */
  dropRecallIndex: () => void;
  now: () => Date;
}

/** The messages a forget "…and what it came from" would hide: those the memory came from and those that cited it, outside the trash. */
export async function memorySources(d: WithSourcesDeps, memoryId: number): Promise<string[]> {
  return d.conversations.liveMessageIds(await messagesBehind(d.db, memoryId));
}

/** The person forgets a memory; with `withSources`, the messages behind it leave recall too (`hiddenMessages`: how many). */
export async function forgetMemory(d: WithSourcesDeps, id: number, withSources: boolean): Promise<SaveMemoryResult> {
  if (!withSources) return d.memories.forget(id, 'person');
  const messageIds = await memorySources(d, id);
  const at = d.now();
  return d.memories.batch(async (b) => {
    const result = await b.forget(id, 'person');
    // Hidden by this journal entry: recall's index drops each one the next time a search meets it.
    const hidden = await d.conversations.hideFromRecall(b.tx, messageIds, result.changeId, at);
    return { ...result, hiddenMessages: hidden.length };
  });
}

/** Undoes a memory change (and its batch); what any undone forget hid from recall returns with it. */
export async function undoMemoryChange(d: WithSourcesDeps, changeId: number) {
  const { memory, returned } = await d.memories.batch(async (b) => {
    const { memory, undone } = await b.undo(changeId, 'person');
    return { memory, returned: await d.conversations.unhideFromRecall(b.tx, undone) };
  });
  if (returned) d.dropRecallIndex();
  return memory;
}
