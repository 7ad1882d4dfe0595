-- The alert event feed (issue 26): one row per firing and per resolution of an alert that names
-- an alert definition (the alert_def_id label), written by ingestion in the transaction that
-- opens or resolves its incident. (incident_id, status) is unique, so a notification sent again
-- records nothing new. Labels, group labels and the payload are JSON documents; every label and
-- every metadata value is also a row of alert_event_fields, which the label and metadata filters
-- and the statistics read. Times are microseconds since the epoch.
CREATE TABLE alert_events (
    team_id          BIGINT  NOT NULL REFERENCES teams (id),
    id               TEXT    NOT NULL,
    alert_def_id     TEXT    NOT NULL,
    alert_version_id TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    priority         TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    fingerprint      TEXT    NOT NULL,
    incident_id      TEXT    NOT NULL,
    occurred_at      BIGINT  NOT NULL,
    recorded_at      BIGINT  NOT NULL,
    labels           TEXT    NOT NULL,
    group_labels     TEXT    NOT NULL,
    payload          TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, incident_id, status)
);

CREATE INDEX alert_events_by_time ON alert_events (team_id, occurred_at, id);
CREATE INDEX alert_events_by_definition ON alert_events (team_id, alert_def_id, occurred_at, id);
CREATE INDEX alert_events_by_version ON alert_events (team_id, alert_version_id, occurred_at, id);

-- kind is 'label' or 'meta'.
CREATE TABLE alert_event_fields (
    team_id     BIGINT  NOT NULL,
    event_id    TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    occurred_at BIGINT  NOT NULL,
    PRIMARY KEY (team_id, event_id, kind, key),
    FOREIGN KEY (team_id, event_id) REFERENCES alert_events (team_id, id) ON DELETE CASCADE
);

CREATE INDEX alert_event_fields_by_value ON alert_event_fields (team_id, kind, key, value, occurred_at);
