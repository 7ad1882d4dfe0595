package teamconfig_test

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

// storedDef is a definition as GetAlertDef answers it.
type storedDef struct {
	ID             string `json:"id"`
	AlertVersionID string `json:"alertVersionId"`
	UpdatedTime    string `json:"updatedTime"`
}

func getDef(t *testing.T, env *apitest.Env, key, id string) (storedDef, int) {
	t.Helper()
	res := env.JSON(t, http.MethodGet, alertDefsPath+"/"+id, key, "")
	if res.Status != http.StatusOK {
		return storedDef{}, res.Status
	}
	return apitest.Decode[struct{ AlertDef storedDef }](t, res).AlertDef, res.Status
}

// versionsOf counts the versions ever written of the team's definition id.
func versionsOf(t *testing.T, env *apitest.Env, team int64, id string) int {
	t.Helper()
	var n int
	if err := env.DB.Read().QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM alert_def_versions WHERE team_id = $1 AND alert_def_id = $2`, team, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// alertRuleGroup answers the group name of the team's Prometheus rule file.
func alertRuleGroup(t *testing.T, env *apitest.Env, key, name string) (promrules.Group, bool) {
	t.Helper()
	res := env.Do(t, http.MethodGet, "/config/v1/prometheus/rules", "Bearer "+key, "", "")
	if res.Status != http.StatusOK {
		t.Fatalf("rule file: %d %s", res.Status, res.Body)
	}
	var f promrules.File
	if err := yaml.Unmarshal(res.Body, &f); err != nil {
		t.Fatalf("rule file: %v\n%s", err, res.Body)
	}
	for _, g := range f.Groups {
		if g.Name == name {
			return g, true
		}
	}
	return promrules.Group{}, false
}

// TestAlertDefinitions: definitions go to another team with the document's SLO and the same rule
// group; a re-apply is unchanged and writes no version, a change is an update that writes one; a
// bad definition is a 400 naming it and the field, and changes nothing; prune deletes a
// definition (its versions stay readable), but not an SLO a kept definition names.
func TestAlertDefinitions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		sourceTeam, source := env.MustTeam(t, "source")
		slo := apitest.Decode[struct{ Slo struct{ ID string } }](t, apitest.Response{Status: 200, Body: mustCreate(t, env, source, http.MethodPost, slosPath,
			`{"name":"availability","targetThresholdPercentage":99.9,"sloTimeFrame":"SLO_TIME_FRAME_28_DAYS",`+
				`"requestBasedMetricSli":{"goodEvents":{"query":"sum(rate(http_requests_total{code!~\"5..\"}[5m]))"},"totalEvents":{"query":"sum(rate(http_requests_total[5m]))"}}}`)}).Slo.ID
		burn := apitest.Decode[struct{ AlertDef storedDef }](t, apitest.Response{Status: 200,
			Body: mustCreate(t, env, source, http.MethodPost, alertDefsPath, `{"alertDefProperties":`+sloAlert(slo)+`}`)}).AlertDef
		mustCreate(t, env, source, http.MethodPost, alertDefsPath, `{"alertDefProperties":`+latencyAlert+`}`)
		doc := mustExport(t, env, source, false)
		if !strings.Contains(doc, "sloId: "+slo) || strings.Contains(doc, "alertVersionId") || strings.Contains(doc, "status") {
			t.Fatalf("export:\n%s", doc)
		}

		copyTeam, copyKey := env.MustTeam(t, "copy")
		first := mustApply(t, env, copyKey, "", doc)
		if got := actions(first); got["alertDefinitions create"] != 2 || got["slos create"] != 1 {
			t.Fatalf("first apply: %v", got)
		}
		if again := mustExport(t, env, copyKey, false); again != doc {
			t.Fatalf("export of the copy differs:\n--- source\n%s\n--- copy\n%s", doc, again)
		}

		// The copy's rule group is the one its definition gives, as for the source's.
		copied, _ := getDef(t, env, copyKey, burn.ID)
		got, ok := alertRuleGroup(t, env, copyKey, "alertdef-"+burn.ID)
		if !ok {
			t.Fatalf("the copy's rule file has no group alertdef-%s", burn.ID)
		}
		want, ok := alertRuleGroup(t, env, source, "alertdef-"+burn.ID)
		if !ok || len(want.Rules) == 0 {
			t.Fatalf("the source's rule file has no group alertdef-%s", burn.ID)
		}
		for _, r := range want.Rules {
			r.Annotations[promrules.AlertDefVersionAnnotation] = copied.AlertVersionID
			r.Labels[promrules.AlertDefTeamLabel] = strconv.FormatInt(copyTeam, 10)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the copy's group:\n%+v\nwant\n%+v", got, want)
		}

		// Applying again changes nothing and writes no version.
		second := mustApply(t, env, copyKey, "", doc)
		if second.Summary["unchanged"] != len(second.Changes) {
			t.Fatalf("second apply: %+v", second)
		}
		if after, _ := getDef(t, env, copyKey, burn.ID); after != copied || versionsOf(t, env, copyTeam, burn.ID) != 1 {
			t.Fatalf("an unchanged apply touched the definition: %+v after %+v, %d versions", after, copied, versionsOf(t, env, copyTeam, burn.ID))
		}

		// A changed definition is an update: one new version, the old one still readable.
		changed := strings.Replace(doc, "threshold: 14.4", "threshold: 10", 1)
		if changed == doc {
			t.Fatalf("no threshold to change in:\n%s", doc)
		}
		update := mustApply(t, env, copyKey, "", changed)
		if got := actions(update); got["alertDefinitions update"] != 1 || got["alertDefinitions unchanged"] != 1 || update.Summary["unchanged"] != len(update.Changes)-1 {
			t.Fatalf("apply of a changed threshold: %v", got)
		}
		updated, _ := getDef(t, env, copyKey, burn.ID)
		if updated.AlertVersionID == copied.AlertVersionID || versionsOf(t, env, copyTeam, burn.ID) != 2 {
			t.Fatalf("the update wrote %d versions (now %s, was %s)", versionsOf(t, env, copyTeam, burn.ID), updated.AlertVersionID, copied.AlertVersionID)
		}
		if res := env.JSON(t, http.MethodGet, alertDefsPath+"/version-ids/"+copied.AlertVersionID, copyKey, ""); res.Status != http.StatusOK {
			t.Fatalf("the replaced version: %d %s", res.Status, res.Body)
		}
		if mustExport(t, env, source, false) != doc {
			t.Fatalf("applying to the copy changed the source team")
		}

		// Bad definitions: 400 naming the definition and the field; nothing changes.
		before := mustExport(t, env, copyKey, false)
		for _, c := range []struct {
			name, doc string
			fragments []string
		}{
			{"PromQL", "alertDefinitions:\n- {alertDefProperties: {name: ok, logsImmediate: {}}}\n" +
				"- {alertDefProperties: {name: bad, metricThreshold: {metricFilter: {promql: 'sum(up'}, rules: [{condition: {threshold: 1}}]}}}\n",
				[]string{"alertDefinitions[1]: alertDefProperties.metricThreshold.metricFilter.promql: not valid PromQL"}},
			{"two type blocks", "alertDefinitions:\n- {alertDefProperties: {name: two, logsImmediate: {}, tracingImmediate: {}}}\n",
				[]string{"alertDefinitions[0]: alertDefProperties: holds logsImmediate and tracingImmediate"}},
			{"enum of CreateAlertDef's body", "alertDefinitions:\n- {alertDefProperties: {name: p, priority: URGENT, logsImmediate: {}}}\n",
				[]string{"alertDefinitions[0]: alertDefProperties.priority"}},
			{"id", "alertDefinitions:\n- {id: mine, alertDefProperties: {name: i, logsImmediate: {}}}\n",
				[]string{`alertDefinitions[0]: id: "mine" is not a UUID`}},
			{"SLO neither the team's nor the document's", "alertDefinitions:\n- {alertDefProperties: " + sloAlert("00000000-0000-4000-8000-000000000999") + "}\n",
				[]string{`alertDefinitions[0] ("Burning"): alertDefProperties.sloThreshold.sloDefinition.sloId: no SLO "00000000-0000-4000-8000-000000000999"`}},
			{"flow naming nothing", "alertDefinitions:\n- {alertDefProperties: {name: f, flow: {stages: [{flowStagesGroups: {groups: [{alertDefs: [{id: 00000000-0000-4000-8000-000000000998}]}]}}]}}}\n",
				[]string{`alertDefinitions[0] ("f"): alertDefProperties.flow.stages[0].flowStagesGroups.groups[0].alertDefs[0].id: no alert definition`}},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, apply(t, env, copyKey, "?prune=true", "application/yaml", c.doc), 400, c.fragments...)
				if after := mustExport(t, env, copyKey, false); after != before {
					t.Fatalf("a refused apply changed the team:\n%s\n---\n%s", before, after)
				}
			})
		}

		// A key that may not change definitions: 403 naming the permission (doc is a change back).
		applyOnly := env.MustKey(t, copyKey, "org-settings:UpdateConfig", "slo:UpdateConfig")
		apitest.ExpectError(t, apply(t, env, applyOnly, "", "application/yaml", doc), 403, `"alerts:UpdateConfig"`, "alertDefinitions")

		// An SLO a kept definition names is not pruned: 409 naming the definition.
		apitest.ExpectError(t, apply(t, env, copyKey, "?prune=true", "application/yaml", withoutArea(doc, "slos")+"slos: []\n"), 409,
			`slos "`+slo+`" (deleted by prune)`, `alert definition "Burning"`)
		if after := mustExport(t, env, copyKey, false); after != before {
			t.Fatalf("a refused prune changed the team")
		}

		// Prune deletes the definitions the document lacks; a deleted definition's versions stay
		// readable. Definitions go before the SLO they name.
		pruned := mustApply(t, env, copyKey, "?prune=true", "alertDefinitions: []\nslos: []\n")
		if got := actions(pruned); got["alertDefinitions delete"] != 2 || got["slos delete"] != 1 {
			t.Fatalf("prune: %v", got)
		}
		if _, status := getDef(t, env, copyKey, burn.ID); status != http.StatusNotFound {
			t.Fatalf("a pruned definition answers %d", status)
		}
		res := env.JSON(t, http.MethodGet, alertDefsPath+"/version-ids/"+updated.AlertVersionID, copyKey, "")
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"deleted":true`) {
			t.Fatalf("the pruned definition's version: %d %s", res.Status, res.Body)
		}
		if _, ok := alertRuleGroup(t, env, copyKey, "alertdef-"+burn.ID); ok {
			t.Fatalf("the rule file keeps the pruned definition's group")
		}
		if versionsOf(t, env, sourceTeam, burn.ID) != 1 {
			t.Fatalf("the source's definition has %d versions", versionsOf(t, env, sourceTeam, burn.ID))
		}
	})
}

// TestAlertDefinitionFlows: a flow listed before the definitions it names, with an id that sorts
// first, is created after them; prune deletes it before them.
func TestAlertDefinitionFlows(t *testing.T) {
	const flow, metric, logs = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000c"
	doc := `alertDefinitions:
- {id: ` + flow + `, alertDefProperties: {name: flow, flow: {stages: [{flowStagesGroups: {groups: [{alertDefs: [{id: ` + metric + `}, {id: ` + logs + `}]}]}}]}}}
- {id: ` + metric + `, alertDefProperties: {name: metric, metricThreshold: {metricFilter: {promql: up}, rules: [{condition: {threshold: 1}}]}}}
- {id: ` + strings.ToUpper(logs) + `, alertDefProperties: {name: logs, logsImmediate: {}}}
`
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "flows")
		if got := actions(mustApply(t, env, key, "", doc)); got["alertDefinitions create"] != 3 {
			t.Fatalf("apply: %v", got)
		}
		if p := mustApply(t, env, key, "", doc); p.Summary["unchanged"] != 3 {
			t.Fatalf("again (an id in capitals is the same id): %+v", p)
		}
		// Deletes run newest id first unless the area orders them: the flow, whose id is the
		// oldest, must go first.
		if got := actions(mustApply(t, env, key, "?prune=true", "alertDefinitions: []\n")); got["alertDefinitions delete"] != 3 {
			t.Fatalf("prune: %v", got)
		}
	})
}
