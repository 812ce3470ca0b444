-- The edges among a set of entities (what the Graph view draws between the nodes it shows) in one
-- index scan: both ends are matched against the same list, and the planner walks only the pairs
-- that exist instead of every edge a hub has.
CREATE INDEX entity_edges_pair_idx ON entity_edges (source_id, target_id);
