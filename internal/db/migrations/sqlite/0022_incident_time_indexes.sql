-- E18 grouped by closedAt or by the last state update pages its groups in SQL, in the order of
-- these (open incidents, without closedAt, come first when ascending).
CREATE INDEX incidents_by_closed ON incidents (team_id, closed_at);
CREATE INDEX incidents_by_updated ON incidents (team_id, last_state_update_time);
