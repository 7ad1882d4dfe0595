package ingest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// TestRealAlertmanager runs a real Alertmanager whose webhook receiver points at the server with
// a team key as bearer credentials, posts alerts to Alertmanager's own API, and follows the case
// and incidents through firing and resolution. Without the binary it skips, or fails when
// MGMTAPI_REQUIRE_PROMETHEUS=1 (.ci/run).
func TestRealAlertmanager(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		amURL := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", key).URL

		start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
		alerts := func(endsAt time.Time) []map[string]any {
			var out []map[string]any
			for _, svc := range []string{"checkout", "search"} {
				a := map[string]any{
					"labels": map[string]string{"alertname": "DiskFull", "severity": "critical",
						"service": svc, "applicationName": "shop", "subsystemName": svc},
					"annotations":  map[string]string{"summary": "disk almost full"},
					"startsAt":     start.Format(time.RFC3339),
					"generatorURL": "http://prometheus.example/graph",
				}
				if !endsAt.IsZero() {
					a["endsAt"] = endsAt.Format(time.RFC3339)
				}
				out = append(out, a)
			}
			return out
		}
		postAlerts := func(body []map[string]any) {
			b, _ := json.Marshal(body)
			res, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatalf("post alerts to alertmanager: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("alertmanager answered %d", res.StatusCode)
			}
		}

		postAlerts(alerts(time.Time{}))
		var c caseView
		waitFor(t, "a case with both alerts", func() bool {
			all := listCases(t, env, env.RootKey)
			if len(all) != 1 {
				return false
			}
			c = all[0]
			return len(listIncidents(t, env, env.RootKey)) == 2
		})
		if c.ReadableID != "CASE-1" || c.Status != "CASE_STATUS_ACTIVE" || c.Priority != "CASE_PRIORITY_P1" ||
			c.Title != "disk almost full" {
			t.Fatalf("case opened by alertmanager: %+v", c)
		}
		for _, inc := range listIncidents(t, env, env.RootKey) {
			if inc.Severity != "INCIDENT_SEVERITY_CRITICAL" || inc.State != "INCIDENT_STATE_TRIGGERED" ||
				inc.ContextualLabels["applicationName"] != "shop" {
				t.Fatalf("incident: %+v", inc)
			}
		}

		postAlerts(alerts(time.Now().UTC().Add(-time.Second)))
		waitFor(t, "the case resolved", func() bool {
			return getCase(t, env, env.RootKey, c.ID).Status == "CASE_STATUS_RESOLVED"
		})
		for _, inc := range listIncidents(t, env, env.RootKey) {
			if inc.State != "INCIDENT_STATE_RESOLVED" {
				t.Fatalf("incident not resolved: %+v", inc)
			}
		}
		events := caseEvents(t, env, env.RootKey, c.ID)
		if k := kinds(events); k != "created,statusChanged" {
			t.Fatalf("case events: %s", k)
		}
		var actor struct{ ReceiverName string }
		if err := json.Unmarshal(events[1].Actor["prometheusAlertManager"], &actor); err != nil || actor.ReceiverName != "mgmtapi" {
			t.Fatalf("actor: %v", events[1].Actor)
		}
	})
}

// waitFor polls cond every 100 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealPrometheusAlert runs the whole chain with real processes: a Prometheus evaluating an
// alerting rule that fires at once sends it to a real Alertmanager, whose webhook posts it to the
// server; the case opens with the rule's labels and annotations. The rule is then rewritten to
// match nothing and Prometheus reloaded: Prometheus sends the alert resolved, and the case and its
// incident resolve.
func TestRealPrometheusAlert(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		am := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", key)
		rule := func(expr string) func(dir string) {
			return prometheustest.AlertingRule(t, "CheckoutDown", expr,
				map[string]string{"severity": "critical", "applicationName": "shop", "subsystemName": "checkout"},
				map[string]string{"summary": "checkout is down"})
		}
		prom := prometheustest.StartAlerting(t, rule("vector(1)"), am.URL)

		var c caseView
		waitFor(t, "the case opened by Prometheus's alert", func() bool {
			all := listCases(t, env, env.RootKey)
			if len(all) != 1 {
				return false
			}
			c = all[0]
			return true
		})
		if c.Status != "CASE_STATUS_ACTIVE" || c.Priority != "CASE_PRIORITY_P1" || c.Title != "checkout is down" {
			t.Fatalf("case opened by prometheus: %+v", c)
		}
		incidents := listIncidents(t, env, env.RootKey)
		if len(incidents) != 1 || incidents[0].State != "INCIDENT_STATE_TRIGGERED" ||
			incidents[0].ContextualLabels["subsystemName"] != "checkout" {
			t.Fatalf("incidents: %+v", incidents)
		}

		rule("vector(1) == 2")(prom.RulesDir)
		res, err := http.Post(prom.URL+"/-/reload", "", nil)
		if err != nil {
			t.Fatalf("reload prometheus: %v", err)
		}
		res.Body.Close()
		waitFor(t, "the case resolved by Prometheus", func() bool {
			return getCase(t, env, env.RootKey, c.ID).Status == "CASE_STATUS_RESOLVED"
		})
		if inc := listIncidents(t, env, env.RootKey); len(inc) != 1 || inc[0].State != "INCIDENT_STATE_RESOLVED" {
			t.Fatalf("incident after the rule stopped matching: %+v", inc)
		}
	})
}
