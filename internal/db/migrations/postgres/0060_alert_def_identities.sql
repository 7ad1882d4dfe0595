-- Issue 37: one identity per alert definition. An alert of an alert definition is one incident
-- per identity (the definition's id and rule, and the alert's other labels but its name,
-- priority, severity and version: an edit changes those, not what is alerting); identity is that
-- identity's fingerprint, which is the incidents' fingerprint. fingerprint and starts_at are
-- those of the Alertmanager alert that last fired for it (Unix microseconds): after an edit that
-- renames the alert, the old alert's resolution, which Alertmanager sends when it times out, is
-- then known as superseded and leaves the incident open while the new alert fires.
CREATE TABLE alert_def_identities (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    identity    TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    starts_at   BIGINT NOT NULL,
    PRIMARY KEY (team_id, identity)
);
