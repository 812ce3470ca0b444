-- Mention recording at 100k entities (docs/recall-tuning.md, "Size and speed at scale").
--
-- The trigram probe of a short name. The index answers `name_key % q` by counting, for each name,
-- how many of q's trigrams it holds — it cannot know the name's own trigram count, so a name counts as
-- a candidate once it holds 45% of q's trigrams, and each candidate is then fetched and compared in
-- full. For a three-letter name that is two trigrams ("  j", " jo" for "jon"): every name with a word
-- starting "Jo" — 1,423 candidates of 89,379 names, none similar enough, 5–9 ms a probe where the
-- same probe on 1,000 names takes 0.5 ms. Similarity is common / (n_q + n_name − common), at most
-- n_q / n_name, so a name with more than n_q / threshold trigrams can never reach the threshold:
-- for a query of at most 9 × threshold trigrams (4 at 0.45: three-letter names, three-character Han
-- names) every possible match has at most 9 trigrams, and those names have an index of their own.
-- (A band of longer names, 10–14, was measured too: it pays for itself only in candidates the
-- 45%-of-the-query rule still lets through — "maria lee" for "marta" — and adds a probe.)
CREATE INDEX entities_short_key_trgm_idx ON entities USING gin (name_key gin_trgm_ops) WITH (fastupdate = off)
  WHERE status <> 'merged' AND cardinality(show_trgm(name_key)) <= 9;

-- As migration 032's, with the short names' index for short queries (the bound above, in
-- q.trigrams <= 9 * p_threshold; the planner evaluates it once per key and skips the branch not taken).
CREATE OR REPLACE FUNCTION graph_names_similar(p_keys text[], p_threshold real)
RETURNS TABLE (key text, id bigint, kind text, name text, mention_count integer, sim real) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM set_config('pg_trgm.similarity_threshold', p_threshold::text, true), set_config('enable_seqscan', 'off', true);
  RETURN QUERY
    SELECT q.key, c.id, c.kind, c.name, c.mention_count, c.sim FROM (SELECT k AS key, cardinality(show_trgm(k)) AS trigrams FROM unnest(p_keys) AS k) q
    CROSS JOIN LATERAL (
      SELECT id, kind, name, mention_count, max(sim) AS sim FROM (
        SELECT e.id, e.kind, e.name, e.mention_count, similarity(e.name_key, q.key) AS sim FROM entities e
         WHERE q.trigrams <= 9 * p_threshold AND e.name_key % q.key AND e.status <> 'merged' AND cardinality(show_trgm(e.name_key)) <= 9
           AND e.kind NOT IN ('self', 'user')
        UNION ALL
        SELECT e.id, e.kind, e.name, e.mention_count, similarity(e.name_key, q.key) AS sim FROM entities e
         WHERE q.trigrams > 9 * p_threshold AND e.name_key % q.key AND e.status <> 'merged' AND e.kind NOT IN ('self', 'user')
        UNION ALL
        SELECT e.id, e.kind, e.name, e.mention_count, similarity(a.alias_key, q.key) FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
         WHERE a.alias_key % q.key AND e.status <> 'merged' AND e.kind NOT IN ('self', 'user')
      ) c GROUP BY id, kind, name, mention_count ORDER BY max(sim) DESC, id LIMIT 10
    ) c;
END $$;

-- Texts read for mentions, in one place: both the read (texts that name nothing) and the write
-- marked them with the same two upserts.
CREATE FUNCTION graph_mark_scanned(p_message_ids text[], p_memory_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(p_message_ids) > 0 THEN
    INSERT INTO entity_scans (message_id, scanned_at) SELECT u.id, now() FROM unnest(p_message_ids) AS u(id)
    ON CONFLICT (message_id) DO UPDATE SET scanned_at = now();
  END IF;
  IF cardinality(p_memory_ids) > 0 THEN
    INSERT INTO entity_scans (memory_id, scanned_at) SELECT u.id, now() FROM unnest(p_memory_ids) AS u(id)
    ON CONFLICT (memory_id) DO UPDATE SET scanned_at = now();
  END IF;
END $$;

-- Migration 032's read and write, marking the texts read through graph_mark_scanned.
CREATE OR REPLACE FUNCTION graph_mentions_read(p_message_ids text[], p_memory_ids bigint[], p_keys text[], p_probe text[], p_threshold real)
RETURNS json LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_existing json;
  v_exact json := '[]';
  v_similar json := '[]';
  v_unmatched text[];
BEGIN
  SELECT coalesce(json_agg(x), '[]'::json) INTO v_existing FROM (
    SELECT id, entity_id, surface_key, message_id AS src FROM entity_mentions WHERE message_id = ANY(p_message_ids)
    UNION ALL
    SELECT id, entity_id, surface_key, 'memory:' || memory_id FROM entity_mentions WHERE memory_id = ANY(p_memory_ids)
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

CREATE OR REPLACE FUNCTION graph_mentions_write(
  c_kind text[], c_name text[], c_key text[], c_n integer[], c_first timestamptz[], c_last timestamptz[], c_ambiguities jsonb,
  m_entity bigint[], m_message text[], m_memory bigint[], m_surface text[], m_key text[], m_start integer[], m_end integer[], m_origin text[], m_at timestamptz[],
  u_id bigint[], u_n integer[], u_first timestamptz[], u_last timestamptz[],
  w_source bigint[], w_target bigint[], w_weight real[],
  p_message_ids text[], p_memory_ids bigint[]
) RETURNS bigint[] LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_made bigint[] := '{}';
BEGIN
  IF cardinality(c_key) > 0 THEN
    WITH fresh AS (
      INSERT INTO entities (kind, name, name_key, mention_count, first_seen, last_seen)
      SELECT * FROM unnest(c_kind, c_name, c_key, c_n, c_first, c_last)
      RETURNING id, name_key
    )
    SELECT array_agg(f.id ORDER BY u.n) INTO v_made FROM unnest(c_key) WITH ORDINALITY AS u(key, n) JOIN fresh f ON f.name_key = u.key;
    IF jsonb_array_length(c_ambiguities) > 0 THEN
      INSERT INTO entity_ambiguities (entity_id, surface, candidate_ids, similarities)
      SELECT v_made[-(a->>'stand_in')::int], a->>'surface',
             ARRAY(SELECT jsonb_array_elements_text(a->'candidate_ids')::bigint), ARRAY(SELECT jsonb_array_elements_text(a->'similarities')::real)
      FROM jsonb_array_elements(c_ambiguities) AS a;
    END IF;
  END IF;
  IF cardinality(m_entity) > 0 THEN
    INSERT INTO entity_mentions (entity_id, message_id, memory_id, surface, surface_key, span_start, span_end, origin, seen_at)
    SELECT CASE WHEN m.e < 0 THEN v_made[-m.e] ELSE m.e END, m.msg, m.mem, m.surface, m.key, m.s, m.t, m.origin, m.at
    FROM unnest(m_entity, m_message, m_memory, m_surface, m_key, m_start, m_end, m_origin, m_at) AS m(e, msg, mem, surface, key, s, t, origin, at);
  END IF;
  IF cardinality(u_id) > 0 THEN
    UPDATE entities e SET mention_count = e.mention_count + u.n, first_seen = least(e.first_seen, u.first), last_seen = greatest(e.last_seen, u.last), updated_at = now()
    FROM unnest(u_id, u_n, u_first, u_last) AS u(id, n, first, last) WHERE e.id = u.id;
  END IF;
  IF cardinality(w_source) > 0 THEN
    INSERT INTO entity_edges (source_id, target_id, relation, weight)
    SELECT least(p.s, p.t), greatest(p.s, p.t), 'co_mention', p.w FROM (
      SELECT CASE WHEN x.s < 0 THEN v_made[-x.s] ELSE x.s END AS s, CASE WHEN x.t < 0 THEN v_made[-x.t] ELSE x.t END AS t, x.w
      FROM unnest(w_source, w_target, w_weight) AS x(s, t, w)
    ) p
    ON CONFLICT (source_id, target_id) WHERE relation = 'co_mention'
    DO UPDATE SET weight = entity_edges.weight + EXCLUDED.weight, updated_at = now();
  END IF;
  PERFORM graph_mark_scanned(p_message_ids, p_memory_ids);
  RETURN v_made;
END $$;
