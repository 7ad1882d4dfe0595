package presets_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	summaryPath       = "/mgmt/openapi/5/notifications/notification-center/v1/presets/summaries"
	systemSummaryPath = summaryPath + "/system"
	entityTypesPath   = "/mgmt/openapi/5/notifications/notification-center/v1/entity-types"
	emailID           = "preset_system_email_alerts"
)

func pair(connector, entity string) string {
	return "?connector_type=" + connector + "&entity_type=" + entity
}

// defaultOf answers the id of the pair's default (path: summaryPath or systemSummaryPath).
func defaultOf(t *testing.T, env *apitest.Env, key, path, query string) string {
	t.Helper()
	return apitest.Decode[struct{ PresetSummary presetOut }](t, env.JSON(t, http.MethodGet, path+query, key, "")).PresetSummary.ID
}

func setDefault(t *testing.T, env *apitest.Env, key, path string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, path, key, "")
	if res.Status != http.StatusOK || string(res.Body) != "{}" {
		t.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
	}
}

func TestDefaultPresetPerPair(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		slackAlerts := pair("SLACK", "ALERTS")
		expect := func(query, want string) {
			t.Helper()
			if got := defaultOf(t, env, key, summaryPath, query); got != want {
				t.Fatalf("default of %s: %s, want %s", query, got, want)
			}
		}
		// Without a choice, a pair's default is its system preset.
		expect(slackAlerts, slackID)
		got := apitest.Decode[struct{ PresetSummary presetOut }](t, env.JSON(t, http.MethodGet, summaryPath+slackAlerts, key, "")).PresetSummary
		if got.PresetType != "SYSTEM" || got.ConnectorType != "SLACK" || got.EntityType != "ALERTS" || got.ConfigOverrides != nil {
			t.Fatalf("system summary %+v", got)
		}
		c1 := create(t, env, key, `{"name":"c1","connectorType":"SLACK","entityType":"ALERTS"}`)
		c2 := create(t, env, key, `{"name":"c2","connectorType":"SLACK","entityType":"ALERTS"}`)
		setDefault(t, env, key, deletePath+c1.ID+"/default")
		env.Restart(t)
		expect(slackAlerts, c1.ID)
		expect(pair("EMAIL", "ALERTS"), emailID) // other pairs keep theirs
		if got := defaultOf(t, env, key, systemSummaryPath, slackAlerts); got != slackID {
			t.Fatalf("system default after a custom one: %s", got)
		}
		if got := defaultOf(t, env, otherKey, summaryPath, slackAlerts); got != slackID {
			t.Fatalf("another team's default: %s", got)
		}
		// Another custom preset replaces it; the system preset takes it back.
		setDefault(t, env, key, deletePath+c2.ID+"/default")
		setDefault(t, env, key, deletePath+c2.ID+"/default")
		expect(slackAlerts, c2.ID)
		setDefault(t, env, key, getPath+slackID+"/default")
		expect(slackAlerts, slackID)
		setDefault(t, env, key, getPath+c1.ID+"/default") // the generic route takes custom presets too
		expect(slackAlerts, c1.ID)
		// Replacing the default with another pair drops it from the old pair.
		if res := env.JSON(t, http.MethodPut, replacePath, key,
			`{"preset":{"id":"`+c1.ID+`","name":"c1","connectorType":"SLACK","entityType":"CASES"}}`); res.Status != 200 {
			t.Fatalf("replace: %d %s", res.Status, res.Body)
		}
		expect(slackAlerts, slackID)
		expect(pair("SLACK", "CASES"), "preset_system_slack_cases_basic")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, summaryPath+pair("PAGERDUTY", "OLLY_SCHEDULED_TASKS"), key, ""), 404, "OLLY_SCHEDULED_TASKS")
		setDefault(t, env, key, deletePath+c1.ID+"/default")
		expect(pair("SLACK", "CASES"), c1.ID)
		// Replacing it within its pair keeps it the default; deleting it does not.
		if res := env.JSON(t, http.MethodPut, replacePath, key,
			`{"preset":{"id":"`+c1.ID+`","name":"renamed","connectorType":"SLACK","entityType":"CASES"}}`); res.Status != 200 {
			t.Fatalf("replace: %d %s", res.Status, res.Body)
		}
		expect(pair("SLACK", "CASES"), c1.ID)
		if got := defaultOf(t, env, key, systemSummaryPath, pair("SLACK", "CASES")); got != "preset_system_slack_cases_basic" {
			t.Fatalf("the system default of Slack cases: %s", got)
		}
		if r := env.JSON(t, http.MethodDelete, deletePath+c1.ID, key, ""); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		expect(pair("SLACK", "CASES"), "preset_system_slack_cases_basic")

		// Refusals change nothing.
		setDefault(t, env, key, deletePath+c2.ID+"/default")
		unspecified := create(t, env, key, `{"name":"u","entityType":"ALERTS"}`)
		for _, bad := range []struct {
			key, path string
			status    int
			frags     []string
		}{
			{key, deletePath + slackID + "/default", 400, []string{"id", "system preset"}},
			{key, deletePath + unspecified.ID + "/default", 400, []string{"connectorType CONNECTOR_TYPE_UNSPECIFIED"}},
			{key, getPath + unspecified.ID + "/default", 400, []string{"only a preset that names both"}},
			{key, deletePath + "00000000-0000-4000-8000-000000000000/default", 404, []string{"id"}},
			{key, getPath + "nope/default", 404, []string{"nope"}},
			{otherKey, deletePath + c2.ID + "/default", 404, []string{c2.ID}},
			{otherKey, getPath + c2.ID + "/default", 404, []string{c2.ID}},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, bad.path, bad.key, ""), bad.status, bad.frags...)
		}
		expect(slackAlerts, c2.ID)
		for _, bad := range []struct{ query, field string }{
			{"", "connector_type"},
			{"?entity_type=ALERTS", "connector_type"},
			{"?connector_type=SLACK", "entity_type"},
			{pair("CONNECTOR_TYPE_UNSPECIFIED", "ALERTS"), "connector_type"},
			{pair("SLACK", "ENTITY_TYPE_UNSPECIFIED"), "entity_type"},
			{pair("TELEGRAM", "ALERTS"), "connector_type"},
			{pair("SLACK", "DOGS"), "entity_type"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, summaryPath+bad.query, key, ""), 400, bad.field)
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, systemSummaryPath+bad.query, key, ""), 400, bad.field)
		}
	})
}

// The literal segment summaries is never taken for a preset id: the summary operations answer
// (a 400 without their parameters, not a 404 "no preset"), and no preset can be called so.
func TestSummariesIsNotAPresetID(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":{"id":"summaries","name":"n"}}`), 400, "preset.id", "summaries")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+"summaries", key, ""), 400, "connector_type: required")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+"summaries/system", key, ""), 400, "connector_type: required")
		if id := defaultOf(t, env, key, getPath+"summaries", pair("EMAIL", "ALERTS")); id != emailID {
			t.Fatalf("summaries answered %q", id)
		}
		if id := defaultOf(t, env, key, getPath+"summaries/system", pair("EMAIL", "ALERTS")); id != emailID {
			t.Fatalf("summaries/system answered %q", id)
		}
		// The replace names an existing preset, so it cannot bring the id in either.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, replacePath, key, `{"preset":{"id":"summaries","name":"n"}}`), 404, "summaries")
		// Ids next to the literal are still preset ids.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, getPath+"summaries2", key, ""), 404, "no preset")
	})
}

func TestEntityTypesAndSubTypes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		types := apitest.Decode[struct{ EntityTypes []string }](t, env.JSON(t, http.MethodGet, entityTypesPath, key, "")).EntityTypes
		if want := []string{"ALERTS", "TEST_NOTIFICATIONS", "CASES", "OLLY_SCHEDULED_TASKS"}; !reflect.DeepEqual(types, want) {
			t.Fatalf("entity types %v", types)
		}
		subTypes := func(k, entity string) []string {
			t.Helper()
			res := env.JSON(t, http.MethodGet, entityTypesPath+"/"+entity+"/entity-subtypes", k, "")
			out := apitest.Decode[struct{ EntitySubTypes []string }](t, res).EntitySubTypes
			if out == nil {
				t.Fatalf("no entitySubTypes array: %s", res.Body)
			}
			return out
		}
		if got := subTypes(key, "ALERTS"); len(got) != 0 {
			t.Fatalf("before any preset: %v", got)
		}
		override := func(sub string) string {
			return `{"conditionType":{"matchEntityTypeAndSubType":{"entitySubType":"` + sub + `"}}}`
		}
		create(t, env, key, `{"name":"a","entityType":"ALERTS","configOverrides":[`+override("metric-threshold")+`,`+override("log-ratio")+`]}`)
		create(t, env, key, `{"name":"b","entityType":"ALERTS","configOverrides":[`+override("log-ratio")+`,{"conditionType":{"matchEntityType":{}}}]}`)
		create(t, env, key, `{"name":"c","entityType":"CASES","configOverrides":[`+override("case-opened")+`]}`)
		create(t, env, key, `{"name":"d","entityType":"OLLY_SCHEDULED_TASKS","connectorType":"EMAIL"}`)
		env.Restart(t)
		for entity, want := range map[string][]string{
			"ALERTS": {"log-ratio", "metric-threshold"}, "CASES": {"case-opened"}, "TEST_NOTIFICATIONS": {}, "OLLY_SCHEDULED_TASKS": {},
		} {
			if got := subTypes(key, entity); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %v, want %v", entity, got, want)
			}
		}
		if got := subTypes(otherKey, "ALERTS"); len(got) != 0 {
			t.Fatalf("another team sees %v", got)
		}
		// At most 100, the first in order.
		var many []string
		for i := range 101 {
			many = append(many, override(strings.Repeat("z", 1)+string(rune('a'+i/26))+string(rune('a'+i%26))))
		}
		create(t, env, key, `{"name":"many","entityType":"TEST_NOTIFICATIONS","configOverrides":[`+strings.Join(many[:100], ",")+`]}`)
		create(t, env, key, `{"name":"more","entityType":"TEST_NOTIFICATIONS","configOverrides":[`+many[100]+`]}`)
		if got := subTypes(key, "TEST_NOTIFICATIONS"); len(got) != 100 || got[0] != "zaa" || got[99] != "zdv" {
			t.Fatalf("101 sub-types: %d %v", len(got), got)
		}
		for _, bad := range []string{"ENTITY_TYPE_UNSPECIFIED", "DOGS"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, entityTypesPath+"/"+bad+"/entity-subtypes", key, ""), 400, "entity_type")
		}
		// OLLY_SCHEDULED_TASKS has attachment types like the others (none).
		res := env.JSON(t, http.MethodGet, typesPath+"OLLY_SCHEDULED_TASKS/attachment-types", key, "")
		if res.Status != 200 || string(res.Body) != `{"supportedAttachmentTypes":[]}` {
			t.Fatalf("attachment types %d %s", res.Status, res.Body)
		}
		// The newest public documents added three connector types; others are still refused.
		for _, c := range []string{"PAGERDUTY_INCIDENTS", "MICROSOFT_TEAMS", "EVENTBRIDGE"} {
			got := apitest.Decode[struct {
				Preset struct{ ConnectorType string }
			}](t,
				env.JSON(t, http.MethodPost, createPath, key, `{"preset":{"name":"x","connectorType":"`+c+`"}}`))
			if got.Preset.ConnectorType != c {
				t.Errorf("created with %s: %+v", c, got)
			}
		}
		for _, c := range []string{"TELEGRAM"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, `{"preset":{"name":"x","connectorType":"`+c+`"}}`), 400, "connectorType")
		}
	})
}

func TestDefaultAndEntityPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		p := create(t, env, key, `{"name":"a","connectorType":"SLACK","entityType":"ALERTS"}`)
		ops := []struct{ method, path, perm string }{
			{http.MethodGet, summaryPath + pair("SLACK", "ALERTS"), "notification-center-presets:ReadSummary"},
			{http.MethodGet, systemSummaryPath + pair("SLACK", "ALERTS"), "notification-center-presets:ReadSummary"},
			{http.MethodGet, entityTypesPath, "notification-center-presets:ReadConfig"},
			{http.MethodGet, entityTypesPath + "/ALERTS/entity-subtypes", "notification-center-presets:ReadConfig"},
			{http.MethodPost, deletePath + p.ID + "/default", "notification-center-presets:UpdateConfig"},
			{http.MethodPost, getPath + slackID + "/default", "notification-center-presets:UpdateConfig"},
		}
		reader := env.MustKey(t, key, "notification-center-presets:ReadConfig", "notification-center-presets:ReadSummary")
		manager := env.MustKey(t, key, "notification-center-presets:UpdateConfig")
		for _, op := range ops {
			wrong := reader
			right := manager
			if op.perm != "notification-center-presets:UpdateConfig" {
				wrong, right = manager, reader
			}
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, wrong, ""), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "", ""), 401)
			if res := env.JSON(t, op.method, op.path, right, ""); res.Status != 200 {
				t.Fatalf("%s %s with %s: %d %s", op.method, op.path, op.perm, res.Status, res.Body)
			}
		}
	})
}
