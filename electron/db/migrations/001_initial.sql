-- The foundation: settings, providers, the self layer, conversations and messages.
-- Ids are text (UUIDs) so rows can be exported and merged without renumbering.

CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Provider connections. API keys are NOT here: they live in the secret store.
CREATE TABLE providers (
  id             text PRIMARY KEY,
  kind           text NOT NULL CHECK (kind IN ('openai-compatible', 'anthropic', 'local')),
  name           text NOT NULL,
  base_url       text NOT NULL,
  model          text NOT NULL,
  context_tokens integer NOT NULL DEFAULT 8192 CHECK (context_tokens >= 512),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- The self layer: six identity blocks every model call carries.
CREATE TABLE self_blocks (
  key        text PRIMARY KEY CHECK (key IN ('identity', 'personality', 'values', 'relationship', 'voice', 'narrative')),
  content    text NOT NULL,
  is_default boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE conversations (
  id                     text PRIMARY KEY,
  kind                   text NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'background')),
  title                  text NOT NULL,
  -- true once the person renamed it: automatic titles never overwrite theirs.
  title_set_by_user      boolean NOT NULL DEFAULT false,
  archived               boolean NOT NULL DEFAULT false,
  system_prompt          text NOT NULL DEFAULT '',
  system_prompt_day      text,
  system_prompt_built_at timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_list_idx ON conversations (kind, archived, updated_at DESC);

CREATE TABLE messages (
  id              text PRIMARY KEY,
  -- Insertion order; timestamps can tie within a millisecond.
  seq             bigserial NOT NULL UNIQUE,
  conversation_id text NOT NULL REFERENCES conversations (id),
  role            text NOT NULL CHECK (role IN ('user', 'assistant')),
  content         text NOT NULL,
  status          text NOT NULL CHECK (status IN ('complete', 'streaming', 'partial', 'error')),
  error           jsonb,
  model           text,
  -- A later version (regenerated reply, edited message) replaced this one; both are kept.
  replaced_by     text REFERENCES messages (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation_idx ON messages (conversation_id, seq);
-- Crash recovery looks for replies that were being written.
CREATE INDEX messages_streaming_idx ON messages (status) WHERE status = 'streaming';
