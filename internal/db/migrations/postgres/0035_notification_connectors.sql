-- Each team's notification connectors (issue 25). The connector is the JSON document, with its
-- sensitive values in clear (they are masked when answered, never logged); the columns beside it
-- are what queries filter and order by. Writers are serialised per team (internal/connectors), so
-- the per-team bound and the checks of the routers that use a connector hold until commit.
CREATE TABLE notification_connectors (
    team_id        BIGINT NOT NULL REFERENCES teams (id),
    id             TEXT   NOT NULL,
    connector_type TEXT   NOT NULL,
    document       TEXT   NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX notification_connectors_by_time ON notification_connectors (team_id, created_at, id);
