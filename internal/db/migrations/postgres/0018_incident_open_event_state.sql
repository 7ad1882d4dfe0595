-- An incident's OPEN event carries the state the incident opened in (upsertState TRIGGERED), so
-- that every event holds exactly one event body. OPEN events written before this carry none.
UPDATE incident_events
SET document = jsonb_set(document::jsonb, '{upsertState}',
    '{"stateType":"UPSERT_INCIDENT_STATE_TYPE_TRIGGERED","isMuted":false,"payload":{}}'::jsonb)::text
WHERE document::jsonb ->> 'incidentEventType' = 'INCIDENT_EVENT_TYPE_OPEN'
  AND document::jsonb -> 'upsertState' IS NULL;

-- The events feed reads a team's events newest (or oldest) first.
CREATE INDEX IF NOT EXISTS incident_events_by_time ON incident_events (team_id, created_at, incident_id, seq);
