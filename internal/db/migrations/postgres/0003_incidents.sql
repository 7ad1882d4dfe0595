-- Incidents (one per alert: fingerprint and start time), their events, and their contextual
-- labels as rows so that label filters use an index.
CREATE TABLE incidents (
    team_id                BIGINT NOT NULL REFERENCES teams (id),
    id                     TEXT    NOT NULL,
    case_id                TEXT    NOT NULL,
    fingerprint            TEXT    NOT NULL,
    starts_at              BIGINT NOT NULL,
    name                   TEXT    NOT NULL,
    description            TEXT    NOT NULL,
    severity               TEXT    NOT NULL,
    state                  TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    is_muted               BOOLEAN NOT NULL,
    application_name       TEXT    NOT NULL,
    subsystem_name         TEXT    NOT NULL,
    assigned_to            TEXT    NOT NULL DEFAULT '',
    assigned_by            TEXT    NOT NULL DEFAULT '',
    contextual_labels      TEXT    NOT NULL,
    display_labels         TEXT    NOT NULL,
    meta_labels            TEXT    NOT NULL,
    created_at             BIGINT NOT NULL,
    closed_at              BIGINT,
    last_state_update_time BIGINT NOT NULL,
    last_state_update_key  TEXT    NOT NULL,
    -- set when the alert's source reported it resolved (a redelivery then changes nothing)
    source_resolved_at     BIGINT,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, fingerprint, starts_at)
);
CREATE INDEX incidents_by_case ON incidents (team_id, case_id);
CREATE INDEX incidents_by_created ON incidents (team_id, created_at, id);
CREATE INDEX incidents_by_severity ON incidents (team_id, severity, state, status, assigned_to,
    meta_labels, created_at, closed_at, last_state_update_time);
-- E18 without a filter: per severity, the first creation, last close and last state update are
-- index seeks (MIN/MAX over one severity).
CREATE INDEX incidents_by_severity_created ON incidents (team_id, severity, created_at);
CREATE INDEX incidents_by_severity_closed ON incidents (team_id, severity, closed_at);
CREATE INDEX incidents_by_severity_updated ON incidents (team_id, severity, last_state_update_time);

-- The number of the team's incidents per combination of the fields E18 counts, kept by every
-- write of internal/incidents in the same transaction (a row is deleted when n reaches 0).
CREATE TABLE incident_counts (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    severity    TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    assigned_to TEXT    NOT NULL,
    meta_labels TEXT    NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (team_id, severity, state, status, assigned_to, meta_labels)
);

CREATE TABLE incident_labels (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    incident_id TEXT    NOT NULL,
    -- copies of the incident's columns that E18 aggregates, kept in step by every write, so that
    -- E18 filtered by one contextual label reads the label rows alone
    severity               TEXT    NOT NULL,
    state                  TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    assigned_to            TEXT    NOT NULL,
    meta_labels            TEXT    NOT NULL,
    created_at             BIGINT NOT NULL,
    closed_at              BIGINT,
    last_state_update_time BIGINT NOT NULL,
    PRIMARY KEY (team_id, key, value, incident_id)
);
CREATE INDEX incident_labels_aggregated ON incident_labels (team_id, key, value, severity, state, status,
    assigned_to, meta_labels, created_at, closed_at, last_state_update_time, incident_id);
-- Grouping by a label reads one incident's value of one key (covering, so SQLite prefers it
-- to the primary key for that lookup).
CREATE INDEX incident_labels_by_incident ON incident_labels (team_id, incident_id, key, value);

CREATE TABLE incident_events (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL,
    incident_id TEXT    NOT NULL,
    seq         BIGINT NOT NULL,
    document    TEXT    NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, incident_id, seq)
);
