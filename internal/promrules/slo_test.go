package promrules_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

// TestSLOGroupRequestBased: a request-based SLO without grouping gets its error ratio recorded
// over the seven windows, with every range selector of its queries set to the window, and the
// four burn-rate alerts with the SLO's labels, target and time frame.
func TestSLOGroupRequestBased(t *testing.T) {
	g, err := promrules.SLOGroup(checkoutAvailability())
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "slo-"+checkoutAvailabilityID || g.Interval != "" || g.Limit != 0 || len(g.Rules) != 11 {
		t.Fatalf("group %q interval %q limit %d with %d rules; want slo-<id>, the global interval, no limit, 7 records and 4 alerts",
			g.Name, g.Interval, g.Limit, len(g.Rules))
	}
	const series = "slo:0b6c1a9e_5d2f_4c1e_9a7b_3f2e1d0c9b8a:error_ratio_"
	for i, w := range []string{"5m", "30m", "1h", "2h", "6h", "1d", "3d"} {
		r := g.Rules[i]
		want := promrules.Rule{
			Record: series + w,
			Expr: `1 - (sum(rate(http_requests_total{code!~"5..",job="checkout"}[` + w + `])) / ` +
				`sum(rate(http_requests_total{job="checkout"}[` + w + `])))`,
			Labels: map[string]string{"slo_id": checkoutAvailabilityID},
		}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("rule %d:\n got %+v\nwant %+v", i, r, want)
		}
	}
	wantAlerts := []struct {
		severity, burn, long, short, threshold, summary, description string
	}{
		{"page", "14.4", "1h", "5m", "(14.4 * 0.001)",
			`SLO "Checkout availability" is burning its error budget at 14.4× the sustainable rate`,
			"The error ratio is above 1.44% (14.4× the 0.1% error budget) over the last 1h and the last 5m. " +
				"The SLO's target is 99.9% over 28d; at this rate the whole budget is spent in 1d23h."},
		{"page", "6", "6h", "30m", "(6 * 0.001)",
			`SLO "Checkout availability" is burning its error budget at 6× the sustainable rate`,
			"The error ratio is above 0.6% (6× the 0.1% error budget) over the last 6h and the last 30m. " +
				"The SLO's target is 99.9% over 28d; at this rate the whole budget is spent in 4d16h."},
		{"ticket", "3", "1d", "2h", "(3 * 0.001)",
			`SLO "Checkout availability" is burning its error budget at 3× the sustainable rate`,
			"The error ratio is above 0.3% (3× the 0.1% error budget) over the last 1d and the last 2h. " +
				"The SLO's target is 99.9% over 28d; at this rate the whole budget is spent in 9d8h."},
		{"ticket", "1", "3d", "6h", "(1 * 0.001)",
			`SLO "Checkout availability" is burning its error budget at 1× the sustainable rate`,
			"The error ratio is above 0.1% (1× the 0.1% error budget) over the last 3d and the last 6h. " +
				"The SLO's target is 99.9% over 28d; at this rate the whole budget is spent in 28d."},
	}
	for i, a := range wantAlerts {
		r := g.Rules[7+i]
		want := promrules.Rule{
			Alert: promrules.SLOAlertName,
			Expr:  series + a.long + " > " + a.threshold + " and " + series + a.short + " > " + a.threshold,
			Labels: map[string]string{
				"severity": a.severity, "burn_rate": a.burn, "long_window": a.long, "short_window": a.short,
				"slo_id": checkoutAvailabilityID, "slo_name": "Checkout availability", "slo_target": "99.9",
				"slo_time_frame": "28d", "team": "payments", "tier": "1",
			},
			Annotations: map[string]string{"summary": a.summary, "description": a.description},
		}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("alert %d:\n got %+v\nwant %+v", i, r, want)
		}
	}
}

// TestSLOGroupRequestBasedGrouped: with grouping labels both queries are summed by them (a query
// that already is that sum is kept as it is), so the alerts fire per group; an SLO label named
// like a grouping label is left out of the alerts.
func TestSLOGroupRequestBasedGrouped(t *testing.T) {
	s := apiAvailability()
	g, err := promrules.SLOGroup(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `1 - (sum by (service) (rate(http_requests_total{code!~"5..",job="api"}[1h])) / ` +
		`sum by (service) (rate(http_requests_total{job="api"}[1h])))`
	if g.Rules[2].Expr != want {
		t.Errorf("1h ratio:\n got %s\nwant %s", g.Rules[2].Expr, want)
	}
	if _, has := g.Rules[7].Labels["service"]; has || g.Rules[7].Labels["team"] != "platform" {
		t.Errorf("alert labels %v: want team and no service (a grouping label)", g.Rules[7].Labels)
	}

	// Queries that are not yet summed by the grouping labels are.
	s.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"service", "region"}})
	s.RequestBasedMetricSli.Value.GoodEvents.Query = `rate(http_requests_total{code="200"}[5m])`
	s.RequestBasedMetricSli.Value.TotalEvents.Query = `sum by (region, service) (rate(http_requests_total[5m]))`
	g, err = promrules.SLOGroup(s)
	if err != nil {
		t.Fatal(err)
	}
	want = `1 - (sum by (service, region) (rate(http_requests_total{code="200"}[5m])) / ` +
		`sum by (region, service) (rate(http_requests_total[5m])))`
	if g.Rules[0].Expr != want {
		t.Errorf("5m ratio:\n got %s\nwant %s", g.Rules[0].Expr, want)
	}
}

// TestSLOGroupSetsEveryRangeSelector: every range selector of a query gets the window, offsets
// included; a subquery keeps its own range and step.
func TestSLOGroupSetsEveryRangeSelector(t *testing.T) {
	s := checkoutAvailability()
	s.RequestBasedMetricSli.Value.GoodEvents.Query =
		`sum(increase(ok_total[5m] offset 1m)) + sum(increase(redirect_total[10m])) - sum(max_over_time(rate(x_total[1m])[30m:1m]))`
	g, err := promrules.SLOGroup(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `1 - (sum (sum(increase(ok_total[6h] offset 1m)) + sum(increase(redirect_total[6h])) - ` +
		`sum(max_over_time(rate(x_total[6h])[30m:1m]))) / sum(rate(http_requests_total{job="checkout"}[6h])))`
	if g.Rules[4].Expr != want {
		t.Errorf("6h ratio:\n got %s\nwant %s", g.Rules[4].Expr, want)
	}
}

// TestSLOGroupWindowBased: a window-based SLO records whether each window is bad, in a group
// evaluated once per window, and its error ratio over a window as the share of bad windows; the
// comparison, the threshold, the grouping and the missing-data strategy shape the record.
func TestSLOGroupWindowBased(t *testing.T) {
	g, err := promrules.SLOGroup(checkoutLatency())
	if err != nil {
		t.Fatal(err)
	}
	const base = "slo:2d8e3c1a_7f4b_4e3a_9c9d_5b4a3f2e1dbc:"
	if g.Interval != "1m" || len(g.Rules) != 12 || g.Rules[0].Record != base+"window_bad" ||
		g.Rules[0].Expr != `(1 - min ((max(checkout_latency_p99_seconds{job="checkout"})) < bool 0.3)) or on () vector(1)` {
		t.Fatalf("interval %q, %d rules, first %+v", g.Interval, len(g.Rules), g.Rules[0])
	}
	if r := g.Rules[6]; r.Record != base+"error_ratio_1d" || r.Expr != "avg_over_time("+base+"window_bad[1d])" {
		t.Errorf("1d ratio: %+v", r)
	}
	if r := g.Rules[9]; r.Alert != promrules.SLOAlertName || r.Expr != base+"error_ratio_6h > (6 * 0.01) and "+base+"error_ratio_30m > (6 * 0.01)" {
		t.Errorf("6x alert: %+v", r)
	}

	for _, c := range []struct {
		window   oas.WindowSloWindow
		op       oas.SloComparisonOperator
		missing  oas.OptSloMissingDataStrategy
		grouping []oas.SloLabelName
		interval string
		bad      string
	}{
		{oas.WindowSloWindowWINDOWSLOWINDOW5MINUTES, oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHAN,
			oas.OptSloMissingDataStrategy{}, nil, "5m", `1 - min ((avg(up)) > bool -0.5)`},
		{oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE, oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHANOREQUALS,
			oas.NewOptSloMissingDataStrategy(oas.SloMissingDataStrategyMISSINGDATASTRATEGYUNCOUNTED), []oas.SloLabelName{"job"},
			"1m", `1 - min by (job) ((avg(up)) >= bool -0.5)`},
		{oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE, oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHANOREQUALS,
			oas.NewOptSloMissingDataStrategy(oas.SloMissingDataStrategyMISSINGDATASTRATEGYGOOD), []oas.SloLabelName{"job", "zone"},
			"1m", `(1 - min by (job, zone) ((avg(up)) <= bool -0.5)) or on () vector(0)`},
	} {
		s := checkoutLatency()
		sli := &s.WindowBasedMetricSli.Value
		sli.Query.Query, sli.Window, sli.ComparisonOperator, sli.MissingDataStrategy, sli.Threshold =
			"avg(up)", c.window, c.op, c.missing, -0.5
		s.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: c.grouping})
		g, err := promrules.SLOGroup(s)
		if err != nil {
			t.Fatal(err)
		}
		if g.Interval != c.interval || g.Rules[0].Expr != c.bad {
			t.Errorf("%s %s %v %v: interval %q, window_bad %s; want %q, %s",
				c.window, c.op, c.missing, c.grouping, g.Interval, g.Rules[0].Expr, c.interval, c.bad)
		}
	}
}

// TestSLOGroupLabels: the generator's own alert labels win over SLO labels of the same name,
// grouping labels and names Prometheus reserves are left out, and text Prometheus would expand as
// a template ("{{") is escaped in the labels and the summary.
func TestSLOGroupLabels(t *testing.T) {
	s := checkoutAvailability()
	s.Name = `Checkout {{ .Labels }} "quoted"`
	s.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"region"}})
	s.RequestBasedMetricSli.Value.GoodEvents.Query = `sum by (region) (rate(ok_total[5m]))`
	s.RequestBasedMetricSli.Value.TotalEvents.Query = `sum by (region) (rate(all_total[5m]))`
	s.Labels = oas.NewOptSloLabels(oas.SloLabels{
		"severity": "critical", "slo_id": "mine", "burn_rate": "9", "region": "eu", "__reserved": "x",
		"owner": "{{ $labels.team }}", "empty": "",
	})
	g, err := promrules.SLOGroup(s)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Rules[7].Labels
	want := map[string]string{
		"severity": "page", "burn_rate": "14.4", "long_window": "1h", "short_window": "5m",
		"slo_id": checkoutAvailabilityID, "slo_name": `Checkout {{ "{{" }} .Labels }} "quoted"`, "slo_target": "99.9",
		"slo_time_frame": "28d", "owner": `{{ "{{" }} $labels.team }}`, "empty": "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("alert labels:\n got %v\nwant %v", got, want)
	}
	// The summary quotes the name as Go does, then escapes it, so that `{{ "{{" }}` stays whole.
	if sum := g.Rules[7].Annotations["summary"]; sum != `SLO "Checkout {{ "{{" }} .Labels }} \"quoted\"" is burning its error budget at 14.4× the sustainable rate` {
		t.Errorf("summary %s", sum)
	}
}

// TestSLOGroupNamesAreValidAndUnique: every recorded series is a valid Prometheus metric name,
// unique within its SLO and across SLOs; every expression parses; alert labels are label names.
func TestSLOGroupNamesAreValidAndUnique(t *testing.T) {
	seen := map[string]string{}
	p := parser.NewParser(parser.Options{})
	for _, s := range []oas.Slo{checkoutAvailability(), apiAvailability(), checkoutLatency()} {
		g, err := promrules.SLOGroup(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range g.Rules {
			if _, err := p.ParseExpr(r.Expr); err != nil {
				t.Errorf("%s: %q does not parse: %v", s.Name, r.Expr, err)
			}
			for k := range r.Labels {
				if !model.LegacyValidation.IsValidLabelName(k) {
					t.Errorf("%s: label %q is not a label name", s.Name, k)
				}
			}
			if r.Record == "" {
				continue
			}
			if !model.LegacyValidation.IsValidMetricName(r.Record) {
				t.Errorf("%s: %q is not a metric name", s.Name, r.Record)
			}
			if other, dup := seen[r.Record]; dup {
				t.Errorf("%s: %q is also recorded by %s", s.Name, r.Record, other)
			}
			seen[r.Record] = s.Name
		}
	}
	if len(seen) != 7+7+8 {
		t.Errorf("%d recorded series, want 22", len(seen))
	}
}

// TestSLOGroupSkips: an SLO without PromQL to alert on answers an error saying why, and no rules.
func TestSLOGroupSkips(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(s *oas.Slo)
		reason string
	}{
		{"APM SLI", func(s *oas.Slo) {
			s.RequestBasedMetricSli.Reset()
			s.ApmSli = oas.NewOptSloApmSli(oas.SloApmSli{Services: []string{"checkout"}})
		}, "its SLI is apmSli, which is not PromQL"},
		{"no SLI", func(s *oas.Slo) { s.RequestBasedMetricSli.Reset() }, "it has no SLI"},
		{"no range selector", func(s *oas.Slo) {
			s.RequestBasedMetricSli.Value.TotalEvents.Query = `sum(job:http_requests:rate5m)`
		}, "requestBasedMetricSli.totalEvents.query has no range selector"},
		{"not PromQL", func(s *oas.Slo) {
			s.RequestBasedMetricSli.Value.GoodEvents.Query = `sum(rate(x[5m]`
		}, "requestBasedMetricSli.goodEvents.query is not valid PromQL"},
		{"scalar", func(s *oas.Slo) {
			s.RequestBasedMetricSli.Value.GoodEvents.Query = `scalar(sum(rate(x[5m])))`
		}, "requestBasedMetricSli.goodEvents.query answers a scalar, not an instant vector"},
		{"range vector", func(s *oas.Slo) {
			s.RequestBasedMetricSli.Value.GoodEvents.Query = `x[5m]`
		}, "answers a matrix, not an instant vector"},
		{"grouping by an alert label", func(s *oas.Slo) {
			s.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"region", "severity"}})
		}, `grouping label "severity" is one the rules set themselves`},
		{"grouping by a reserved label", func(s *oas.Slo) {
			s.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"__name__"}})
		}, `grouping label "__name__"`},
		{"no id", func(s *oas.Slo) { s.ID.Reset() }, "it has no id"},
		{"id not for a name", func(s *oas.Slo) { s.ID = oas.NewOptString("a/b") }, `its id "a/b" has a character other than`},
		{"time frame", func(s *oas.Slo) { s.SloTimeFrame = oas.SloTimeFrameSLOTIMEFRAMEUNSPECIFIED }, "sloTimeFrame"},
		{"target 0", func(s *oas.Slo) { s.TargetThresholdPercentage = 0 }, "targetThresholdPercentage 0 is not above 0"},
		{"target over 100", func(s *oas.Slo) { s.TargetThresholdPercentage = 100.5 }, "targetThresholdPercentage 100.5"},
		{"window unspecified", func(s *oas.Slo) {
			*s = checkoutLatency()
			s.WindowBasedMetricSli.Value.Window = oas.WindowSloWindowWINDOWSLOWINDOWUNSPECIFIED
		}, "windowBasedMetricSli.window"},
		{"operator unspecified", func(s *oas.Slo) {
			*s = checkoutLatency()
			s.WindowBasedMetricSli.Value.ComparisonOperator = oas.SloComparisonOperatorCOMPARISONOPERATORUNSPECIFIED
		}, "windowBasedMetricSli.comparisonOperator"},
	} {
		s := checkoutAvailability()
		c.change(&s)
		g, err := promrules.SLOGroup(s)
		if err == nil || !strings.Contains(err.Error(), c.reason) || len(g.Rules) != 0 {
			t.Errorf("%s: got %d rules and error %v; want none and %q", c.name, len(g.Rules), err, c.reason)
		}
	}
}

// TestSLOGroupTargetOf100: a target of 100% leaves no error budget; any error fires every alert.
func TestSLOGroupTargetOf100(t *testing.T) {
	s := checkoutAvailability()
	s.TargetThresholdPercentage = 100
	g, err := promrules.SLOGroup(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.Rules[7].Expr, "> (14.4 * 0) and") {
		t.Errorf("alert %s", g.Rules[7].Expr)
	}
}

// TestSLOGroupsReadsTheTeamsSLOs: SLOGroupsAndSkips answers the rules of the team's
// own SLOs in list order, skips (and names) those without PromQL, and never sees another team's.
func TestSLOGroupsReadsTheTeamsSLOs(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const path = "/mgmt/openapi/4/slo/slos/v1"
		teamA, keyA := env.MustTeam(t, "a")
		teamB, keyB := env.MustTeam(t, "b")
		create := func(key string, slo map[string]any) string {
			t.Helper()
			res := env.JSON(t, http.MethodPost, path, key, apitest.JSONOf(t, slo))
			return apitest.Decode[struct{ Slo struct{ ID string } }](t, res).Slo.ID
		}
		request := map[string]any{
			"name": "availability", "targetThresholdPercentage": 99.5, "sloTimeFrame": "SLO_TIME_FRAME_14_DAYS",
			"requestBasedMetricSli": map[string]any{
				"goodEvents":  map[string]any{"query": `sum(rate(http_requests_total{code!~"5.."}[5m]))`},
				"totalEvents": map[string]any{"query": `sum(rate(http_requests_total[5m]))`},
			},
		}
		apm := map[string]any{
			"name": "apm", "targetThresholdPercentage": 99, "sloTimeFrame": "SLO_TIME_FRAME_7_DAYS",
			"apmSli": map[string]any{"services": []string{"checkout"}, "errorConfig": map[string]any{}},
		}
		window := map[string]any{
			"name": "up", "targetThresholdPercentage": 99, "sloTimeFrame": "SLO_TIME_FRAME_21_DAYS",
			"windowBasedMetricSli": map[string]any{
				"query": map[string]any{"query": `avg(up)`}, "window": "WINDOW_SLO_WINDOW_5_MINUTES",
				"comparisonOperator": "COMPARISON_OPERATOR_GREATER_THAN_OR_EQUALS", "threshold": 0.95,
			},
		}
		first := create(keyA, request)
		apmID := create(keyA, apm)
		last := create(keyA, window)
		other := create(keyB, request)

		groups, skipped, err := promrules.SLOGroupsAndSkips(context.Background(), env.DB.Read(), teamA)
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) != 2 || groups[0].Name != "slo-"+first || groups[1].Name != "slo-"+last ||
			groups[1].Interval != "5m" || groups[0].Rules[7].Labels["slo_time_frame"] != "14d" {
			t.Fatalf("team a's groups: %+v", groups)
		}
		want := []promrules.LeftOut{{Kind: "SLO", ID: apmID, Name: "apm", Reason: "its SLI is apmSli, which is not PromQL"}}
		if !reflect.DeepEqual(skipped, want) {
			t.Errorf("skipped %+v, want %+v", skipped, want)
		}

		groups, skipped, err = promrules.SLOGroupsAndSkips(context.Background(), env.DB.Read(), teamB)
		if err != nil || len(groups) != 1 || groups[0].Name != "slo-"+other || len(skipped) != 0 {
			t.Errorf("team b: %+v %+v %v", groups, skipped, err)
		}
		groups, skipped, err = promrules.SLOGroupsAndSkips(context.Background(), env.DB.Read(), teamB+1000)
		if err != nil || len(groups) != 0 || len(skipped) != 0 {
			t.Errorf("a team without SLOs: %+v %+v %v", groups, skipped, err)
		}
	})
}
