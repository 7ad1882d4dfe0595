package promrules

import (
	"fmt"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// TestSLOAlertConditionsUnderPromtool runs `promtool test rules` on SLO threshold alerts: a
// request-based SLO of 99% over 7 days (a 1% error budget) over two jobs, one answering 5% of
// its requests with a 500 (a burn rate of 5), one 0.5% (a burn rate of 0.5, half the budget
// left). The alerts are evaluated at 2h.
func TestSLOAlertConditionsUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	slo := func(job string) oas.Slo {
		return oas.Slo{
			ID:                        oas.NewOptString("5e0c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"),
			Name:                      "availability of " + job,
			TargetThresholdPercentage: 99,
			SloTimeFrame:              oas.SloTimeFrameSLOTIMEFRAME7DAYS,
			RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
				GoodEvents:  oas.SloMetric{Query: fmt.Sprintf(`sum(rate(http_requests_total{job=%q,code="200"}[5m]))`, job)},
				TotalEvents: oas.SloMetric{Query: fmt.Sprintf(`sum(rate(http_requests_total{job=%q}[5m]))`, job)},
			}),
		}
	}
	burning, healthy := slo("burning"), slo("healthy")
	cases := []struct {
		name  string
		expr  func() (string, error)
		fires bool
	}{
		{"burn_single_over", func() (string, error) { return sloBurnRateExpr(burning, time.Hour, false, 4.9) }, true},
		{"burn_single_under", func() (string, error) { return sloBurnRateExpr(burning, time.Hour, false, 5.1) }, false},
		{"burn_dual_over", func() (string, error) { return sloBurnRateExpr(burning, time.Hour, true, 4.9) }, true},
		{"burn_healthy", func() (string, error) { return sloBurnRateExpr(healthy, time.Hour, true, 0.6) }, false},
		{"burn_healthy_low_threshold", func() (string, error) { return sloBurnRateExpr(healthy, time.Hour, false, 0.4) }, true},
		// Burning at 5× for 2 hours of a 7-day frame: the budget left is 100 × (1 - 0.05/0.01) = -400%.
		{"budget_spent", func() (string, error) { return sloErrorBudgetExpr(burning, 0) }, true},
		// Healthy: half of the budget is left (50%).
		{"budget_half_under_60", func() (string, error) { return sloErrorBudgetExpr(healthy, 60) }, true},
		{"budget_half_over_40", func() (string, error) { return sloErrorBudgetExpr(healthy, 40) }, false},
	}
	rules := File{Groups: []Group{{Name: "slo alerts"}}}
	var alertTests []map[string]any
	for _, c := range cases {
		expr, err := c.expr()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: c.name, Expr: expr})
		expected := []map[string]any{}
		if c.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "2h", "alertname": c.name, "exp_alerts": expected})
	}
	series := []map[string]any{
		{"series": `http_requests_total{job="burning",code="200"}`, "values": "0+95x480"},
		{"series": `http_requests_total{job="burning",code="500"}`, "values": "0+5x480"},
		{"series": `http_requests_total{job="healthy",code="200"}`, "values": "0+995x480"},
		{"series": `http_requests_total{job="healthy",code="500"}`, "values": "0+5x480"},
	}
	runPromtoolTest(t, tool, rules, "1m", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": alertTests}})
}

// TestSLOAlertConditionsRefuseWhatTheyCannotWatch: an SLO without PromQL rules, and a dual burn
// rate whose short window would be under a minute, answer errors instead of rules.
func TestSLOAlertConditionsRefuseWhatTheyCannotWatch(t *testing.T) {
	apm := oas.Slo{ID: oas.NewOptString("5e0c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8b"), Name: "apm", TargetThresholdPercentage: 99,
		SloTimeFrame: oas.SloTimeFrameSLOTIMEFRAME7DAYS, ApmSli: oas.NewOptSloApmSli(oas.SloApmSli{})}
	if _, err := sloBurnRateExpr(apm, time.Hour, false, 1); err == nil {
		t.Error("an APM SLO got a burn-rate expression")
	}
	if _, err := sloErrorBudgetExpr(apm, 1); err == nil {
		t.Error("an APM SLO got an error-budget expression")
	}
	ok := oas.Slo{ID: oas.NewOptString("5e0c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8c"), Name: "ok", TargetThresholdPercentage: 99,
		SloTimeFrame: oas.SloTimeFrameSLOTIMEFRAME7DAYS,
		RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
			GoodEvents: oas.SloMetric{Query: `sum(rate(good[5m]))`}, TotalEvents: oas.SloMetric{Query: `sum(rate(all[5m]))`}})}
	if _, err := sloBurnRateExpr(ok, 11*time.Minute, true, 1); err == nil {
		t.Error("a dual burn rate over 11 minutes got an expression")
	}
	if _, err := sloBurnRateExpr(ok, 12*time.Minute, true, 1); err != nil {
		t.Errorf("a dual burn rate over 12 minutes: %v", err)
	}
}

// TestAnomalyAndSLONoDataUnderPromtool (issue 37) runs `promtool test rules` on the no-data rules
// of a metric anomaly definition (its query's series, by its groupByKeys, silent for its first
// rule's 15-minute window) and of an SLO threshold definition (its SLO's total events, by the
// SLO's grouping, silent for the burn rate's window; an hour for an error budget), as
// AlertDefGroup writes them: job "stopped" reports for an hour (the day's memory is read a
// sixtieth of a day apart: a series is remembered once a point of it falls on one) and is no data
// a window after it stopped, at 85m (anomaly) and 130m (SLO), not before; job "running" reports
// throughout and never is. Before issue 37's sixth part these definitions had no such rule.
func TestAnomalyAndSLONoDataUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	def := func(doc string) oas.AlertDef {
		var d oas.AlertDef
		if err := d.UnmarshalJSON([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	anomaly := def(`{"id":"0f6c2a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a","alertVersionId":"v1","alertDefProperties":{"name":"Traffic",
		"type":"ALERT_DEF_TYPE_METRIC_ANOMALY","groupByKeys":["job"],"metricAnomaly":{
		"metricFilter":{"promql":"sum by (job) (rate(http_requests_total[5m]))"},
		"rules":[{"condition":{"threshold":1,"forOverPct":20,"ofTheLast":{"metricTimeWindowSpecificValue":"METRIC_TIME_WINDOW_VALUE_MINUTES_15"},
		"conditionType":"METRIC_ANOMALY_CONDITION_TYPE_LESS_THAN_USUAL"}}]}}}`)
	budget := def(`{"id":"1f6c2a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a","alertVersionId":"v1","alertDefProperties":{"name":"Budget",
		"type":"ALERT_DEF_TYPE_SLO_THRESHOLD","sloThreshold":{"sloDefinition":{"sloId":"5e0c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"},
		"errorBudget":{"rules":[{"condition":{"threshold":25}}]}}}}`)
	slo := oas.Slo{
		ID: oas.NewOptString("5e0c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"), Name: "availability", TargetThresholdPercentage: 99,
		SloTimeFrame: oas.SloTimeFrameSLOTIMEFRAME7DAYS,
		Grouping:     oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"job"}}),
		RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
			GoodEvents:  oas.SloMetric{Query: `sum by (job) (rate(http_requests_total{code="200"}[5m]))`},
			TotalEvents: oas.SloMetric{Query: `sum by (job) (rate(http_requests_total[5m]))`},
		}),
	}
	noDataOf := func(d oas.AlertDef, s *oas.Slo, name string) Rule {
		g, err := AlertDefGroup(1, d, s)
		if err != nil {
			t.Fatal(err)
		}
		last := g.Rules[len(g.Rules)-1]
		if last.Labels[AlertDefNoDataLabel] != "true" {
			t.Fatalf("%s: the last rule is not the no-data rule: %+v", name, last)
		}
		last.Alert = name
		return last
	}
	rules := File{Groups: []Group{{Name: "no data", Rules: []Rule{noDataOf(anomaly, nil, "anomaly_no_data"), noDataOf(budget, &slo, "slo_no_data")}}}}
	series := []map[string]any{
		{"series": `http_requests_total{job="stopped",code="200"}`, "values": "0+60x240 stale"},
		{"series": `http_requests_total{job="running",code="200"}`, "values": "0+60x600"},
	}
	expect := func(at, alert string, jobs ...string) map[string]any {
		exp := []map[string]any{}
		for _, job := range jobs {
			r := ruleNamed(rules, alert)
			labels := map[string]string{"job": job}
			for k, v := range r.Labels {
				labels[k] = v
			}
			exp = append(exp, map[string]any{"exp_labels": labels, "exp_annotations": r.Annotations})
		}
		return map[string]any{"eval_time": at, "alertname": alert, "exp_alerts": exp}
	}
	runPromtoolTest(t, tool, rules, "1m", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": []map[string]any{
		expect("70m", "anomaly_no_data"),
		expect("85m", "anomaly_no_data", "stopped"),
		expect("110m", "slo_no_data"),
		expect("130m", "slo_no_data", "stopped"),
	}}})
}

// ruleNamed is the rule of f's first group named alert.
func ruleNamed(f File, alert string) Rule {
	for _, r := range f.Groups[0].Rules {
		if r.Alert == alert {
			return r
		}
	}
	return Rule{}
}
