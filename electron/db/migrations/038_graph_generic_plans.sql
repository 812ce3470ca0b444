-- Mention recording at 100k entities (docs/recall-tuning.md, "Size and speed at scale").
--
-- The recording's functions keep one plan per statement. Left to choose, PostgreSQL planned their
-- statements afresh at every call (a custom plan for each set of arrays; the trigram probe's four
-- branches alone took ~1 ms to plan, against 0.35 ms for the whole probe of a name nothing resembles
-- on the kept plan). Their plans do not depend on the arrays' contents — index lookups by key and
-- id, each branch of the probe chosen at run time by its one-time test. Set on the functions, not the
-- connection: the rest of the app keeps the default; nested calls run under their caller's setting.
--
-- A kept plan is made without the arrays: it cannot tell that `message_id = ANY(…)` leaves out the
-- rows without a message (the read now says so, for the partial indexes of entity_mentions), nor how
-- few ids come, and on a small table it chose to read every row. The read, like the probe, asks for
-- index lookups only (store-batch.test.ts counts the sequential scans).
CREATE OR REPLACE FUNCTION graph_mentions_read(p_message_ids text[], p_memory_ids bigint[], p_keys text[], p_probe text[], p_threshold real)
RETURNS json LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  v_existing json;
  v_exact json := '[]';
  v_similar json := '[]';
  v_unmatched text[];
BEGIN
  SELECT coalesce(json_agg(x), '[]'::json) INTO v_existing FROM (
    SELECT id, entity_id, surface_key, message_id AS src FROM entity_mentions WHERE message_id IS NOT NULL AND message_id = ANY(p_message_ids)
    UNION ALL
    SELECT id, entity_id, surface_key, 'memory:' || memory_id FROM entity_mentions WHERE memory_id IS NOT NULL AND memory_id = ANY(p_memory_ids)
  ) x;
  IF cardinality(p_keys) = 0 THEN
    IF json_array_length(v_existing) = 0 THEN
      PERFORM graph_mark_scanned(p_message_ids, p_memory_ids);
    END IF;
    RETURN json_build_object('existing', v_existing, 'exact', v_exact, 'similar', v_similar);
  END IF;
  SELECT coalesce(json_agg(y), '[]'::json) INTO v_exact FROM graph_names_exact(p_keys) y;
  IF cardinality(p_probe) > 0 THEN
    v_unmatched := ARRAY(SELECT k FROM unnest(p_probe) AS k WHERE NOT EXISTS (SELECT 1 FROM json_array_elements(v_exact) AS e WHERE e->>'key' = k));
    IF cardinality(v_unmatched) > 0 THEN
      SELECT coalesce(json_agg(z), '[]'::json) INTO v_similar FROM graph_names_similar(v_unmatched, p_threshold) z;
    END IF;
  END IF;
  RETURN json_build_object('existing', v_existing, 'exact', v_exact, 'similar', v_similar);
END $$;

ALTER FUNCTION graph_mentions_write(text[], text[], text[], integer[], timestamptz[], timestamptz[], jsonb, bigint[], text[], bigint[], text[],
  text[], integer[], integer[], text[], timestamptz[], bigint[], integer[], timestamptz[], timestamptz[], bigint[], bigint[], real[], text[], bigint[])
  SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION graph_names_similar(text[], real) SET plan_cache_mode = force_generic_plan;
