-- The events the notification center routes (db.Tx.Emit): a write transaction that triggers,
-- acknowledges or resolves an incident, or opens, changes or comments on a case, records one row
-- per event here and nothing more; the delivery worker routes each (routers, suppression,
-- templates) outside any write transaction and, in one short transaction, writes its deliveries
-- and deletes the row. snapshot is the entity as it was when its transaction committed (the
-- public Incident or Case object, JSON); case_id is the case an incident belongs to ('' when
-- none). seq orders the events of one transaction. A worker routing a row holds it until
-- lease_until (lease_owner); attempts counts the routings begun. Times are microseconds since the
-- epoch.
CREATE TABLE notification_events (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL,
    entity_type TEXT    NOT NULL,
    entity_id   TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    cause       TEXT    NOT NULL,
    snapshot    TEXT    NOT NULL,
    case_id     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    lease_owner TEXT    NOT NULL DEFAULT '',
    lease_until INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, id)
);
-- The worker claims the oldest events first.
CREATE INDEX notification_events_order ON notification_events (created_at, seq);
-- The claim's check that no earlier event of the same entity waits.
CREATE INDEX notification_events_by_entity ON notification_events (team_id, entity_type, entity_id, created_at);
