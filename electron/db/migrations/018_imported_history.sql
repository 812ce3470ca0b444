-- Imported history read later ("read my imported history", electron/sleep/history.ts). An import marks
-- its conversations as already read by the night's light sleep and the nap (so a big import never sets
-- off a month of sleep); this is where the catch-up remembers what is history and how far it has read.
--
-- `sleep_history`: one row per imported conversation — its history ends at `through_seq` (the last
-- imported message; a grown conversation brought in again moves it on) and the catch-up has read it
-- through `read_seq`. Messages after through_seq are the night's, as for any conversation.
-- `sleep_history_state`: at most one row, while the person has asked for the catch-up: reading (it runs
-- when the app is quiet, a few days at a time) or paused. No row: not asked, or finished.
CREATE TABLE sleep_history (
  conversation_id text PRIMARY KEY REFERENCES conversations (id),
  through_seq     bigint NOT NULL,
  read_seq        bigint NOT NULL DEFAULT 0,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sleep_history_state (
  one        boolean PRIMARY KEY DEFAULT true CHECK (one),
  state      text NOT NULL CHECK (state IN ('reading', 'paused')),
  started_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Why the last pass stopped early, in words (no connection, the model failed); cleared by the next good pass.
  error      text
);

-- Conversations imported before this migration: their history is what was imported (dated up to the import).
INSERT INTO sleep_history (conversation_id, through_seq)
SELECT c.id, max(m.seq)
  FROM conversations c JOIN messages m ON m.conversation_id = c.id AND m.created_at <= c.imported_at
 WHERE c.imported_from IS NOT NULL AND c.purged_at IS NULL
 GROUP BY c.id;
