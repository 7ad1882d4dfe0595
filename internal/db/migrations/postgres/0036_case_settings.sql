-- Each team's case settings configuration (issue 25). A team holds at most one, which is its
-- active configuration: team_id is the key, so a second create, however concurrent, breaks the
-- key and is answered 409. id is the configuration's UUID (lowercase); document is its JSON
-- (name, globalIndicatorSettings, caseLifecycle) as checked and stored by the API.
CREATE TABLE case_settings (
    team_id    BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    id         TEXT    NOT NULL,
    document   TEXT    NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
