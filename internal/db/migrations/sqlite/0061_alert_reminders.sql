-- Issue 37: a firing that continues is re-notified once per retriggering period. One row per
-- incident of an alert definition's alert that may still need a reminder: due_at (Unix
-- microseconds) is when the delivery worker looks at it next (routers.Router.RecordDueEvents).
-- A look records a reminder event when due_at is one of the incident's reminder times (its
-- creation plus a multiple of one of its definition's retriggering periods), then moves due_at
-- to the next of them; an incident no longer TRIGGERED loses its row. The row is written with
-- the incident, so reminders survive a restart.
CREATE TABLE alert_reminders (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    incident_id TEXT NOT NULL,
    due_at      INTEGER NOT NULL,
    PRIMARY KEY (team_id, incident_id)
);
CREATE INDEX alert_reminders_due ON alert_reminders (due_at);
