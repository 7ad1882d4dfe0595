-- E18 filtered by display labels: an incident's display labels (written once, when the incident
-- is created, and never changed) as rows, so that the filter reads the incidents that carry the
-- label (driven from incident_display_labels_by_key) or seeks each incident's own row, instead of
-- decoding every incident's JSON.
CREATE TABLE incident_display_labels (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    incident_id TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    value       TEXT   NOT NULL,
    PRIMARY KEY (team_id, incident_id, key)
);
CREATE INDEX incident_display_labels_by_key ON incident_display_labels (team_id, key, value, incident_id);
INSERT INTO incident_display_labels (team_id, incident_id, key, value)
SELECT i.team_id, i.id, d.key, d.value FROM incidents i, jsonb_each_text(i.display_labels::jsonb) d;
