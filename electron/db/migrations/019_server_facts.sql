-- Ollama's own API as a connection kind, and what each connection's server says about its model:
-- the context window it really gives (Ollama /api/show, llama.cpp /props, LM Studio's listing, vLLM
-- /v1/models), Ollama's capabilities and the model's family, and when it was asked. Anima budgets the
-- smaller of the server's window and context_tokens (the person's setting). NULL: not asked, or not said.
ALTER TABLE providers DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers ADD CONSTRAINT providers_kind_check CHECK (kind IN ('openai-compatible', 'anthropic', 'local', 'ollama'));

ALTER TABLE providers ADD COLUMN server_software text;
ALTER TABLE providers ADD COLUMN server_context_tokens integer CHECK (server_context_tokens > 0);
ALTER TABLE providers ADD COLUMN capabilities jsonb;
ALTER TABLE providers ADD COLUMN model_family text;
ALTER TABLE providers ADD COLUMN server_checked_at timestamptz;
