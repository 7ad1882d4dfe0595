-- E18 grouped by closedAt under a filter on one contextual label's values (or a search in them)
-- counts the distinct closedAt values of the incidents that carry a matching value. Per label
-- key and value, n is the number of distinct closedAt values of the team's incidents that carry
-- it and closed the number of those incidents that are closed (the open ones make one more
-- group); a time shared by incidents with different values of one key is counted in each value's
-- row, so such times are listed with each value that has them (incident_label_closed_ties): the
-- distinct times of a set of values are their rows' sum less, per listed time, the listed values
-- among them less one. Kept by every write that sets or changes a closedAt, with
-- incident_closed_times (contextual labels never change).
CREATE TABLE incident_label_closed_times (
    team_id INTEGER NOT NULL REFERENCES teams (id),
    key     TEXT    NOT NULL,
    value   TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    closed  INTEGER NOT NULL,
    PRIMARY KEY (team_id, key, value)
);
INSERT INTO incident_label_closed_times (team_id, key, value, n, closed)
SELECT team_id, key, value, COUNT(DISTINCT closed_at), COUNT(*)
FROM incident_labels WHERE closed_at IS NOT NULL
GROUP BY team_id, key, value;
CREATE TABLE incident_label_closed_ties (
    team_id   INTEGER NOT NULL REFERENCES teams (id),
    key       TEXT    NOT NULL,
    closed_at INTEGER NOT NULL,
    value     TEXT    NOT NULL,
    PRIMARY KEY (team_id, key, closed_at, value)
);
INSERT INTO incident_label_closed_ties (team_id, key, closed_at, value)
SELECT l.team_id, l.key, l.closed_at, l.value
FROM incident_labels l JOIN (SELECT team_id, key, closed_at FROM incident_labels WHERE closed_at IS NOT NULL
        GROUP BY team_id, key, closed_at HAVING COUNT(DISTINCT value) > 1) s
    ON s.team_id = l.team_id AND s.key = l.key AND s.closed_at = l.closed_at
GROUP BY l.team_id, l.key, l.closed_at, l.value;
