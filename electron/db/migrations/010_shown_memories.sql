-- The memories a reply's requests showed the model (resident block, passive recall, tool results),
-- so a citation is credited only for a memory the model was actually shown — live and when the
-- nightly recount reads the messages again. NULL on rows from before: their citations count as before.
ALTER TABLE messages ADD COLUMN shown_memory_ids bigint[];
