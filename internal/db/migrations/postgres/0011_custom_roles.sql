-- Each team's custom roles. The system roles they derive from ship with the server
-- (internal/roles/rules.go). permissions is a JSON array of permission names. Role ids are numbered
-- per team by custom_role_ids, whose row the creating transaction updates (and so locks) before it
-- inserts; names are unique per team by the index, which is what turns a concurrent duplicate into
-- a conflict on both engines.
CREATE TABLE custom_roles (
    team_id        BIGINT NOT NULL REFERENCES teams (id),
    id             BIGINT NOT NULL,
    name           TEXT   NOT NULL,
    description    TEXT   NOT NULL,
    parent_role_id BIGINT NOT NULL,
    permissions    TEXT   NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE UNIQUE INDEX custom_roles_by_name ON custom_roles (team_id, name);

CREATE TABLE custom_role_ids (
    team_id BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    last_id BIGINT NOT NULL
);
