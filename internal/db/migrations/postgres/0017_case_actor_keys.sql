-- The alert-ingestion actor of case events is now {"prometheusAlertManager": {...}} (it was
-- {"alertManager": {...}}), and actor fields are omitted rather than empty: rewrite the stored
-- events and the resolution details written before. The resolution's resolvedBy is read as the
-- resolver kind alone, whichever key it was stored under.
UPDATE case_events SET actor = REPLACE(actor, '{"alertManager":', '{"prometheusAlertManager":')
    WHERE actor LIKE '{"alertManager":%';
UPDATE case_events SET actor = REPLACE(REPLACE(REPLACE(actor, '"receiverName":""', ''), '"id":"",', ''), ',"name":""', '')
    WHERE actor LIKE '%"receiverName":""%' OR actor LIKE '%"id":"",%' OR actor LIKE '%,"name":""%';
UPDATE cases SET resolution = REPLACE(resolution, '"resolvedBy":{"alertManager":', '"resolvedBy":{"prometheusAlertManager":')
    WHERE resolution LIKE '%"resolvedBy":{"alertManager":%';
