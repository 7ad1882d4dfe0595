package promrules_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

// sloRequirePrometheusVariable, set to 1 (CI sets it), turns a missing promtool into a failure.
const sloRequirePrometheusVariable = "MGMTAPI_REQUIRE_PROMETHEUS"

// The sample SLOs of the promtool tests in testdata/slo; their ids name the recorded series there.
const (
	checkoutAvailabilityID = "0b6c1a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"
	apiAvailabilityID      = "1c7d2b0f-6e3a-4d2f-8b8c-4a3f2e1d0cab"
	checkoutLatencyID      = "2d8e3c1a-7f4b-4e3a-9c9d-5b4a3f2e1dbc"
)

// checkoutAvailability is a request-based SLO without grouping: 99.9% of the checkout job's
// requests answer without a 5xx, over 28 days.
func checkoutAvailability() oas.Slo {
	return oas.Slo{
		ID:                        oas.NewOptString(checkoutAvailabilityID),
		Name:                      "Checkout availability",
		TargetThresholdPercentage: 99.9,
		SloTimeFrame:              oas.SloTimeFrameSLOTIMEFRAME28DAYS,
		Labels:                    oas.NewOptSloLabels(oas.SloLabels{"team": "payments", "tier": "1"}),
		RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
			GoodEvents:  oas.SloMetric{Query: `sum(rate(http_requests_total{job="checkout",code!~"5.."}[5m]))`},
			TotalEvents: oas.SloMetric{Query: `sum(rate(http_requests_total{job="checkout"}[5m]))`},
		}),
	}
}

// apiAvailability is a request-based SLO grouped by service: each service of the api job answers
// 99.9% of its requests without a 5xx, over 28 days.
func apiAvailability() oas.Slo {
	return oas.Slo{
		ID:                        oas.NewOptString(apiAvailabilityID),
		Name:                      "API availability per service",
		TargetThresholdPercentage: 99.9,
		SloTimeFrame:              oas.SloTimeFrameSLOTIMEFRAME28DAYS,
		Grouping:                  oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"service"}}),
		Labels:                    oas.NewOptSloLabels(oas.SloLabels{"team": "platform", "service": "left out: a grouping label"}),
		RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
			GoodEvents:  oas.SloMetric{Query: `sum by (service) (rate(http_requests_total{job="api",code!~"5.."}[5m]))`},
			TotalEvents: oas.SloMetric{Query: `sum by (service) (rate(http_requests_total{job="api"}[5m]))`},
		}),
	}
}

// checkoutLatency is a window-based SLO: 99% of the 1-minute windows of the last 7 days have a
// p99 latency under 300ms; a window without data counts as bad. Its name holds template text,
// which the alerts must show as it is.
func checkoutLatency() oas.Slo {
	return oas.Slo{
		ID:                        oas.NewOptString(checkoutLatencyID),
		Name:                      "Checkout latency {{ $value }}",
		TargetThresholdPercentage: 99,
		SloTimeFrame:              oas.SloTimeFrameSLOTIMEFRAME7DAYS,
		Labels:                    oas.NewOptSloLabels(oas.SloLabels{"team": "payments", "severity": "left out: ours"}),
		WindowBasedMetricSli: oas.NewOptWindowBasedMetricSli(oas.WindowBasedMetricSli{
			Query:               oas.SloMetric{Query: `max(checkout_latency_p99_seconds{job="checkout"})`},
			Window:              oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE,
			ComparisonOperator:  oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHAN,
			Threshold:           0.3,
			MissingDataStrategy: oas.NewOptSloMissingDataStrategy(oas.SloMissingDataStrategyMISSINGDATASTRATEGYBAD),
		}),
	}
}

// sloPromtool answers promtool's path; without it the test skips, or fails when
// MGMTAPI_REQUIRE_PROMETHEUS=1.
func sloPromtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv(sloRequirePrometheusVariable) == "1" {
			t.Fatalf("promtool is not on PATH and %s=1 (Debian: apt-get install prometheus)", sloRequirePrometheusVariable)
		}
		t.Skipf("promtool is not on PATH (Debian: apt-get install prometheus; %s=1 makes this a failure)", sloRequirePrometheusVariable)
	}
	return path
}

// writeSLORuleFile writes the rule file of the SLOs' groups to dir/name.
func writeSLORuleFile(t *testing.T, dir, name string, slos ...oas.Slo) string {
	t.Helper()
	var file promrules.File
	for _, s := range slos {
		g, err := promrules.SLOGroup(s)
		if err != nil {
			t.Fatalf("SLOGroup(%s): %v", s.Name, err)
		}
		file.Groups = append(file.Groups, g)
	}
	out, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSLORuleFilePassesPromtoolCheck: the rule file of every sample SLO is one `promtool check
// rules` accepts.
func TestSLORuleFilePassesPromtoolCheck(t *testing.T) {
	promtool := sloPromtool(t)
	path := writeSLORuleFile(t, t.TempDir(), "slo_rules.yml", checkoutAvailability(), apiAvailability(), checkoutLatency())
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS: 34 rules found") {
		t.Fatalf("promtool check rules: want 34 rules (7+4, 7+4, 1+7+4), got:\n%s", out)
	}
}

// TestSLOAlertsUnderPromtool runs `promtool test rules` on each file of testdata/slo against the
// rule file of its SLOs: synthetic series for a healthy service, a fast burn, a slow burn and a
// window-based SLO, asserting which alerts fire and at which evaluation time (the files explain
// the arithmetic).
func TestSLOAlertsUnderPromtool(t *testing.T) {
	promtool := sloPromtool(t)
	for _, c := range []struct {
		file string
		slos []oas.Slo
	}{
		{"healthy.yml", []oas.Slo{checkoutAvailability(), apiAvailability()}},
		{"fast_burn.yml", []oas.Slo{apiAvailability()}},
		{"slow_burn.yml", []oas.Slo{checkoutAvailability()}},
		{"window_based.yml", []oas.Slo{checkoutLatency()}},
	} {
		t.Run(strings.TrimSuffix(c.file, ".yml"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeSLORuleFile(t, dir, "slo_rules.yml", c.slos...)
			tests, err := os.ReadFile(filepath.Join("testdata", "slo", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c.file), tests, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(promtool, "test", "rules", c.file)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("promtool test rules %s: %v\n%s", c.file, err, out)
			}
		})
	}
}

// TestSLORuleFileOfOddSLOsPassesPromtoolCheck: SLOs the API accepts at the edges of its rules —
// names and label values with quotes, newlines, template text and non-ASCII, negative and huge
// thresholds, a 100% target, 5-minute windows, every comparison and missing-data strategy, ten
// grouping labels, queries with offsets, subqueries and regexes — still give a rule file promtool
// accepts.
func TestSLORuleFileOfOddSLOsPassesPromtoolCheck(t *testing.T) {
	promtool := sloPromtool(t)
	var odd []oas.Slo
	name := "quotes \" ' ` {{ template }} {{- trimmed -}} $value\nnew line, ünïcödé, 🙂"
	for i, c := range []struct {
		op        oas.SloComparisonOperator
		missing   oas.SloMissingDataStrategy
		threshold float64
		window    oas.WindowSloWindow
	}{
		{oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHAN, oas.SloMissingDataStrategyMISSINGDATASTRATEGYUNCOUNTED, -1e300, oas.WindowSloWindowWINDOWSLOWINDOW5MINUTES},
		{oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHANOREQUALS, oas.SloMissingDataStrategyMISSINGDATASTRATEGYGOOD, 1.7976931348623157e308, oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE},
		{oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHAN, oas.SloMissingDataStrategyMISSINGDATASTRATEGYBAD, 5e-324, oas.WindowSloWindowWINDOWSLOWINDOW5MINUTES},
		{oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHANOREQUALS, oas.SloMissingDataStrategyMISSINGDATASTRATEGYBAD, 0, oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE},
	} {
		s := checkoutLatency()
		s.ID = oas.NewOptString(strings.Replace(checkoutLatencyID, "2d8e", "000"+string(rune('0'+i)), 1))
		s.Name = name
		s.TargetThresholdPercentage = []float64{100, 0.001, 99.99999, 50}[i]
		s.SloTimeFrame = []oas.SloTimeFrame{oas.SloTimeFrameSLOTIMEFRAME7DAYS, oas.SloTimeFrameSLOTIMEFRAME14DAYS,
			oas.SloTimeFrameSLOTIMEFRAME21DAYS, oas.SloTimeFrameSLOTIMEFRAME28DAYS}[i]
		s.Labels = oas.NewOptSloLabels(oas.SloLabels{"note": name, "empty": "", "a_b_9": "{{"})
		s.WindowBasedMetricSli.Value.ComparisonOperator = c.op
		s.WindowBasedMetricSli.Value.MissingDataStrategy = oas.NewOptSloMissingDataStrategy(c.missing)
		s.WindowBasedMetricSli.Value.Threshold = c.threshold
		s.WindowBasedMetricSli.Value.Window = c.window
		odd = append(odd, s)
	}
	grouped := apiAvailability()
	grouped.ID = oas.NewOptString("0190a8e2-7c1d-7f00-8000-00000000abcd")
	grouped.Name = name
	labels := []oas.SloLabelName{"service", "region", "zone", "cluster", "namespace", "pod_group", "tier", "env", "shard", "route"}
	grouped.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: labels})
	grouped.RequestBasedMetricSli.Value.GoodEvents.Query =
		`sum by (service) (increase(http_requests_total{code=~"2..|3..",path!~"/health.*"}[5m] offset 10m @ 1700000000)) ` +
			`+ on (service) group_left sum by (service) (max_over_time(rate(http_redirects_total[1m])[10m:30s]))`
	grouped.RequestBasedMetricSli.Value.TotalEvents.Query =
		`sum by (service) (increase(http_requests_total{path!~"/health.*"}[5m] offset 10m @ 1700000000))`
	odd = append(odd, grouped)

	path := writeSLORuleFile(t, t.TempDir(), "odd.yml", odd...)
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		body, _ := os.ReadFile(path)
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, body)
	}
}
