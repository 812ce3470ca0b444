-- Devices paired over the local network (electron/devices/, `anima serve --listen`): each has its own
-- token, kept only as its SHA-256 digest (hex), so a copy of the database gives no one a way in.
-- Revoked devices stay listed (revoked_at) and are refused; last_used_at moves at most once a minute.
CREATE TABLE devices (
  id           text PRIMARY KEY,
  name         text NOT NULL,
  token_digest text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
