-- Conversations brought in from another app's export (Settings → Data → Import, `anima import`).
--
-- `imported_from` names the format it came from (chatgpt, claude, sillytavern, …) and `imported_at`
-- when; both stay NULL for conversations had in Anima. `source_id` is the export's own id for the
-- conversation — or, when the export has none, a digest of its content — so importing the same file
-- twice finds what is already here and says so instead of copying it. A purged conversation (the
-- tombstone of migration 014) no longer counts: importing it again brings it back.
ALTER TABLE conversations
  ADD COLUMN imported_from text,
  ADD COLUMN source_id text,
  ADD COLUMN imported_at timestamptz;

CREATE UNIQUE INDEX conversations_import_source_idx ON conversations (imported_from, source_id)
  WHERE source_id IS NOT NULL AND purged_at IS NULL;
