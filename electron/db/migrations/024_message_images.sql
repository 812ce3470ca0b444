-- Images a person attached to a message: a short list of references ({id, type, bytes, width, height})
-- to files in <dataDir>/attachments/, never the bytes themselves. NULL: none.
ALTER TABLE messages ADD COLUMN images jsonb;
