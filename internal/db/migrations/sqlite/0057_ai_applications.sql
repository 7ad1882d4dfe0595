-- Each team's AI applications and its custom model prices (issue 36). An application is an
-- application name and a subsystem ('' for none), registered by the operator or a configuration
-- document since mgmtapi ingests no spans. The pricing document is the AiModelPricing prices map.
CREATE TABLE ai_applications (
    team_id               INTEGER NOT NULL REFERENCES teams (id),
    id                    TEXT   NOT NULL,
    application           TEXT   NOT NULL,
    subsystem             TEXT   NOT NULL,
    guardrails_integrated INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, application, subsystem)
);

CREATE TABLE ai_model_pricing (
    team_id    INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    id         TEXT   NOT NULL,
    document   TEXT   NOT NULL,
    updated_at INTEGER NOT NULL
);
