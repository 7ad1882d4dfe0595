-- Each team's dashboard folders. Ids are UUIDs written in lowercase; parent_id names the folder
-- this one is in (NULL: the top level). Writers keep the tree whole: a parent exists in the team,
-- no folder is its own ancestor, and a folder that holds dashboards or folders is not deleted
-- (the API answers 409). The folder of a dashboard is dashboards.folder_id, as the dashboard's
-- writer sent it; it is matched to this table in lowercase.
CREATE TABLE dashboard_folders (
    team_id    BIGINT NOT NULL REFERENCES teams (id),
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    parent_id  TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);
CREATE INDEX dashboard_folders_by_parent ON dashboard_folders (team_id, parent_id);
CREATE INDEX dashboards_by_folder ON dashboards (team_id, lower(folder_id));

-- One row per team that has written a dashboard folder, counting its writes. Every folder create,
-- replace and delete upserts it first, so the row lock serialises one team's folder writes: the
-- per-team cap is exact and two concurrent moves cannot together make a cycle.
CREATE TABLE dashboard_folder_writes (
    team_id BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    total   BIGINT NOT NULL
);

-- The request ids of the team's folder deletes, so that repeating a delete with the same request
-- id answers as the first did; written in the deleting transaction, kept for good.
CREATE TABLE dashboard_folder_deletions (
    team_id    BIGINT NOT NULL REFERENCES teams (id),
    folder_id  TEXT    NOT NULL,
    request_id TEXT    NOT NULL,
    deleted_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, folder_id, request_id)
);

-- Before this migration any UUID was accepted as a dashboard's folder. Each folder that stored
-- dashboards name becomes a top-level folder whose name is its id, so those dashboards keep a
-- folder that exists and can be renamed, moved or emptied.
INSERT INTO dashboard_folders (team_id, id, name, parent_id, created_at, updated_at)
SELECT DISTINCT team_id, lower(folder_id), lower(folder_id), NULL, CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT), CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT)
FROM dashboards WHERE folder_id IS NOT NULL;
