-- Issue 37: the retrigger lookup (routers' lastTriggers), asked before every trigger and
-- reminder of an alert definition's alert with a retriggering period: which connectors were sent
-- a trigger of the same alert identity within the period.
-- The incidents of an identity (their fingerprint) that are open or that their source resolved
-- within the period, without reading the identity's whole past.
CREATE INDEX incidents_by_fingerprint_resolved ON incidents (team_id, fingerprint, source_resolved_at);
-- An incident's triggers within the period, without reading its older ones (a week of minutely
-- reminders is 10,000), answered from the index (connector_id).
CREATE INDEX deliveries_triggered_by_time ON deliveries (team_id, entity_type, entity_id, created_at, connector_id)
    WHERE event_kind = 'triggered';
