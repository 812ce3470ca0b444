-- A long conversation's rolling summary: when its oldest turns leave the model's context window, the
-- nap writes a short summary of them (and of the summary before), and the turn's request carries it,
-- so what the person said at the start ("who I am") is not lost from view. `rolling_summary_seq` is
-- the last message seq it covers (0: none yet). Derived text, rewritten as the window moves; the
-- messages it summarises stay as they are.
ALTER TABLE conversations
  ADD COLUMN rolling_summary text NOT NULL DEFAULT '',
  ADD COLUMN rolling_summary_seq bigint NOT NULL DEFAULT 0,
  ADD COLUMN rolling_summary_at timestamptz;
