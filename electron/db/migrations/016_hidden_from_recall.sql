-- Forgetting a memory "…and what it came from": its source messages (and the replies that cited it)
-- leave recall while the conversation still shows them.
--
-- `recall_hidden_by` holds the memory journal's forget changes (memory_changes ids) that hid the
-- message — one message can be the source of several forgotten memories; undoing one forget takes
-- only its own id out, and the message returns to recall when none is left. `recall_hidden_at` is
-- set while any is: the one column every reader of the text filters on (with `deleted_at` and
-- `off_record`, on the messages table alone).
ALTER TABLE messages
  ADD COLUMN recall_hidden_at timestamptz,
  ADD COLUMN recall_hidden_by bigint[];

CREATE INDEX messages_recall_hidden_idx ON messages (seq) WHERE recall_hidden_at IS NOT NULL;

-- Deleting a message checks that no later version names it (`replaced_by REFERENCES messages`); without
-- an index each check read every message: purging a 1,000-message conversation from a 100k-message
-- folder took 235 s, with it 1.4 s (the purge, and the export's copy with the trash purged).
CREATE INDEX messages_replaced_by_idx ON messages (replaced_by) WHERE replaced_by IS NOT NULL;
