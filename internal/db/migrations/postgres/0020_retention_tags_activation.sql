-- Whether a team has activated retention tags (the activate operation turns it on; there is no
-- operation that turns it off). A team without a row has not. activated_at is in Unix
-- microseconds.
CREATE TABLE retention_tags_activation (
    team_id      BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    activated_at BIGINT NOT NULL
);
