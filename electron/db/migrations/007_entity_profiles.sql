-- The entity graph, second part: typed relations from the sleep cycle and observation profiles.
--   - Light sleep adds typed relations ('lives_in', 'sister_of', …) with the memory they come from;
--     saying the same open relation again strengthens it ('strengthen': weight + 1, one more
--     evidence memory) instead of adding a copy.
--   - Deep sleep closes a relation's valid time ('close') when the memories it rested on were
--     superseded or expired, or when a newer relation of a single-valued kind replaced it. Nothing
--     is deleted: a closed relation is history, seen on the time slider, and undo reopens it.
--   - Deep sleep keeps one 'observation' memory per entity, "who or what this is" in the companion's
--     words: entities.profile_memory_id points at it (a newer profile supersedes the older one).

ALTER TABLE entity_changes DROP CONSTRAINT entity_changes_action_check;
ALTER TABLE entity_changes ADD CONSTRAINT entity_changes_action_check
  CHECK (action IN ('rename', 'alias', 'merge', 'hide', 'unhide', 'relate', 'strengthen', 'close', 'undo'));

ALTER TABLE entities ADD COLUMN profile_memory_id bigint REFERENCES memories (id);

-- Open typed relations by kind and source: deep sleep looks for a source with two open edges of a
-- single-valued relation (two places someone lives in), and light sleep for the open edge it strengthens.
CREATE INDEX entity_edges_open_idx ON entity_edges (relation, source_id, target_id) WHERE valid_to IS NULL AND relation <> 'co_mention';
