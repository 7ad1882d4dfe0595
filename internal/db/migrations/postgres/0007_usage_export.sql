-- The team's data usage metrics export setting (the deprecated v2 export-status operations).
-- A team without a row has export disabled. updated_at is in Unix microseconds.
CREATE TABLE usage_export (
    team_id    BIGINT  NOT NULL PRIMARY KEY REFERENCES teams (id),
    enabled    BOOLEAN NOT NULL,
    updated_at BIGINT  NOT NULL
);
