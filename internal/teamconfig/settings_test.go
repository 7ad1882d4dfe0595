package teamconfig_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The settings kept beside resources: a pair's default preset, the default dashboard, the
// calling key's pins and retention-tag activation.

const (
	presetSummaries = "/mgmt/openapi/5/notifications/notification-center/v1/presets/summaries?connector_type=SLACK&entity_type=ALERTS"
	dashboardList   = "/mgmt/openapi/5/dashboards/dashboards/v1/catalog/list"
	tagsEnabled     = "/mgmt/openapi/5/dataengine/retention-tags/v1/enabled"

	dashA = "dashboardAAAAAAAAAAAA" // 21 letters, as the server's ids
	dashB = "dashboardBBBBBBBBBBBB"
)

// settingsDoc has two SLACK presets, two dashboards and the four settings: pa the SLACK/ALERTS
// default, dashA the default dashboard, dashB pinned, retention tags active.
const settingsDoc = `version: 1
notificationPresets:
- {id: pa, name: a, connectorType: SLACK, entityType: ALERTS}
- {id: pb, name: b, connectorType: SLACK, entityType: ALERTS}
notificationPresetDefaults:
- {connectorType: SLACK, entityType: ALERTS, presetId: pa}
retentionTagsEnabled: {enableTags: true}
dashboards:
- {dashboard: {id: ` + dashA + `, name: A, layout: {}}}
- {dashboard: {id: ` + dashB + `, name: B, layout: {}}}
defaultDashboard: {dashboardId: ` + dashA + `}
dashboardPins:
- {dashboardId: ` + dashB + `}
`

// changeOf returns the plan's line of area (and id, when not ""), failing when there is none.
func changeOf(t *testing.T, p plan, area, id string) string {
	t.Helper()
	for _, c := range p.Changes {
		if c.Area == area && (id == "" || c.ID == id) {
			return c.Action
		}
	}
	t.Fatalf("no plan line for %s %q: %+v", area, id, p.Changes)
	return ""
}

type catalog struct {
	Items []struct {
		ID                  string
		IsDefault, IsPinned bool
	}
}

// dashboardState answers the ids of the default and of the dashboards key pinned.
func dashboardState(t *testing.T, env *apitest.Env, key string) (def string, pinned []string) {
	t.Helper()
	for _, it := range apitest.Decode[catalog](t, env.JSON(t, http.MethodGet, dashboardList, key, "")).Items {
		if it.IsDefault {
			def = it.ID
		}
		if it.IsPinned {
			pinned = append(pinned, it.ID)
		}
	}
	return def, pinned
}

func defaultPreset(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	return apitest.Decode[struct{ PresetSummary struct{ ID string } }](t, env.JSON(t, http.MethodGet, presetSummaries, key, "")).PresetSummary.ID
}

// TestSettingsPlanAndApply: a dry run plans the settings without changing them; the apply sets
// them as the individual operations do; applying again is unchanged; changes are updates.
func TestSettingsPlanAndApply(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		before := mustExport(t, env, env.RootKey, false)
		for _, want := range []string{"defaultDashboard: {}\n", "retentionTagsEnabled:\n  enableTags: false\n"} {
			if !strings.Contains(before, want) {
				t.Errorf("a new team's export lacks %q:\n%s", want, before)
			}
		}
		dry := mustApply(t, env, env.RootKey, "?dry_run=true", settingsDoc)
		for _, line := range []struct{ area, id, action string }{
			{"notificationPresetDefaults", "SLACK:ALERTS", "create"},
			{"retentionTagsEnabled", "enabled", "update"},
			{"defaultDashboard", "default", "update"},
			{"dashboardPins", dashB, "create"},
		} {
			if got := changeOf(t, dry, line.area, line.id); got != line.action {
				t.Errorf("dry run: %s %s is %s, want %s", line.area, line.id, got, line.action)
			}
		}
		if after := mustExport(t, env, env.RootKey, false); after != before {
			t.Fatalf("a dry run changed the team:\n%s", after)
		}
		if real := mustApply(t, env, env.RootKey, "", settingsDoc); !equalPlans(dry, real) {
			t.Errorf("the apply's plan differs from the dry run's:\n%+v\n%+v", dry, real)
		}
		if got := defaultPreset(t, env, env.RootKey); got != "pa" {
			t.Errorf("SLACK/ALERTS default %q, want pa", got)
		}
		if def, pinned := dashboardState(t, env, env.RootKey); def != dashA || len(pinned) != 1 || pinned[0] != dashB {
			t.Errorf("default %q, pins %v", def, pinned)
		}
		if !strings.Contains(string(env.JSON(t, http.MethodGet, tagsEnabled, env.RootKey, "").Body), `"enableTags":true`) {
			t.Errorf("retention tags are not active")
		}
		if p := mustApply(t, env, env.RootKey, "", settingsDoc); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("the same document again: %+v", p)
		}
		// Another default, another default dashboard and one more pin (without prune the old pin
		// stays).
		changed := strings.NewReplacer("presetId: pa", "presetId: pb", "dashboardId: "+dashA+"}", "dashboardId: "+dashB+"}",
			"- {dashboardId: "+dashB+"}", "- {dashboardId: "+dashA+"}").Replace(settingsDoc)
		p := mustApply(t, env, env.RootKey, "", changed)
		if changeOf(t, p, "notificationPresetDefaults", "SLACK:ALERTS") != "update" || changeOf(t, p, "defaultDashboard", "") != "update" ||
			changeOf(t, p, "dashboardPins", dashA) != "create" {
			t.Errorf("plan %+v", p.Changes)
		}
		if got := defaultPreset(t, env, env.RootKey); got != "pb" {
			t.Errorf("SLACK/ALERTS default %q, want pb", got)
		}
		if def, pinned := dashboardState(t, env, env.RootKey); def != dashB || len(pinned) != 2 {
			t.Errorf("default %q, pins %v; want %s and both pinned", def, pinned, dashB)
		}
		// {} takes the default dashboard away, prune unpins and gives the pair its system preset
		// back; the presets and dashboards stay.
		p = mustApply(t, env, env.RootKey, "?prune=true", "defaultDashboard: {}\ndashboardPins: [{dashboardId: "+dashA+"}]\nnotificationPresetDefaults: []\n")
		if got := actions(p); got["defaultDashboard update"] != 1 || got["dashboardPins delete"] != 1 || got["dashboardPins unchanged"] != 1 ||
			got["notificationPresetDefaults delete"] != 1 || len(got) != 4 {
			t.Errorf("prune plan %v", got)
		}
		if got := defaultPreset(t, env, env.RootKey); !strings.HasPrefix(got, "preset_system_") {
			t.Errorf("SLACK/ALERTS default %q after prune, want the system preset", got)
		}
		if def, pinned := dashboardState(t, env, env.RootKey); def != "" || len(pinned) != 1 || pinned[0] != dashA {
			t.Errorf("after prune: default %q, pins %v", def, pinned)
		}
		// Pins are the calling key's: another key of the team has none, and applying the root's
		// pins with it pins for it.
		other := env.MustKey(t, env.RootKey, "org-settings:ReadConfig", "org-settings:UpdateConfig", "team-dashboards:Read")
		if _, pinned := dashboardState(t, env, other); len(pinned) != 0 {
			t.Errorf("another key sees pins %v", pinned)
		}
		if p := mustApply(t, env, other, "", "dashboardPins: [{dashboardId: "+dashB+"}]\n"); changeOf(t, p, "dashboardPins", dashB) != "create" {
			t.Errorf("plan %+v", p.Changes)
		}
		if _, pinned := dashboardState(t, env, other); len(pinned) != 1 || pinned[0] != dashB {
			t.Errorf("the other key's pins %v", pinned)
		}
		if _, pinned := dashboardState(t, env, env.RootKey); len(pinned) != 1 || pinned[0] != dashA {
			t.Errorf("the root key's pins changed: %v", pinned)
		}
		// The default dashboard needs team-dashboards:Update, as ReplaceDefaultDashboard does.
		apitest.ExpectError(t, apply(t, env, other, "", "application/yaml", "defaultDashboard: {dashboardId: "+dashA+"}\n"),
			403, `"team-dashboards:Update"`, "defaultDashboard")
	})
}

// TestSettingsFailures: a setting that refers to what neither the team nor the document has, or
// that an earlier area undoes, answers 400 naming the setting and the field, and nothing of the
// document is applied.
func TestSettingsFailures(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		mustApply(t, env, env.RootKey, "", settingsDoc)
		before := mustExport(t, env, env.RootKey, false)
		for _, c := range []struct {
			name, doc string
			fragments []string
		}{
			{"default preset absent from the document and the team", `notificationPresets:
- {id: pc, name: c, connectorType: SLACK, entityType: ALERTS}
notificationPresetDefaults:
- {connectorType: SLACK, entityType: ALERTS, presetId: nothing}
`, []string{`notificationPresetDefaults[0]: presetId: no custom preset "nothing"`}},
			{"default preset of another pair", `notificationPresetDefaults:
- {connectorType: EMAIL, entityType: ALERTS, presetId: pa}
`, []string{`notificationPresetDefaults[0]: presetId: preset "pa" has connectorType SLACK`}},
			{"system preset as default", `notificationPresetDefaults:
- {connectorType: SLACK, entityType: ALERTS, presetId: preset_system_slack_alerts_basic}
`, []string{`notificationPresetDefaults[0]: presetId:`, "system preset"}},
			{"unknown connector type", `notificationPresetDefaults:
- {connectorType: FAX, entityType: ALERTS, presetId: pa}
`, []string{`notificationPresetDefaults[0]: connectorType: required, one of`}},
			{"pair given twice", `notificationPresetDefaults:
- {connectorType: SLACK, entityType: ALERTS, presetId: pa}
- {connectorType: SLACK, entityType: ALERTS, presetId: pb}
`, []string{`notificationPresetDefaults[1]`, `"SLACK:ALERTS"`}},
			{"an unchanged default whose preset moves to another pair", `notificationPresets:
- {id: pa, name: a, connectorType: EMAIL, entityType: ALERTS}
- {id: pb, name: b, connectorType: SLACK, entityType: ALERTS}
notificationPresetDefaults:
- {connectorType: SLACK, entityType: ALERTS, presetId: pa}
`, []string{`notificationPresetDefaults[0]: presetId: preset "pa" has connectorType EMAIL`}},
			{"default dashboard absent", "defaultDashboard: {dashboardId: nowhereNOWHEREnowhere}\n",
				[]string{`defaultDashboard: dashboardId: no dashboard "nowhereNOWHEREnowhere"`}},
			{"an unchanged default dashboard that prune deletes", "dashboards: []\ndefaultDashboard: {dashboardId: " + dashA + "}\n",
				[]string{`defaultDashboard: dashboardId: no dashboard "` + dashA + `"`}},
			{"pin of a dashboard absent", "dashboardPins: [{dashboardId: nowhere}]\n",
				[]string{`dashboardPins[0]: dashboardId: no dashboard "nowhere"`}},
			{"pin without a dashboard", "dashboardPins: [{}]\n", []string{`dashboardPins[0]: dashboardId: required`}},
			{"activation undone", "retentionTagsEnabled: {enableTags: false}\n",
				[]string{`retentionTagsEnabled: enableTags: the team activated retention tags`}},
			{"activation not a boolean", "retentionTagsEnabled: {enableTags: maybe}\n", []string{`retentionTagsEnabled: enableTags: required, true or false`}},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, apply(t, env, env.RootKey, "?prune=true", "application/yaml", c.doc), 400, c.fragments...)
				if after := mustExport(t, env, env.RootKey, false); after != before {
					t.Fatalf("a refused apply changed the team:\n%s\n---\n%s", before, after)
				}
			})
		}
	})
}
