-- The answer of the alert scheduler rules that the recording transaction asked for the event's
-- alert (db.Tx.RecordSuppression): NULL when it asked nothing, else the id of the rule that
-- silences the alert, '' when none does. Ingestion asks once, at the firing's instant, for the
-- alert event feed; the routing uses the recorded answer instead of asking again.
ALTER TABLE notification_events ADD COLUMN suppressed_by TEXT;
