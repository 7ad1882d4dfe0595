-- Outbox records of outgoing webhooks (internal/delivery, connector_type OUTGOING_WEBHOOK): an
-- alert definition's notificationGroup.webhooks[] deliver through the webhook type's notifier.
-- Such a record keeps the webhook's public type (webhook_type) and a snapshot of its settings by
-- their public field names (webhook_settings, a JSON object of strings: a secret, never logged
-- nor answered) beside its url; payload is the rendered message. Every other record has both
-- empty.
ALTER TABLE deliveries ADD COLUMN webhook_type TEXT NOT NULL DEFAULT '';
ALTER TABLE deliveries ADD COLUMN webhook_settings TEXT NOT NULL DEFAULT '';
-- Retriggering reads whether a webhook was sent a triggered notification of the same alert
-- (dedup_key) since a time.
CREATE INDEX deliveries_by_alert ON deliveries (team_id, connector_id, dedup_key, created_at)
    WHERE event_kind = 'triggered' AND dedup_key <> '';
