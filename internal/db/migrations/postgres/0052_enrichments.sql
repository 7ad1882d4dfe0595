-- Each team's enrichments (issue 35): a log field enriched with geo-IP, suspicious-IP, AWS
-- resource or custom data set data. id is the enrichment's number within its team; kind is
-- geoIp, suspiciousIp, aws or customEnrichment; data_set_id names the custom enrichment's data
-- set (0 for the other kinds), so that a data set in use is found and cannot be deleted. The
-- document is the enrichment as answered (Enrichment).
CREATE TABLE enrichments (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    id          BIGINT NOT NULL,
    kind        TEXT    NOT NULL,
    data_set_id BIGINT NOT NULL,
    field_name  TEXT    NOT NULL,
    document    TEXT    NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX enrichments_by_data_set ON enrichments (team_id, data_set_id);

-- Enrichment and data set ids are the team's numbers of kinds 'enrichment' and 'dataSet'
-- (team_numbers, migration 0046).
