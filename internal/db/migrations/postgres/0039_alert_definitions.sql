-- Each team's alert definitions (issue 26). alert_defs holds the current version of each
-- definition (its AlertDef JSON document) beside the columns lists filter and sort on;
-- alert_def_versions holds every version ever written, by its alertVersionId, and outlives the
-- definition (a version of a deleted definition stays readable). alert_def_refs holds one row per
-- resource the current version names (a connector, preset, router, SLO or, for flow alerts,
-- another definition), so that deleting one of them can name the definitions that use it.
CREATE TABLE alert_defs (
    team_id           BIGINT NOT NULL REFERENCES teams (id),
    id                TEXT   NOT NULL,
    version_id        TEXT   NOT NULL,
    name              TEXT   NOT NULL,
    type              TEXT   NOT NULL,
    priority          TEXT   NOT NULL,
    enabled           BIGINT NOT NULL,
    status            TEXT   NOT NULL,
    document          TEXT   NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    last_triggered_at BIGINT,
    access_policy     TEXT,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX alert_defs_by_time ON alert_defs (team_id, created_at, id);

CREATE TABLE alert_def_versions (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    version_id   TEXT   NOT NULL,
    alert_def_id TEXT   NOT NULL,
    document     TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    deleted_at   BIGINT,
    PRIMARY KEY (team_id, version_id)
);

CREATE INDEX alert_def_versions_by_def ON alert_def_versions (team_id, alert_def_id);

CREATE TABLE alert_def_refs (
    team_id      BIGINT NOT NULL,
    alert_def_id TEXT   NOT NULL,
    kind         TEXT   NOT NULL,
    ref_id       TEXT   NOT NULL,
    PRIMARY KEY (team_id, alert_def_id, kind, ref_id),
    FOREIGN KEY (team_id, alert_def_id) REFERENCES alert_defs (team_id, id) ON DELETE CASCADE
);

CREATE INDEX alert_def_refs_by_ref ON alert_def_refs (team_id, kind, ref_id);
