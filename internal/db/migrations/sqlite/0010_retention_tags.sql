-- Each team's names for the platform's retention tags. The tags themselves (ids, order, which are
-- editable, default names) ship with the server (internal/retentions/rules.go), so every team,
-- including teams created later, has them; a row exists only once a team renamed a tag.
CREATE TABLE retention_tag_names (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);
