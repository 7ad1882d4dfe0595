-- Each team's view folders and saved views. A view's document is the JSON of its request body
-- (without folderId, which is the folder_id column so that the foreign key keeps a view from
-- pointing at a missing folder). View ids are numbered per team by view_ids, whose row the creating
-- transaction updates (and so locks) before it inserts. A folder that holds views is not deleted
-- (the API answers 409): the delete first touches (and so locks) the folder row, as a view create
-- into it does, then counts the folder's views and deletes only when there are none.
CREATE TABLE view_folders (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE TABLE views (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         INTEGER NOT NULL,
    folder_id  TEXT,
    document   TEXT   NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, folder_id) REFERENCES view_folders (team_id, id)
);

CREATE INDEX views_by_folder ON views (team_id, folder_id);

CREATE TABLE view_ids (
    team_id INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    last_id INTEGER NOT NULL
);
