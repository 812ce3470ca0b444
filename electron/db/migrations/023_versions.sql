-- Versions and branches: every message names the one it follows (`parent_id`), so a conversation is a
-- tree — a regenerated reply is a sibling of the earlier reply, an edited message a sibling of the
-- original. The chosen line (what the model sees, what memory reads) is still the messages with
-- `replaced_by IS NULL`: every reader stays right; choosing another version rewrites `replaced_by`
-- for the messages that leave or join the line (electron/conversations/versions.ts).
--
-- `removed_at`: the person deleted this message (undoable); it stays, off the line (`replaced_by` is
-- its own id) and out of the tree, its children following its parent. `removed_on_line`: it was on
-- the chosen line when deleted, so the undo puts it back there.
-- `copied_from`: a copy made by "branch from here" (the message it copies): the original already
-- feeds memory, so the copy never does (READABLE_MESSAGE).
ALTER TABLE messages
  ADD COLUMN parent_id text REFERENCES messages (id),
  ADD COLUMN removed_at timestamptz,
  ADD COLUMN removed_on_line boolean NOT NULL DEFAULT false,
  ADD COLUMN copied_from text;

-- A purge deletes a conversation's messages: each delete checks no child names it (as for replaced_by).
CREATE INDEX messages_parent_idx ON messages (parent_id) WHERE parent_id IS NOT NULL;

-- A message written without a parent follows the last message of its conversation's chosen line
-- (every writer: a turn, the imports, the benchmarks). A root (the first message, or an edited
-- first message) is written and then set back to no parent by its writer.
CREATE FUNCTION message_follows_line() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.parent_id IS NULL THEN
    SELECT m.id INTO NEW.parent_id FROM messages m
     WHERE m.conversation_id = NEW.conversation_id AND m.replaced_by IS NULL AND m.removed_at IS NULL
     ORDER BY m.seq DESC LIMIT 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER messages_follow_line BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION message_follows_line();

-- The parents of messages written before this migration (and of an older archive's), from how
-- regenerate, edit and the imports left them: a message follows the last message that was on the
-- line when it was written (not yet replaced by a message written before it); an earlier version
-- (replaced by a message of its own role) then takes the parent of the version that replaced it.
CREATE FUNCTION link_message_parents(conversation_ids text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  rounds integer := 0;
BEGIN
  UPDATE messages m SET parent_id = (
    SELECT x.id FROM messages x LEFT JOIN messages r ON r.id = x.replaced_by
     WHERE x.conversation_id = m.conversation_id AND x.seq < m.seq AND (x.replaced_by IS NULL OR r.seq > m.seq)
     ORDER BY x.seq DESC LIMIT 1)
   WHERE conversation_ids IS NULL OR m.conversation_id = ANY(conversation_ids);
  LOOP
    UPDATE messages m SET parent_id = y.parent_id FROM messages y
     WHERE m.replaced_by = y.id AND m.role = y.role AND m.id <> y.id AND m.parent_id IS DISTINCT FROM y.parent_id
       AND (conversation_ids IS NULL OR m.conversation_id = ANY(conversation_ids));
    GET DIAGNOSTICS n = ROW_COUNT;
    rounds := rounds + 1;
    EXIT WHEN n = 0 OR rounds > 100;
  END LOOP;
END $$;

SELECT link_message_parents(NULL);
