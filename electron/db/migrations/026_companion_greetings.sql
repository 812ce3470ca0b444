-- The companion speaks first (electron/companion/greetings.ts): at most one morning message per sleep
-- day, after a good night. The primary key is the claim: two windows asking at once insert one row.
-- run_id: the night it was drawn from (no foreign key: a night's row is the sleep room's); message_id
-- the reply it became (NULL while it is being written, or when it could not be started).
CREATE TABLE companion_greetings (
  sleep_day       text PRIMARY KEY,
  run_id          bigint NOT NULL,
  conversation_id text,
  message_id      text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
