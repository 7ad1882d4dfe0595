-- The audit log: one row per committed write transaction of an authenticated mutation request,
-- written in that transaction (internal/db/audit.go), read by the operator's audit list
-- (internal/audit) and pruned past the retention (--audit-retention). No foreign key: a record
-- outlives what it names. at is in Unix microseconds; resource_ids is a JSON array of strings.
CREATE TABLE audit_records (
    id           INTEGER PRIMARY KEY,
    at           INTEGER NOT NULL,
    team_id      INTEGER NOT NULL,
    key_id       TEXT    NOT NULL,
    key_name     TEXT    NOT NULL,
    operation    TEXT    NOT NULL,
    resource_ids TEXT    NOT NULL,
    request_id   TEXT    NOT NULL,
    client       TEXT    NOT NULL,
    status       INTEGER NOT NULL
);

-- A team's records newest first, within a time range (the list and its page tokens).
CREATE INDEX audit_records_team_at ON audit_records (team_id, at, id);
-- The oldest records of every team (retention pruning).
CREATE INDEX audit_records_at ON audit_records (at, id);
