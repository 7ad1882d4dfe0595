-- E18 grouped by closedAt under a filter on one contextual label's values (or a search in them),
-- or under a search in the name, counts the distinct closedAt values of the matching incidents.
-- Per value (field 'label': a contextual label's key and value; field 'name': the incident's
-- name, key ''), n is the number of distinct closedAt values of the team's incidents that have it
-- and closed the number of those incidents that are closed (the open ones make one more group);
-- a time shared by incidents with different values of one label key, or different names, is
-- counted in each value's row, so such times are listed with each value that has them
-- (incident_value_closed_ties): the distinct times of a set of values are their rows' sum less,
-- per listed time, the listed values among them less one. Kept by every write that sets or
-- changes a closedAt, with incident_closed_times (labels and names never change).
CREATE TABLE incident_value_closed_times (
    team_id BIGINT NOT NULL REFERENCES teams (id),
    field   TEXT   NOT NULL,
    key     TEXT   NOT NULL,
    value   TEXT   NOT NULL,
    n       BIGINT NOT NULL,
    closed  BIGINT NOT NULL,
    PRIMARY KEY (team_id, field, key, value)
);
INSERT INTO incident_value_closed_times (team_id, field, key, value, n, closed)
SELECT team_id, 'label', key, value, COUNT(DISTINCT closed_at), COUNT(*)
FROM incident_labels WHERE closed_at IS NOT NULL
GROUP BY team_id, key, value
UNION ALL
SELECT team_id, 'name', '', name, COUNT(DISTINCT closed_at), COUNT(*)
FROM incidents WHERE closed_at IS NOT NULL
GROUP BY team_id, name;
CREATE TABLE incident_value_closed_ties (
    team_id   BIGINT NOT NULL REFERENCES teams (id),
    field     TEXT   NOT NULL,
    key       TEXT   NOT NULL,
    closed_at BIGINT NOT NULL,
    value     TEXT   NOT NULL,
    PRIMARY KEY (team_id, field, key, closed_at, value)
);
INSERT INTO incident_value_closed_ties (team_id, field, key, closed_at, value)
SELECT l.team_id, 'label', l.key, l.closed_at, l.value
FROM incident_labels l JOIN (SELECT team_id, key, closed_at FROM incident_labels WHERE closed_at IS NOT NULL
        GROUP BY team_id, key, closed_at HAVING COUNT(DISTINCT value) > 1) s
    ON s.team_id = l.team_id AND s.key = l.key AND s.closed_at = l.closed_at
GROUP BY l.team_id, l.key, l.closed_at, l.value
UNION ALL
SELECT i.team_id, 'name', '', i.closed_at, i.name
FROM incidents i JOIN (SELECT team_id, closed_at FROM incidents WHERE closed_at IS NOT NULL
        GROUP BY team_id, closed_at HAVING COUNT(DISTINCT name) > 1) s
    ON s.team_id = i.team_id AND s.closed_at = i.closed_at
GROUP BY i.team_id, i.closed_at, i.name;
