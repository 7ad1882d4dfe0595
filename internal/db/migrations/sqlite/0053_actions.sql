-- Each team's actions (issue 35): URL templates a user runs from a log or a span. The document is
-- the action as the get answers it; the columns beside it are what queries filter and order by.
-- is_private splits the two display orders (shared, private); position is the place in its order.
CREATE TABLE actions (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    is_private INTEGER NOT NULL,
    position   INTEGER NOT NULL,
    created_by TEXT    NOT NULL,
    document   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX actions_by_order ON actions (team_id, is_private, position, created_at, id);
