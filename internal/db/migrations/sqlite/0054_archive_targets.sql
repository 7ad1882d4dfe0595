-- Each team's archive storage (issue 35): the logs archive target and the metrics archive, one of
-- each per team at most. kind is 'logs' or 'metrics'; the document is the setting as the get
-- answers it (bucket, region, retention…; no secret is stored), active says whether archiving to
-- it is on.
CREATE TABLE archive_targets (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    kind       TEXT    NOT NULL,
    active     INTEGER NOT NULL,
    document   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, kind)
);
