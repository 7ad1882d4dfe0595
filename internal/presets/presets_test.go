package presets_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	createPath  = "/mgmt/openapi/4/notifications/notification-center/v1/presets/custom"
	replacePath = "/mgmt/openapi/5/notifications/notification-center/v1/presets/custom"
	deletePath  = "/mgmt/openapi/5/notifications/notification-center/v1/presets/custom/"
	getPath     = "/mgmt/openapi/5/notifications/notification-center/v1/presets/"
	batchPath   = "/mgmt/openapi/5/notifications/notification-center/v1/presets"
	listPath    = "/mgmt/openapi/5/notifications/notification-center/v1/presets:summariesList"
	typesPath   = "/mgmt/openapi/5/notifications/notification-center/v1/entity-types/"
	slackID     = "preset_system_slack_alerts_basic"
)

type presetOut struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	Description      *string `json:"description"`
	ParentID         string  `json:"parentId"`
	ConnectorType    string  `json:"connectorType"`
	EntityType       string  `json:"entityType"`
	PresetType       string  `json:"presetType"`
	AttachmentConfig struct{ Policy string }
	ConfigOverrides  json.RawMessage `json:"configOverrides"`
	CreateTime       string          `json:"createTime"`
	UpdateTime       string          `json:"updateTime"`
}

func create(t *testing.T, env *apitest.Env, key, preset string) presetOut {
	t.Helper()
	return apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":`+preset+`}`)).Preset
}

func summaries(t *testing.T, env *apitest.Env, key, query string) []presetOut {
	t.Helper()
	return apitest.Decode[struct{ PresetSummaries []presetOut }](t, env.JSON(t, http.MethodGet, listPath+query, key, "")).PresetSummaries
}

func TestCreateFillsDefaults(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		p := create(t, env, key, `{"id":"mine","name":"n","createTime":"2000-01-01T00:00:00Z"}`)
		if p.ID != "mine" || p.Name != "n" || p.Description == nil || *p.Description != "" || p.ParentID != "" ||
			p.ConnectorType != "CONNECTOR_TYPE_UNSPECIFIED" || p.EntityType != "ENTITY_TYPE_UNSPECIFIED" ||
			p.PresetType != "PRESET_TYPE_UNSPECIFIED" || p.AttachmentConfig.Policy != "AUTO" ||
			string(p.ConfigOverrides) != "[]" || p.CreateTime == "" || p.CreateTime == "2000-01-01T00:00:00Z" || p.UpdateTime != p.CreateTime {
			t.Fatalf("defaults %+v", p)
		}
		full := `{"name":"f","description":"d","parentId":"` + slackID + `","connectorType":"SLACK","entityType":"CASES","presetType":"CUSTOM",` +
			`"attachmentConfig":{"policy":"DISABLED"},"configOverrides":[{"conditionType":{"matchEntityTypeAndSubType":{"entitySubType":"s"}},` +
			`"messageConfig":{"fields":[{"fieldName":"title","template":"{{x}}"}]},"payloadType":"default"}]}`
		f := create(t, env, key, full)
		if f.ParentID != slackID || f.ConnectorType != "SLACK" || f.EntityType != "CASES" || f.PresetType != "CUSTOM" || f.AttachmentConfig.Policy != "DISABLED" ||
			!strings.Contains(string(f.ConfigOverrides), `"entitySubType":"s"`) {
			t.Fatalf("full %+v", f)
		}
		env.Restart(t)
		got := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodGet, getPath+f.ID, key, "")).Preset
		if got.ID != f.ID || got.CreateTime != f.CreateTime || string(got.ConfigOverrides) != string(f.ConfigOverrides) {
			t.Fatalf("get %+v, want %+v", got, f)
		}
		// A parent may be a custom preset too.
		c := create(t, env, key, `{"name":"child","parentId":"`+f.ID+`"}`)
		if c.ParentID != f.ID {
			t.Fatalf("child %+v", c)
		}
	})
}

func TestSystemPresets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		all := summaries(t, env, key, "")
		// The public ids the vendor's clients name, and the same pattern for the other types; the
		// preview type INCIDENT_IO is listed only when asked for (it is not in the public
		// documents' enumeration).
		types := []string{"SLACK", "GENERIC_HTTPS", "PAGERDUTY", "IBM_EVENT_NOTIFICATIONS", "SERVICE_NOW", "EMAIL",
			"PAGERDUTY_INCIDENTS", "MICROSOFT_TEAMS", "EVENTBRIDGE"}
		// Each type, with each entity type it carries (PAGERDUTY, IBM, SERVICE_NOW,
		// PAGERDUTY_INCIDENTS and EVENTBRIDGE carry no scheduled tasks; nobody does yet).
		entities := []string{"ALERTS", "TEST_NOTIFICATIONS", "CASES"}
		suffix := map[string]string{"GENERIC_HTTPS": "_empty", "EMAIL": ""}
		var want []string
		for _, c := range types {
			for _, e := range entities {
				s, ok := suffix[c]
				if !ok {
					s = "_basic"
				}
				want = append(want, c+" "+e+" preset_system_"+strings.ToLower(c)+"_"+strings.ToLower(e)+s)
			}
		}
		if len(all) != len(want) {
			t.Fatalf("system presets %d: %+v", len(all), all)
		}
		for i, p := range all {
			if got := p.ConnectorType + " " + p.EntityType + " " + p.ID; got != want[i] || p.PresetType != "SYSTEM" || p.AttachmentConfig.Policy != "AUTO" ||
				p.ConfigOverrides != nil {
				t.Fatalf("system preset %d: %+v, want %s", i, p, want[i])
			}
		}
		if all[0].ID != "preset_system_slack_alerts_basic" || all[3].ID != "preset_system_generic_https_alerts_empty" || all[15].ID != "preset_system_email_alerts" {
			t.Fatalf("the public ids of the alerts presets: %s, %s, %s", all[0].ID, all[3].ID, all[15].ID)
		}
		cases := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodGet, getPath+"preset_system_slack_cases_basic", key, "")).Preset
		if !strings.Contains(string(cases.ConfigOverrides), "case.title") {
			t.Fatalf("the Slack cases preset renders %s", cases.ConfigOverrides)
		}
		got := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodGet, getPath+slackID, key, "")).Preset
		if got.PresetType != "SYSTEM" || !strings.Contains(string(got.ConfigOverrides), "matchEntityType") {
			t.Fatalf("get system %+v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+slackID, key, ""), 400, "system preset")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"`+slackID+`","name":"x"}}`), 400, "preset.id", "system preset")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":{"name":"x","presetType":"SYSTEM"}}`), 400, "preset.presetType")
		// A team created later has them too.
		_, later := env.MustTeam(t, "later")
		if n := len(summaries(t, env, later, "")); n != len(want) {
			t.Fatalf("later team sees %d", n)
		}
		// Filters.
		create(t, env, key, `{"name":"c","connectorType":"SLACK","entityType":"CASES"}`)
		if got := summaries(t, env, key, "?connector_type=SLACK"); len(got) != 4 || got[3].Name != "c" {
			t.Fatalf("slack %+v", got)
		}
		if got := summaries(t, env, key, "?connector_type=SLACK&entity_type=ALERTS"); len(got) != 1 || got[0].ID != slackID {
			t.Fatalf("slack alerts %+v", got)
		}
		if got := summaries(t, env, key, "?connector_type=CONNECTOR_TYPE_UNSPECIFIED&entity_type=ENTITY_TYPE_UNSPECIFIED"); len(got) != len(want)+1 {
			t.Fatalf("unspecified filters %d", len(got))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, listPath+"?connector_type=TELEGRAM", key, ""), 400, "connector_type")
	})
}

func TestReplaceAndDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, `{"name":"a","connectorType":"EMAIL","attachmentConfig":{"policy":"ENABLED"}}`)
		b := create(t, env, key, `{"name":"b","parentId":"`+a.ID+`"}`)
		env.Clock.Advance(1e9)
		up := apitest.Decode[struct{ Preset presetOut }](t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"`+a.ID+`","name":"a2","attachmentConfig":{}}}`)).Preset
		if up.Name != "a2" || up.ConnectorType != "CONNECTOR_TYPE_UNSPECIFIED" || up.AttachmentConfig.Policy != "AUTO" || up.CreateTime != a.CreateTime || up.UpdateTime == a.UpdateTime {
			t.Fatalf("replaced %+v", up)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"name":"x"}}`), 400, "preset.id", "required")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"nope","name":"x"}}`), 404, "nope")
		// Cycles are refused.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"`+a.ID+`","name":"a","parentId":"`+a.ID+`"}}`), 400, "preset.parentId", "itself")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"`+a.ID+`","name":"a","parentId":"`+b.ID+`"}}`), 400, "preset.parentId", "itself")
		// A parent cannot go while a child derives from it.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+a.ID, key, ""), 409, a.ID, b.ID)
		if res := env.JSON(t, http.MethodDelete, deletePath+b.ID, key, ""); res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("delete b: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, deletePath+a.ID, key, ""); res.Status != 200 {
			t.Fatalf("delete a: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+a.ID, key, ""), 404, a.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+a.ID, key, ""), 404, a.ID)
	})
}

func TestBatchGet(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, `{"name":"a"}`)
		q := url.Values{"preset_ids": {a.ID, slackID, "missing", a.ID, "missing"}}
		res := apitest.Decode[struct {
			Presets     map[string]presetOut
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchPath+"?"+q.Encode(), key, ""))
		if len(res.Presets) != 2 || res.Presets[a.ID].Name != "a" || res.Presets[slackID].PresetType != "SYSTEM" ||
			len(res.NotFoundIds) != 1 || res.NotFoundIds[0] != "missing" {
			t.Fatalf("batch %+v", res)
		}
		empty := apitest.Decode[struct {
			Presets     map[string]presetOut
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchPath, key, ""))
		if len(empty.Presets) != 0 || empty.NotFoundIds == nil {
			t.Fatalf("empty batch %+v", empty)
		}
		// 0–100 ids.
		ids := url.Values{}
		for i := range 100 {
			ids.Add("preset_ids", fmt.Sprintf("id-%d", i))
		}
		if got := apitest.Decode[struct{ NotFoundIds []string }](t, env.JSON(t, http.MethodGet, batchPath+"?"+ids.Encode(), key, "")); len(got.NotFoundIds) != 100 {
			t.Fatalf("100 ids: %d", len(got.NotFoundIds))
		}
		ids.Add("preset_ids", "one-more")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, batchPath+"?"+ids.Encode(), key, ""), 400, "preset_ids")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, batchPath+"?preset_ids=_bad", key, ""), 400, "preset_ids")
	})
}

func TestBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// Names 1–200 and descriptions 0–5000 characters (code points).
		create(t, env, key, `{"name":"é"}`)
		create(t, env, key, `{"name":"`+strings.Repeat("é", 200)+`","description":"`+strings.Repeat("é", 5000)+`"}`)
		create(t, env, key, `{"name":"x","description":""}`)
		for _, c := range []struct{ body, frag string }{
			{`{}`, "preset.name"},
			{`{"name":""}`, "name"},
			{`{"name":"` + strings.Repeat("é", 201) + `"}`, "name"},
			{`{"name":"x","description":"` + strings.Repeat("é", 5001) + `"}`, "description"},
			{`{"name":"x","connectorType":"TELEGRAM"}`, "connectorType"},
			{`{"name":"x","entityType":"DOGS"}`, "entityType"},
			{`{"name":"x","attachmentConfig":{"policy":"SOMETIMES"}}`, "policy"},
			{`{"name":"x","parentId":"nope"}`, "preset.parentId: no preset"},
			{`{"name":"x","configOverrides":[{"conditionType":{"matchEntityType":{},"matchEntityTypeAndSubType":{}}}]}`,
				"preset.configOverrides[0].conditionType: must set at most one"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":`+c.body+`}`), 400, c.frag)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{}`), 400, "preset")
		// Override bounds (the newest public documents'): 0–100 overrides of 0–100 fields;
		// fieldName 1–256 characters, payloadType and entitySubType 1–100, template up to 20000.
		override := func(fields int, name, tmpl, payload, sub int) string {
			fs := make([]string, fields)
			for i := range fs {
				fs[i] = `{"fieldName":"` + strings.Repeat("f", name) + `","template":"` + strings.Repeat("t", tmpl) + `"}`
			}
			return `{"conditionType":{"matchEntityTypeAndSubType":{"entitySubType":"` + strings.Repeat("s", sub) + `"}},` +
				`"messageConfig":{"fields":[` + strings.Join(fs, ",") + `]},"payloadType":"` + strings.Repeat("p", payload) + `"}`
		}
		overrides := func(n int, one string) string {
			items := make([]string, n)
			for i := range items {
				items[i] = one
			}
			return `{"name":"o","configOverrides":[` + strings.Join(items, ",") + `]}`
		}
		create(t, env, key, overrides(100, override(1, 1, 0, 1, 1)))
		create(t, env, key, overrides(1, override(100, 256, 20000, 100, 100)))
		// An empty conditionType sets no condition (the newest documents allow it).
		create(t, env, key, `{"name":"x","configOverrides":[{"conditionType":{}}]}`)
		for _, c := range []struct{ body, frag string }{
			{overrides(101, override(0, 1, 0, 1, 1)), "configOverrides"},
			{overrides(1, override(101, 1, 0, 1, 1)), "fields"},
			{overrides(1, override(1, 257, 0, 1, 1)), "fieldName"},
			{overrides(1, override(1, 0, 0, 1, 1)), "fieldName"},
			{overrides(1, override(1, 1, 20001, 1, 1)), "template"},
			{overrides(1, override(1, 1, 0, 101, 1)), "payloadType"},
			{overrides(1, override(1, 1, 0, 0, 1)), "payloadType"},
			{overrides(1, override(1, 1, 0, 1, 101)), "entitySubType"},
			{overrides(1, override(1, 1, 0, 1, 0)), "entitySubType"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":`+c.body+`}`), 400, c.frag)
		}
		// Notification-center id path parameters: 1–128 characters, alphanumeric first, then
		// alphanumerics, _ or -.
		for _, id := range []string{"a", "0", strings.Repeat("a", 128), "a_b-C9"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+id, key, ""), 404, id)
			apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+id, key, ""), 404, id)
		}
		for _, id := range []string{strings.Repeat("a", 129), "_a", "-a", "a.b", "a%20b", "%C3%A9"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+id, key, ""), 400, "id")
			apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+id, key, ""), 400, "id")
		}
	})
}

func TestAttachmentTypes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		type list struct {
			SupportedAttachmentTypes []struct {
				Name           string
				DefaultEnabled bool
			}
		}
		alerts := apitest.Decode[list](t, env.JSON(t, http.MethodGet, typesPath+"ALERTS/attachment-types", key, ""))
		if len(alerts.SupportedAttachmentTypes) != 2 || alerts.SupportedAttachmentTypes[0].Name != "alert_graph" ||
			!alerts.SupportedAttachmentTypes[0].DefaultEnabled || alerts.SupportedAttachmentTypes[1].DefaultEnabled {
			t.Fatalf("alerts %+v", alerts)
		}
		if got := apitest.Decode[list](t, env.JSON(t, http.MethodGet, typesPath+"CASES/attachment-types", key, "")); len(got.SupportedAttachmentTypes) != 2 {
			t.Fatalf("cases %+v", got)
		}
		res := env.JSON(t, http.MethodGet, typesPath+"TEST_NOTIFICATIONS/attachment-types", key, "")
		if res.Status != 200 || string(res.Body) != `{"supportedAttachmentTypes":[]}` {
			t.Fatalf("test notifications %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, typesPath+"ENTITY_TYPE_UNSPECIFIED/attachment-types", key, ""), 400, "entity_type")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, typesPath+"DOGS/attachment-types", key, ""), 400, "entity_type")
	})
}

func TestPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		p := create(t, env, key, `{"name":"a"}`)
		ops := []struct {
			method, path, body, perm string
		}{
			{http.MethodPost, createPath, `{"preset":{"name":"b"}}`, "notification-center-presets:UpdateConfig"},
			{http.MethodPut, replacePath, `{"preset":{"id":"` + p.ID + `","name":"a"}}`, "notification-center-presets:UpdateConfig"},
			{http.MethodGet, getPath + p.ID, "", "notification-center-presets:ReadConfig"},
			{http.MethodGet, batchPath + "?preset_ids=" + p.ID, "", "notification-center-presets:ReadConfig"},
			{http.MethodGet, listPath, "", "notification-center-presets:ReadSummary"},
			{http.MethodGet, typesPath + "ALERTS/attachment-types", "", "notification-center-presets:ReadConfig"},
			{http.MethodDelete, deletePath + p.ID, "", "notification-center-presets:UpdateConfig"},
		}
		wrong := env.MustKey(t, key, "case:Read")
		for _, op := range ops {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, wrong, op.body), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
		}
		// Another team's preset is missing, and the other team's writes do not touch it.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+p.ID, otherKey, ""), 404, p.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, otherKey, `{"preset":{"id":"`+p.ID+`","name":"x"}}`), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deletePath+p.ID, otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, otherKey, `{"preset":{"name":"x","parentId":"`+p.ID+`"}}`), 400, "preset.parentId")
		if got := apitest.Decode[struct{ NotFoundIds []string }](t, env.JSON(t, http.MethodGet, batchPath+"?preset_ids="+p.ID, otherKey, "")); len(got.NotFoundIds) != 1 {
			t.Fatalf("other team batch %+v", got)
		}
		if n := len(summaries(t, env, otherKey, "")); n != 27 { // the system presets only
			t.Fatalf("other team lists %d", n)
		}
		// Each permission alone is enough (the delete last).
		for _, op := range ops {
			k := env.MustKey(t, key, op.perm)
			if res := env.JSON(t, op.method, op.path, k, op.body); res.Status != 200 {
				t.Fatalf("%s %s with %s: %d %s", op.method, op.path, op.perm, res.Status, res.Body)
			}
		}
		// The notification-presets preset holds both.
		preset := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", key,
			`{"name":"np","keyPermissions":{"presets":["notification-presets"]}}`)).Value
		if res := env.JSON(t, http.MethodPost, createPath, preset, `{"preset":{"name":"c"}}`); res.Status != 200 {
			t.Fatalf("preset key: %d %s", res.Status, res.Body)
		}
	})
}

// TestMessageFieldsFollowTheConnectorSchema checks that a preset of a connector type may only set
// the message fields of that type's payload type, as the connector-schema operation answers them.
func TestMessageFieldsFollowTheConnectorSchema(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		preset := func(connector, payload, field string) string {
			return `{"name":"p","connectorType":"` + connector + `","configOverrides":[{"messageConfig":{"fields":[` +
				`{"fieldName":"title","template":"t"},{"fieldName":"` + field + `","template":"x"}]}` + payload + `}]}`
		}
		create(t, env, key, preset("PAGERDUTY", "", "severity"))
		create(t, env, key, preset("SLACK", `,"payloadType":"default"`, "footer"))
		create(t, env, key, preset("SLACK", `,"payloadType":"slack_default"`, "footer"))
		create(t, env, key, preset("GENERIC_HTTPS", `,"payloadType":"generic_https_default"`, "body"))
		create(t, env, key, preset("CONNECTOR_TYPE_UNSPECIFIED", `,"payloadType":"anything"`, "anything"))
		for _, c := range []struct{ body, frag string }{
			{preset("PAGERDUTY", "", "colour"), `preset.configOverrides[0].messageConfig.fields[1].fieldName: "colour" is not a message field of PAGERDUTY payload type pagerduty_default`},
			{preset("SLACK", `,"payloadType":"raw"`, "payload"), `preset.configOverrides[0].messageConfig.fields[0].fieldName: "title" is not a message field of SLACK payload type slack_raw`},
			{preset("MICROSOFT_TEAMS", `,"payloadType":"fancy"`, "title"), `preset.configOverrides[0].payloadType: "fancy" is not a payload type of MICROSOFT_TEAMS connectors (microsoft_teams_default)`},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":`+c.body+`}`), 400, c.frag)
		}
	})
}
