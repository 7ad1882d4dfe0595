-- Connectors and presets take the field names, payload types and system preset ids the vendor's
-- public clients send (issue 33 §1 and §2). Stored documents are rewritten in place; the text of
-- each document is the compact JSON the server writes ("fieldName":"…" with no spaces), in which
-- a field name or payload type appears as a whole JSON string, never inside another value (a
-- value's quotes would be escaped), so replacing the quoted names is exact. Documents holding no
-- old name are left as they are, so the migration can run again harmlessly.
--
-- Connectors: a retired field with a public counterpart takes its name, in the configuration
-- and in every template per entity type: EMAIL recipients becomes emailAddresses,
-- PAGERDUTY_INCIDENTS serviceId becomes service. Retired fields without a counterpart (Slack's
-- and Teams' webhookUrl, Slack's username, PAGERDUTY_INCIDENTS' apiToken and fromEmail,
-- EVENTBRIDGE's eventBusArn, roleArn, source and detailType, SERVICE_NOW's assignmentGroup) stay
-- in the document under their names: they are deprecated fields of their types, which the
-- delivery still reads (a Slack or Teams connector without an integrationId posts to its
-- webhookUrl). See docs/decisions.md.
UPDATE notification_connectors
   SET document = REPLACE(document, '"fieldName":"recipients"', '"fieldName":"emailAddresses"')
 WHERE connector_type = 'EMAIL' AND document LIKE '%"fieldName":"recipients"%';
UPDATE notification_connectors
   SET document = REPLACE(document, '"fieldName":"serviceId"', '"fieldName":"service"')
 WHERE connector_type = 'PAGERDUTY_INCIDENTS' AND document LIKE '%"fieldName":"serviceId"%';

-- Presets: the payload type "default" becomes the type's public one (<type in lower case>_default,
-- e.g. generic_https_default, email_default), Slack's "raw" becomes slack_raw; a parentId naming a
-- system preset by an id earlier versions served names its public id.
UPDATE notification_presets
   SET document = REPLACE(document, '"payloadType":"default"', '"payloadType":"' || LOWER(connector_type) || '_default"')
 WHERE connector_type <> 'CONNECTOR_TYPE_UNSPECIFIED' AND document LIKE '%"payloadType":"default"%';
UPDATE notification_presets
   SET document = REPLACE(document, '"payloadType":"raw"', '"payloadType":"slack_raw"')
 WHERE connector_type = 'SLACK' AND document LIKE '%"payloadType":"raw"%';
UPDATE notification_presets
   SET document = REPLACE(document, '"parentId":"preset_system_generic_https_alerts_basic"', '"parentId":"preset_system_generic_https_alerts_empty"'),
       parent_id = 'preset_system_generic_https_alerts_empty'
 WHERE parent_id = 'preset_system_generic_https_alerts_basic';
UPDATE notification_presets
   SET document = REPLACE(document, '"parentId":"preset_system_email_alerts_basic"', '"parentId":"preset_system_email_alerts"'),
       parent_id = 'preset_system_email_alerts'
 WHERE parent_id = 'preset_system_email_alerts_basic';
