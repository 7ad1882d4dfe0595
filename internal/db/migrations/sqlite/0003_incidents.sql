-- Incidents (one per alert: fingerprint and start time), their events, and their contextual
-- labels as rows so that label filters use an index.
CREATE TABLE incidents (
    team_id                INTEGER NOT NULL REFERENCES teams (id),
    id                     TEXT    NOT NULL,
    case_id                TEXT    NOT NULL,
    fingerprint            TEXT    NOT NULL,
    starts_at              INTEGER NOT NULL,
    name                   TEXT    NOT NULL,
    description            TEXT    NOT NULL,
    severity               TEXT    NOT NULL,
    state                  TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    is_muted               INTEGER NOT NULL,
    application_name       TEXT    NOT NULL,
    subsystem_name         TEXT    NOT NULL,
    assigned_to            TEXT    NOT NULL DEFAULT '',
    assigned_by            TEXT    NOT NULL DEFAULT '',
    contextual_labels      TEXT    NOT NULL,
    display_labels         TEXT    NOT NULL,
    meta_labels            TEXT    NOT NULL,
    created_at             INTEGER NOT NULL,
    closed_at              INTEGER,
    last_state_update_time INTEGER NOT NULL,
    last_state_update_key  TEXT    NOT NULL,
    -- set when the alert's source reported it resolved (a redelivery then changes nothing)
    source_resolved_at     INTEGER,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, fingerprint, starts_at)
);
CREATE INDEX incidents_by_case ON incidents (team_id, case_id);
CREATE INDEX incidents_by_created ON incidents (team_id, created_at, id);
CREATE INDEX incidents_by_severity ON incidents (team_id, severity, state, status, assigned_to,
    meta_labels, created_at, closed_at, last_state_update_time);

CREATE TABLE incident_labels (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    incident_id TEXT    NOT NULL,
    PRIMARY KEY (team_id, key, value, incident_id)
);
-- Grouping by a label reads one incident's value of one key (covering, so SQLite prefers it
-- to the primary key for that lookup).
CREATE INDEX incident_labels_by_incident ON incident_labels (team_id, incident_id, key, value);

CREATE TABLE incident_events (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL,
    incident_id TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    document    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, incident_id, seq)
);
