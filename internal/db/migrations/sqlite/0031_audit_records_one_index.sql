-- Every audited write inserts into each index of audit_records; the (at, id) index served only
-- retention pruning, which now walks the teams through (team_id, at, id) instead
-- (internal/audit Prune). One index insert fewer per write.
DROP INDEX audit_records_at;
