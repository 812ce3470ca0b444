// Forgetting a memory takes along the conversations' rolling summaries that restate it. The overflow
// nap retells the turns that leave the chat's context window in its own words, and every later request
// of that conversation carries the retelling after the system prompt: without this, a forgotten fact
// still reached the chat model through it, turn after turn. As with the diary (diary.ts), the whole
// summary is set aside in the forget's own transaction, on behalf of its journal entry, and comes back
// when that forget is undone; conversations/forgotten-summaries.ts decides which and keeps the account.
import type { Transaction } from '../db/database.js';
import { bringBackSummariesForgottenBy, setAsideSummariesRestating } from '../conversations/forgotten-summaries.js';
import { messagesBehind } from '../memory/sources.js';
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
