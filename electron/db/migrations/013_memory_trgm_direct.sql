-- Saving a memory probes the trigram index for look-alikes (electron/memory/probe.ts). A GIN index
-- with fastupdate keeps new entries in a pending list that every search reads from end to end, and
-- nothing here vacuums it (PGlite has no autovacuum): at 20k memories the list held ~380 pages and
-- doubled the probe's time. Writes to memories are rare next to reads, so entries go straight into
-- the index, and what is pending now is moved there once.
ALTER INDEX memories_trgm_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('memories_trgm_idx'::regclass);
