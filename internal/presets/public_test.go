package presets_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// Presets as the vendor's public clients write them (issue 33 §2).

const latestCreate = "/mgmt/openapi/latest/notifications/notification-center/v1/presets:createCustom"

// publicPresets are the presets of the vendor's public examples, each with a chosen id.
var publicPresets = []string{
	`{"id":"generic_https_example","name":"generic_https example","description":"generic_https preset example","entityType":"ALERTS","connectorType":"GENERIC_HTTPS",
	  "parentId":"preset_system_generic_https_alerts_empty","attachmentConfig":{"policy":"ENABLED"},"configOverrides":[{"payloadType":"generic_https_default",
	  "conditionType":{"matchEntityTypeAndSubType":{"entitySubType":"logsImmediateResolved"}},
	  "messageConfig":{"fields":[{"fieldName":"headers","template":"{}"},{"fieldName":"body","template":"{ \"groupingKey\": \"{{alert.groupingKey}}\", \"status\": \"{{alert.status}}\" }"}]}}]}`,
	`{"id":"slack_example","name":"slack example","description":"slack preset example","entityType":"ALERTS","connectorType":"SLACK",
	  "parentId":"preset_system_slack_alerts_basic","configOverrides":[{"conditionType":{"matchEntityTypeAndSubType":{"entitySubType":"logsImmediateResolved"}},
	  "messageConfig":{"fields":[{"fieldName":"title","template":"{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}"},{"fieldName":"description","template":"{{alertDef.description}}"}]}}]}`,
	`{"id":"pagerduty_example","name":"pagerduty example","description":"pagerduty preset example","entityType":"ALERTS","connectorType":"PAGERDUTY",
	  "parentId":"preset_system_pagerduty_alerts_basic","configOverrides":[{"conditionType":{"matchEntityType":{}},
	  "messageConfig":{"fields":[{"fieldName":"summary","template":"{{ alertDef.description }}"},
	  {"fieldName":"severity","template":"{% if alertDef.priority == 'P1' %}\ncritical\n{% else %}\ninfo\n{% endif %}\n"},
	  {"fieldName":"timestamp","template":"{{ alert.timestamp }}"}]}}]}`,
	`{"id":"email_example","name":"email example","description":"email preset example","entityType":"ALERTS","connectorType":"EMAIL",
	  "parentId":"preset_system_email_alerts","configOverrides":[{"payloadType":"email_default","conditionType":{"matchEntityType":{}},
	  "messageConfig":{"fields":[{"fieldName":"customSubject","template":"{{ alertDef.name }}"},{"fieldName":"customContent","template":"<div>content-example</div>"}]}}]}`,
}

// presetSameAsSent fails unless every member sent is answered as sent.
func presetSameAsSent(t *testing.T, what, sent string, answer json.RawMessage) {
	t.Helper()
	var want, got map[string]any
	if err := json.Unmarshal([]byte(sent), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatalf("%s: %s: %v", what, answer, err)
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s: %s answered\n %v\nsent\n %v", what, k, got[k], w)
		}
	}
}

// TestPublicPresetsRoundTrip: the public examples are created under their chosen ids through the
// newest public path (presets:createCustom), read, replaced and deleted, each answer carrying
// what was sent; a second create under an id is a conflict.
func TestPublicPresetsRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, body := range publicPresets {
			var sent struct{ ID string }
			_ = json.Unmarshal([]byte(body), &sent)
			res := env.JSON(t, http.MethodPost, latestCreate, key, `{"preset":`+body+`}`)
			if res.Status != 200 {
				t.Fatalf("%s: create %d %s", sent.ID, res.Status, res.Body)
			}
			presetSameAsSent(t, sent.ID+" create", body, apitest.Decode[struct{ Preset json.RawMessage }](t, res).Preset)
			presetSameAsSent(t, sent.ID+" get", body, apitest.Decode[struct{ Preset json.RawMessage }](t, env.JSON(t, http.MethodGet, getPath+sent.ID, key, "")).Preset)
			replaced := strings.Replace(body, `"name":"`, `"name":"renamed `, 1)
			res = env.JSON(t, http.MethodPut, replacePath, key, `{"preset":`+replaced+`}`)
			if res.Status != 200 {
				t.Fatalf("%s: replace %d %s", sent.ID, res.Status, res.Body)
			}
			presetSameAsSent(t, sent.ID+" replace", replaced, apitest.Decode[struct{ Preset json.RawMessage }](t, res).Preset)
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestCreate, key, `{"preset":`+body+`}`), 409, "preset.id", sent.ID)
		}
		for _, body := range publicPresets {
			var sent struct{ ID string }
			_ = json.Unmarshal([]byte(body), &sent)
			if res := env.JSON(t, http.MethodDelete, deletePath+sent.ID, key, ""); res.Status != 200 {
				t.Fatalf("delete %s: %d %s", sent.ID, res.Status, res.Body)
			}
		}
	})
}

// TestPresetIssueReproduction: the request of issue 33 §2 is accepted and answered as sent; an
// unknown payload type is a 400 pointing at payloadType, with message fields or without.
func TestPresetIssueReproduction(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		body := `{"name":"h","presetType":"CUSTOM","entityType":"ALERTS","connectorType":"GENERIC_HTTPS","parentId":"preset_system_generic_https_alerts_empty",` +
			`"configOverrides":[{"payloadType":"generic_https_default","conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[{"fieldName":"headers","template":"{}"},{"fieldName":"body","template":"{}"}]}}]}`
		res := env.JSON(t, http.MethodPost, latestCreate, key, `{"preset":`+body+`}`)
		if res.Status != 200 {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		presetSameAsSent(t, "reproduction", body, apitest.Decode[struct{ Preset json.RawMessage }](t, res).Preset)
		for _, o := range []string{
			`{"payloadType":"generic_https_fancy","messageConfig":{"fields":[{"fieldName":"body","template":"{}"}]}}`,
			`{"payloadType":"generic_https_fancy"}`,
			`{"payloadType":"slack_default","messageConfig":{"fields":[]}}`,
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestCreate, key,
				`{"preset":{"name":"x","connectorType":"GENERIC_HTTPS","configOverrides":[`+o+`]}}`),
				400, "preset.configOverrides[0].payloadType", "is not a payload type of GENERIC_HTTPS", "generic_https_default")
		}
	})
}

// TestSystemPresetAliases: the ids earlier versions served still find their system presets, and
// answers name the public id; a parentId by an old id is stored as the public one; a chosen id
// may not be a system preset's (old or public), nor break the id pattern.
func TestSystemPresetAliases(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for old, public := range map[string]string{
			"preset_system_generic_https_alerts_basic": "preset_system_generic_https_alerts_empty",
			"preset_system_email_alerts_basic":         "preset_system_email_alerts",
			"preset_system_slack_alerts_basic":         "preset_system_slack_alerts_basic",
		} {
			got := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodGet, getPath+old, key, "")).Preset
			if got.ID != public || got.PresetType != "SYSTEM" {
				t.Fatalf("GET %s: %+v", old, got)
			}
			child := create(t, env, key, `{"name":"c","parentId":"`+old+`"}`)
			if child.ParentID != public {
				t.Fatalf("parentId %s stored as %q", old, child.ParentID)
			}
			for _, id := range []string{old, public} {
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestCreate, key, `{"preset":{"id":"`+id+`","name":"x"}}`), 409, "preset.id", "system preset")
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestCreate, key, `{"preset":{"id":"-x","name":"x"}}`), 400, "preset.id")
		// The system preset names its public payload type.
		got := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodGet, getPath+"preset_system_email_alerts", key, "")).Preset
		if !strings.Contains(string(got.ConfigOverrides), `"payloadType":"email_default"`) {
			t.Fatalf("email system preset %s", got.ConfigOverrides)
		}
	})
}
