// Forgetting a memory takes the diary's restatements of it along. The sleep cycle writes a fact twice
// from the same messages — as a memory, and in the diary's own words (an anchor, an imprint, the day's
// narrative, the dream of that day) — and recall, the later sleep steps and the morning greeting read
// the diary as they read memories: without this, a forgotten fact still reached the model through the
// diary. The blocks that say it again are hidden in the forget's own transaction, on behalf of its
// journal entry, and come back when that forget is undone (electron/sleep/forget.ts decides which and
// keeps the account). Whole blocks: hidden_at is the one mark every reader that feeds a model already
// honours, so no reader can miss it; cutting sentences out instead would need each of them to apply
// the cut, and a reader that forgot to would send the fact again. The Diary view leaves them out too,
// as it does the blocks of a deleted conversation; nothing is deleted, the undo shows them again.
import type { Transaction } from '../db/database.js';
import { messagesBehind } from '../memory/sources.js';
import type { ForgetFollower } from '../memory/store.js';
import { hideBlocksRestating, showBlocksForgottenBy } from '../sleep/forget.js';

export const diaryFollowsForgets: ForgetFollower = {
  async forgotten(tx: Transaction, memory, changeId) {
    // The messages it came from and the replies that cited it: what the diary may have told it from.
    await hideBlocksRestating(tx, { content: memory.content, messageIds: await messagesBehind(tx, memory.id) }, changeId);
  },
  async undone(tx: Transaction, forgetChangeIds) {
    await showBlocksForgottenBy(tx, forgetChangeIds);
  },
};
