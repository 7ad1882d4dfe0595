-- Permission names become the public catalog's (issue 24): every retired name stored in a key's
-- permissions, a key's access policy (default.permissions) or a custom role's permissions is
-- replaced by the public names it stands for (internal/auth oldNames; incidents:read and its
-- siblings only change case). An old name standing for several public names becomes all of them;
-- a name that appears twice after the change is kept once, at its first place (roles stay sorted),
-- and a policy naming one public permission twice denies it when either verdict was deny.
-- Rows holding no old name are left as they are, so the migration can run again harmlessly.
CREATE TABLE permission_renames_0033 (
    old TEXT    NOT NULL,
    new TEXT    NOT NULL,
    ord INTEGER NOT NULL
);
INSERT INTO permission_renames_0033 (old, new, ord) VALUES
    ('api-keys:ReadConfig', 'team-custom-api-keys:ReadConfig', 0),
    ('api-keys:ReadConfig', 'data-ingest-api-keys:ReadConfig', 1),
    ('api-keys:Manage', 'team-custom-api-keys:Manage', 0),
    ('api-keys:Manage', 'data-ingest-api-keys:Manage', 1),
    ('recording-rules:ReadConfig', 'metrics.recording-rules:ReadConfig', 0),
    ('recording-rules:Manage', 'metrics.recording-rules:UpdateConfig', 0),
    ('config:Export', 'org-settings:ReadConfig', 0),
    ('config:Apply', 'org-settings:UpdateConfig', 0),
    ('incidents:read', 'incidents:Read', 0),
    ('incidents:acknowledge', 'incidents:Acknowledge', 0),
    ('incidents:close', 'incidents:Close', 0),
    ('incidents:assign', 'incidents:Assign', 0),
    ('alerts:Ingest', 'contextual-data:SendData', 0),
    ('policies:ReadConfig', 'logs.tco:ReadPolicies', 0),
    ('policies:ReadConfig', 'spans.tco:ReadPolicies', 1),
    ('policies:ReadConfig', 'metrics.tco:ReadPolicies', 2),
    ('policies:Manage', 'logs.tco:UpdatePolicies', 0),
    ('policies:Manage', 'spans.tco:UpdatePolicies', 1),
    ('policies:Manage', 'metrics.tco:UpdatePolicies', 2),
    ('policy-settings:ReadConfig', 'logs.tco:ReadPolicies', 0),
    ('policy-settings:Manage', 'logs.tco:UpdatePolicies', 0),
    ('notification-presets:ReadConfig', 'notification-center-presets:ReadConfig', 0),
    ('notification-presets:ReadConfig', 'notification-center-presets:ReadSummary', 1),
    ('notification-presets:Manage', 'notification-center-presets:UpdateConfig', 0),
    ('parsing-rules:Manage', 'parsing-rules:UpdateConfig', 0),
    ('retention-tags:ReadConfig', 'logs.data-setup#low:ReadConfig', 0),
    ('retention-tags:Manage', 'logs.data-setup#low:UpdateConfig', 0),
    ('views:ReadConfig', 'team-saved-views:Read', 0),
    ('views:Manage', 'team-saved-views:Update', 0),
    ('actions:Manage', 'team-actions:UpdateConfig', 0),
    ('alerts:Manage', 'alerts:UpdateConfig', 0),
    ('enrichments:Manage', 'cloud-metadata-enrichment:UpdateConfig', 0),
    ('enrichments:Manage', 'geo-enrichment:UpdateConfig', 1),
    ('enrichments:Manage', 'security-enrichment:UpdateConfig', 2),
    ('enrichments:Manage', 'team-custom-enrichment:UpdateConfig', 3),
    ('grafana-dashboards:Manage', 'grafana:Update', 0),
    ('kibana-dashboards:Manage', 'opensearch-dashboards:Update', 0),
    ('slos:ReadConfig', 'slo:ReadConfig', 0),
    ('slos:Manage', 'slo:UpdateConfig', 0),
    ('events2metrics:ReadConfig', 'logs.events2metrics:ReadConfig', 0),
    ('events2metrics:ReadConfig', 'spans.events2metrics:ReadConfig', 1),
    ('events2metrics:Manage', 'logs.events2metrics:UpdateConfig', 0),
    ('events2metrics:Manage', 'spans.events2metrics:UpdateConfig', 1);

UPDATE api_keys k SET permissions = (
    SELECT json_agg(name ORDER BY pos)::text FROM (
        SELECT COALESCE(r.new, e.value) AS name, MIN(e.pos * 10 + COALESCE(r.ord, 0)) AS pos
        FROM json_array_elements_text(k.permissions::json) WITH ORDINALITY AS e(value, pos)
        LEFT JOIN permission_renames_0033 r ON r.old = e.value
        GROUP BY 1) s)
WHERE EXISTS (SELECT 1 FROM json_array_elements_text(k.permissions::json) AS e(value)
              JOIN permission_renames_0033 r ON r.old = e.value);

UPDATE custom_roles c SET permissions = (
    SELECT json_agg(name ORDER BY name COLLATE "C")::text FROM (
        SELECT DISTINCT COALESCE(r.new, e.value) AS name
        FROM json_array_elements_text(c.permissions::json) AS e(value)
        LEFT JOIN permission_renames_0033 r ON r.old = e.value) s)
WHERE EXISTS (SELECT 1 FROM json_array_elements_text(c.permissions::json) AS e(value)
              JOIN permission_renames_0033 r ON r.old = e.value);

UPDATE api_keys k SET access_policy = jsonb_set(k.access_policy::jsonb, '{default,permissions}', (
    SELECT jsonb_object_agg(name, verdict) FROM (
        SELECT COALESCE(r.new, e.key) AS name, MIN(e.value) AS verdict
        FROM jsonb_each_text(k.access_policy::jsonb -> 'default' -> 'permissions') e
        LEFT JOIN permission_renames_0033 r ON r.old = e.key
        GROUP BY 1) s))::text
WHERE CASE WHEN k.access_policy = '' THEN false
      WHEN jsonb_typeof(k.access_policy::jsonb -> 'default' -> 'permissions') IS DISTINCT FROM 'object' THEN false
      ELSE EXISTS (SELECT 1 FROM jsonb_each_text(k.access_policy::jsonb -> 'default' -> 'permissions') e
                   JOIN permission_renames_0033 r ON r.old = e.key) END;

DROP TABLE permission_renames_0033;
