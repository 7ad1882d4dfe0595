-- Teams, API keys and recording-rule sets. Timestamps are Unix microseconds (UTC); JSON
-- documents are text, beside the columns that queries filter on.
CREATE TABLE teams (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id            TEXT    PRIMARY KEY,
    team_id       INTEGER NOT NULL REFERENCES teams (id),
    name          TEXT    NOT NULL,
    value_hash    TEXT    NOT NULL UNIQUE,
    hashed        INTEGER NOT NULL,
    active        INTEGER NOT NULL,
    owner         TEXT    NOT NULL,
    permissions   TEXT    NOT NULL,
    presets       TEXT    NOT NULL,
    access_policy TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX api_keys_by_team ON api_keys (team_id, created_at);

CREATE TABLE recording_rule_sets (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    document   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);
CREATE INDEX recording_rule_sets_by_time ON recording_rule_sets (team_id, created_at);
