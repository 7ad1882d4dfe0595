-- Routing asks, before it sends an alert's resolution or acknowledgement through a connector,
-- whether that connector was sent the alert's trigger (delivery.TriggerSent): a connector added
-- after the trigger is not told of a resolution it never saw the start of.
CREATE INDEX deliveries_by_entity ON deliveries (team_id, entity_type, entity_id, connector_id)
    WHERE event_kind = 'triggered';
