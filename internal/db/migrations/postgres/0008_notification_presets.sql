-- Each team's custom notification presets. The system presets every team starts with are not
-- stored: they ship with the server (internal/presets/rules.go), so teams created at any time have
-- them. The preset is the JSON document; the columns beside it are what queries filter and order
-- by. parent_id is checked against the team's presets by the writers, which are serialised per
-- team (see internal/presets/store.go).
CREATE TABLE notification_presets (
    team_id        BIGINT NOT NULL REFERENCES teams (id),
    id             TEXT   NOT NULL,
    connector_type TEXT   NOT NULL,
    entity_type    TEXT   NOT NULL,
    parent_id      TEXT   NOT NULL,
    document       TEXT   NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX notification_presets_by_parent ON notification_presets (team_id, parent_id);
CREATE INDEX notification_presets_by_time ON notification_presets (team_id, created_at, id);
