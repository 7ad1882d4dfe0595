package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// TestARenamedDefinitionThatNoLongerFiresResolvesAtTheNextEvaluation (issue 37) with a real
// Prometheus, Alertmanager and `mgmtapi sync-rules`: a definition fires; it is renamed, with
// another priority and a threshold the series no longer crosses. Prometheus carries an alert's
// state over a reload only to a rule of the same name and labels, so the old rule's alert would
// vanish without a resolution and Alertmanager would resolve it only when it times out (here
// four resend delays of a minute after its last send). The rule file keeps the old version's rule,
// retired (an expression that answers nothing), while the incident is open: Prometheus resolves
// the alert at its next evaluation, the incident resolves with that end time, well before the
// timeout could, and the retired rule leaves the file once the incident has resolved.
func TestARenamedDefinitionThatNoLongerFiresResolvesAtTheNextEvaluation(t *testing.T) {
	prometheustest.Binary(t, "prometheus")
	prometheustest.AlertmanagerBinary(t)
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	key := env.RootKey
	definition := func(name, priority, threshold string) string {
		return `{"alertDefProperties":{"name":"` + name + `","enabled":true,"priority":"` + priority + `",
		"metricThreshold":{"metricFilter":{"promql":"max by (service) (checkout_error_ratio)"},
		"rules":[{"condition":{"threshold":` + threshold + `,"forOverPct":1,"ofTheLast":{"metricTimeWindowDynamicDuration":"1m"},
		"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_UNSPECIFIED"}}]}}}`
	}
	defID := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, mustStatus(t, env.JSON(t, http.MethodPost,
		"/mgmt/openapi/latest/alerts/alerts/v3", key, definition("Checkout errors", "ALERT_DEF_PRIORITY_P2", "0.05")), http.StatusOK)).AlertDef.ID

	exporter := newGauge(t)
	exporter.set("a", 0.2)
	ingest := env.MustKey(t, key, "contextual-data:SendData")
	am := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", ingest)
	prom := prometheustest.StartWith(t, prometheustest.Options{
		AlertmanagerURL: am.URL,
		Targets:         []string{strings.TrimPrefix(exporter.URL, "http://")},
		// A sent alert is valid for four minutes: a timed-out resolution would come that late.
		ResendDelay: time.Minute,
	})
	rulesKey := env.MustKey(t, key, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig")
	log := startSyncRules(t, map[string]string{"MGMTAPI_KEY": rulesKey},
		"--url", env.URL, "--dir", prom.RulesDir, "--reload-url", prom.URL+"/-/reload", "--interval", "200ms")
	waitForLog(t, log, "added=[alertdef-"+defID+"]", 1)

	type incident struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		State    string `json:"state"`
		ClosedAt string `json:"closedAt"`
	}
	incidents := func() []incident {
		return apitest.Decode[struct{ Incidents []incident }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{"pagination":{"pageSize":100}}`)).Incidents
	}
	eventually(t, "the firing", func() string {
		if got := incidents(); len(got) != 1 || got[0].State != "INCIDENT_STATE_TRIGGERED" {
			return fmt.Sprintf("incidents %+v", got)
		}
		return ""
	})

	edited := time.Now()
	mustStatus(t, env.JSON(t, http.MethodPut, "/mgmt/openapi/latest/alerts/alerts/v3", key,
		`{"id":"`+defID+`",`+strings.TrimPrefix(definition("Checkout errors renamed", "ALERT_DEF_PRIORITY_P1", "10"), "{")), http.StatusOK)
	var closed time.Time
	eventuallyWithin(t, "the resolution", 6*time.Minute, func() string {
		got := incidents()
		if len(got) != 1 || got[0].State != "INCIDENT_STATE_RESOLVED" {
			return fmt.Sprintf("incidents %+v", got)
		}
		var err error
		if closed, err = time.Parse(time.RFC3339Nano, got[0].ClosedAt); err != nil {
			return fmt.Sprintf("closedAt %q: %v", got[0].ClosedAt, err)
		}
		return ""
	})
	// Alertmanager's timeout would end the alert at its last send (before the edit) plus four
	// minutes; Prometheus's resolution ends it at the evaluation after the reload.
	if closed.After(edited.Add(2 * time.Minute)) {
		t.Fatalf("the incident closed at %s, %s after the edit: Alertmanager timed the alert out, Prometheus did not resolve it",
			closed.Format(time.RFC3339), closed.Sub(edited).Round(time.Second))
	}
	eventually(t, "the retired rule leaves the file", func() string {
		res := env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/config/v1/prometheus/rules", rulesKey, "")
		if strings.Contains(string(res.Body), "vector(0) > 0") {
			return "the rule file still holds the retired rule"
		}
		return ""
	})
}
