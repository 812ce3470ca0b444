-- Generation settings per connection, for chat replies: temperature, top-p, the longest reply in
-- tokens, and up to four stop sequences. NULL (and an empty list): not sent, so the server's own
-- default applies. Validated by the providers room (shared/api/providers.ts generationProblems);
-- the checks here are the backstop.
ALTER TABLE providers ADD COLUMN temperature real CHECK (temperature >= 0 AND temperature <= 2);
ALTER TABLE providers ADD COLUMN top_p real CHECK (top_p >= 0 AND top_p <= 1);
ALTER TABLE providers ADD COLUMN max_reply_tokens integer CHECK (max_reply_tokens >= 1);
ALTER TABLE providers ADD COLUMN stop_sequences jsonb NOT NULL DEFAULT '[]'::jsonb
  CHECK (jsonb_typeof(stop_sequences) = 'array' AND jsonb_array_length(stop_sequences) <= 4);
