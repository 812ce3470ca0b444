-- Structured background answers. A connection whose server refused a JSON Schema for an answer (a 400
-- naming response_format, format or tool_choice) is remembered here, with the address and model it was
-- refused at and the server's words: later background calls on it are asked by prompt alone, until it
-- points at another server or model. NULL: not refused (or never asked).
ALTER TABLE providers ADD COLUMN schema_refused jsonb;

-- Which way each background call was asked: 'schema' (the server was given the answer's JSON Schema)
-- or 'prompt' (the prompt alone). NULL on rows from before this migration, all asked by prompt.
ALTER TABLE auto_llm_runs ADD COLUMN asked text CHECK (asked IN ('schema', 'prompt'));
