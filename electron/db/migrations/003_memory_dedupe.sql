-- Saving a memory that is already there — the same words up to case, spaces and punctuation — updates
-- it instead of adding a copy (electron/memory/store.ts). The key makes that check one index probe;
-- computed row by row it cost ~0.1 s per save at 10k memories on a two-core machine.
-- CJK punctuation is listed as well, so the key does not depend on the locale's idea of [[:punct:]].
CREATE FUNCTION memory_dedupe_key(content text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN lower(regexp_replace(content, '[[:space:][:punct:]，。！？、；：“”‘’（）《》【】…·「」『』～]+', '', 'g'));

CREATE INDEX memories_dedupe_idx ON memories (type, memory_dedupe_key(content)) WHERE status = 'active';
