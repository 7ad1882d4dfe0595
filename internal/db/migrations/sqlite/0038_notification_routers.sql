-- Each team's notification routers (issue 25). The router is the JSON document; the targets of its
-- rules and fallbacks are also rows of notification_router_targets, one per (router, connector,
-- preset) named, so that deleting a connector or preset can name the routers that use it. Writers
-- take the team's connector and preset locks (internal/routers), so a target checked to exist
-- stays so until commit.
CREATE TABLE notification_routers (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    document   TEXT   NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX notification_routers_by_time ON notification_routers (team_id, created_at, id);

CREATE TABLE notification_router_targets (
    team_id      INTEGER NOT NULL,
    router_id    TEXT   NOT NULL,
    connector_id TEXT   NOT NULL,
    preset_id    TEXT   NOT NULL,
    PRIMARY KEY (team_id, router_id, connector_id, preset_id),
    FOREIGN KEY (team_id, router_id) REFERENCES notification_routers (team_id, id) ON DELETE CASCADE
);

CREATE INDEX notification_router_targets_by_connector ON notification_router_targets (team_id, connector_id);
CREATE INDEX notification_router_targets_by_preset ON notification_router_targets (team_id, preset_id);
