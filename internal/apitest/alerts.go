package apitest

// FiringAlert is an Alertmanager webhook notification (version 4) of one firing critical alert:
// sent to POST /ingest/alertmanager/v1 with a team's key, it opens a case with its incident and
// events, rows of several tables that refer to each other.
const FiringAlert = `{"version":"4","groupKey":"g","status":"firing","receiver":"r","groupLabels":{"alertname":"a"},
"commonLabels":{},"commonAnnotations":{},"externalURL":"","alerts":[{"status":"firing","labels":{"alertname":"a","severity":"critical"},
"annotations":{},"startsAt":"2026-11-20T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"f1"}]}`
