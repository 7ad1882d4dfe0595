package promrules_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

const alertDefsPath = "/mgmt/openapi/latest/alerts/alerts/v3"

// createAlertDef creates an alert definition with the properties (JSON) and answers its id and
// version id.
func createAlertDef(t *testing.T, env *apitest.Env, key, props string) (id, version string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, alertDefsPath, key, `{"alertDefProperties":`+props+`}`)
	def := apitest.Decode[struct {
		AlertDef struct {
			ID             string `json:"id"`
			AlertVersionID string `json:"alertVersionId"`
		} `json:"alertDef"`
	}](t, res).AlertDef
	return def.ID, def.AlertVersionID
}

func parseRuleFile(t *testing.T, text string) promrules.File {
	t.Helper()
	var f promrules.File
	if err := yaml.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("rule file: %v\n%s", err, text)
	}
	return f
}

func groupNamed(f promrules.File, name string) (promrules.Group, bool) {
	for _, g := range f.Groups {
		if g.Name == name {
			return g, true
		}
	}
	return promrules.Group{}, false
}

// TestAlertDefinitionsInTheRuleFile: the team's enabled metric threshold, metric anomaly and SLO
// threshold definitions are groups of the rule file that promtool accepts, their alerts named as
// the definition and labelled with its id, version, name, priority (a rule's override first),
// type, rule index, severity and entity labels, the version an annotation; a replace changes the version; disabled
// definitions (an unset enabled is false), types mgmtapi does not evaluate and another team's definitions are not in it; an
// SLO alert on an SLO without PromQL is left out.
func TestAlertDefinitionsInTheRuleFile(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "alerts")
		_, otherKey := env.MustTeam(t, "other")
		sloRes := env.JSON(t, http.MethodPost, "/mgmt/openapi/4/slo/slos/v1", key, `{"name":"availability",
			"targetThresholdPercentage":99,"sloTimeFrame":"SLO_TIME_FRAME_7_DAYS","requestBasedMetricSli":{
			"goodEvents":{"query":"sum(rate(http_requests_total{code!~\"5..\"}[5m]))"},
			"totalEvents":{"query":"sum(rate(http_requests_total[5m]))"}}}`)
		sloID := apitest.Decode[struct{ Slo struct{ ID string } }](t, sloRes).Slo.ID
		apmRes := env.JSON(t, http.MethodPost, "/mgmt/openapi/4/slo/slos/v1", key, `{"name":"apm",
			"targetThresholdPercentage":99,"sloTimeFrame":"SLO_TIME_FRAME_7_DAYS","apmSli":{"services":["checkout"],"errorConfig":{}}}`)
		apmID := apitest.Decode[struct{ Slo struct{ ID string } }](t, apmRes).Slo.ID

		name := `Error rate {{ $value }} "quoted"`
		metricID, metricVersion := createAlertDef(t, env, key, `{"name":`+fmt.Sprintf("%q", name)+`,"enabled":true,"priority":"ALERT_DEF_PRIORITY_P2",
			"description":"Errors of the api job","entityLabels":{"team":"payments","severity":"left out: ours","bad-name":"left out"},
			"groupByKeys":["service"],
			"activeOn":{"dayOfWeek":["DAY_OF_WEEK_MONDAY_OR_UNSPECIFIED","DAY_OF_WEEK_SUNDAY"],"startTime":{"hours":22},"endTime":{"hours":6,"minutes":30}},
			"metricThreshold":{"metricFilter":{"promql":"sum by (service) (rate(errors_total[5m]))"},"evaluationDelayMs":60000,
			"missingValues":{"replaceWithZero":true},"noDataPolicy":{"state":"NO_DATA_POLICY_STATE_ALERTING"},
			"rules":[
			 {"condition":{"threshold":5,"forOverPct":50,"ofTheLast":{"metricTimeWindowSpecificValue":"METRIC_TIME_WINDOW_VALUE_MINUTES_10"},
			  "conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_EQUALS"},"override":{"priority":"ALERT_DEF_PRIORITY_P1"}},
			 {"condition":{"threshold":1,"ofTheLast":{"metricTimeWindowDynamicDuration":"7m"}}}]}}`)
		anomalyID, _ := createAlertDef(t, env, key, `{"name":"Unusual traffic","enabled":true,"metricAnomaly":{
			"metricFilter":{"promql":"sum(rate(http_requests_total[5m]))"},"anomalyAlertSettings":{"percentageOfDeviation":20},
			"rules":[{"condition":{"threshold":10,"forOverPct":20,"minNonNullValuesPct":50,
			"ofTheLast":{"metricTimeWindowSpecificValue":"METRIC_TIME_WINDOW_VALUE_MINUTES_15"},
			"conditionType":"METRIC_ANOMALY_CONDITION_TYPE_LESS_THAN_USUAL"}}]}}`)
		burnID, _ := createAlertDef(t, env, key, `{"name":"Burning","enabled":true,"priority":"ALERT_DEF_PRIORITY_P3","sloThreshold":{
			"sloDefinition":{"sloId":"`+sloID+`"},"burnRate":{"dual":{"timeDuration":{"duration":"1","unit":"DURATION_UNIT_HOURS"}},
			"rules":[{"condition":{"threshold":14.4},"override":{"priority":"ALERT_DEF_PRIORITY_P1"}},{"condition":{"threshold":6}}]}}}`)
		budgetID, _ := createAlertDef(t, env, key, `{"name":"Budget","enabled":true,"sloThreshold":{"sloDefinition":{"sloId":"`+sloID+`"},
			"errorBudget":{"rules":[{"condition":{"threshold":25}}]}}}`)
		apmAlertID, _ := createAlertDef(t, env, key, `{"name":"On APM","enabled":true,"sloThreshold":{"sloDefinition":{"sloId":"`+apmID+`"},
			"errorBudget":{"rules":[{"condition":{"threshold":25}}]}}}`)
		disabledID, _ := createAlertDef(t, env, key, `{"name":"Off","enabled":false,"metricThreshold":{"metricFilter":{"promql":"up"},
			"rules":[{"condition":{"threshold":1}}]}}`)
		logsID, _ := createAlertDef(t, env, key, `{"name":"Logs","logsImmediate":{}}`)
		otherID, _ := createAlertDef(t, env, otherKey, `{"name":"Theirs","enabled":true,"metricThreshold":{"metricFilter":{"promql":"up"},
			"rules":[{"condition":{"threshold":1}}]}}`)

		text := ruleFile(t, env, key)
		file := parseRuleFile(t, text)
		for _, absent := range []string{disabledID, logsID, otherID, apmAlertID} {
			if _, ok := groupNamed(file, "alertdef-"+absent); ok {
				t.Errorf("the rule file has a group for definition %s:\n%s", absent, text)
			}
		}
		metric, ok := groupNamed(file, "alertdef-"+metricID)
		if !ok {
			t.Fatalf("no group alertdef-%s:\n%s", metricID, text)
		}
		if len(metric.Rules) != 3 { // two conditions and the no-data alert
			t.Fatalf("metric threshold group has %d rules, want 3:\n%s", len(metric.Rules), text)
		}
		first := metric.Rules[0]
		want := map[string]string{
			"alert_def_id": metricID, "alert_def_name": `Error rate {{ "{{" }} $value }} "quoted"`,
			"alert_def_priority": "P1", "alert_def_type": "METRIC_THRESHOLD", "alert_def_rule": "0", "severity": "p1", "team": "payments",
			"alert_def_team_id": strconv.FormatInt(team, 10),
		}
		if first.Alert != name || fmt.Sprint(first.Labels) != fmt.Sprint(want) {
			t.Fatalf("first rule: alert %q labels %v, want %q %v", first.Alert, first.Labels, name, want)
		}
		// The version is an annotation, not a label (issue 37): an edit keeps the alert's identity.
		if first.Annotations["alert_def_version_id"] != metricVersion {
			t.Fatalf("first rule's annotations %v, want alert_def_version_id %s", first.Annotations, metricVersion)
		}
		for _, part := range []string{">= bool 5", "offset 1m", "[10m:15s]", "max by (service)", "day_of_week() == 1", "day_of_week() == 0", ">= 1320 or"} {
			if !strings.Contains(first.Expr, part) {
				t.Errorf("first rule's expression lacks %q: %s", part, first.Expr)
			}
		}
		if second := metric.Rules[1]; second.Labels["alert_def_priority"] != "P2" || second.Labels["severity"] != "p2" ||
			!strings.Contains(second.Expr, "> bool 1") || !strings.Contains(second.Expr, "[7m:15s]") {
			t.Errorf("second rule: %+v", second)
		}
		if noData := metric.Rules[2]; !strings.Contains(noData.Expr, "unless on (service) count by (service)") || noData.Labels["alert_def_no_data"] != "true" {
			t.Errorf("no-data rule: %+v", noData)
		}
		// Each evaluated type has a no-data rule last (issue 37): anomaly and SLO definitions
		// always, over their query's series or their SLO's total events.
		noData := func(r promrules.Rule, window string) bool {
			return r.Labels["alert_def_no_data"] == "true" && strings.Contains(r.Expr, " unless ") &&
				strings.Contains(r.Expr, "["+window+":") && strings.Contains(r.Expr, "rate(http_requests_total[5m])")
		}
		if g, ok := groupNamed(file, "alertdef-"+anomalyID); !ok || len(g.Rules) != 4 || g.Rules[0].Record == "" || g.Rules[2].Labels["severity"] != "p5" ||
			g.Rules[2].Labels["alert_def_no_data"] != "" || !noData(g.Rules[3], "15m") || g.Rules[3].Labels["alert_def_rule"] != "1" {
			t.Errorf("anomaly group %+v (found %v)", g, ok)
		}
		if g, ok := groupNamed(file, "alertdef-"+burnID); !ok || len(g.Rules) != 3 || g.Rules[0].Labels["severity"] != "p1" ||
			g.Rules[1].Labels["severity"] != "p3" || !strings.Contains(g.Rules[0].Expr, "[1h]") || !strings.Contains(g.Rules[0].Expr, "[5m]") ||
			!noData(g.Rules[2], "1h") {
			t.Errorf("burn-rate group %+v (found %v)", g, ok)
		}
		if g, ok := groupNamed(file, "alertdef-"+budgetID); !ok || len(g.Rules) != 2 || !strings.Contains(g.Rules[0].Expr, "[1w]") ||
			!noData(g.Rules[1], "1h") {
			t.Errorf("error-budget group %+v (found %v)", g, ok)
		}
		path := filepath.Join(t.TempDir(), "rules.yml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if output, ok := prometheustest.CheckRules(t, path); !ok {
			t.Fatalf("promtool check rules: %s\n%s", output, text)
		}

		// A replace is a new version, which the alerts carry.
		res := env.JSON(t, http.MethodPut, alertDefsPath, key, `{"id":"`+metricID+`","alertDefProperties":{"name":"Renamed","enabled":true,
			"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("replace: %d %s", res.Status, res.Body)
		}
		replaced, _ := groupNamed(parseRuleFile(t, ruleFile(t, env, key)), "alertdef-"+metricID)
		if len(replaced.Rules) != 1 || replaced.Rules[0].Alert != "Renamed" || replaced.Rules[0].Annotations["alert_def_version_id"] == metricVersion ||
			replaced.Rules[0].Labels["alert_def_version_id"] != "" {
			t.Fatalf("after the replace: %+v", replaced)
		}

		// The skipped definition is said, with the reason.
		_, skipped, err := promrules.AlertDefGroupsAndSkips(t.Context(), env.DB.Read(), team)
		if err != nil {
			t.Fatal(err)
		}
		if len(skipped) != 1 || skipped[0].ID != apmAlertID || !strings.Contains(skipped[0].Reason, "apmSli") {
			t.Fatalf("skipped %+v, want the APM SLO's alert", skipped)
		}
		// And the file says it, as a comment line Prometheus ignores.
		if text, line := ruleFile(t, env, key), promrules.LeftOutComment+"alert definition "+apmAlertID+" "; !strings.Contains(text, line) {
			t.Fatalf("rule file without the line %q:\n%s", line, text)
		}
	})
}
