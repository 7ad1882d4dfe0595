package ingest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// definitionAlert is an alert of alert definition def as mgmtapi's rules write it (issue 37):
// the version is an annotation; fingerprint stands for Alertmanager's.
func definitionAlert(def, name, version, service, fingerprint string, startsAt time.Time) amAlert {
	return amAlert{
		Status: "firing",
		Labels: map[string]string{"alertname": name, "alert_def_id": def, "alert_def_name": name, "alert_def_rule": "0",
			"alert_def_priority": "P2", "severity": "p2", "service": service},
		Annotations: map[string]string{"summary": name + ": the value is more than 5 for 100% of the last 1m",
			"alert_def_version_id": version},
		StartsAt: startsAt, Fingerprint: fingerprint,
	}
}

// openIncidents counts the team's incidents by state.
func incidentStates(t *testing.T, env *apitest.Env) map[string]int {
	out := map[string]int{}
	for _, inc := range listIncidents(t, env, env.RootKey) {
		out[inc.State]++
	}
	return out
}

// TestOneIdentityPerDefinition (issue 37): an alert definition's alerts are one incident per
// definition (and group-by values) across edits. An edit through the API while the alert fires
// keeps the incident and the case and writes a case event naming both versions and the new
// condition (the alert then comes with the new version annotation and the same labels); an edit that renames the alert (a new alertname, so a new
// Alertmanager alert with its own start) joins the same incident, and the old alert's timed-out
// resolution changes nothing while the new one fires; the new one's resolution resolves the
// incident and the case. Two group-by values are two incidents. An alert of an older rule file
// (the version as a label) still opens and resolves its incident.
func TestOneIdentityPerDefinition(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		const defs = "/mgmt/openapi/latest/alerts/alerts/v3"
		props := func(threshold string) string {
			return `"alertDefProperties":{"name":"Errors","metricThreshold":{"metricFilter":{"promql":"up"},
				"rules":[{"condition":{"threshold":` + threshold + `,"forOverPct":100}}]}}`
		}
		type written struct {
			AlertDef struct{ ID, AlertVersionID string }
		}
		created := apitest.Decode[written](t, env.JSON(t, http.MethodPost, defs, env.RootKey, `{`+props("5")+`}`))
		def := created.AlertDef.ID
		v1 := definitionAlert(def, "Errors", created.AlertDef.AlertVersionID, "a", "f1", t0)
		first := send(t, env, key, group(`{}:{alertname="Errors"}`, v1))
		if first.IncidentsOpened != 1 || first.CaseID == "" {
			t.Fatalf("first firing: %+v", first)
		}

		// A threshold edit while it fires: the case records it; the alert (same labels, a new
		// version annotation) stays the incident it was.
		edited := apitest.Decode[written](t, env.JSON(t, http.MethodPut, defs, env.RootKey, `{"id":"`+def+`",`+props("9")+`}`))
		v2 := v1
		v2.Annotations = map[string]string{"summary": "Errors: the value is more than 9 for 100% of the last 1m",
			"alert_def_version_id": edited.AlertDef.AlertVersionID}
		if again := send(t, env, key, group(`{}:{alertname="Errors"}`, v2)); again.IncidentsOpened != 0 || again.CaseID != "" {
			t.Fatalf("after the threshold edit: %+v", again)
		}
		events := caseEvents(t, env, env.RootKey, first.CaseID)
		var comment string
		for _, e := range events {
			if raw, ok := e.EventData["comment"]; ok {
				var c struct{ UnsafeText string }
				if err := json.Unmarshal(raw, &c); err != nil {
					t.Fatal(err)
				}
				comment = c.UnsafeText
			}
		}
		for _, part := range []string{def, "version " + created.AlertDef.AlertVersionID + " is now " + edited.AlertDef.AlertVersionID,
			"Rule 0: more than 9 for 100% of minutes 1."} {
			if !strings.Contains(comment, part) {
				t.Fatalf("the case's edit event %q lacks %q (events %s)", comment, part, kinds(events))
			}
		}

		// A rename: a new Alertmanager alert, starting later, of the same definition and service.
		v3 := definitionAlert(def, "Errors renamed", "v3", "a", "f3", t0.Add(3*time.Minute))
		if renamed := send(t, env, key, group(`{}:{alertname="Errors renamed"}`, v3)); renamed.IncidentsOpened != 0 {
			t.Fatalf("after the rename: %+v", renamed)
		}
		if got := incidentStates(t, env); got["INCIDENT_STATE_TRIGGERED"] != 1 || len(got) != 1 {
			t.Fatalf("incidents after the rename: %v", got)
		}
		// Alertmanager times the old alert out: superseded, nothing changes.
		if old := send(t, env, key, group(`{}:{alertname="Errors"}`, resolved(v2, t0.Add(5*time.Minute)))); old.IncidentsResolved != 0 {
			t.Fatalf("the old alert's resolution: %+v", old)
		}
		if got := incidentStates(t, env); got["INCIDENT_STATE_TRIGGERED"] != 1 {
			t.Fatalf("incidents after the old alert's resolution: %v", got)
		}
		if c := getCase(t, env, env.RootKey, first.CaseID); c.Status != "CASE_STATUS_ACTIVE" {
			t.Fatalf("case after the old alert's resolution: %s", c.Status)
		}

		// Another group-by value is another incident.
		other := definitionAlert(def, "Errors renamed", "v3", "b", "f4", t0.Add(3*time.Minute))
		if b := send(t, env, key, group(`{}:{alertname="Errors renamed"}`, other)); b.IncidentsOpened != 1 {
			t.Fatalf("service b: %+v", b)
		}
		if got := incidentStates(t, env); got["INCIDENT_STATE_TRIGGERED"] != 2 {
			t.Fatalf("incidents with two services: %v", got)
		}

		// The new alert resolves: the incident resolves.
		done := send(t, env, key, group(`{}:{alertname="Errors renamed"}`, resolved(v3, t0.Add(6*time.Minute)), resolved(other, t0.Add(6*time.Minute))))
		if done.IncidentsResolved != 2 {
			t.Fatalf("resolution: %+v", done)
		}
		if c := getCase(t, env, env.RootKey, first.CaseID); c.Status != "CASE_STATUS_RESOLVED" {
			t.Fatalf("case after the resolution: %s", c.Status)
		}

		// An alert of an older rule file, the version as a label, opens and resolves as before.
		legacy := definitionAlert("5a0e2d7c-1b6f-4c1d-8e3b-9f2a4c6d8e01", "Legacy", "", "a", "f9", t0.Add(10*time.Minute))
		legacy.Labels["alert_def_version_id"] = "old-version"
		delete(legacy.Annotations, "alert_def_version_id")
		if r := send(t, env, key, group(`{}:{alertname="Legacy"}`, legacy)); r.IncidentsOpened != 1 {
			t.Fatalf("legacy firing: %+v", r)
		}
		if r := send(t, env, key, group(`{}:{alertname="Legacy"}`, resolved(legacy, t0.Add(11*time.Minute)))); r.IncidentsResolved != 1 {
			t.Fatalf("legacy resolution: %+v", r)
		}
	})
}
