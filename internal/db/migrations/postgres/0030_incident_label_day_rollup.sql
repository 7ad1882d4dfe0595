-- E18 grouped by (or filtered on) one contextual label under a createdAt or duration range:
-- incident_label_rollup's counts and times per UTC day of creation and of closing (-1 while open),
-- as incident_day_rollup keeps incident_rollup's, kept by the same writes. The incidents of a
-- range's whole days are these rows; only the incidents of its partial days are read.
CREATE TABLE incident_label_day_rollup (
    team_id          BIGINT NOT NULL REFERENCES teams (id),
    key              TEXT    NOT NULL,
    value            TEXT    NOT NULL,
    created_day      BIGINT NOT NULL,
    closed_day       BIGINT NOT NULL,
    name             TEXT    NOT NULL,
    application_name TEXT    NOT NULL,
    subsystem_name   TEXT    NOT NULL,
    severity         TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    assigned_to      TEXT    NOT NULL,
    meta_labels      TEXT    NOT NULL,
    is_muted         BOOLEAN NOT NULL,
    n                BIGINT NOT NULL,
    first_created    BIGINT NOT NULL,
    last_closed      BIGINT,
    last_update      BIGINT NOT NULL,
    PRIMARY KEY (team_id, key, created_day, closed_day, value, name, application_name, subsystem_name, severity, state,
        status, assigned_to, meta_labels, is_muted)
);
INSERT INTO incident_label_day_rollup (team_id, key, value, created_day, closed_day, name, application_name, subsystem_name,
    severity, state, status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update)
SELECT team_id, key, value, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
    application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
    COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time)
FROM incident_labels
GROUP BY team_id, key, value, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
    application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted;

-- A label group's ids under a range are seeks of its label rows by their whole rollup key and a
-- range of createdAt: the index gains createdAt before closedAt.
DROP INDEX incident_labels_by_rollup;
CREATE INDEX incident_labels_by_rollup ON incident_labels (team_id, key, value, name, application_name, subsystem_name,
    severity, state, status, assigned_to, meta_labels, is_muted, created_at, closed_at, incident_id);

-- E18 grouped by closedAt under a createdAt or duration range counts the distinct closedAt values
-- of the range's incidents. Per UTC day of creation and day of close, n is the number of distinct
-- closedAt values of the team's incidents created and closed on those days; a time shared by
-- incidents created on different days is counted in each day's row, so such times are listed with
-- each day that has them (incident_closed_day_ties): the distinct times of a set of whole days are
-- their rows' sum less, per listed time, the listed days among them less one. Kept by every write
-- that sets or changes a closedAt, with incident_closed_times.
CREATE TABLE incident_closed_day_times (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    created_day BIGINT NOT NULL,
    closed_day  BIGINT NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (team_id, created_day, closed_day)
);
INSERT INTO incident_closed_day_times (team_id, created_day, closed_day, n)
SELECT team_id, created_at - created_at % 86400000000, closed_at - closed_at % 86400000000, COUNT(DISTINCT closed_at)
FROM incidents WHERE closed_at IS NOT NULL
GROUP BY team_id, created_at - created_at % 86400000000, closed_at - closed_at % 86400000000;
CREATE TABLE incident_closed_day_ties (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    closed_at   BIGINT NOT NULL,
    created_day BIGINT NOT NULL,
    closed_day  BIGINT NOT NULL,
    PRIMARY KEY (team_id, closed_at, created_day)
);
INSERT INTO incident_closed_day_ties (team_id, closed_at, created_day, closed_day)
SELECT DISTINCT i.team_id, i.closed_at, i.created_at - i.created_at % 86400000000, i.closed_at - i.closed_at % 86400000000
FROM incidents i WHERE i.closed_at IS NOT NULL AND EXISTS (SELECT 1 FROM incidents j
    WHERE j.team_id = i.team_id AND j.closed_at = i.closed_at
    AND j.created_at - j.created_at % 86400000000 <> i.created_at - i.created_at % 86400000000);

-- E18 grouped by the last state update under a createdAt or duration range pages the update times
-- from their index: the least last update of each day row's incidents (first_update; as
-- last_update is the greatest) bounds where the walk starts. Kept with the row.
ALTER TABLE incident_day_rollup ADD COLUMN first_update BIGINT;
UPDATE incident_day_rollup d SET first_update = s.u FROM (SELECT team_id, created_at - created_at % 86400000000 AS created_day,
        COALESCE(closed_at - closed_at % 86400000000, -1) AS closed_day, name, application_name, subsystem_name, severity, state,
        status, assigned_to, meta_labels, is_muted, MIN(last_state_update_time) AS u
    FROM incidents GROUP BY team_id, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1),
        name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted) s
WHERE d.team_id = s.team_id AND d.created_day = s.created_day AND d.closed_day = s.closed_day AND d.name = s.name
    AND d.application_name = s.application_name AND d.subsystem_name = s.subsystem_name AND d.severity = s.severity
    AND d.state = s.state AND d.status = s.status AND d.assigned_to = s.assigned_to AND d.meta_labels = s.meta_labels
    AND d.is_muted = s.is_muted;
