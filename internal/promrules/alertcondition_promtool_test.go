package promrules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// conditionCase is one alert of the promtool test of metric conditions: a condition over the
// series m{case="<name>"}, whose values are given in promtool's expanding notation at a 15s
// scrape interval, and whether the alert fires at 10m.
type conditionCase struct {
	name      string
	condition metricCondition
	values    string
	fires     bool
}

// TestMetricConditionsUnderPromtool runs `promtool test rules` on alerts made by
// metricCondition.expr: each comparison at its threshold and just past it, the share of the
// window ("for over N% of the last 5 minutes") at 0% and 100%, missing values counted as zero or
// required, grouping, and the evaluation delay. The series are scraped every 15s from 0 to 10m;
// each case's alert is expected to fire at 10m, or not.
func TestMetricConditionsUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	five := 5 * time.Minute
	cond := func(op string, threshold float64) metricCondition {
		return metricCondition{op: op, threshold: threshold, window: five, step: conditionStep(five)}
	}
	with := func(c metricCondition, change func(*metricCondition)) metricCondition {
		change(&c)
		return c
	}
	cases := []conditionCase{
		// Each comparison at the threshold, and a little past it. 41 values: 0s to 10m.
		{"more_than_at", cond(">", 10), "10x40", false},
		{"more_than_past", cond(">", 10), "10.001x40", true},
		{"more_or_equal_at", cond(">=", 10), "10x40", true},
		{"more_or_equal_below", cond(">=", 10), "9.999x40", false},
		{"less_than_at", cond("<", 10), "10x40", false},
		{"less_than_past", cond("<", 10), "9.999x40", true},
		{"less_or_equal_at", cond("<=", 10), "10x40", true},
		{"less_or_equal_above", cond("<=", 10), "10.001x40", false},
		{"equal_at", cond("==", 10), "10x40", true},
		{"equal_off", cond("==", 10), "10.5x40", false},
		{"not_equal_at", cond("!=", 10), "10x40", false},
		{"not_equal_off", cond("!=", 10), "11x40", true},
		{"negative_threshold", cond("<", -2.5), "-2.6x40", true},

		// forOverPct 0: one point of the last 5 minutes is enough; none is not.
		{"any_point_one", cond(">", 10), "0x39 20 0", true},
		{"any_point_none", cond(">", 10), "0x40", false},
		{"any_point_before_window", cond(">", 10), "0x10 20 0x29", false},
		// forOverPct 100: every point of the window; one point short is not enough.
		{"every_point", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 100 }), "0x18 20x22", true},
		{"every_point_but_one", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 100 }), "0x18 20x19 0 20 20", false},
		// forOverPct 50: the last 5 minutes are all above (100%) → fires; a quarter of them → not.
		{"half_all_above", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 50 }), "0x20 20x20", true},
		{"half_quarter_above", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 50 }), "0x35 20x5", false},

		// Missing values. The series has values only in the last minute and a half (6 of the
		// window's points), all above the threshold. Not replaced: a missing point does not meet
		// the comparison, so 6 of 21 points are under 50%.
		{"missing_not_meeting", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 50 }), "_x35 20x5", false},
		// Replaced with zero (which is not above 10): 5 of 20 or 21 points, under 50%.
		{"missing_as_zero", with(cond(">", 10), func(c *metricCondition) { c.forOverPct = 50; c.replaceWithZero = true }), "_x35 20x5", false},
		// Replaced with zero, and zero meets "less than 10": every point counts → fires.
		{"missing_as_zero_meets", with(cond("<", 10), func(c *metricCondition) { c.forOverPct = 90; c.replaceWithZero = true }), "_x35 5x5", true},
		// At least 50% of the points must have a value: 5 of 20 are too few.
		{"min_values_unmet", with(cond(">", 10), func(c *metricCondition) { c.minNonNullPct = 50 }), "_x35 20x5", false},
		{"min_values_met", with(cond(">", 10), func(c *metricCondition) { c.minNonNullPct = 50 }), "_x15 20x25", true},
	}
	rules := File{Groups: []Group{{Name: "conditions"}}}
	tests := []map[string]any{}
	var series []map[string]any
	var alertTests []map[string]any
	for _, c := range cases {
		query := fmt.Sprintf(`m{case=%q}`, c.name)
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: c.name, Expr: c.condition.expr(query)})
		series = append(series, map[string]any{"series": query, "values": c.values})
		expected := []map[string]any{}
		if c.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{"case": c.name}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "10m", "alertname": c.name, "exp_alerts": expected})
	}

	// Grouping: two series of one service, one of them above; the alert is the service's.
	grouped := cond(">", 10)
	grouped.groupBy = []string{"service"}
	rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: "grouped", Expr: grouped.expr(`g{job="grouped"}`)})
	series = append(series,
		map[string]any{"series": `g{job="grouped",service="api",instance="a"}`, "values": "0x40"},
		map[string]any{"series": `g{job="grouped",service="api",instance="b"}`, "values": "20x40"},
		map[string]any{"series": `g{job="grouped",service="web",instance="a"}`, "values": "0x40"})
	alertTests = append(alertTests, map[string]any{"eval_time": "10m", "alertname": "grouped",
		"exp_alerts": []map[string]any{{"exp_labels": map[string]string{"service": "api"}}}})

	// Evaluation delay: the value rose above the threshold 2 minutes ago; with a 3-minute delay
	// the alert does not see it yet, with a 1-minute delay it does.
	for _, d := range []struct {
		name  string
		delay time.Duration
		fires bool
	}{{"delayed_3m", 3 * time.Minute, false}, {"delayed_1m", time.Minute, true}} {
		query, err := withOffset(`d{job="delayed"}`, d.delay)
		if err != nil {
			t.Fatal(err)
		}
		c := cond(">", 10)
		c.window = time.Minute
		c.step = conditionStep(c.window)
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: d.name, Expr: c.expr(query)})
		expected := []map[string]any{}
		if d.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{"job": "delayed"}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "10m", "alertname": d.name, "exp_alerts": expected})
	}
	series = append(series, map[string]any{"series": `d{job="delayed"}`, "values": "0x32 20x8"})

	tests = append(tests, map[string]any{"interval": "15s", "input_series": series, "alert_rule_test": alertTests})
	runPromtoolTest(t, tool, rules, "15s", tests)
}

// TestAnomalyConditionsUnderPromtool runs `promtool test rules` on alerts made by
// anomalyCondition.expr. Every series cycles through 8 9 10 11 12 11 9 (mean 10, standard
// deviation about 1.3) for a day and 5 minutes, then takes its case's value for 5 minutes; each
// alert is expected to fire at the end (1d10m), or not.
func TestAnomalyConditionsUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	cycle := []string{"8", "9", "10", "11", "12", "11", "9"}
	const usualPoints = (24*60 + 5) * 4 // 15s apart
	history := func(tail string) string {
		var b strings.Builder
		for i := 0; i < usualPoints; i++ {
			b.WriteString(cycle[i%len(cycle)])
			b.WriteByte(' ')
		}
		b.WriteString(tail)
		return b.String()
	}
	values := func(last string) string { return history(last + "x20") }
	usual := values("10") // the cycle's mean: usual
	five := 5 * time.Minute
	anomaly := func(less bool, threshold, deviation float64) anomalyCondition {
		return anomalyCondition{
			metricCondition: metricCondition{threshold: threshold, window: five, step: conditionStep(five), forOverPct: 50},
			lessThanUsual:   less, deviationPct: deviation,
		}
	}
	cases := []struct {
		name      string
		condition anomalyCondition
		values    string
		fires     bool
	}{
		{"high_usual", anomaly(false, 0, 0), usual, false},
		{"high_spike", anomaly(false, 0, 0), values("20"), true},
		{"high_small_rise", anomaly(false, 0, 0), values("12"), false}, // under mean + 3σ (≈13.9)
		{"high_spike_under_floor", anomaly(false, 25, 0), values("20"), false},
		{"high_spike_under_deviation", anomaly(false, 0, 150), values("20"), false}, // 100% above the mean
		{"high_spike_over_deviation", anomaly(false, 0, 50), values("20"), true},
		{"low_drop", anomaly(true, 5, 0), values("0"), true},
		{"low_usual", anomaly(true, 5, 0), usual, false},
		{"low_drop_of_a_small_series", anomaly(true, 50, 0), values("0"), false}, // usually under 50
		// Issue 37: the series went away for 4 minutes and came back spiking for the last 5 points:
		// 5 of the window's 21 points are unusual, under 50% (the points it was missing count).
		{"high_spike_after_gap", anomaly(false, 0, 0), history("stale _x15 20x4"), false},
	}
	rules := File{Groups: []Group{{Name: "anomalies"}}}
	var series, alertTests []map[string]any
	for _, c := range cases {
		query := fmt.Sprintf(`m{case=%q}`, c.name)
		mean, deviation := c.name+":usual_mean", c.name+":usual_stddev"
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, c.condition.usualRules(query, mean, deviation)...)
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: c.name, Expr: c.condition.expr(query, mean, deviation)})
		series = append(series, map[string]any{"series": query, "values": c.values})
		expected := []map[string]any{}
		if c.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{"case": c.name}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "1d10m", "alertname": c.name, "exp_alerts": expected})
	}
	// Rules are evaluated every 5 minutes: the day of history would otherwise take promtool a minute.
	runPromtoolTest(t, tool, rules, "5m", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": alertTests}})
}

// runPromtoolTest writes rules and tests (promtool's unit-test groups, evaluated every evaluationInterval) to a directory, checks the
// rules with `promtool check rules` and runs `promtool test rules` on them.
func runPromtoolTest(t *testing.T, tool string, rules File, evaluationInterval string, tests []map[string]any) {
	t.Helper()
	dir := t.TempDir()
	ruleText, err := rules.YAML()
	if err != nil {
		t.Fatal(err)
	}
	testText, err := yaml.Marshal(map[string]any{
		"rule_files": []string{"rules.yml"}, "evaluation_interval": evaluationInterval, "tests": tests,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"rules.yml": ruleText, "tests.yml": testText} {
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, ok := prometheustest.CheckRules(t, filepath.Join(dir, "rules.yml")); !ok {
		t.Fatalf("promtool check rules: %s\n%s", out, ruleText)
	}
	cmd := exec.Command(tool, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}

// points writes a series for promtool point by point (one value per 15 s from 0), from runs of a
// value ("20", "0", "_" for no sample, "stale" for a staleness marker, which is what Prometheus
// writes when a target or a series goes away): points("_", 20, "20", 21) is 20 missing points
// then 21 points of 20.
func points(runs ...any) string {
	var out []string
	for i := 0; i+1 < len(runs); i += 2 {
		for range runs[i+1].(int) {
			out = append(out, runs[i].(string))
		}
	}
	return strings.Join(out, " ")
}

// flapping answers n points alternating between high and low, high first.
func flapping(high, low string, n int) []any {
	var runs []any
	for i := range n {
		v := high
		if i%2 == 1 {
			v = low
		}
		runs = append(runs, v, 1)
	}
	return runs
}

// TestWholeWindowUnderPromtool (issue 37) runs `promtool test rules` on series that start fresh,
// have a gap, flap and stop, for each comparison direction and each missing-values policy, and
// asserts that a window means the whole window: "for 100% of the last 5 minutes" needs 5 minutes
// of samples that meet the comparison, a missing point never meets it (unless missing values are
// replaced with zero and 0 meets it), and minNonNullValuesPct is a further floor of points with a
// value. Every alert is judged at 10m over [5m, 10m]: 21 points, indices 20 to 40 of the series.
//
// The cases marked failedBefore fired on the rules written before issue 37, which averaged only
// the points that had a value (checked once by running this test against that generator: those 10
// failed, and so did the anomaly case high_spike_after_gap). The others are the boundaries on the other side, which both agree on; the
// replaceWithZero cases among them already counted every point of the window.
func TestWholeWindowUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	five := 5 * time.Minute
	cond := func(op string, threshold float64, forOverPct int64, change func(*metricCondition)) metricCondition {
		c := metricCondition{op: op, threshold: threshold, window: five, step: conditionStep(five), forOverPct: forOverPct}
		if change != nil {
			change(&c)
		}
		return c
	}
	zero := func(c *metricCondition) { c.replaceWithZero = true }
	minValues := func(pct int64) func(*metricCondition) {
		return func(c *metricCondition) { c.minNonNullPct = pct }
	}
	cat := func(parts ...[]any) []any {
		var out []any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name         string
		condition    metricCondition
		values       string
		fires        bool
		failedBefore bool
	}{
		// No missing-values policy, "more than".
		{"fresh_more_100", cond(">", 10, 100, nil), points("_", 32, "20", 9), false, true},
		{"fresh_covered_more_100", cond(">", 10, 100, nil), points("_", 20, "20", 21), true, false},
		{"gap_more_100", cond(">", 10, 100, nil), points("20", 28, "stale", 1, "20", 12), false, true},
		{"long_gap_more_50", cond(">", 10, 50, nil), points("20", 21, "stale", 1, "_", 12, "20", 7), false, true},
		{"flap_fresh_more_50", cond(">", 10, 50, nil), points(cat([]any{"_", 29}, flapping("20", "0", 12))...), false, true},
		{"flap_covered_more_50", cond(">", 10, 50, nil), points(flapping("20", "0", 41)...), true, false},
		{"stopped_more_50", cond(">", 10, 50, nil), points("20", 24, "stale", 1, "_", 16), false, true},
		{"recovered_more_50", cond(">", 10, 50, nil), points("20", 29, "0", 12), false, false},
		{"recovering_more_50", cond(">", 10, 50, nil), points("20", 31, "0", 10), true, false},
		// "Less than": the same with low values.
		{"fresh_less_100", cond("<", 10, 100, nil), points("_", 36, "5", 5), false, true},
		{"gap_less_100", cond("<", 10, 100, nil), points("5", 30, "stale", 1, "5", 10), false, true},
		{"covered_less_100", cond("<", 10, 100, nil), points("50", 20, "5", 21), true, false},
		// minNonNullValuesPct 60: a floor of points with a value, not a licence to skip the others.
		{"min_partial_more_100", cond(">", 10, 100, minValues(60)), points("_", 25, "20", 16), false, true},
		{"min_gap_more_90", cond(">", 10, 90, minValues(60)), points("20", 30, "stale", 1, "_", 3, "20", 7), false, true},
		{"min_flap_more_50", cond(">", 10, 50, minValues(60)), points(cat([]any{"_", 26}, flapping("20", "0", 15))...), false, true},
		{"min_too_few_more_0", cond(">", 10, 0, minValues(60)), points("_", 30, "20", 11), false, false},
		{"min_enough_more_70", cond(">", 10, 70, minValues(60)), points("_", 25, "20", 16), true, false},
		// replaceWithZero: a missing point is 0, which fails "more than 10" and meets "less than 10".
		{"zero_fresh_more_50", cond(">", 10, 50, zero), points("_", 30, "20", 11), true, false},
		{"zero_fresh_short_more_50", cond(">", 10, 50, zero), points("_", 31, "20", 10), false, false},
		{"zero_gap_less_100", cond("<", 10, 100, zero), points("5", 28, "stale", 1, "_", 3, "5", 9), true, false},
		{"zero_flap_more_50", cond(">", 10, 50, zero), points(cat([]any{"_", 28}, flapping("20", "0", 13))...), false, false},
		{"zero_recovered_less_100", cond("<", 10, 100, zero), points("5", 39, "50", 2), false, false},
	}
	rules := File{Groups: []Group{{Name: "whole-window"}}}
	var series, alertTests []map[string]any
	for _, c := range cases {
		if n := len(strings.Fields(c.values)); n != 41 {
			t.Fatalf("%s: %d points, want 41 (0 to 10m)", c.name, n)
		}
		query := fmt.Sprintf(`m{case=%q}`, c.name)
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: c.name, Expr: c.condition.expr(query)})
		series = append(series, map[string]any{"series": query, "values": c.values})
		expected := []map[string]any{}
		if c.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{"case": c.name}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "10m", "alertname": c.name, "exp_alerts": expected})
	}
	runPromtoolTest(t, tool, rules, "15s", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": alertTests}})
}

// TestNoDataUnderPromtool (issue 37) runs `promtool test rules` on the absence rule of a
// definition (noDataCondition) with a 1-minute window and a 5-minute retire time: a series that
// stops is "no data" once a whole window has no sample, for 5 minutes, and then retires; one
// that keeps reporting, or comes back, is not; with groupByKeys a group is absent only when none
// of its series reports.
func TestNoDataUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	c := noDataCondition{window: time.Minute, retire: 5 * time.Minute}
	grouped := c
	grouped.groupBy = []string{"service"}
	rules := File{Groups: []Group{{Name: "no-data", Rules: []Rule{
		{Alert: "nodata", Expr: c.expr(`n{job="nodata"}`)},
		{Alert: "nodata_grouped", Expr: grouped.expr(`max by (service) (g{job="grouped"})`)},
	}}}}
	// 15 s apart: stops reporting at 2m (index 8 is its last sample, a staleness marker at 2m15s).
	series := []map[string]any{
		{"series": `n{job="nodata",instance="stops"}`, "values": points("1", 9, "stale", 1)},
		{"series": `n{job="nodata",instance="stays"}`, "values": points("1", 61)},
		{"series": `n{job="nodata",instance="returns"}`, "values": points("1", 9, "stale", 1, "_", 8, "1", 43)},
		{"series": `g{job="grouped",service="a",instance="1"}`, "values": points("1", 9, "stale", 1)},
		{"series": `g{job="grouped",service="a",instance="2"}`, "values": points("1", 61)},
		{"series": `g{job="grouped",service="b",instance="1"}`, "values": points("1", 9, "stale", 1)},
	}
	stops := []map[string]any{{"exp_labels": map[string]string{"job": "nodata", "instance": "stops"}}}
	returns := []map[string]any{{"exp_labels": map[string]string{"job": "nodata", "instance": "returns"}}}
	groupB := []map[string]any{{"exp_labels": map[string]string{"service": "b"}}}
	none := []map[string]any{}
	alertTests := []map[string]any{
		// At 2m45s the last sample is 45 s old: the window still holds it.
		{"eval_time": "2m45s", "alertname": "nodata", "exp_alerts": none},
		{"eval_time": "2m45s", "alertname": "nodata_grouped", "exp_alerts": none},
		// At 3m30s the whole window has no sample of "stops" and "returns" (back at 4m30s).
		{"eval_time": "3m30s", "alertname": "nodata", "exp_alerts": append(slices.Clone(stops), returns...)},
		{"eval_time": "3m30s", "alertname": "nodata_grouped", "exp_alerts": groupB},
		// Back: "returns" is no longer absent.
		{"eval_time": "5m", "alertname": "nodata", "exp_alerts": stops},
		// Still absent 4 minutes later, within the retire time.
		{"eval_time": "7m30s", "alertname": "nodata", "exp_alerts": stops},
		{"eval_time": "7m30s", "alertname": "nodata_grouped", "exp_alerts": groupB},
		// Retired: more than window + 5 minutes after the last sample.
		{"eval_time": "9m", "alertname": "nodata", "exp_alerts": none},
		{"eval_time": "9m", "alertname": "nodata_grouped", "exp_alerts": none},
	}
	runPromtoolTest(t, tool, rules, "15s", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": alertTests}})
}

// TestFullWindowBetweenStepsUnderPromtool (issue 37): the points of a window are a step apart,
// so "100% of the last minute" also needs a sample at the window's start. A series scraped every
// second from 9m11s is over the threshold: at 10m10s it has 59 s of samples and covers every
// point of [9m10s, 10m10s] (9m15s … 10m) yet not the minute: no alert; at 10m12s it does.
func TestFullWindowBetweenStepsUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	c := metricCondition{op: ">", threshold: 10, window: time.Minute, step: conditionStep(time.Minute), forOverPct: 100}
	rules := File{Groups: []Group{{Name: "between-steps", Rules: []Rule{{Alert: "minute", Expr: c.expr(`m{case="minute"}`)}}}}}
	series := []map[string]any{{"series": `m{case="minute"}`, "values": points("_", 551, "20", 62)}}
	alertTests := []map[string]any{
		{"eval_time": "10m10s", "alertname": "minute", "exp_alerts": []map[string]any{}},
		{"eval_time": "10m12s", "alertname": "minute", "exp_alerts": []map[string]any{{"exp_labels": map[string]string{"case": "minute"}}}},
	}
	runPromtoolTest(t, tool, rules, "1s", []map[string]any{{"interval": "1s", "input_series": series, "alert_rule_test": alertTests}})
}

// TestReplaceWithZeroCountsAGoneSeriesUnderPromtool (issue 37): with
// missingValues.replaceWithZero, a missing point is 0, which meets "less than 10"; so does a
// series that has no point in the window at all, as long as it is remembered (it answered within
// the retire time before the window; a day when the definition sets none). The stopped cases
// fired on no rule before: the share was computed per series that had a point in the window, and
// a series that had none had no share (checked once against the rule before this case's commit).
// "More than" is not met by a stopped series, a minNonNullValuesPct floor is not met by it, and a
// series stopped longer ago than the retire time is forgotten. Judged at 10m over [5m, 10m].
func TestReplaceWithZeroCountsAGoneSeriesUnderPromtool(t *testing.T) {
	tool := prometheustest.Binary(t, "promtool")
	five := 5 * time.Minute
	cond := func(op string, forOverPct int64, retire time.Duration, minValues int64) metricCondition {
		return metricCondition{op: op, threshold: 10, window: five, step: conditionStep(five), forOverPct: forOverPct,
			replaceWithZero: true, goneMemory: retire, minNonNullPct: minValues}
	}
	cases := []struct {
		name      string
		condition metricCondition
		values    string
		fires     bool
	}{
		{"stopped_less_100", cond("<", 100, 0, 0), points("50", 15, "stale", 1, "_", 25), true},
		{"stopped_less_100_retire_7m_seen", cond("<", 100, 2*time.Minute, 0), points("50", 15, "stale", 1, "_", 25), true},
		{"stopped_less_100_retired", cond("<", 100, 2*time.Minute, 0), points("50", 10, "stale", 1, "_", 30), false},
		{"stopped_more_50", cond(">", 50, 0, 0), points("50", 15, "stale", 1, "_", 25), false},
		{"stopped_less_100_min_values", cond("<", 100, 0, 60), points("50", 15, "stale", 1, "_", 25), false},
		{"reporting_high_less_50", cond("<", 50, 0, 0), points("50", 41), false},
	}
	rules := File{Groups: []Group{{Name: "gone-series"}}}
	var series, alertTests []map[string]any
	for _, c := range cases {
		if n := len(strings.Fields(c.values)); n != 41 {
			t.Fatalf("%s: %d points, want 41 (0 to 10m)", c.name, n)
		}
		query := fmt.Sprintf(`m{case=%q}`, c.name)
		rules.Groups[0].Rules = append(rules.Groups[0].Rules, Rule{Alert: c.name, Expr: c.condition.expr(query)})
		series = append(series, map[string]any{"series": query, "values": c.values})
		expected := []map[string]any{}
		if c.fires {
			expected = append(expected, map[string]any{"exp_labels": map[string]string{"case": c.name}})
		}
		alertTests = append(alertTests, map[string]any{"eval_time": "10m", "alertname": c.name, "exp_alerts": expected})
	}
	runPromtoolTest(t, tool, rules, "15s", []map[string]any{{"interval": "15s", "input_series": series, "alert_rule_test": alertTests}})
}
