package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// drop stops exposing the service's series: Prometheus marks it stale at its next scrape.
func (g *gauge) drop(service string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.values, service)
}

// conditionIncidents counts the incidents of bySeries that are not no-data ones: c's no-data
// incident opens a minute after c stopped, which under load can be before a and b are seen
// firing, or before the edit's check.
func conditionIncidents[T any](bySeries map[string]T) int {
	n := 0
	for name := range bySeries {
		if !strings.HasPrefix(name, "no data ") {
			n++
		}
	}
	return n
}

// TestAlertsMeanWhatTheySayOnARealPrometheus is issue 37's chain with real processes (a real
// Prometheus evaluating every second, a real Alertmanager, `mgmtapi sync-rules`): a metric
// threshold definition "more than 0.05 for 100% of the last minute", grouped by service, with a
// no-data policy retiring after 180 s and a destination notified on triggers only.
//
//   - Services a and b are over the threshold from their first sample: nothing fires before a
//     whole minute of samples, then a and b are two incidents.
//   - An edit while they fire (a new threshold, still crossed) keeps the two incidents and the
//     case, which records the new version.
//   - b goes under the threshold: its incident resolves at the next evaluation, and the
//     destination gets no resolution.
//   - Service c reported for 16 s and stopped: once a minute holds no sample of it a no-data
//     incident opens; once a resolves, the definition is NO_DATA (its only open alert is the
//     no-data one), and 180 s after it fired the absence retires and resolves.
//
// It takes about three minutes, most of it the one-minute windows.
func TestAlertsMeanWhatTheySayOnARealPrometheus(t *testing.T) {
	prometheustest.Binary(t, "prometheus")
	prometheustest.AlertmanagerBinary(t)
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	key := env.RootKey
	receiver := newReceiver(t)
	w := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true},
		PollInterval: 50 * time.Millisecond, AttemptTimeout: 10 * time.Second})
	workerCtx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan struct{})
	go func() { w.Run(workerCtx); close(workerDone) }()
	t.Cleanup(func() { stopWorker(); <-workerDone })

	connector := apitest.Decode[struct{ Connector struct{ ID string } }](t, env.JSON(t, http.MethodPost,
		"/mgmt/openapi/latest/notifications/notification-center/v1/connectors", key,
		`{"connector":{"name":"hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"`+receiver.URL+`/hook"}]}}}`)).Connector.ID
	definition := func(threshold string) string {
		return `{"alertDefProperties":{"name":"Window errors","enabled":true,"priority":"ALERT_DEF_PRIORITY_P2","groupByKeys":["service"],
		"notificationGroup":{"destinations":[{"connectorId":"` + connector + `","notifyOn":"NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED"}]},
		"metricThreshold":{"metricFilter":{"promql":"max by (service) (checkout_error_ratio)"},
		"noDataPolicy":{"state":"NO_DATA_POLICY_STATE_ALERTING","autoRetireSeconds":180},
		"rules":[{"condition":{"threshold":` + threshold + `,"forOverPct":100,"ofTheLast":{"metricTimeWindowDynamicDuration":"1m"},
		"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_UNSPECIFIED"}}]}}}`
	}
	type defAnswer struct {
		AlertDef struct {
			ID             string `json:"id"`
			AlertVersionID string `json:"alertVersionId"`
			Status         string `json:"status"`
		} `json:"alertDef"`
	}
	def := apitest.Decode[defAnswer](t, mustStatus(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, definition("0.05")), http.StatusOK))
	defID := def.AlertDef.ID
	status := func() string {
		return apitest.Decode[defAnswer](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/alerts/alerts/v3/"+defID, key, "")).AlertDef.Status
	}

	exporter := newGauge(t)
	ingest := env.MustKey(t, key, "contextual-data:SendData")
	am := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", ingest)
	prom := prometheustest.StartWith(t, prometheustest.Options{
		AlertmanagerURL: am.URL,
		Targets:         []string{strings.TrimPrefix(exporter.URL, "http://")},
		// An alert sent is valid for 20 s: the reload of the edit does not let Alertmanager
		// time the firing alerts out (with 1 s, sends 4 s apart around a reload do).
		ResendDelay: 5 * time.Second,
	})
	rulesKey := env.MustKey(t, key, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig")
	log := startSyncRules(t, map[string]string{"MGMTAPI_KEY": rulesKey},
		"--url", env.URL, "--dir", prom.RulesDir, "--reload-url", prom.URL+"/-/reload", "--interval", "200ms")
	waitForLog(t, log, "added=[alertdef-"+defID+"]", 1)
	eventually(t, "the definition's group loaded", func() string {
		if !groupLoaded(t, prom, "alertdef-"+defID) {
			return "Prometheus has not loaded group alertdef-" + defID
		}
		return ""
	})

	type incident struct {
		ID               string            `json:"id"`
		State            string            `json:"state"`
		ContextualLabels map[string]string `json:"contextualLabels"`
	}
	incidents := func() (bySeries map[string]incident, total int) {
		list := apitest.Decode[struct{ Incidents []incident }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{"pagination":{"pageSize":100}}`)).Incidents
		bySeries = map[string]incident{}
		for _, in := range list {
			name := in.ContextualLabels["service"]
			if in.ContextualLabels["alert_def_no_data"] == "true" {
				name = "no data " + name
			}
			bySeries[name] = in
		}
		return bySeries, len(list)
	}

	// Over the threshold from the first sample; c reports briefly and stops.
	start := time.Now()
	exporter.set("a", 0.2)
	exporter.set("b", 0.2)
	exporter.set("c", 0.01)
	eventually(t, "c scraped", func() string {
		if len(prom.Query(t, `checkout_error_ratio{service="c"}`)) == 0 {
			return "Prometheus has no sample of c yet"
		}
		return ""
	})
	// A series is remembered by the points of the no-data rule's memory, a step (15 s) apart: c
	// lives a little longer than one.
	time.Sleep(16 * time.Second)
	exporter.drop("c")
	eventually(t, "the firing of a and b", func() string {
		got, _ := incidents()
		if got["a"].State != "INCIDENT_STATE_TRIGGERED" || got["b"].State != "INCIDENT_STATE_TRIGGERED" || conditionIncidents(got) != 2 {
			return fmt.Sprintf("incidents %+v", got)
		}
		return ""
	})
	if waited := time.Since(start); waited < time.Minute {
		t.Fatalf("the alert fired %s after the series' first sample, before its one-minute window was covered", waited.Round(time.Second))
	}
	first, _ := incidents()

	// An edit while firing: the same two incidents, and the case records the new version.
	replaced := apitest.Decode[defAnswer](t, mustStatus(t, env.JSON(t, http.MethodPut, "/mgmt/openapi/latest/alerts/alerts/v3", key,
		strings.Replace(definition("0.1"), `{"alertDefProperties"`, `{"id":"`+defID+`","alertDefProperties"`, 1)), http.StatusOK))
	waitForVersion(t, prom, defID, replaced.AlertDef.AlertVersionID)
	time.Sleep(5 * time.Second) // evaluations of the new version, sent by Alertmanager
	// c's no-data incident may open meanwhile (a minute after c stopped, a few seconds after a and
	// b fired, sooner than that under load): only the condition's incidents are counted here.
	got, _ := incidents()
	if conditions := conditionIncidents(got); conditions != 2 || got["a"].ID != first["a"].ID || got["b"].ID != first["b"].ID ||
		got["a"].State != "INCIDENT_STATE_TRIGGERED" || got["b"].State != "INCIDENT_STATE_TRIGGERED" {
		t.Fatalf("after the edit while firing: incidents %+v, want a and b as before %+v", got, first)
	}
	type caseAnswer struct{ ID string }
	cases := apitest.Decode[struct{ Cases []caseAnswer }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{}`)).Cases
	if len(cases) != 1 {
		t.Fatalf("%d cases, want the one", len(cases))
	}
	eventually(t, "the edit on the case", func() string {
		body := string(env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+cases[0].ID+"/events", key, "").Body)
		if !strings.Contains(body, "is now "+replaced.AlertDef.AlertVersionID) {
			return "the case's events do not record the new version: " + body
		}
		return ""
	})

	// b goes under: resolved at once, and no resolution is delivered (triggered only).
	exporter.set("b", 0.01)
	eventually(t, "the resolution of b", func() string {
		if got, _ := incidents(); got["b"].State != "INCIDENT_STATE_RESOLVED" || got["a"].State != "INCIDENT_STATE_TRIGGERED" {
			return fmt.Sprintf("incidents %+v", got)
		}
		return ""
	})

	// c has been gone a minute: its no-data alert fires. While a's condition alert also fires
	// the status is whichever event came last (b's resolution and c's no data race under load);
	// once a resolves, the open no-data alert alone makes it NO_DATA.
	eventually(t, "no data for c", func() string {
		if got, _ := incidents(); got["no data c"].State != "INCIDENT_STATE_TRIGGERED" {
			return fmt.Sprintf("status %s, incidents %+v", status(), got)
		}
		return ""
	})
	exporter.set("a", 0.01)
	eventually(t, "a resolved while c has no data", func() string {
		got, _ := incidents()
		if got["a"].State != "INCIDENT_STATE_RESOLVED" || got["no data c"].State != "INCIDENT_STATE_TRIGGERED" || status() != "ALERT_DEF_STATUS_NO_DATA" {
			return fmt.Sprintf("status %s, incidents %+v", status(), got)
		}
		return ""
	})
	// The no-data alert retires 180 s after it fired (long enough that a loaded machine still
	// sees it open when a resolves).
	eventuallyWithin(t, "c retired and everything resolved", 4*time.Minute, func() string {
		got, total := incidents()
		for name, in := range got {
			if in.State != "INCIDENT_STATE_RESOLVED" {
				return fmt.Sprintf("%s is %s", name, in.State)
			}
		}
		if total != 3 || status() != "ALERT_DEF_STATUS_OK" {
			return fmt.Sprintf("status %s, %d incidents %+v", status(), total, got)
		}
		return ""
	})
	eventually(t, "the deliveries", func() string {
		var waiting int
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM notification_events`).Scan(&waiting); err != nil || waiting != 0 {
			return fmt.Sprintf("%d events not routed yet (%v)", waiting, err)
		}
		return ""
	})
	titles := receiver.titles()
	triggered := 0
	for _, title := range titles {
		if strings.Contains(title, "Resolved") {
			t.Fatalf("a destination notified on triggers only got a resolution: %q", titles)
		}
		if strings.Contains(title, "Triggered") {
			triggered++
		}
	}
	if triggered != 3 {
		t.Fatalf("the destination got %q, want the triggers of a, b and c's no data", titles)
	}
}
