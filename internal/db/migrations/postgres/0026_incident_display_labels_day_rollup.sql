-- E18 filtered by display labels: an incident's display labels (written once, when the incident
-- is created, and never changed) as rows, so that the filter reads the incidents that carry the
-- label (driven from incident_display_labels_by_key) or seeks each incident's own row, instead of
-- decoding every incident's JSON.
CREATE TABLE incident_display_labels (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    incident_id TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    value       TEXT   NOT NULL,
    PRIMARY KEY (team_id, incident_id, key)
);
CREATE INDEX incident_display_labels_by_key ON incident_display_labels (team_id, key, value, incident_id);
INSERT INTO incident_display_labels (team_id, incident_id, key, value)
SELECT i.team_id, i.id, d.key, d.value FROM incidents i, jsonb_each_text(i.display_labels::jsonb) d;

-- E18 filtered by a createdAt or duration range: incident_rollup's counts and times per UTC day of
-- creation (created_day, the day's first microsecond) and of closing (closed_day, -1 while open),
-- kept by the same writes as incident_rollup. The incidents of whole days of a range are these
-- rows (tens of thousands at most, instead of the incidents); only the incidents of a range's
-- partial days are read, through the index on createdAt (or closedAt).
CREATE TABLE incident_day_rollup (
    team_id          BIGINT NOT NULL REFERENCES teams (id),
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
    PRIMARY KEY (team_id, created_day, closed_day, name, application_name, subsystem_name, severity, state, status,
        assigned_to, meta_labels, is_muted)
);
INSERT INTO incident_day_rollup (team_id, created_day, closed_day, name, application_name, subsystem_name, severity, state,
    status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update)
SELECT team_id, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
    application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
    COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time)
FROM incidents
GROUP BY team_id, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
    application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted;

-- E18 grouped by createdAt or by the last state update: the number of groups is the number of
-- distinct times of the matching incidents. Incidents share such a time only when one transaction
-- wrote several (or in the same microsecond), so that number is the rollups' count of matching
-- incidents less, for each time listed here (field 'created' or 'updated': every time of the field
-- that two incidents of the team have, or had; a time listed without sharing changes nothing),
-- the matching incidents that have it, less one.
CREATE TABLE incident_time_ties (
    team_id BIGINT NOT NULL REFERENCES teams (id),
    field   TEXT   NOT NULL,
    at      BIGINT NOT NULL,
    PRIMARY KEY (team_id, field, at)
);
INSERT INTO incident_time_ties (team_id, field, at)
SELECT team_id, 'created', created_at FROM incidents GROUP BY team_id, created_at HAVING COUNT(*) > 1
UNION ALL
SELECT team_id, 'updated', last_state_update_time FROM incidents GROUP BY team_id, last_state_update_time HAVING COUNT(*) > 1;

-- E18 grouped by id pages the ids in byte order (COLLATE "C", as Go compares strings): this index
-- walks them in that order, where the primary key (the database's collation) made PostgreSQL
-- sort every matching id for a page of 100.
CREATE INDEX incidents_by_id_c ON incidents (team_id, id COLLATE "C");
