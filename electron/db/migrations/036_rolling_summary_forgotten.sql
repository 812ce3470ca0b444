-- Forgetting a memory takes along the conversations' rolling summaries that say the fact again
-- (electron/conversations/forgotten-summaries.ts decides which): the summary is set aside here, so
-- `rolling_summary` (what the chat request carries and the next overflow nap carries on from) is
-- empty, and it comes back when the forget is undone — unless the nap wrote a newer summary
-- meanwhile, which then stays (writing it clears what was set aside).
--
-- `rolling_summary_set_aside` (NULL: nothing set aside) with the seq it covered and when it was
-- written; `rolling_summary_forgotten_by` holds the memory journal's forget changes (memory_changes
-- ids) that set it aside, as `diary_blocks.forgotten_by` does (migration 033): one summary can say
-- several forgotten facts, and it comes back when none of them stands. While something is set aside
-- the live summary is empty.
ALTER TABLE conversations
  ADD COLUMN rolling_summary_set_aside text,
  ADD COLUMN rolling_summary_set_aside_seq bigint,
  ADD COLUMN rolling_summary_set_aside_at timestamptz,
  ADD COLUMN rolling_summary_forgotten_by bigint[];
