package ingest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const ingestPath = "/ingest/alertmanager/v1"

// amAlert is one alert of a webhook payload.
type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
	Fingerprint  string            `json:"fingerprint"`
}

// amNotification is the Alertmanager webhook payload (version 4).
type amNotification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
}

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func firing(name, severity, service string, startsAt time.Time) amAlert {
	return amAlert{
		Status:      "firing",
		Labels:      map[string]string{"alertname": name, "severity": severity, "service": service},
		Annotations: map[string]string{"summary": name + " on " + service, "description": "details of " + name},
		StartsAt:    startsAt,
		EndsAt:      time.Time{},
		Fingerprint: fmt.Sprintf("%x", name+"/"+service),
	}
}

func resolved(a amAlert, endsAt time.Time) amAlert {
	a.Status = "resolved"
	a.EndsAt = endsAt
	return a
}

func group(key string, alerts ...amAlert) amNotification {
	status := "resolved"
	for _, a := range alerts {
		if a.Status == "firing" {
			status = "firing"
		}
	}
	return amNotification{
		Version:           "4",
		GroupKey:          key,
		Status:            status,
		Receiver:          "team-pager",
		GroupLabels:       map[string]string{"alertname": alerts[0].Labels["alertname"]},
		CommonLabels:      map[string]string{"alertname": alerts[0].Labels["alertname"]},
		CommonAnnotations: map[string]string{},
		ExternalURL:       "http://alertmanager.example:9093",
		Alerts:            alerts,
	}
}

type ingestResult struct {
	CaseID            string `json:"caseId"`
	ReadableID        string `json:"readableId"`
	IncidentsOpened   int    `json:"incidentsOpened"`
	IncidentsResolved int    `json:"incidentsResolved"`
	Unchanged         int    `json:"unchanged"`
}

func send(t *testing.T, env *apitest.Env, key string, n amNotification) ingestResult {
	t.Helper()
	body, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	res := env.JSON(t, http.MethodPost, ingestPath, key, string(body))
	if res.Status != http.StatusOK {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	var out ingestResult
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("ingest answer %s: %v", res.Body, err)
	}
	return out
}

type caseView struct {
	ID              string `json:"id"`
	ReadableID      string `json:"readableId"`
	Title           string `json:"title"`
	Status          string `json:"status"`
	Priority        string `json:"priority"`
	Duration        string `json:"duration"`
	PriorityDetails struct {
		System string `json:"system"`
	} `json:"priorityDetails"`
	Labels         []struct{ Key, Value string } `json:"labels"`
	Groupings      []struct{ Key, Value string } `json:"groupings"`
	CaseIndicators struct {
		AlertIndicators []struct {
			AlertName    string `json:"alertName"`
			State        string `json:"state"`
			Priority     string `json:"priority"`
			Permutations []struct {
				Permutation map[string]string `json:"permutation"`
			} `json:"permutations"`
		} `json:"alertIndicators"`
	} `json:"caseIndicators"`
}

func getCase(t *testing.T, env *apitest.Env, key, id string) caseView {
	t.Helper()
	res := env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+id, key, "")
	if res.Status != http.StatusOK {
		t.Fatalf("get case %s: %d %s", id, res.Status, res.Body)
	}
	var out struct{ Case caseView }
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Case
}

func listCases(t *testing.T, env *apitest.Env, key string) []caseView {
	t.Helper()
	res := env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{"pagination":{"pageSize":1000}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("list cases: %d %s", res.Status, res.Body)
	}
	var out struct{ Cases []caseView }
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Cases
}

type caseEvent struct {
	Actor     map[string]json.RawMessage `json:"actor"`
	EventData map[string]json.RawMessage `json:"eventData"`
}

// eventKinds lists the eventData keys of a case's events, oldest first, and checks that every
// event has the prometheusAlertManager actor of the receiver, or another actor when the kind is listed in
// byOthers.
func caseEvents(t *testing.T, env *apitest.Env, key, id string) []caseEvent {
	t.Helper()
	res := env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+id+"/events", key, "")
	if res.Status != http.StatusOK {
		t.Fatalf("case events: %d %s", res.Status, res.Body)
	}
	var out struct{ Events []caseEvent }
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Events
}

func kinds(events []caseEvent) string {
	var out []string
	for _, e := range events {
		for k := range e.EventData {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

type incidentView struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Severity         string            `json:"severity"`
	State            string            `json:"state"`
	Status           string            `json:"status"`
	ContextualLabels map[string]string `json:"contextualLabels"`
	DisplayLabels    map[string]string `json:"displayLabels"`
	MetaLabels       []struct {
		Key, Value string
	} `json:"metaLabels"`
	ClosedAt string `json:"closedAt"`
	Events   []struct {
		IncidentEventType string `json:"incidentEventType"`
		OriginatorType    string `json:"originatorType"`
		OperationalEvent  struct {
			SystemName string `json:"systemName"`
		} `json:"operationalEvent"`
	} `json:"events"`
}

func listIncidents(t *testing.T, env *apitest.Env, key string) []incidentView {
	t.Helper()
	res := env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{"pagination":{"pageSize":10000}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("list incidents: %d %s", res.Status, res.Body)
	}
	var out struct{ Incidents []incidentView }
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out.Incidents, func(i, j int) bool { return out.Incidents[i].Name < out.Incidents[j].Name })
	return out.Incidents
}

func TestIngestLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		latency := firing("HighLatency", "warning", "api", t0)
		errs := firing("HighLatency", "critical", "db", t0.Add(time.Minute))

		first := send(t, env, key, group("{}:{alertname=\"HighLatency\"}", latency))
		if first.ReadableID != "CASE-1" || first.IncidentsOpened != 1 || first.Unchanged != 0 {
			t.Fatalf("first notification: %+v", first)
		}
		c := getCase(t, env, env.RootKey, first.CaseID)
		if c.Status != "CASE_STATUS_ACTIVE" || c.Priority != "CASE_PRIORITY_P3" || c.Title != "alertname=HighLatency" {
			t.Fatalf("new case: %+v", c)
		}
		env.Clock.Advance(2 * time.Minute)
		if d, err := strconv.Atoi(getCase(t, env, env.RootKey, first.CaseID).Duration); err != nil || d < 120 || d > 180 {
			t.Fatalf("duration of a case open for two minutes: %q (whole seconds expected)", getCase(t, env, env.RootKey, first.CaseID).Duration)
		}
		if len(c.Groupings) != 1 || c.Groupings[0].Key != "alertname" || c.Groupings[0].Value != "HighLatency" {
			t.Fatalf("groupings: %+v", c.Groupings)
		}
		if len(c.CaseIndicators.AlertIndicators) != 1 || c.CaseIndicators.AlertIndicators[0].State != "INDICATOR_STATE_TRIGGERED" {
			t.Fatalf("indicators: %+v", c.CaseIndicators)
		}

		t.Run("redelivery changes nothing", func(t *testing.T) {
			before := caseEvents(t, env, env.RootKey, first.CaseID)
			again := send(t, env, key, group("{}:{alertname=\"HighLatency\"}", latency))
			if again.IncidentsOpened != 0 || again.IncidentsResolved != 0 || again.Unchanged != 1 || again.CaseID != "" {
				t.Fatalf("redelivery: %+v", again)
			}
			if after := caseEvents(t, env, env.RootKey, first.CaseID); kinds(after) != kinds(before) {
				t.Fatalf("events changed on redelivery: %s → %s", kinds(before), kinds(after))
			}
			if n := len(listIncidents(t, env, env.RootKey)); n != 1 {
				t.Fatalf("incidents after redelivery: %d", n)
			}
		})

		t.Run("a new alert of the group joins the case and raises its priority", func(t *testing.T) {
			res := send(t, env, key, group("{}:{alertname=\"HighLatency\"}", latency, errs))
			if res.ReadableID != "CASE-1" || res.IncidentsOpened != 1 || res.Unchanged != 1 {
				t.Fatalf("second alert: %+v", res)
			}
			c := getCase(t, env, env.RootKey, first.CaseID)
			if c.Priority != "CASE_PRIORITY_P1" || c.PriorityDetails.System != "CASE_PRIORITY_P1" {
				t.Fatalf("priority after a critical alert: %+v", c)
			}
			ind := c.CaseIndicators.AlertIndicators
			if len(ind) != 1 || len(ind[0].Permutations) != 2 {
				t.Fatalf("one indicator with two permutations expected: %+v", ind)
			}
			if k := kinds(caseEvents(t, env, env.RootKey, first.CaseID)); k != "created,priorityDetailsChanged" {
				t.Fatalf("events: %s", k)
			}
		})

		t.Run("labels and annotations land on the incident", func(t *testing.T) {
			incs := listIncidents(t, env, env.RootKey)
			if len(incs) != 2 {
				t.Fatalf("incidents: %d", len(incs))
			}
			var db incidentView
			for _, inc := range incs {
				if inc.ContextualLabels["service"] == "db" {
					db = inc
				}
			}
			if db.Name != "HighLatency" || db.Severity != "INCIDENT_SEVERITY_CRITICAL" ||
				db.State != "INCIDENT_STATE_TRIGGERED" || db.Status != "INCIDENT_STATUS_TRIGGERED" ||
				db.Description != "details of HighLatency" || db.DisplayLabels["summary"] != "HighLatency on db" {
				t.Fatalf("incident: %+v", db)
			}
			if len(db.MetaLabels) != 1 || db.MetaLabels[0].Key != "alertname" || db.MetaLabels[0].Value != "HighLatency" {
				t.Fatalf("meta labels: %+v", db.MetaLabels)
			}
			if len(db.Events) == 0 || db.Events[0].IncidentEventType != "INCIDENT_EVENT_TYPE_OPEN" ||
				db.Events[0].OperationalEvent.SystemName != "team-pager" {
				t.Fatalf("incident events: %+v", db.Events)
			}
		})

		t.Run("one resolved alert leaves the case open", func(t *testing.T) {
			res := send(t, env, key, group("{}:{alertname=\"HighLatency\"}", resolved(latency, t0.Add(time.Hour)), errs))
			if res.IncidentsResolved != 1 || res.Unchanged != 1 || res.IncidentsOpened != 0 {
				t.Fatalf("partial resolution: %+v", res)
			}
			if c := getCase(t, env, env.RootKey, first.CaseID); c.Status != "CASE_STATUS_ACTIVE" {
				t.Fatalf("case after one of two alerts resolved: %s", c.Status)
			}
		})

		t.Run("all alerts resolved resolve the case", func(t *testing.T) {
			n := group("{}:{alertname=\"HighLatency\"}", resolved(latency, t0.Add(time.Hour)), resolved(errs, t0.Add(2*time.Hour)))
			res := send(t, env, key, n)
			if res.IncidentsResolved != 1 || res.Unchanged != 1 {
				t.Fatalf("resolution: %+v", res)
			}
			c := getCase(t, env, env.RootKey, first.CaseID)
			if c.Status != "CASE_STATUS_RESOLVED" {
				t.Fatalf("case after all alerts resolved: %s", c.Status)
			}
			for _, ind := range c.CaseIndicators.AlertIndicators {
				if ind.State != "INDICATOR_STATE_RESOLVED" {
					t.Fatalf("indicator still %s", ind.State)
				}
			}
			events := caseEvents(t, env, env.RootKey, first.CaseID)
			last := events[len(events)-1]
			var changed struct{ OldStatus, NewStatus string }
			if err := json.Unmarshal(last.EventData["statusChanged"], &changed); err != nil ||
				changed.OldStatus != "CASE_STATUS_ACTIVE" || changed.NewStatus != "CASE_STATUS_RESOLVED" {
				t.Fatalf("last event: %s", kinds(events))
			}
			var actor struct{ ReceiverName string }
			if err := json.Unmarshal(last.Actor["prometheusAlertManager"], &actor); err != nil || actor.ReceiverName != "team-pager" {
				t.Fatalf("actor of the resolution: %v", last.Actor)
			}
			for _, inc := range listIncidents(t, env, env.RootKey) {
				if inc.State != "INCIDENT_STATE_RESOLVED" || inc.Status != "INCIDENT_STATUS_RESOLVED" || inc.ClosedAt == "" {
					t.Fatalf("incident not resolved: %+v", inc)
				}
			}
			// Redelivering the resolution changes nothing.
			before := kinds(events)
			again := send(t, env, key, n)
			if again.IncidentsResolved != 0 || again.Unchanged != 2 {
				t.Fatalf("resolution redelivered: %+v", again)
			}
			if after := kinds(caseEvents(t, env, env.RootKey, first.CaseID)); after != before {
				t.Fatalf("events changed: %s → %s", before, after)
			}
		})

		t.Run("the group firing again opens a new case", func(t *testing.T) {
			res := send(t, env, key, group("{}:{alertname=\"HighLatency\"}", firing("HighLatency", "error", "api", t0.Add(3*time.Hour))))
			if res.ReadableID != "CASE-2" || res.IncidentsOpened != 1 {
				t.Fatalf("refire: %+v", res)
			}
			if c := getCase(t, env, env.RootKey, "CASE-2"); c.Priority != "CASE_PRIORITY_P2" {
				t.Fatalf("new case priority: %s", c.Priority)
			}
		})

		t.Run("a resolved alert never seen changes nothing", func(t *testing.T) {
			ghost := resolved(firing("Ghost", "critical", "x", t0), t0.Add(time.Minute))
			res := send(t, env, key, group("{}:{alertname=\"Ghost\"}", ghost))
			if res.CaseID != "" || res.Unchanged != 1 || res.IncidentsResolved != 0 {
				t.Fatalf("unknown resolved alert: %+v", res)
			}
			if n := len(listCases(t, env, env.RootKey)); n != 2 {
				t.Fatalf("cases: %d", n)
			}
		})
	})
}

func TestIngestAccessAndValidation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		good, err := json.Marshal(group("g", firing("A", "info", "s", t0)))
		if err != nil {
			t.Fatal(err)
		}
		res := env.Do(t, http.MethodPost, ingestPath, "", "application/json", string(good))
		apitest.ExpectError(t, res, http.StatusUnauthorized)
		noPerm := env.MustKey(t, env.RootKey, "case:Read", "incidents:Read")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, ingestPath, noPerm, string(good)), http.StatusForbidden, "contextual-data:SendData")

		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		bad := []struct{ name, body, fragment string }{
			{"version", strings.Replace(string(good), `"version":"4"`, `"version":"3"`, 1), "version"},
			{"no alerts", strings.Replace(string(good), `"alerts":[`, `"alerts":[],"x":[`, 1), "alerts"},
			{"no fingerprint", strings.Replace(string(good), `"fingerprint":"`, `"fingerprintX":"`, 1), "fingerprint"},
			{"alert status", strings.Replace(string(good), `"status":"firing","labels"`, `"status":"burning","labels"`, 1), "status"},
			{"empty group key", strings.Replace(string(good), `"groupKey":"g"`, `"groupKey":""`, 1), "groupKey"},
			{"start time", strings.Replace(string(good), `"startsAt":"2026-11-20T10:00:00Z"`, `"startsAt":"yesterday"`, 1), "startsAt"},
			{"not json", `{"version":`, ""},
		}
		for _, b := range bad {
			t.Run(b.name, func(t *testing.T) {
				if b.body == string(good) {
					t.Fatalf("the case did not change the payload")
				}
				res := env.JSON(t, http.MethodPost, ingestPath, key, b.body)
				if b.fragment == "" {
					apitest.ExpectError(t, res, http.StatusBadRequest)
				} else {
					apitest.ExpectError(t, res, http.StatusBadRequest, b.fragment)
				}
			})
		}
		if n := len(listCases(t, env, env.RootKey)); n != 0 {
			t.Fatalf("refused notifications opened %d cases", n)
		}

		t.Run("teams are apart", func(t *testing.T) {
			_, otherKey := env.MustTeam(t, "other")
			res := send(t, env, otherKey, group("g", firing("A", "info", "s", t0)))
			if res.ReadableID != "CASE-1" {
				t.Fatalf("the other team's first case: %+v", res)
			}
			if n := len(listCases(t, env, env.RootKey)); n != 0 {
				t.Fatalf("team 1 sees %d cases of another team", n)
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+res.CaseID, env.RootKey, ""), http.StatusNotFound)
			// The same alert in team 1 is a different incident and a different case.
			mine := send(t, env, key, group("g", firing("A", "info", "s", t0)))
			if mine.ReadableID != "CASE-1" || mine.IncidentsOpened != 1 || mine.CaseID == res.CaseID {
				t.Fatalf("team 1's own case: %+v", mine)
			}
		})
	})
}

// TestIngestConcurrentNumbering sends 50 notifications of distinct groups at once, plus 20 of one
// shared group, and expects CASE-1 to CASE-51 with no gap and no duplicate, the shared group in
// one case.
func TestIngestConcurrentNumbering(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		var wg sync.WaitGroup
		errs := make(chan string, 70)
		post := func(n amNotification) {
			defer wg.Done()
			body, _ := json.Marshal(n)
			res := apitestDo(env, key, string(body))
			if res != "" {
				errs <- res
			}
		}
		for i := range 50 {
			wg.Add(1)
			go post(group(fmt.Sprintf("distinct-%d", i), firing(fmt.Sprintf("A%d", i), "warning", "s", t0)))
		}
		for i := range 20 {
			wg.Add(1)
			go post(group("shared", firing("Shared", "warning", fmt.Sprintf("s%d", i), t0)))
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		all := listCases(t, env, env.RootKey)
		if len(all) != 51 {
			t.Fatalf("cases: %d, want 51", len(all))
		}
		seen := map[string]bool{}
		for _, c := range all {
			seen[c.ReadableID] = true
		}
		for i := 1; i <= 51; i++ {
			if !seen[fmt.Sprintf("CASE-%d", i)] {
				t.Fatalf("CASE-%d is missing: %v", i, seen)
			}
		}
		var shared []caseView
		for _, c := range all {
			if c.Title == "alertname=Shared" {
				shared = append(shared, c)
			}
		}
		if len(shared) != 1 {
			t.Fatalf("the shared group has %d cases", len(shared))
		}
		if n := len(listIncidents(t, env, env.RootKey)); n != 70 {
			t.Fatalf("incidents: %d, want 70", n)
		}
	})
}

// apitestDo posts a notification from a goroutine (t.Fatal is not allowed there) and returns a
// description of the failure, or "".
func apitestDo(env *apitest.Env, key, body string) string {
	req, err := http.NewRequest(http.MethodPost, env.URL+ingestPath, strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e struct{ Message string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		return fmt.Sprintf("status %d: %s", res.StatusCode, e.Message)
	}
	return ""
}

// TestIngestConcurrentMixedSeverities sends, at once, notifications whose alerts of several
// severities come in opposite orders; every one must succeed (no deadlock between transactions
// that count the same kinds of incidents) and the aggregation must count every incident.
func TestIngestConcurrentMixedSeverities(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		severities := []string{"critical", "error", "warning", "info", "low"}
		var wg sync.WaitGroup
		errs := make(chan string, 40)
		for i := range 40 {
			var alerts []amAlert
			for j := range severities {
				s := severities[j]
				if i%2 == 1 {
					s = severities[len(severities)-1-j]
				}
				alerts = append(alerts, firing(fmt.Sprintf("M%d", i), s, s, t0))
			}
			body, _ := json.Marshal(group(fmt.Sprintf("mixed-%d", i), alerts...))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e := apitestDo(env, key, string(body)); e != "" {
					errs <- e
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		res := env.JSON(t, http.MethodGet, "/mgmt/openapi/4/incidents/aggregations/v1?group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY", env.RootKey, "")
		var out struct {
			IncidentAggs []struct {
				AllValuesCount int `json:"allValuesCount"`
			} `json:"incidentAggs"`
		}
		if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != http.StatusOK {
			t.Fatalf("aggregations: %d %s", res.Status, res.Body)
		}
		if len(out.IncidentAggs) != len(severities) {
			t.Fatalf("groups: %d, want %d", len(out.IncidentAggs), len(severities))
		}
		for _, g := range out.IncidentAggs {
			if g.AllValuesCount != 40 {
				t.Fatalf("a severity counts %d incidents, want 40: %s", g.AllValuesCount, res.Body)
			}
		}
	})
}

// TestConcurrentBatchesInOppositeOrders acknowledges, at once, pairs of incidents of two
// severities listed in opposite orders; every batch must succeed (the per-kind incident counters
// are written in one fixed order, so two batches cannot wait on each other).
func TestConcurrentBatchesInOppositeOrders(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		const pairs = 30
		var alerts []amAlert
		for i := range pairs {
			alerts = append(alerts, firing(fmt.Sprintf("C%d", i), "critical", "a", t0), firing(fmt.Sprintf("W%d", i), "warning", "a", t0))
		}
		send(t, env, key, group("pairs", alerts...))
		byName := map[string]string{}
		for _, inc := range listIncidents(t, env, env.RootKey) {
			byName[inc.Name] = inc.ID
		}
		var wg sync.WaitGroup
		errs := make(chan string, pairs)
		for i := range pairs {
			ids := []string{byName[fmt.Sprintf("C%d", i)], byName[fmt.Sprintf("W%d", i)]}
			if i%2 == 1 {
				ids[0], ids[1] = ids[1], ids[0]
			}
			body, _ := json.Marshal(map[string][]string{"incidentIds": ids})
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, env.URL+"/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge", strings.NewReader(string(body)))
				req.Header.Set("Authorization", "Bearer "+env.RootKey)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					errs <- fmt.Sprintf("acknowledge %v: status %d", ids, res.StatusCode)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		for _, inc := range listIncidents(t, env, env.RootKey) {
			if inc.Status != "INCIDENT_STATUS_ACKNOWLEDGED" {
				t.Fatalf("incident %s is %s", inc.Name, inc.Status)
			}
		}
	})
}
