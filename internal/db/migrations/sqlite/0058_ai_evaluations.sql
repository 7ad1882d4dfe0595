-- Each team's AI evaluations and custom evaluations (issue 36). An AI evaluation names its
-- application by name and subsystem ('' for every subsystem); its document is the AiEvaluation
-- as stored (id, application, subsystem, config, target, threshold, isEnabled). A custom
-- evaluation's document is the AiCustomEvaluation without its links, which are rows of
-- ai_custom_evaluation_links (removed with the evaluation or the application).
CREATE TABLE ai_evaluations (
    team_id         INTEGER NOT NULL REFERENCES teams (id),
    id              TEXT   NOT NULL,
    application     TEXT   NOT NULL,
    subsystem       TEXT   NOT NULL,
    evaluation_type TEXT   NOT NULL,
    created_by      TEXT   NOT NULL,
    document        TEXT   NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX ai_evaluations_by_time ON ai_evaluations (team_id, created_at, id);

CREATE TABLE ai_custom_evaluations (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    document   TEXT   NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE TABLE ai_custom_evaluation_links (
    team_id        INTEGER NOT NULL REFERENCES teams (id),
    evaluation_id  TEXT   NOT NULL,
    application_id TEXT   NOT NULL,
    PRIMARY KEY (team_id, evaluation_id, application_id)
);

CREATE INDEX ai_custom_evaluation_links_by_application ON ai_custom_evaluation_links (team_id, application_id);
