-- Each team's registered integration instances (issue 36): instances of an integration or of a
-- contextual data integration of the server's catalog (service 'integrations' or
-- 'contextual-data'), at one version of their definition. The document holds the parameters as
-- checked against that version, secrets in clear (never logged nor answered) and API keys by key
-- id only; the columns beside it are what queries filter and order by.
CREATE TABLE integration_instances (
    team_id        BIGINT NOT NULL REFERENCES teams (id),
    id             TEXT   NOT NULL,
    service        TEXT   NOT NULL,
    definition_key TEXT   NOT NULL,
    version        TEXT   NOT NULL,
    document       TEXT   NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX integration_instances_by_definition ON integration_instances (team_id, service, definition_key, created_at, id);
