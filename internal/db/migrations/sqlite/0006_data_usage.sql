-- Hourly usage records the operator imports per team. One row per (team, hour, measurement kind,
-- label set); labels_key is the label set in a canonical form (sorted by key, JSON), so a second
-- import of the same record replaces the first. hour is the start of the hour in Unix
-- microseconds; quota_micros is the quota units times 1000000.
CREATE TABLE usage_records (
    team_id      INTEGER NOT NULL REFERENCES teams (id),
    hour         INTEGER NOT NULL,
    kind         TEXT    NOT NULL,
    labels_key   TEXT    NOT NULL,
    unit         TEXT    NOT NULL,
    value        INTEGER NOT NULL,
    quota_micros INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (team_id, hour, kind, labels_key)
);
