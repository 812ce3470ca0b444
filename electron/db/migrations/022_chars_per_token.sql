-- The token estimate, calibrated per connection: characters per token (CJK aside) as the server's own
-- counts (prompt_tokens / input tokens reported back) say, a moving average kept within 1.5–4.
-- NULL: not measured yet (the default rule, four characters a token). Reset when the connection
-- points at another server or model.
ALTER TABLE providers ADD COLUMN chars_per_token real;
