-- E18 grouped by (or filtered on) one contextual label under a createdAt or duration range:
-- incident_label_rollup's counts and times per UTC day of creation and of closing (-1 while open),
-- as incident_day_rollup keeps incident_rollup's, kept by the same writes. The incidents of a
-- range's whole days are these rows; only the incidents of its partial days are read.
CREATE TABLE incident_label_day_rollup (
    team_id          INTEGER NOT NULL REFERENCES teams (id),
    key              TEXT    NOT NULL,
    value            TEXT    NOT NULL,
    created_day      INTEGER NOT NULL,
    closed_day       INTEGER NOT NULL,
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
