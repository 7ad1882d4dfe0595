-- Who wrote each dashboard, the folder it is in, the team's default dashboard and each key's
-- pinned dashboards.
--
-- author_* name the API key that created the dashboard, updater_* the key of its last change,
-- locker_* the key that locked it (NULL while unlocked). Dashboards written before this
-- migration have no author, updater or locker: those columns stay NULL and the answers omit them.
ALTER TABLE dashboards ADD COLUMN author_key_id TEXT;
ALTER TABLE dashboards ADD COLUMN author_name TEXT;
ALTER TABLE dashboards ADD COLUMN updater_key_id TEXT;
ALTER TABLE dashboards ADD COLUMN updater_name TEXT;
ALTER TABLE dashboards ADD COLUMN locker_key_id TEXT;
ALTER TABLE dashboards ADD COLUMN locker_name TEXT;

-- folder_id is the document's folderId.value, copied out for the catalog (NULL: the root).
ALTER TABLE dashboards ADD COLUMN folder_id TEXT;
UPDATE dashboards SET folder_id = document::json #>> '{folderId,value}';

-- Slugs are looked up per team. Writers keep them unique per team (serialised per team), so no
-- unique index: rows written before the rule cannot make this migration fail.
CREATE INDEX dashboards_by_slug ON dashboards (team_id, slug_name);

-- The team's default dashboard; at most one. Deleting the dashboard deletes this row in the same
-- transaction.
CREATE TABLE dashboard_defaults (
    team_id      BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    dashboard_id TEXT   NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- The dashboards each API key has pinned (its favourites). Deleting the dashboard deletes its pins
-- in the same transaction.
CREATE TABLE dashboard_pins (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    key_id       TEXT   NOT NULL,
    dashboard_id TEXT   NOT NULL,
    pinned_at    BIGINT NOT NULL,
    PRIMARY KEY (team_id, key_id, dashboard_id)
);

-- The team's default notification preset for each (connector type, entity type) it has chosen
-- one for: a custom preset of that pair. A pair without a row uses its system preset. Writers of
-- presets keep this in step in their transaction: deleting the preset, or replacing it with
-- another pair, deletes its rows.
CREATE TABLE notification_preset_defaults (
    team_id        BIGINT NOT NULL REFERENCES teams (id),
    connector_type TEXT   NOT NULL,
    entity_type    TEXT   NOT NULL,
    preset_id      TEXT   NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, connector_type, entity_type)
);

-- The connector types are the public presets document's. Custom presets stored with a value it
-- does not have (MICROSOFT_TEAMS, EVENTBRIDGE, INCIDENT_IO) become CONNECTOR_TYPE_UNSPECIFIED, in
-- the column and in the stored document (written compact by the server), so they stay readable.
UPDATE notification_presets
SET document = replace(document, '"connectorType":"' || connector_type || '"', '"connectorType":"CONNECTOR_TYPE_UNSPECIFIED"'),
    connector_type = 'CONNECTOR_TYPE_UNSPECIFIED'
WHERE connector_type IN ('MICROSOFT_TEAMS', 'EVENTBRIDGE', 'INCIDENT_IO');
