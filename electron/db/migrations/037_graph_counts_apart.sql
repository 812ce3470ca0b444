-- Mention recording at 100k entities (docs/recall-tuning.md, "Size and speed at scale").
--
-- Every recording adds to the mention counts of the entities a text names. mention_count was a column
-- of entities_top_idx (the Graph view's most mentioned entities), so every count update was a new row
-- version in every index of entities — both trigram GINs included, one entry per trigram of the name:
-- 1.9 ms of CPU for three entities' counts at 89,379 entities, 1.0 ms once no index of entities holds
-- the count and the update can stay on its page (HOT). The ordering moves to a table of its own,
-- entity_counts, that the triggers below keep equal to the active entities' counts (two small btrees
-- to write instead of every index of entities); entities.mention_count stays what every read reads.
CREATE TABLE entity_counts (
  entity_id     bigint PRIMARY KEY REFERENCES entities (id) ON DELETE CASCADE,
  mention_count integer NOT NULL
);
CREATE INDEX entity_counts_top_idx ON entity_counts (mention_count DESC, entity_id);
INSERT INTO entity_counts (entity_id, mention_count) SELECT id, mention_count FROM entities WHERE status = 'active';

-- Once per statement, over the rows it wrote: an import of 20,000 entities is one insert here.
CREATE FUNCTION entity_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO entity_counts (entity_id, mention_count) SELECT id, mention_count FROM entity_counts_added WHERE status = 'active';
  RETURN NULL;
END $$;
CREATE TRIGGER entity_counts_on_insert AFTER INSERT ON entities REFERENCING NEW TABLE AS entity_counts_added
  FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_after_insert();

-- Rows whose count or status changed: an active one holds its count here, any other none.
CREATE FUNCTION entity_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM entity_counts c USING entity_counts_new n, entity_counts_old o
   WHERE c.entity_id = n.id AND o.id = n.id AND n.status <> 'active' AND o.status = 'active';
  INSERT INTO entity_counts (entity_id, mention_count)
  SELECT n.id, n.mention_count FROM entity_counts_new n JOIN entity_counts_old o ON o.id = n.id
   WHERE n.status = 'active' AND (o.status <> 'active' OR o.mention_count <> n.mention_count)
  ON CONFLICT (entity_id) DO UPDATE SET mention_count = EXCLUDED.mention_count;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_counts_on_update AFTER UPDATE ON entities REFERENCING OLD TABLE AS entity_counts_old NEW TABLE AS entity_counts_new
  FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_after_update();

DROP INDEX entities_top_idx;
-- Room on each page for a row's next version, so that a count update stays on its page.
ALTER TABLE entities SET (fillfactor = 80);
