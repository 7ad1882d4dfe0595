-- Data-plan policies and each team's default policy priorities. A policy's place among the
-- team's policies of its data type is the position column (1, 2, …); the rest of the policy is the
-- JSON document. Writers of one team and data type are serialised (see internal/policies/store.go),
-- so the count checked against the policy limit cannot change before the insert commits.
CREATE TABLE policies (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL,
    source_type TEXT    NOT NULL,
    position    INTEGER NOT NULL,
    enabled     INTEGER NOT NULL,
    document    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX policies_by_type ON policies (team_id, source_type, position);

CREATE TABLE policy_settings (
    team_id    INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    document   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
