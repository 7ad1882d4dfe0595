-- API keys come in two kinds: 'api' keys call the management API, 'send-data' keys (created with the
-- SendData preset) authenticate only ingestion. activated_at is when the key was created or last
-- switched from inactive to active; existing keys count from their creation.
ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'api';
ALTER TABLE api_keys ADD COLUMN activated_at BIGINT NOT NULL DEFAULT 0;
UPDATE api_keys SET activated_at = created_at;
CREATE INDEX api_keys_by_kind ON api_keys (team_id, kind, created_at);
