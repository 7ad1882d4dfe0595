package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"mgmtapi-ci/publicclients/connectors"
	"mgmtapi-ci/publicclients/connectorschema"
	"mgmtapi-ci/publicclients/globalrouters"
	"mgmtapi-ci/publicclients/outgoingwebhooks"
	"mgmtapi-ci/publicclients/presets"
)

// The notification center as the vendor's Terraform provider and client library configure it:
// connectors with the public fields of each type and a chosen id, the integrations (outgoing
// webhooks) that four connector types name by integrationId, custom presets whose parents are the
// public system presets, global routers, and the connector schema. Every answer is compared with
// what was sent: a client plans on its own values and sees drift otherwise.

// connectorCase is one connector type as a client sends it: its configuration fields and, for the
// types whose destination is an integration, the outgoing webhook type that integration has.
type connectorCase struct {
	connectorType string
	fields        [][2]string // fieldName, value; "$integration" stands for the integration's id
	credentials   []string    // fields answered masked
	webhook       string      // the outgoing webhook body's data for integrationId ("" for none)
}

var connectorCases = []connectorCase{
	{connectorType: "GENERIC_HTTPS", fields: [][2]string{
		{"url", "https://hooks.example.com/notify"}, {"method", "post"},
		{"additionalHeaders", `{"Authorization":"Bearer t","Content-Type":"application/json"}`},
		{"additionalBodyFields", `{"alias":"{{alert.groupingKey}}"}`},
	}},
	{connectorType: "SLACK", fields: [][2]string{
		{"integrationId", "$integration"}, {"fallbackChannel", "alerts-fallback"}, {"channel", "alerts"},
	}, webhook: `"type":"SLACK","url":"https://hooks.slack.com/services/T000/B000/XXXX","slack":{}`},
	{connectorType: "PAGERDUTY", fields: [][2]string{{"integrationKey", "pd-integration-key-1"}}},
	{connectorType: "PAGERDUTY_INCIDENTS", fields: [][2]string{
		{"integrationId", "$integration"}, {"service", "PXXXXXX"},
	}, webhook: `"type":"PAGERDUTY","url":"https://events.pagerduty.com/v2/enqueue","pagerDuty":{"serviceKey":"pd-service-key"}`},
	{connectorType: "MICROSOFT_TEAMS", fields: [][2]string{
		{"integrationId", "$integration"}, {"teamId", "team-1"}, {"channelId", "19:channel-id@thread.tacv2"},
	}, webhook: `"type":"MS_TEAMS_WORKFLOW","url":"https://example.webhook.office.com/workflows/1","msTeamsWorkflow":{}`},
	{connectorType: "EVENTBRIDGE", fields: [][2]string{{"integrationId", "$integration"}},
		webhook: `"type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/default","detail":"{}","detailType":"alert","source":"mgmtapi","roleName":"notifier"}`},
	{connectorType: "EMAIL", fields: [][2]string{{"emailAddresses", `["email1@example.com","email2@example.com"]`}}},
	{connectorType: "SERVICE_NOW", fields: [][2]string{
		{"instanceUrl", "https://your-instance.service-now.com"}, {"username", "integration"}, {"password", "s3cret-pw"},
	}, credentials: []string{"password"}},
	{connectorType: "INCIDENT_IO", fields: [][2]string{
		{"apiKey", "incident-io-key"}, {"alertEventsUrl", "https://api.incident.io/v2/alert_events/http/source-id"},
		{"alertSourceToken", "source-token"},
	}, credentials: []string{"apiKey", "alertSourceToken"}},
}

// fieldsJSON is the connectorConfig.fields array of the case, with the integration's id in place.
func (c connectorCase) fieldsJSON(integration string) string {
	var parts []string
	for _, f := range c.fields {
		v := f[1]
		if v == "$integration" {
			v = integration
		}
		b, _ := json.Marshal(map[string]string{"fieldName": f[0], "value": v})
		parts = append(parts, string(b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// fieldValue is the value of the configuration field name in a connector answer.
func fieldValue(answer any, path, name string) (string, bool) {
	fields, _ := get(answer, path).([]any)
	for _, f := range fields {
		if str(f, "fieldName") == name {
			return str(f, "value"), true
		}
	}
	return "", false
}

// sameFields fails the step unless the answer carries every field of the case as sent (masked
// for credentials) and no other.
func (s *S) sameFields(step string, answer any, c connectorCase, integration string) {
	path := "connector.connectorConfig.fields"
	for _, f := range c.fields {
		want := f[1]
		if want == "$integration" {
			want = integration
		}
		got, ok := fieldValue(answer, path, f[0])
		if !ok {
			b, _ := json.Marshal(answer)
			s.failf(step, "%s: field %s is missing; body: %s", c.connectorType, f[0], clip(b))
		}
		masked := false
		for _, cred := range c.credentials {
			masked = masked || cred == f[0]
		}
		if masked && got == want {
			s.failf(step, "%s: credential %s is answered in clear", c.connectorType, f[0])
		}
		if !masked && got != want {
			s.failf(step, "%s: field %s is %q, sent %q", c.connectorType, f[0], got, want)
		}
	}
	if n := len(s.array(step, answer, path)); n != len(c.fields) {
		b, _ := json.Marshal(answer)
		s.failf(step, "%s: %d fields answered, %d sent; body: %s", c.connectorType, n, len(c.fields), clip(b))
	}
}

// chosenID is a client-chosen connector or preset id, unique between runs against one server.
func chosenID(prefix string) string {
	return strings.ReplaceAll(unique(prefix), "-", "_")
}

// createWebhook creates an outgoing webhook with the given data members and answers its id.
func (s *S) createWebhook(c *outgoingwebhooks.ClientWithResponses, step, data string) string {
	r, err := c.OutgoingWebhooksServiceCreateOutgoingWebhookWithResponse(s.ctx,
		body[outgoingwebhooks.OutgoingWebhooksServiceCreateOutgoingWebhookJSONRequestBody](s, step, `{"data":{"name":"`+unique("hook")+`",`+data+`}}`))
	out := s.must(step, r, err, 200)
	s.typed(step, r.JSON200)
	id := str(out, "id")
	if id == "" {
		s.failf(step, "no id in the answer")
	}
	return id
}

func init() {
	register("connectors_service", func(s *S) {
		c, err := connectors.NewClientWithResponses(s.base, connectors.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		hooks, err := outgoingwebhooks.NewClientWithResponses(s.base, outgoingwebhooks.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		for _, cc := range connectorCases {
			t := strings.ToLower(cc.connectorType)
			integration := ""
			if cc.webhook != "" {
				integration = s.createWebhook(hooks, t+" integration", cc.webhook)
			}
			id := chosenID("rc_" + t)
			name := unique(t)
			r1, err := c.ConnectorsServiceCreateConnectorWithResponse(s.ctx, body[connectors.ConnectorsServiceCreateConnectorJSONRequestBody](s, t+" create",
				`{"connector":{"id":"`+id+`","name":"`+name+`","description":"scenario","type":"`+cc.connectorType+`","connectorConfig":{"fields":`+cc.fieldsJSON(integration)+`}}}`))
			out := s.must(t+" create", r1, err, 200)
			s.typed(t+" create", r1.JSON200)
			s.equal(t+" create", out, "connector.id", id)
			s.sameFields(t+" create", out, cc, integration)

			r2, err := c.ConnectorsServiceGetConnectorWithResponse(s.ctx, id)
			got := s.must(t+" read", r2, err, 200)
			s.typed(t+" read", r2.JSON200)
			s.equal(t+" read", got, "connector.name", name)
			s.equal(t+" read", got, "connector.type", cc.connectorType)
			s.sameFields(t+" read", got, cc, integration)

			// A replace sends what the client planned, credentials included (a client holds them).
			r3, err := c.ConnectorsServiceReplaceConnectorWithResponse(s.ctx, body[connectors.ConnectorsServiceReplaceConnectorJSONRequestBody](s, t+" replace",
				`{"connector":{"id":"`+id+`","name":"`+name+`-2","description":"scenario 2","type":"`+cc.connectorType+`","connectorConfig":{"fields":`+cc.fieldsJSON(integration)+`}}}`))
			s.must(t+" replace", r3, err, 200)
			r4, err := c.ConnectorsServiceGetConnectorWithResponse(s.ctx, id)
			got = s.must(t+" read after replace", r4, err, 200)
			s.equal(t+" read after replace", got, "connector.name", name+"-2")
			s.equal(t+" read after replace", got, "connector.description", "scenario 2")
			s.sameFields(t+" read after replace", got, cc, integration)

			r5, err := c.ConnectorsServiceListConnectorsWithResponse(s.ctx, &connectors.ConnectorsServiceListConnectorsParams{})
			list := s.must(t+" list", r5, err, 200)
			s.contains(t+" list", list, "connectors", "id", id)

			r6, err := c.ConnectorsServiceDeleteConnectorWithResponse(s.ctx, id)
			s.must(t+" delete", r6, err, 200)
			r7, err := c.ConnectorsServiceGetConnectorWithResponse(s.ctx, id)
			s.must(t+" read after delete", r7, err, 404)
		}
	})

	// The templates clients put in configOverrides: a URL that depends on the alert's status and
	// a PagerDuty key per priority, answered as sent.
	register("connectors_service:overrides", func(s *S) {
		c, err := connectors.NewClientWithResponses(s.base, connectors.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		urlTemplate := "{% if alert.status == 'Triggered' %}https://api.example.com/v2/alerts{% else %}https://api.example.com/v2/alerts/{{alert.groupingKey}}/close{% endif %}"
		keyTemplate := "integration_{{alertDef.priority}}"
		for _, step := range []struct{ name, connector, field, template string }{
			{"generic url template", `"type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://api.example.com/v2/alerts"},{"fieldName":"method","value":"POST"}]}`, "url", urlTemplate},
			{"pagerduty key template", `"type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"k"}]}`, "integrationKey", keyTemplate},
		} {
			tmpl, _ := json.Marshal(step.template)
			id := chosenID("rc_override")
			r1, err := c.ConnectorsServiceCreateConnectorWithResponse(s.ctx, body[connectors.ConnectorsServiceCreateConnectorJSONRequestBody](s, step.name,
				`{"connector":{"id":"`+id+`","name":"`+unique("override")+`",`+step.connector+
					`,"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"`+step.field+`","template":`+string(tmpl)+`}]}]}}`))
			s.must(step.name, r1, err, 200)
			r2, err := c.ConnectorsServiceGetConnectorWithResponse(s.ctx, id)
			got := s.must(step.name+" read", r2, err, 200)
			s.equal(step.name+" read", got, "connector.configOverrides.0.entityType", "ALERTS")
			s.equal(step.name+" read", got, "connector.configOverrides.0.fields.0.fieldName", step.field)
			s.equal(step.name+" read", got, "connector.configOverrides.0.fields.0.template", step.template)
			r3, err := c.ConnectorsServiceDeleteConnectorWithResponse(s.ctx, id)
			s.must(step.name+" delete", r3, err, 200)
		}
	})

	// Custom presets whose parents are the public system presets, with the payload types and
	// message fields the vendor's examples send.
	register("presets_service:system-parents", func(s *S) {
		c, err := presets.NewClientWithResponses(s.base, presets.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		for _, p := range []struct{ connector, parent, override string }{
			{"GENERIC_HTTPS", "preset_system_generic_https_alerts_empty",
				`{"payloadType":"generic_https_default","conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[{"fieldName":"headers","template":"{}"},{"fieldName":"body","template":"{ \"status\": \"{{alert.status}}\" }"}]}}`},
			{"SLACK", "preset_system_slack_alerts_basic",
				`{"conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[{"fieldName":"title","template":"{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}"},{"fieldName":"description","template":"{{alertDef.description}}"}]}}`},
			{"PAGERDUTY", "preset_system_pagerduty_alerts_basic",
				`{"conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[{"fieldName":"summary","template":"{{ alertDef.description }}"},{"fieldName":"severity","template":"{% if alertDef.priority == 'P1' %}critical{% else %}info{% endif %}"},{"fieldName":"timestamp","template":"{{ alertDef.timestamp }}"}]}}`},
		} {
			t := strings.ToLower(p.connector)
			r0, err := c.PresetsServiceGetPresetWithResponse(s.ctx, p.parent)
			s.must(t+" system parent", r0, err, 200)
			id := chosenID("preset_" + t)
			r1, err := c.PresetsServiceCreateCustomPresetWithResponse(s.ctx, body[presets.PresetsServiceCreateCustomPresetJSONRequestBody](s, t+" create",
				`{"preset":{"id":"`+id+`","name":"`+unique(t)+`","description":"scenario","presetType":"CUSTOM","entityType":"ALERTS","connectorType":"`+p.connector+`","parentId":"`+p.parent+`","configOverrides":[`+p.override+`]}}`))
			out := s.must(t+" create", r1, err, 200)
			s.equal(t+" create", out, "preset.id", id)
			r2, err := c.PresetsServiceGetPresetWithResponse(s.ctx, id)
			got := s.must(t+" read", r2, err, 200)
			s.equal(t+" read", got, "preset.parentId", p.parent)
			s.equal(t+" read", got, "preset.connectorType", p.connector)
			var sent map[string]any
			_ = json.Unmarshal([]byte(p.override), &sent)
			for i, f := range get(sent, "messageConfig.fields").([]any) {
				idx := fmt.Sprint(i)
				s.equal(t+" read", got, "preset.configOverrides.0.messageConfig.fields."+idx+".fieldName", str(f, "fieldName"))
				s.equal(t+" read", got, "preset.configOverrides.0.messageConfig.fields."+idx+".template", str(f, "template"))
			}
			r3, err := c.PresetsServiceDeleteCustomPresetWithResponse(s.ctx, id)
			s.must(t+" delete", r3, err, 200)
		}
		// An unknown payload type is refused.
		r4, err := c.PresetsServiceCreateCustomPresetWithResponse(s.ctx, body[presets.PresetsServiceCreateCustomPresetJSONRequestBody](s, "unknown payload type",
			`{"preset":{"name":"`+unique("bad")+`","entityType":"ALERTS","connectorType":"GENERIC_HTTPS","parentId":"preset_system_generic_https_alerts_empty","configOverrides":[{"payloadType":"no_such_payload","conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[]}}]}}`))
		s.must("unknown payload type", r4, err, 400)
	})

	register("connector_schema_service", func(s *S) {
		c, err := connectorschema.NewClientWithResponses(s.base, connectorschema.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		for _, cc := range connectorCases {
			t := connectorschema.NotificationCenterConnectorType(cc.connectorType)
			r, err := c.ConnectorSchemaServiceGetConnectorSchemaWithResponse(s.ctx, &connectorschema.ConnectorSchemaServiceGetConnectorSchemaParams{Type: &t})
			out := s.must(strings.ToLower(cc.connectorType), r, err, 200)
			s.typed(strings.ToLower(cc.connectorType), r.JSON200)
			for _, f := range cc.fields {
				s.contains(strings.ToLower(cc.connectorType), out, "connectorSchema.connectorConfigSchema.fields", "fieldName", f[0])
			}
		}
	})

	register("global_routers_service", func(s *S) {
		conns, err := connectors.NewClientWithResponses(s.base, connectors.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		c, err := globalrouters.NewClientWithResponses(s.base, globalrouters.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		connector := chosenID("rc_router")
		r0, err := conns.ConnectorsServiceCreateConnectorWithResponse(s.ctx, body[connectors.ConnectorsServiceCreateConnectorJSONRequestBody](s, "connector",
			`{"connector":{"id":"`+connector+`","name":"`+unique("router-target")+`","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://hooks.example.com/router"},{"fieldName":"method","value":"POST"}]}}}`))
		s.must("connector", r0, err, 200)
		id := chosenID("router")
		name := unique("router")
		rules := `[{"name":"p1","condition":"alertDef.priority == 'P1'","entityType":"ALERTS","targets":[{"connectorId":"` + connector + `","presetId":"preset_system_generic_https_alerts_empty"}]}]`
		r1, err := c.GlobalRoutersServiceCreateGlobalRouterWithResponse(s.ctx, body[globalrouters.GlobalRoutersServiceCreateGlobalRouterJSONRequestBody](s, "create",
			`{"router":{"id":"`+id+`","name":"`+name+`","description":"scenario","entityLabels":{"team":"`+id+`"},"rules":`+rules+`}}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		s.equal("create", out, "router.id", id)
		r2, err := c.GlobalRoutersServiceGetGlobalRouterWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.equal("read", got, "router.name", name)
		s.equal("read", got, "router.rules.0.targets.0.connectorId", connector)
		s.equal("read", got, "router.rules.0.targets.0.presetId", "preset_system_generic_https_alerts_empty")
		r3, err := c.GlobalRoutersServiceReplaceGlobalRouterWithResponse(s.ctx, body[globalrouters.GlobalRoutersServiceReplaceGlobalRouterJSONRequestBody](s, "replace",
			`{"router":{"id":"`+id+`","name":"`+name+`-2","description":"scenario 2","entityLabels":{"team":"`+id+`"},"rules":`+rules+`}}`))
		s.must("replace", r3, err, 200)
		r4, err := c.GlobalRoutersServiceGetGlobalRouterWithResponse(s.ctx, id)
		got = s.must("read after replace", r4, err, 200)
		s.equal("read after replace", got, "router.name", name+"-2")
		r5, err := c.GlobalRoutersServiceListGlobalRoutersWithResponse(s.ctx, &globalrouters.GlobalRoutersServiceListGlobalRoutersParams{})
		list := s.must("list", r5, err, 200)
		s.contains("list", list, "routers", "id", id)
		r6, err := c.GlobalRoutersServiceDeleteGlobalRouterWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.GlobalRoutersServiceGetGlobalRouterWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
		r8, err := conns.ConnectorsServiceDeleteConnectorWithResponse(s.ctx, connector)
		s.must("delete connector", r8, err, 200)
	})
}
