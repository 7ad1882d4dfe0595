package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// gauge is a small exporter the test controls: one gauge per service at /metrics.
type gauge struct {
	*httptest.Server
	mu     sync.Mutex
	values map[string]float64
}

func newGauge(t *testing.T) *gauge {
	g := &gauge{values: map[string]float64{}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintln(w, "# TYPE checkout_error_ratio gauge")
		for service, v := range g.values {
			fmt.Fprintf(w, "checkout_error_ratio{service=%q} %g\n", service, v)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *gauge) set(service string, v float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.values[service] = v
}

// eventually calls check every 100ms until it answers "" (done) and fails t with its last answer
// after two minutes (a bound on a failing test: Prometheus, Alertmanager and the syncing each
// wait a second or so).
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	eventuallyWithin(t, what, 2*time.Minute, check)
}

// eventuallyWithin is eventually with another deadline.
func eventuallyWithin(t *testing.T, what string, within time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		problem := check()
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %s, %s", what, within, problem)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAlertDefinitionPagesThroughARealPrometheus is issue 26's chain with real processes: a
// metric threshold alert definition created through the API; `mgmtapi sync-rules` writes the
// team's rule file for a real Prometheus, which scrapes an exporter the test controls; the
// metric goes over the threshold, the alert fires in Prometheus, a real Alertmanager posts it to
// the ingestion endpoint, and an incident and a case appear that carry the definition (its id
// and priority, its labels on the incident, the definition as the case's indicator); the event
// feed shows the firing. The metric goes down and all of it resolves. Then the definition
// names a connector (a receiver on loopback) as its destination, triggered and resolved: a new
// firing and its resolution reach the receiver, through sync-rules' new version. Then an alert
// scheduler rule is active for the definition: a new firing opens its incident and event, which
// records the rule (activityAnalysis MUTE), and nothing reaches the receiver.
func TestAlertDefinitionPagesThroughARealPrometheus(t *testing.T) {
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
	exporter := newGauge(t)
	exporter.set("checkout", 0.01)

	var def struct {
		AlertDef struct {
			ID             string `json:"id"`
			AlertVersionID string `json:"alertVersionId"`
		} `json:"alertDef"`
	}
	res := mustStatus(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{
		"name":"Checkout errors","enabled":true,"priority":"ALERT_DEF_PRIORITY_P2","entityLabels":{"team":"payments"},"groupByKeys":["service"],
		"metricThreshold":{"metricFilter":{"promql":"max by (service) (checkout_error_ratio)"},
		"rules":[{"condition":{"threshold":0.05,"ofTheLast":{"metricTimeWindowDynamicDuration":"15s"},
		"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_UNSPECIFIED"}}]}}}`), http.StatusOK)
	if err := json.Unmarshal(res.Body, &def); err != nil || def.AlertDef.ID == "" {
		t.Fatalf("created definition: %v %s", err, res.Body)
	}
	defID, version := def.AlertDef.ID, def.AlertDef.AlertVersionID

	ingest := env.MustKey(t, key, "contextual-data:SendData")
	am := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", ingest)
	prom := prometheustest.StartWith(t, prometheustest.Options{
		AlertmanagerURL: am.URL,
		Targets:         []string{strings.TrimPrefix(exporter.URL, "http://")},
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

	// Over the threshold: an incident and a case that carry the definition, and a firing event.
	exporter.set("checkout", 0.2)
	type incident struct {
		ID               string            `json:"id"`
		Name             string            `json:"name"`
		Severity         string            `json:"severity"`
		State            string            `json:"state"`
		ContextualLabels map[string]string `json:"contextualLabels"`
		DisplayLabels    map[string]string `json:"displayLabels"`
	}
	listIncidents := func() []incident {
		return apitest.Decode[struct{ Incidents []incident }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents
	}
	eventually(t, "the incident of the firing", func() string {
		incs := listIncidents()
		if len(incs) != 1 {
			return fmt.Sprintf("%d incidents", len(incs))
		}
		in := incs[0]
		l := in.ContextualLabels
		if in.Name != "Checkout errors" || in.Severity != "INCIDENT_SEVERITY_ERROR" || l["alert_def_id"] != defID ||
			in.DisplayLabels["alert_def_version_id"] != version || l["alert_def_version_id"] != "" || l["alert_def_priority"] != "P2" || l["service"] != "checkout" || l["team"] != "payments" {
			return fmt.Sprintf("incident %+v", in)
		}
		return ""
	})
	type indicator struct {
		AlertID            string `json:"alertId"`
		LatestAlertVersion string `json:"latestAlertVersion"`
		Priority           string `json:"priority"`
		State              string `json:"state"`
	}
	type caseAnswer struct {
		ID             string `json:"id"`
		Priority       string `json:"priority"`
		Status         string `json:"status"`
		CaseIndicators struct {
			AlertIndicators []indicator `json:"alertIndicators"`
		} `json:"caseIndicators"`
	}
	listCases := func() []caseAnswer {
		return apitest.Decode[struct{ Cases []caseAnswer }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{}`)).Cases
	}
	eventually(t, "the case of the firing", func() string {
		cs := listCases()
		if len(cs) != 1 || len(cs[0].CaseIndicators.AlertIndicators) != 1 {
			return fmt.Sprintf("cases %+v", cs)
		}
		c, ind := cs[0], cs[0].CaseIndicators.AlertIndicators[0]
		if c.Priority != "CASE_PRIORITY_P2" || ind.AlertID != defID || ind.LatestAlertVersion != version ||
			ind.State != "INDICATOR_STATE_TRIGGERED" || ind.Priority != "INDICATOR_PRIORITY_P2" {
			return fmt.Sprintf("case %+v", c)
		}
		return ""
	})
	type feedEvent struct {
		Key      string            `json:"platformEventKey"`
		Labels   map[string]string `json:"platformEventLabels"`
		Metadata map[string]string `json:"platformEventMetadata"`
		Type     string            `json:"platformEventType"`
	}
	feed := func() []feedEvent {
		q := url.Values{"alert_ids": {defID},
			"timestamp_range.from": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
			"timestamp_range.to":   {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}
		return apitest.Decode[struct{ Events []feedEvent }](t,
			env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/alerts/alerts/v3/all/events?"+q.Encode(), key, "")).Events
	}
	eventually(t, "the firing in the event feed", func() string {
		if events := feed(); len(events) != 1 {
			return fmt.Sprintf("events %+v", events)
		}
		return ""
	})

	// Under the threshold: the incident, the case's indicator and the feed resolve.
	exporter.set("checkout", 0.01)
	eventually(t, "the resolution", func() string {
		incs := listIncidents()
		if len(incs) != 1 || incs[0].State != "INCIDENT_STATE_RESOLVED" {
			return fmt.Sprintf("incidents %+v", incs)
		}
		cs := listCases()
		if len(cs) != 1 || cs[0].CaseIndicators.AlertIndicators[0].State != "INDICATOR_STATE_RESOLVED" {
			return fmt.Sprintf("cases %+v", cs)
		}
		if events := feed(); len(events) != 2 {
			return fmt.Sprintf("events %+v", events)
		}
		// The worker has routed the resolution (with the definition as it is now: no
		// destinations), so the replace below cannot reach it.
		var waiting int
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM notification_events`).Scan(&waiting); err != nil || waiting != 0 {
			return fmt.Sprintf("%d events not routed yet (%v)", waiting, err)
		}
		return ""
	})
	if n := receiver.count(); n != 0 {
		t.Fatalf("a definition without destinations (and a team without routers) sent %d notifications", n)
	}

	// Destinations: the definition sends its triggered and resolved notifications to a connector.
	connector := apitest.Decode[struct{ Connector struct{ ID string } }](t, env.JSON(t, http.MethodPost,
		"/mgmt/openapi/latest/notifications/notification-center/v1/connectors", key,
		`{"connector":{"name":"hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"`+receiver.URL+`/hook"}]}}}`)).Connector.ID
	replaced := mustStatus(t, env.JSON(t, http.MethodPut, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"id":"`+defID+`","alertDefProperties":{
		"name":"Checkout errors","enabled":true,"priority":"ALERT_DEF_PRIORITY_P2","entityLabels":{"team":"payments"},"groupByKeys":["service"],
		"notificationGroup":{"destinations":[{"connectorId":"`+connector+`","notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}]},
		"metricThreshold":{"metricFilter":{"promql":"max by (service) (checkout_error_ratio)"},
		"rules":[{"condition":{"threshold":0.05,"ofTheLast":{"metricTimeWindowDynamicDuration":"15s"},
		"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_UNSPECIFIED"}}]}}}`), http.StatusOK)
	if err := json.Unmarshal(replaced.Body, &def); err != nil || def.AlertDef.AlertVersionID == version {
		t.Fatalf("replaced definition: %v %s", err, replaced.Body)
	}
	version = def.AlertDef.AlertVersionID
	waitForVersion(t, prom, defID, version)
	exporter.set("checkout", 0.3)
	eventually(t, "the triggered notification", func() string {
		if got := receiver.titles(); len(got) != 1 || !strings.Contains(got[0], "Triggered") {
			return fmt.Sprintf("the receiver got %q", got)
		}
		return ""
	})
	exporter.set("checkout", 0.01)
	eventually(t, "the resolved notification", func() string {
		if got := receiver.titles(); len(got) != 2 || !strings.Contains(got[1], "Resolved") {
			return fmt.Sprintf("the receiver got %q", got)
		}
		return ""
	})

	// An active scheduler rule: the firing is recorded, silenced, and sends nothing.
	now := time.Now().UTC()
	var rule struct {
		AlertSchedulerRule struct {
			UniqueIdentifier string `json:"uniqueIdentifier"`
		} `json:"alertSchedulerRule"`
	}
	created := mustStatus(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/suppression-rules/v1", key, fmt.Sprintf(
		`{"alertSchedulerRule":{"name":"maintenance","enabled":true,"filter":{"alertUniqueIds":{"value":[%q]}},`+
			`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","oneTime":{"timeframe":{"startTime":%q,"endTime":%q,"timezone":"UTC"}}}}}`,
		defID, now.Add(-time.Minute).Format("2006-01-02T15:04:05"), now.Add(time.Hour).Format("2006-01-02T15:04:05"))), http.StatusOK)
	if err := json.Unmarshal(created.Body, &rule); err != nil || rule.AlertSchedulerRule.UniqueIdentifier == "" {
		t.Fatalf("scheduler rule: %v %s", err, created.Body)
	}
	exporter.set("checkout", 0.4)
	eventually(t, "the silenced firing in the feed", func() string {
		open := 0
		for _, in := range listIncidents() {
			if in.State != "INCIDENT_STATE_RESOLVED" {
				open++
			}
		}
		if events := feed(); open != 1 || len(events) != 5 {
			return fmt.Sprintf("%d open incidents, %d events", open, len(events))
		}
		return ""
	})
	// Of the five events, only the last firing was silenced, by the rule.
	var mutedBy []string
	for _, e := range feed() {
		var detail struct {
			SinglePermutation struct {
				Status           string `json:"status"`
				ActivityAnalysis *struct {
					Rules  []string `json:"rules"`
					Status string   `json:"status"`
				} `json:"activityAnalysis"`
			} `json:"singlePermutation"`
		}
		if err := json.Unmarshal(mustStatus(t, env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/v3/alert-event/"+e.Key, key, ""), http.StatusOK).Body, &detail); err != nil {
			t.Fatal(err)
		}
		if a := detail.SinglePermutation.ActivityAnalysis; a != nil {
			if a.Status != "ACTIVITY_ANALYSIS_STATUS_MUTE" || len(a.Rules) != 1 || detail.SinglePermutation.Status != "ALERT_STATUS_TRIGGERED" {
				t.Fatalf("event %s: %+v", e.Key, detail)
			}
			mutedBy = append(mutedBy, a.Rules[0])
		}
	}
	if len(mutedBy) != 1 || mutedBy[0] != rule.AlertSchedulerRule.UniqueIdentifier {
		t.Fatalf("silenced events name the rules %v, want one naming %s", mutedBy, rule.AlertSchedulerRule.UniqueIdentifier)
	}
	// Alertmanager re-sends the group every second while it fires; nothing reaches the receiver.
	time.Sleep(5 * time.Second)
	if got := receiver.titles(); len(got) != 2 {
		t.Fatalf("a silenced alert was sent: the receiver got %q", got)
	}
}

// waitForVersion waits until Prometheus has loaded the definition's rules of that version.
func waitForVersion(t *testing.T, prom *prometheustest.Server, defID, version string) {
	t.Helper()
	eventually(t, "the new version loaded", func() string {
		for _, g := range prom.RuleGroups(t) {
			if g.Name == "alertdef-"+defID && len(g.Rules) > 0 && g.Rules[0].Annotations["alert_def_version_id"] == version {
				return ""
			}
		}
		return "Prometheus has not loaded version " + version
	})
}

// receiver is a webhook receiver on loopback that keeps the title of every notification.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Title string `json:"title"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		rc.mu.Lock()
		rc.got = append(rc.got, body.Title)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) titles() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...)
}

func (rc *receiver) count() int { return len(rc.titles()) }
