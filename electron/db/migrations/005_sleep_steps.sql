-- What the sleep steps write besides memories: where each diary block came from, the cursors of
-- steps that read the journal rather than conversations, deep sleep's pin proposals, and the daily
-- mood series. The unique indexes make a step that is resumed after a crash unable to write twice.

ALTER TABLE diary_blocks ADD COLUMN source_message_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE diary_blocks ADD COLUMN run_id bigint REFERENCES sleep_runs (id);
-- The morning digest's items (change ids, proposals); other kinds leave it null.
ALTER TABLE diary_blocks ADD COLUMN details jsonb;

-- One anchor per conversation per sleep day, one dream per sleep day, one digest per run.
CREATE UNIQUE INDEX diary_blocks_anchor_key ON diary_blocks (day, conversation_id) WHERE kind = 'anchor';
CREATE UNIQUE INDEX diary_blocks_dream_key ON diary_blocks (day) WHERE kind = 'dream';
CREATE UNIQUE INDEX diary_blocks_digest_key ON diary_blocks (run_id) WHERE kind = 'digest';

-- The guard now covers the new columns too: provenance and digest items are part of what was written.
CREATE OR REPLACE FUNCTION diary_blocks_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'diary_blocks are append-only: set hidden_at instead of deleting block %', OLD.id
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF NEW.title IS DISTINCT FROM OLD.title OR NEW.body IS DISTINCT FROM OLD.body
     OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.day IS DISTINCT FROM OLD.day
     OR NEW.mood IS DISTINCT FROM OLD.mood OR NEW.conversation_id IS DISTINCT FROM OLD.conversation_id
     OR NEW.source_message_ids IS DISTINCT FROM OLD.source_message_ids
     OR NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.details IS DISTINCT FROM OLD.details
     OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'diary_blocks are append-only: block % cannot be rewritten', OLD.id
      USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END;
$$;

-- A step cut short — over the night's budget, or stopped by the person — is 'stopped', not failed:
-- what it finished is kept (watermarks), and the next run does the rest.
ALTER TABLE sleep_steps DROP CONSTRAINT sleep_steps_status_check;
ALTER TABLE sleep_steps ADD CONSTRAINT sleep_steps_status_check
  CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped', 'stopped'));

-- Progress of steps that walk a table rather than conversations (deep sleep: the journal; digest).
CREATE TABLE sleep_cursors (
  name       text PRIMARY KEY,
  value      bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Deep sleep proposes, the person decides: pins are the person's to change.
CREATE TABLE sleep_proposals (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id      bigint NOT NULL REFERENCES sleep_runs (id),
  memory_id   bigint NOT NULL REFERENCES memories (id),
  action      text NOT NULL CHECK (action IN ('pin', 'unpin')),
  reason      text NOT NULL,
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'dismissed')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz
);
CREATE UNIQUE INDEX sleep_proposals_open_key ON sleep_proposals (memory_id, action) WHERE status = 'open';

-- The mood series, recomputed from anchors by the mood-trend step (derived: safe to rebuild).
CREATE TABLE mood_days (
  day        text PRIMARY KEY,
  valence    real NOT NULL,
  arousal    real NOT NULL,
  anchors    integer NOT NULL,
  valence7   real NOT NULL,
  valence30  real NOT NULL,
  arousal7   real NOT NULL,
  arousal30  real NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX auto_llm_runs_run_idx ON auto_llm_runs (run_id);
