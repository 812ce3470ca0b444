-- Deleting a conversation, and conversations off the record.
--
-- Deleted: `deleted_at` puts the conversation in the trash for 30 days (restore brings it back), and
-- `deleted_derived` keeps what the delete took out with it (the memory journal change that expired
-- the memories only it was the source of, the diary blocks it hid), so a restore puts exactly that
-- back. After 30 days the purge removes its messages; the row stays as a tombstone (`purged_at`,
-- the title blanked) because append-only diary blocks may still name it.
--
-- Off the record: `conversations.off_record` is what new messages are stored with; each message
-- keeps its own `off_record`, so switching a conversation back on does not feed its earlier
-- messages to recall, the sleep cycle, the embedder or the graph.
--
-- The messages carry their conversation's `deleted_at` too: every reader of the text (recall, its
-- in-memory index, the embedding queue, the sleep cycle) filters on the messages table alone.
ALTER TABLE conversations
  ADD COLUMN deleted_at timestamptz,
  ADD COLUMN deleted_derived jsonb,
  ADD COLUMN purged_at timestamptz,
  ADD COLUMN off_record boolean NOT NULL DEFAULT false;

ALTER TABLE messages
  ADD COLUMN deleted_at timestamptz,
  ADD COLUMN off_record boolean NOT NULL DEFAULT false;

CREATE INDEX conversations_deleted_idx ON conversations (deleted_at) WHERE deleted_at IS NOT NULL;
