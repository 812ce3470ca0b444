// Forgetting a memory takes along the conversations' rolling summaries that restate it. The overflow
// nap retells the turns that leave the chat's context window in its own words, and every later request
// of that conversation carries the retelling after the system prompt: without this, a forgotten fact
// still reached the chat model through it, turn after turn. As with the diary (diary.ts), the whole
// summary is set aside in the forget's own transaction, on behalf of its journal entry, and comes back
// when that forget is undone; conversations/forgotten-summaries.ts decides which and keeps the account.
// A summary written later is held to the same: the nap saves it through saveSummaryMindingForgets.
import type { Conversations } from '../conversations/conversations.js';
import type { Database, Transaction } from '../db/database.js';
import { bringBackSummariesForgottenBy, setAsideSummariesRestating, setAsideSummaryIfRestating } from '../conversations/forgotten-summaries.js';
import { messagesBehind } from '../memory/sources.js';
import { standingForgets } from '../memory/standing-forgets.js';
import type { ForgetFollower } from '../memory/store.js';

export const summariesFollowForgets: ForgetFollower = {
  async forgotten(tx: Transaction, memory, changeId) {
    // The conversations of the messages it came from and of the replies that cited it: their summaries
    // may tell it in other words; any other summary only nearly word for word.
    await setAsideSummariesRestating(tx, { content: memory.content, messageIds: await messagesBehind(tx, memory.id) }, changeId);
  },
  async undone(tx: Transaction, forgetChangeIds) {
    await bringBackSummariesForgottenBy(tx, forgetChangeIds);
  },
};

/**
 * Saves a conversation's new rolling summary (as Conversations.saveRollingSummary: only while the one
 * it carried on from is still live) and, in the same transaction, before any request can read it,
 * measures it against every forget that still stands as the forgets measure the summaries already
 * written. One that says a forgotten fact again — the model read it in a message no forget hid, or made
 * it up — is set aside on behalf of those forgets, and comes back when they are all undone. The
 * measure costs about 0.3 ms a standing forget (word similarity against the whole summary): 0.3 s at
 * 1,000 of them, on two cores at load 7, once per summary the nap writes.
 */
export async function saveSummaryMindingForgets(
  db: Database,
  conversations: Conversations,
  s: { conversationId: string; text: string; throughSeq: number; carriedFromSeq: number },
): Promise<'live' | 'set-aside' | 'dropped'> {
  return db.transaction(async (tx) => {
    if (!(await conversations.saveRollingSummary(s.conversationId, s.text, s.throughSeq, s.carriedFromSeq, tx))) return 'dropped';
    return (await setAsideSummaryIfRestating(tx, s.conversationId, await standingForgets(tx))) ? 'set-aside' : 'live';
  });
}
