-- The look-alike probes of a save (electron/memory/probe.ts) ask for memories whose trigrams resemble
-- the save's among the active memories of its type and the expired ones — never the others. One
-- trigram index over every memory made each probe walk the postings of all of them: ~28 ms of a
-- save at 20k memories. One index per group the probes ask for (the active memories of each type,
-- and the expired ones) walks only the postings that can answer: ~10 ms, the same rows.
-- The group is an expression no other index holds, so the planner (without statistics in PGlite)
-- cannot prefer the status or the dedupe index and filter every row by similarity instead.
-- A memory type added later needs its index here too (without it the probe still answers, slowly).
-- Each index's pending list (GIN fast update) is kept to 128 kB: a probe reads its whole list, and
-- seven lists of PostgreSQL's default 4 MB grew the bench's folder by 26 MB and left a save 27 ms.
-- Measured on bench:recall at 20k memories: default lists 36 saves/s, 277 MB folder; fast update off
-- 59/s, 249 MB, bulk memory inserts 4.5× slower; 128 kB lists 68/s, 250 MB, bulk inserts as before.
CREATE FUNCTION memory_look_alike_group(status text, type text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE status WHEN 'active' THEN type WHEN 'expired' THEN '(expired)' END;

CREATE INDEX memories_look_alike_world_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'world';
CREATE INDEX memories_look_alike_experience_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'experience';
CREATE INDEX memories_look_alike_opinion_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'opinion';
CREATE INDEX memories_look_alike_observation_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'observation';
CREATE INDEX memories_look_alike_preference_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'preference';
CREATE INDEX memories_look_alike_procedural_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = 'procedural';
CREATE INDEX memories_look_alike_expired_idx ON memories USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 128) WHERE memory_look_alike_group(status, type) = '(expired)';

-- Nothing else reads the trigram index over every memory.
DROP INDEX memories_trgm_idx;
