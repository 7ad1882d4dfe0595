-- Each team's deployments of catalog extensions: which revision (version) and which of its items,
-- for which applications and subsystems (item_ids, applications and subsystems are JSON arrays of
-- strings). One deployment per team and extension: the primary key makes a second deploy of the
-- same extension fail (the API answers 409), also when two race. The catalog itself is not in the
-- database; it is read from files at start.
CREATE TABLE extension_deployments (
    team_id      INTEGER NOT NULL REFERENCES teams (id),
    extension_id TEXT   NOT NULL,
    version      TEXT   NOT NULL,
    item_ids     TEXT   NOT NULL,
    applications TEXT   NOT NULL,
    subsystems   TEXT   NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (team_id, extension_id)
);
