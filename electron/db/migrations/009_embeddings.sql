-- Embeddings from the on-device model, for recall by meaning and near-duplicate checks. Derived data:
-- every row can be rebuilt from its source row, so a model switch or a re-download may drop them all.
--
-- source_id is the key recall already ranks by: messages.seq (messages.id is text, seq is the
-- bigint that never changes), memories.id, diary_blocks.id. No foreign key: one column serves three
-- tables, and a vector whose row went away is swept by the next full backfill (electron/embed/queue.ts).
--
-- Vectors are stored as float4 arrays, not pgvector's type: the table does not depend on the
-- extension, which is loaded only where its build matches PGlite (electron/embed/pgvector.ts). Models
-- differ in length, so `dimensions` says which length a row has. An HNSW index needs a fixed length:
-- electron/embed/vectors.ts creates one partial expression index per model and source on first use
-- of a model,
--   ((embedding::vector(N)) vector_cosine_ops) WHERE model = '…' AND source = '…' AND dimensions = N,
-- and searches with the same expression and predicate so the planner can use it.
CREATE TABLE embeddings (
  source       text NOT NULL CHECK (source IN ('message', 'memory', 'diary')),
  source_id    bigint NOT NULL,
  model        text NOT NULL,
  dimensions   integer NOT NULL CHECK (dimensions > 0),
  embedding    real[] NOT NULL CHECK (array_ndims(embedding) = 1 AND cardinality(embedding) = dimensions),
  -- md5 of the text that was embedded: a memory whose words changed since needs a new vector.
  content_hash text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, source_id, model)
);
-- Dropping an old model's vectors and counting a model's coverage, without walking the whole table.
CREATE INDEX embeddings_model_idx ON embeddings (model);

-- One row: the model recall and the queue use now, and how far its backfill has come (for the
-- status the app shows after a restart; the queue recomputes what is missing from the tables).
CREATE TABLE embedding_state (
  id               boolean PRIMARY KEY DEFAULT true CHECK (id),
  model            text,
  dimensions       integer,
  backfill_done    integer NOT NULL DEFAULT 0,
  backfill_total   integer NOT NULL DEFAULT 0,
  -- Set once every row had a vector of `model` (and the other models' vectors were dropped).
  complete_at      timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);
INSERT INTO embedding_state (id) VALUES (true);
