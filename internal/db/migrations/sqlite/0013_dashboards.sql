-- Each team's custom dashboards. A dashboard's document is the JSON of its body as sent (with the
-- server-assigned id); name and slug_name are copied out of it for the catalog list. access_policy
-- is NULL when the last create or replace gave none.
CREATE TABLE dashboards (
    team_id       INTEGER NOT NULL REFERENCES teams (id),
    id            TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    slug_name     TEXT,
    document      TEXT    NOT NULL,
    access_policy TEXT,
    is_locked     INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

-- The request ids of the team's dashboard deletes, so that repeating a delete with the same
-- request id answers as the first did. The delete writes its row in the transaction that removes
-- the dashboard; rows are kept for good.
CREATE TABLE dashboard_deletions (
    team_id      INTEGER NOT NULL REFERENCES teams (id),
    dashboard_id TEXT    NOT NULL,
    request_id   TEXT    NOT NULL,
    deleted_at   INTEGER NOT NULL,
    PRIMARY KEY (team_id, dashboard_id, request_id)
);

-- One row per team that has created a dashboard, counting its creates. A create upserts it before
-- counting the team's dashboards, so the row lock serialises one team's creates and the per-team
-- cap is exact under concurrency.
CREATE TABLE dashboard_creates (
    team_id INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    total   INTEGER NOT NULL
);
