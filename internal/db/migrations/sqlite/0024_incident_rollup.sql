-- E18 over many incidents: the number of the team's incidents and their first creation, last close
-- and last state update per combination of the fields E18 groups by or filters on that every
-- incident has one value of (incident_rollup), kept by every write of internal/incidents in the
-- same transaction. Groupings by severity, name, state, status, application and subsystem under
-- filters on those fields, the assignee, the meta labels and isMuted read these rows (thousands)
-- instead of the incidents (a million). A row is deleted when n reaches 0; a row's times are
-- exact: an incident that leaves a row holding one of its extremes makes the row find that
-- extreme again among its own incidents.
CREATE TABLE incident_rollup (
    team_id          INTEGER NOT NULL REFERENCES teams (id),
    name             TEXT    NOT NULL,
    application_name TEXT    NOT NULL,
    subsystem_name   TEXT    NOT NULL,
    severity         TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    assigned_to      TEXT    NOT NULL,
    meta_labels      TEXT    NOT NULL,
    is_muted         INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    first_created    INTEGER NOT NULL,
    last_closed      INTEGER,
    last_update      INTEGER NOT NULL,
    PRIMARY KEY (team_id, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted)
);
INSERT INTO incident_rollup (team_id, name, application_name, subsystem_name, severity, state, status, assigned_to,
    meta_labels, is_muted, n, first_created, last_closed, last_update)
SELECT team_id, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
    COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time)
FROM incidents
GROUP BY team_id, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted;
-- A rollup row's incidents, contiguous and covered: its first creation is one seek here and its
-- last state update one seek in incidents_by_severity, which now has the rollup's key before the
-- times (its first columns, which the generic GROUP BY walks, are unchanged); also the ids of a
-- group by name (and by severity), without reading the incidents.
CREATE INDEX incidents_by_rollup ON incidents (team_id, name, application_name, subsystem_name, severity, state, status,
    assigned_to, meta_labels, is_muted, created_at, closed_at, last_state_update_time, id);
DROP INDEX incidents_by_severity;
CREATE INDEX incidents_by_severity ON incidents (team_id, severity, state, status, assigned_to, meta_labels, name,
    application_name, subsystem_name, is_muted, last_state_update_time, created_at, closed_at, id);

-- The same per contextual label (key and value) of the incidents: groupings by a label and filters
-- on one label's values read these rows. An incident has one value per key, so a key's rows count
-- each incident that carries it once; incidents without the key are in no row of that key.
CREATE TABLE incident_label_rollup (
    team_id          INTEGER NOT NULL REFERENCES teams (id),
    key              TEXT    NOT NULL,
    value            TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    application_name TEXT    NOT NULL,
    subsystem_name   TEXT    NOT NULL,
    severity         TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    assigned_to      TEXT    NOT NULL,
    meta_labels      TEXT    NOT NULL,
    is_muted         INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    first_created    INTEGER NOT NULL,
    last_closed      INTEGER,
    last_update      INTEGER NOT NULL,
    PRIMARY KEY (team_id, key, value, name, application_name, subsystem_name, severity, state, status, assigned_to,
        meta_labels, is_muted)
);
INSERT INTO incident_label_rollup (team_id, key, value, name, application_name, subsystem_name, severity, state, status,
    assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update)
SELECT l.team_id, l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status,
    i.assigned_to, i.meta_labels, i.is_muted, COUNT(*), MIN(i.created_at), MAX(i.closed_at), MAX(i.last_state_update_time)
FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id
GROUP BY l.team_id, l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status,
    i.assigned_to, i.meta_labels, i.is_muted;
