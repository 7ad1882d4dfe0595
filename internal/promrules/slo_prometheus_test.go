package promrules_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// TestSLORulesOnARealPrometheus loads the burn-rate rules of two SLOs over a real Prometheus's
// own HTTP metrics (scraped every second, rules evaluated every second): every rule evaluates
// without error and no alert fires while its requests succeed; then the test sends it bad queries
// (answered 400) and the 14.4× page fires — for the ungrouped SLO, and for the grouped one only
// for the handler that failed.
func TestSLORulesOnARealPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv(sloRequirePrometheusVariable) == "1" {
			t.Fatalf("prometheus is not on PATH and %s=1 (Debian: apt-get install prometheus)", sloRequirePrometheusVariable)
		}
		t.Skipf("prometheus is not on PATH (Debian: apt-get install prometheus; %s=1 makes this a failure)", sloRequirePrometheusVariable)
	}
	const (
		wholeID   = "3e9f4d2b-8a5c-4f4b-8d0e-6c5b4a3f2e01"
		perHandID = "3e9f4d2b-8a5c-4f4b-8d0e-6c5b4a3f2e02"
	)
	whole := oas.Slo{
		ID: oas.NewOptString(wholeID), Name: "Prometheus API", TargetThresholdPercentage: 99,
		SloTimeFrame: oas.SloTimeFrameSLOTIMEFRAME28DAYS,
		Labels:       oas.NewOptSloLabels(oas.SloLabels{"team": "observability"}),
		RequestBasedMetricSli: oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
			GoodEvents:  oas.SloMetric{Query: `sum(rate(prometheus_http_requests_total{job="self",handler!="/-/ready",code=~"2.."}[5m]))`},
			TotalEvents: oas.SloMetric{Query: `sum(rate(prometheus_http_requests_total{job="self",handler!="/-/ready"}[5m]))`},
		}),
	}
	perHandler := whole
	perHandler.ID = oas.NewOptString(perHandID)
	perHandler.Name = "Prometheus API per handler"
	perHandler.Grouping = oas.NewOptSloGrouping(oas.SloGrouping{Labels: []oas.SloLabelName{"handler"}})
	perHandler.RequestBasedMetricSli = oas.NewOptRequestBasedMetricSli(oas.RequestBasedMetricSli{
		GoodEvents:  oas.SloMetric{Query: `rate(prometheus_http_requests_total{job="self",handler!="/-/ready",code=~"2.."}[5m])`},
		TotalEvents: oas.SloMetric{Query: `rate(prometheus_http_requests_total{job="self",handler!="/-/ready"}[5m])`},
	})

	dir := t.TempDir()
	writeSLORuleFile(t, dir, "slo_rules.yml", whole, perHandler)
	port := sloFreePort(t)
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [slo_rules.yml]
scrape_configs:
  - job_name: self
    static_configs: [{targets: ['127.0.0.1:%d']}]
`, port)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	sloWaitUntil(t, "prometheus ready", func() bool {
		res, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	// One bad query before the first scrape, so that the series of 400s exists when the burn
	// comes (rate() sees no increase in a series' first sample): not an error rate() can see.
	badQuery := func() {
		res, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape("sum(("))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("bad query answered %d, want 400", res.StatusCode)
		}
	}
	badQuery()

	// Healthy: every rule has been evaluated without error, the error ratios exist, and the 400s'
	// series has been scraped.
	sloWaitUntil(t, "every SLO rule evaluated, healthy, both ratios recorded", func() bool {
		var rules struct {
			Data struct {
				Groups []struct {
					Rules []struct{ Name, Health, LastError string }
				}
			}
		}
		sloGetJSON(t, base+"/api/v1/rules", &rules)
		n := 0
		for _, g := range rules.Data.Groups {
			for _, r := range g.Rules {
				if r.Health == "err" {
					t.Fatalf("rule %s: %s", r.Name, r.LastError)
				}
				if r.Health == "ok" {
					n++
				}
			}
		}
		return n == 22 &&
			len(sloQuery(t, base, `prometheus_http_requests_total{job="self",code="400"}`)) == 1 &&
			len(sloQuery(t, base, "slo:3e9f4d2b_8a5c_4f4b_8d0e_6c5b4a3f2e01:error_ratio_5m")) == 1 &&
			len(sloQuery(t, base, `slo:3e9f4d2b_8a5c_4f4b_8d0e_6c5b4a3f2e02:error_ratio_5m{handler="/api/v1/query"}`)) == 1
	})
	if firing := sloFiringAlerts(t, base); len(firing) != 0 {
		t.Fatalf("alerts while every request succeeds: %v", firing)
	}

	// A burn: bad queries, each answered 400, far more than the good requests.
	for i := 0; i < 300; i++ {
		badQuery()
	}
	var page, firing []map[string]string
	defer func() {
		if t.Failed() {
			t.Logf("firing alerts: %v", firing)
		}
	}()
	sloWaitUntil(t, "the 14.4× pages firing", func() bool {
		page, firing = nil, sloFiringAlerts(t, base)
		for _, a := range firing {
			if a["burn_rate"] == "14.4" {
				page = append(page, a)
			}
		}
		return len(page) == 2
	})
	for _, a := range page {
		switch a["slo_id"] {
		case wholeID:
			if _, has := a["handler"]; has || a["slo_name"] != "Prometheus API" || a["severity"] != "page" || a["team"] != "observability" {
				t.Errorf("page of the whole SLO: %v", a)
			}
		case perHandID:
			if a["handler"] != "/api/v1/query" || a["slo_name"] != "Prometheus API per handler" {
				t.Errorf("page of the per-handler SLO: %v (want the failing handler only)", a)
			}
		default:
			t.Errorf("page of no SLO: %v", a)
		}
	}
}

func sloFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sloWaitUntil polls cond every 200ms for up to a minute.
func sloWaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited a minute for %s", what)
}

func sloGetJSON(t *testing.T, u string, into any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// sloQuery answers the label sets of an instant query's result.
func sloQuery(t *testing.T, base, q string) []map[string]string {
	t.Helper()
	var out struct {
		Data struct {
			Result []struct{ Metric map[string]string }
		}
	}
	sloGetJSON(t, base+"/api/v1/query?query="+url.QueryEscape(q), &out)
	var sets []map[string]string
	for _, r := range out.Data.Result {
		sets = append(sets, r.Metric)
	}
	return sets
}

// sloFiringAlerts answers the labels of the firing SLOErrorBudgetBurn alerts.
func sloFiringAlerts(t *testing.T, base string) []map[string]string {
	t.Helper()
	var out struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	sloGetJSON(t, base+"/api/v1/alerts", &out)
	var firing []map[string]string
	for _, a := range out.Data.Alerts {
		if a.State == "firing" && strings.HasPrefix(a.Labels["alertname"], "SLOErrorBudgetBurn") {
			firing = append(firing, a.Labels)
		}
	}
	return firing
}
