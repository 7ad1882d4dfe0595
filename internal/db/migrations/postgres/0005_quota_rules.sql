-- Each team's one quota allocation rule set: its id and its rules as a JSON document (the
-- version 5 shape). The primary key on team_id is what makes a second create a conflict.
CREATE TABLE quota_rule_sets (
    team_id    BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    id         TEXT    NOT NULL,
    document   TEXT    NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
