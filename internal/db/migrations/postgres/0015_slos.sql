-- Each team's service level objectives. document is the JSON of the SLO as answered; revision and
-- the times are copied out of it so that lists can be ordered and replaces counted in SQL.
CREATE TABLE slos (
    team_id    BIGINT  NOT NULL REFERENCES teams (id),
    id         TEXT    NOT NULL,
    revision   BIGINT  NOT NULL,
    document   TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX slos_by_created ON slos (team_id, created_at, id);
