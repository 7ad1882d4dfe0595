package connectors_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// oldConnector is a connector document as earlier versions stored it: the oas encoding of the
// connector, with the retired field names.
func oldConnector(t *testing.T, id string, ty oas.ConnectorType, fields [][2]string, overrides map[oas.NotificationEntityType][][2]string) string {
	t.Helper()
	c := oas.Connector{ID: oas.NewOptString(id), Name: oas.NewOptString(id), Description: oas.NewOptString(""), Type: oas.NewOptConnectorType(ty),
		ConfigOverrides: []oas.ConnectorConfigOverride{}}
	cfg := oas.ConnectorConfig{}
	for _, f := range fields {
		cfg.Fields = append(cfg.Fields, oas.ConnectorConfigField{FieldName: oas.NewOptString(f[0]), Value: oas.NewOptString(f[1])})
	}
	c.ConnectorConfig = oas.NewOptConnectorConfig(cfg)
	for e, fs := range overrides {
		o := oas.ConnectorConfigOverride{EntityType: oas.NewOptNotificationEntityType(e)}
		for _, f := range fs {
			o.Fields = append(o.Fields, oas.ConnectorTemplatedField{FieldName: oas.NewOptString(f[0]), Template: oas.NewOptString(f[1])})
		}
		c.ConfigOverrides = append(c.ConfigOverrides, o)
	}
	doc, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// oldPreset is a custom preset document as earlier versions stored it.
func oldPreset(t *testing.T, id string, ty oas.ConnectorType, parent, payload string, fields ...string) string {
	t.Helper()
	o := oas.PresetConfigOverride{PayloadType: oas.NewOptString(payload),
		ConditionType: oas.NewOptPresetConditionType(oas.PresetConditionType{MatchEntityType: &oas.PresetConditionTypeMatchEntityType{}})}
	var fs []oas.PresetMessageField
	for i := 0; i+1 < len(fields); i += 2 {
		fs = append(fs, oas.PresetMessageField{FieldName: oas.NewOptString(fields[i]), Template: oas.NewOptString(fields[i+1])})
	}
	o.MessageConfig = oas.NewOptPresetMessageConfig(oas.PresetMessageConfig{Fields: fs})
	p := oas.Preset{ID: oas.NewOptString(id), Name: oas.NewOptString(id), Description: oas.NewOptString(""), ConnectorType: oas.NewOptConnectorType(ty),
		EntityType: oas.NewOptNotificationEntityType(oas.NotificationEntityTypeALERTS), PresetType: oas.NewOptPresetType(oas.PresetTypeCUSTOM),
		AttachmentConfig: oas.NewOptAttachmentConfig(oas.AttachmentConfig{Policy: oas.NewOptAttachmentPolicy(oas.AttachmentPolicyAUTO)}),
		ConfigOverrides:  []oas.PresetConfigOverride{o}}
	if parent != "" {
		p.ParentId = oas.NewOptString(parent)
	}
	doc, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// TestMigrationToPublicFields: a database holding connectors and presets as earlier versions
// stored them (retired field names, payload types "default" and "raw", old system preset ids as
// parents) comes up, once migration 0044 has run, with the public names; the retired fields
// without a public counterpart stay, and a Slack connector still delivers to its webhookUrl; a
// second run changes nothing.
func TestMigrationToPublicFields(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		alerts := oas.NotificationEntityTypeALERTS
		rows := map[string]struct {
			ty  oas.ConnectorType
			doc string
		}{
			"old-email": {oas.ConnectorTypeEMAIL, oldConnector(t, "old-email", oas.ConnectorTypeEMAIL,
				[][2]string{{"recipients", `["a@example.com"]`}},
				map[oas.NotificationEntityType][][2]string{alerts: {{"recipients", `["{{alertDef.priority}}@example.com"]`}}})},
			"old-pdi": {oas.ConnectorTypePAGERDUTYINCIDENTS, oldConnector(t, "old-pdi", oas.ConnectorTypePAGERDUTYINCIDENTS,
				[][2]string{{"apiToken", "t0ken"}, {"serviceId", "PABC"}, {"fromEmail", "me@example.com"}},
				map[oas.NotificationEntityType][][2]string{alerts: {{"serviceId", "P{{alertDef.priority}}"}}})},
			"old-slack": {oas.ConnectorTypeSLACK, oldConnector(t, "old-slack", oas.ConnectorTypeSLACK,
				[][2]string{{"webhookUrl", "https://hooks.slack.com/services/T/B/s3cr3t"}, {"channel", "#ops"}, {"username", "bot"}}, nil)},
			"old-teams": {oas.ConnectorTypeMICROSOFTTEAMS, oldConnector(t, "old-teams", oas.ConnectorTypeMICROSOFTTEAMS,
				[][2]string{{"webhookUrl", "https://teams.example/hook"}}, nil)},
			"old-bridge": {oas.ConnectorTypeEVENTBRIDGE, oldConnector(t, "old-bridge", oas.ConnectorTypeEVENTBRIDGE,
				[][2]string{{"eventBusArn", "arn:aws:events:eu-west-1:1:event-bus/b"}, {"roleArn", "arn:aws:iam::1:role/r"}}, nil)},
			// A value that merely contains an old name is not a field name, and is left alone.
			"old-hook": {oas.ConnectorTypeGENERICHTTPS, oldConnector(t, "old-hook", oas.ConnectorTypeGENERICHTTPS,
				[][2]string{{"url", "https://x.example/hook"}, {"additionalBodyFields", `{"fieldName":"recipients"}`}}, nil)},
		}
		for id, r := range rows {
			apitest.MustExec(t, env.DB, `INSERT INTO notification_connectors (team_id, id, connector_type, document, created_at, updated_at) VALUES ($1, $2, $3, $4, 1, 1)`,
				teamID, id, string(r.ty), r.doc)
		}
		presets := map[string][3]string{ // id: connector type, parent, document
			"p-slack":   {"SLACK", "", oldPreset(t, "p-slack", oas.ConnectorTypeSLACK, "", "default", "title", "t", "footer", "f")},
			"p-raw":     {"SLACK", "", oldPreset(t, "p-raw", oas.ConnectorTypeSLACK, "", "raw", "payload", `{"text":"x"}`)},
			"p-generic": {"GENERIC_HTTPS", "preset_system_generic_https_alerts_basic", oldPreset(t, "p-generic", oas.ConnectorTypeGENERICHTTPS, "preset_system_generic_https_alerts_basic", "default", "body", "{}")},
			"p-email":   {"EMAIL", "preset_system_email_alerts_basic", oldPreset(t, "p-email", oas.ConnectorTypeEMAIL, "preset_system_email_alerts_basic", "default", "title", "t")},
		}
		for id, p := range presets {
			apitest.MustExec(t, env.DB, `INSERT INTO notification_presets (team_id, id, connector_type, entity_type, parent_id, document, created_at, updated_at)
				VALUES ($1, $2, $3, 'ALERTS', $4, $5, 1, 1)`, teamID, id, p[0], p[1], p[2])
		}
		migrate := func() {
			apitest.MustExec(t, env.DB, `DELETE FROM schema_migrations WHERE version = 44`)
			env.Restart(t) // opening the database applies 0044 again
		}
		migrate()

		fieldsOf := func(id string) (map[string]string, string) {
			c := get(t, env, key, id)
			out := map[string]string{}
			for _, f := range c.ConnectorConfig.Fields {
				out[f.FieldName] = f.Value
			}
			return out, string(c.ConfigOverrides)
		}
		if f, o := fieldsOf("old-email"); f["emailAddresses"] != `["a@example.com"]` || len(f) != 1 || !strings.Contains(o, `"fieldName":"emailAddresses"`) || strings.Contains(o, "recipients") {
			t.Errorf("email after 0044: %v %s", f, o)
		}
		if f, o := fieldsOf("old-pdi"); f["service"] != "PABC" || f["apiToken"] != connectortypes.Mask || f["fromEmail"] != "me@example.com" || f["serviceId"] != "" ||
			!strings.Contains(o, `"fieldName":"service"`) {
			t.Errorf("pagerduty incidents after 0044: %v %s", f, o)
		}
		if f, _ := fieldsOf("old-slack"); f["webhookUrl"] != connectortypes.Mask || f["channel"] != "#ops" || f["username"] != "bot" {
			t.Errorf("slack after 0044: %v", f)
		}
		if f, _ := fieldsOf("old-bridge"); f["eventBusArn"] == "" || f["roleArn"] == "" {
			t.Errorf("eventbridge after 0044: %v", f)
		}
		if f, _ := fieldsOf("old-hook"); f["additionalBodyFields"] != `{"fieldName":"recipients"}` {
			t.Errorf("a value holding an old name changed: %v", f)
		}
		// Deliveries still go where they went.
		for id, want := range map[string]string{"old-slack": "https://hooks.slack.com/services/T/B/s3cr3t", "old-teams": "https://teams.example/hook"} {
			c, err := connectors.Load(context.Background(), env.DB.Read(), teamID, id)
			if err != nil {
				t.Fatal(err)
			}
			if u, _, ok := destination(c); u != want || !ok {
				t.Errorf("%s delivers to %q", id, u)
			}
		}
		// A migrated connector sent back as answered is accepted (its deprecated fields stand in
		// for the integrationId it lacks).
		for _, id := range []string{"old-slack", "old-pdi", "old-teams", "old-bridge", "old-email"} {
			var answer map[string]any
			_ = json.Unmarshal(apitest.Decode[struct{ Connector json.RawMessage }](t, env.JSON(t, http.MethodGet, connPath+"/"+id, key, "")).Connector, &answer)
			for _, k := range []string{"teamId", "createTime", "updateTime", "resolvedConnectorConfig"} {
				delete(answer, k)
			}
			body, _ := json.Marshal(map[string]any{"connector": answer})
			if res := env.JSON(t, http.MethodPut, connPath, key, string(body)); res.Status != 200 {
				t.Errorf("replace of migrated %s: %d %s", id, res.Status, res.Body)
			}
		}

		// Presets.
		for id, want := range map[string][2]string{
			"p-slack":   {`"payloadType":"slack_default"`, ""},
			"p-raw":     {`"payloadType":"slack_raw"`, ""},
			"p-generic": {`"payloadType":"generic_https_default"`, "preset_system_generic_https_alerts_empty"},
			"p-email":   {`"payloadType":"email_default"`, "preset_system_email_alerts"},
		} {
			doc := apitest.MustQueryString(t, env.DB, `SELECT document FROM notification_presets WHERE team_id = $1 AND id = $2`, teamID, id)
			parent := apitest.MustQueryString(t, env.DB, `SELECT parent_id FROM notification_presets WHERE team_id = $1 AND id = $2`, teamID, id)
			if !strings.Contains(doc, want[0]) || parent != want[1] || (want[1] != "" && !strings.Contains(doc, `"parentId":"`+want[1]+`"`)) {
				t.Errorf("preset %s after 0044: parent %q, %s", id, parent, doc)
			}
		}

		// A second run changes nothing.
		before := map[string]string{}
		for id := range rows {
			before[id] = apitest.MustQueryString(t, env.DB, `SELECT document FROM notification_connectors WHERE team_id = $1 AND id = $2`, teamID, id)
		}
		migrate()
		for id, doc := range before {
			if after := apitest.MustQueryString(t, env.DB, `SELECT document FROM notification_connectors WHERE team_id = $1 AND id = $2`, teamID, id); after != doc {
				t.Errorf("%s changed on the second run:\n%s\n%s", id, doc, after)
			}
		}
	})
}
