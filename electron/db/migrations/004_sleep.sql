-- The nightly sleep cycle: its runs and steps (so a crashed night resumes instead of starting over),
-- per-conversation watermarks (so a step never reprocesses messages it already read), an audit of
-- every automatic model call (nothing the sleep cycle asks a model is hidden from the person), and
-- the guard that makes diary blocks append-only.

CREATE TABLE sleep_runs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sleep_day    text NOT NULL,
  trigger      text NOT NULL CHECK (trigger IN ('schedule', 'catch-up', 'manual')),
  status       text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed', 'stopped')),
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  -- Who runs it: a 'running' row whose holder is gone (kill -9, power loss) is an interrupted night.
  holder_pid   integer NOT NULL,
  holder_host  text NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  stats        jsonb,
  error        text
);
CREATE INDEX sleep_runs_day_idx ON sleep_runs (sleep_day, id DESC);
-- At most one cycle at a time, even if two processes race past the liveness check.
CREATE UNIQUE INDEX sleep_runs_one_running_idx ON sleep_runs ((true)) WHERE status = 'running';

CREATE TABLE sleep_steps (
  run_id      bigint NOT NULL REFERENCES sleep_runs (id),
  step_id     text NOT NULL,
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped')),
  reason      text,
  started_at  timestamptz,
  finished_at timestamptz,
  stats       jsonb,
  error       text,
  PRIMARY KEY (run_id, step_id)
);

CREATE TABLE sleep_watermarks (
  step_id         text NOT NULL,
  conversation_id text NOT NULL REFERENCES conversations (id),
  -- messages.seq of the last message this step has fully processed in this conversation.
  last_seq        bigint NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (step_id, conversation_id)
);

-- One row per automatic model call (each attempt, repairs included). Never mixed into messages.
CREATE TABLE auto_llm_runs (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  purpose           text NOT NULL,
  step_id           text,
  run_id            bigint REFERENCES sleep_runs (id),
  model             text NOT NULL,
  prompt_chars      integer NOT NULL,
  response_chars    integer NOT NULL,
  prompt_tokens     integer,
  completion_tokens integer,
  duration_ms       integer NOT NULL,
  status            text NOT NULL CHECK (status IN ('ok', 'error', 'invalid')),
  error             text,
  prompt            text NOT NULL,
  response          text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX auto_llm_runs_created_idx ON auto_llm_runs (created_at DESC);
CREATE INDEX auto_llm_runs_status_idx ON auto_llm_runs (status);

-- Diary blocks are the companion's autobiography: written once, never rewritten or deleted. Hiding
-- one is a tombstone (hidden_at), so the history of what was written stays intact.
ALTER TABLE diary_blocks ADD COLUMN hidden_at timestamptz;

CREATE FUNCTION diary_blocks_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'diary_blocks are append-only: set hidden_at instead of deleting block %', OLD.id
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF NEW.title IS DISTINCT FROM OLD.title OR NEW.body IS DISTINCT FROM OLD.body
     OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.day IS DISTINCT FROM OLD.day
     OR NEW.mood IS DISTINCT FROM OLD.mood THEN
    RAISE EXCEPTION 'diary_blocks are append-only: block % cannot be rewritten', OLD.id
      USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER diary_blocks_no_update BEFORE UPDATE ON diary_blocks
  FOR EACH ROW EXECUTE FUNCTION diary_blocks_append_only();
CREATE TRIGGER diary_blocks_no_delete BEFORE DELETE ON diary_blocks
  FOR EACH ROW EXECUTE FUNCTION diary_blocks_append_only();
