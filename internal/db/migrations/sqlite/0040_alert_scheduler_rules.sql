-- Each team's alert scheduler rules (issue 26). The rule is the JSON document; unique_id is the
-- rule's lasting id (uniqueIdentifier), version_id the id of its current version (id), new on every
-- replace; enabled is 0 or 1, read by the routing's suppression check.
CREATE TABLE alert_scheduler_rules (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    unique_id  TEXT   NOT NULL,
    version_id TEXT   NOT NULL,
    enabled    INTEGER NOT NULL,
    document   TEXT   NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, unique_id)
);

CREATE INDEX alert_scheduler_rules_by_time ON alert_scheduler_rules (team_id, created_at, unique_id);
CREATE INDEX alert_scheduler_rules_by_version ON alert_scheduler_rules (team_id, version_id);
