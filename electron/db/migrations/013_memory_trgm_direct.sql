-- Kept as a step so a data folder that once applied it still opens. It first turned the trigram
-- index's pending list off (saves' look-alike probes read the whole list); measured on bench:recall
-- that cost a bulk load of 20k memories 2.8x the time and 5x the WAL (1.07 GB) for no save rate the
-- bench could see, so the index keeps PostgreSQL's default, as before.
ALTER INDEX memories_trgm_idx RESET (fastupdate);
