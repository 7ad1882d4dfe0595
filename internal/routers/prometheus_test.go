package routers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// request is what the loopback receiver got.
type request struct {
	Path, Key string
	Body      map[string]any
}

// recorder is a real HTTP receiver on loopback that records every request.
type recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []request
}

func newRecorder(t *testing.T) *recorder {
	rc := &recorder{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("%s: a body that is not a JSON object: %s", r.URL.Path, raw)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, request{Path: r.URL.Path, Key: r.Header.Get("Idempotency-Key"), Body: body})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// waitFor waits (at most a minute: Prometheus, Alertmanager and the worker each wait a second or
// so) until the receiver holds n requests, and returns them.
func (rc *recorder) waitFor(t *testing.T, n int, what string) []request {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rc.mu.Lock()
		got := append([]request(nil), rc.got...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the receiver holds %d requests, want %d: %+v", what, len(got), n, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// byPath keeps the latest request of each path among got[from:].
func byPath(got []request, from int) map[string]request {
	out := map[string]request{}
	for _, r := range got[from:] {
		out[r.Path] = r
	}
	return out
}

// TestPrometheusAlertPagesEveryConnectorType is the whole chain with real processes: a real
// Prometheus evaluates an alerting rule, sends the alert to a real Alertmanager, whose webhook
// posts it to mgmtapi; the alert opens a case and triggers an incident; a router matches the
// incident (its priority is P1) and sends it through four connectors, one of each delivered type,
// to a receiver on loopback, with the system presets' rendering. Acknowledging the incident
// through the API and the rule ceasing to match (Prometheus resolves the alert) follow it; the
// PagerDuty events keep one dedup key through trigger, acknowledge and resolve; the case records
// every delivery as notificationSent.
func TestPrometheusAlertPagesEveryConnectorType(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		rc := newRecorder(t)
		key := env.RootKey
		ids := map[string]string{
			"/slack": connectorWith(t, env, key, "SLACK", map[string]string{"integrationId": hookTo(t, env, key, "SLACK", rc.URL+"/slack")}),
			"/pd":    connectorWith(t, env, key, "PAGERDUTY", map[string]string{"integrationKey": "routing-key-e2e", "eventsUrl": rc.URL + "/pd"}),
			"/teams": connectorWith(t, env, key, "MICROSOFT_TEAMS", map[string]string{"integrationId": hookTo(t, env, key, "MS_TEAMS_WORKFLOW", rc.URL+"/teams")}),
			"/hook":  connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": rc.URL + "/hook"}),
		}
		var targets []string
		for _, id := range ids {
			targets = append(targets, `{"connectorId":"`+id+`"}`)
		}
		create(t, env, key, `{"name":"On call","entityType":"ALERTS","entityLabels":{"subsystemName":"checkout"},
			"rules":[{"name":"P1 pages","condition":"alertDef.priority == 'P1'","targets":[`+strings.Join(targets, ",")+`]}]}`)

		w := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true},
			PollInterval: 50 * time.Millisecond, AttemptTimeout: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		am := prometheustest.StartAlertmanager(t, env.URL+"/ingest/alertmanager/v1", ingest)
		rule := func(expr string) func(dir string) {
			return prometheustest.AlertingRule(t, "CheckoutDown", expr,
				map[string]string{"severity": "critical", "applicationName": "shop", "subsystemName": "checkout"},
				map[string]string{"summary": "checkout is down", "description": "no orders for a minute"})
		}
		prom := prometheustest.StartAlerting(t, rule("vector(1)"), am.URL)

		// Triggered: one request per connector, each in its receiver's format.
		got := rc.waitFor(t, 4, "the trigger")
		trigger := byPath(got, 0)
		if len(trigger) != 4 {
			t.Fatalf("the trigger reached %d receivers: %+v", len(trigger), got)
		}
		const headline = "[Triggered] CheckoutDown"
		if text, _ := trigger["/slack"].Body["text"].(string); !strings.Contains(text, headline) {
			t.Errorf("Slack got %v", trigger["/slack"].Body)
		}
		pd := trigger["/pd"].Body
		payload, _ := pd["payload"].(map[string]any)
		dedup, _ := pd["dedup_key"].(string)
		if pd["routing_key"] != "routing-key-e2e" || pd["event_action"] != "trigger" || dedup == "" ||
			payload["summary"] != headline || payload["severity"] != "critical" {
			t.Errorf("PagerDuty got %v", pd)
		}
		if card, _ := json.Marshal(trigger["/teams"].Body); trigger["/teams"].Body["type"] != "message" || !strings.Contains(string(card), headline) {
			t.Errorf("Teams got %s", card)
		}
		if h := trigger["/hook"].Body; h["title"] != headline || h["description"] != "no orders for a minute" {
			t.Errorf("the webhook got %v", h)
		}
		keys := map[string]bool{}
		for _, r := range got {
			if r.Key == "" || keys[r.Key] {
				t.Errorf("idempotency key %q missing or repeated", r.Key)
			}
			keys[r.Key] = true
		}

		// Acknowledged through the API: every connector is told, PagerDuty under the same key.
		incidents := apitest.Decode[struct{ Incidents []struct{ ID string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents
		if len(incidents) != 1 {
			t.Fatalf("incidents: %+v", incidents)
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge", key,
			`{"incidentIds":["`+incidents[0].ID+`"]}`))
		ack := byPath(rc.waitFor(t, 8, "the acknowledge"), 4)
		if ack["/pd"].Body["event_action"] != "acknowledge" || ack["/pd"].Body["dedup_key"] != dedup {
			t.Errorf("PagerDuty acknowledge %v", ack["/pd"].Body)
		}
		if text, _ := ack["/slack"].Body["text"].(string); !strings.Contains(text, "[Acknowledged] CheckoutDown") {
			t.Errorf("Slack acknowledge %v", ack["/slack"].Body)
		}

		// Resolved by Prometheus: the rule stops matching, the alert resolves through Alertmanager.
		rule("vector(1) == 2")(prom.RulesDir)
		res, err := http.Post(prom.URL+"/-/reload", "", nil)
		if err != nil {
			t.Fatalf("reload prometheus: %v", err)
		}
		res.Body.Close()
		resolved := byPath(rc.waitFor(t, 12, "the resolve"), 8)
		if resolved["/pd"].Body["event_action"] != "resolve" || resolved["/pd"].Body["dedup_key"] != dedup {
			t.Errorf("PagerDuty resolve %v", resolved["/pd"].Body)
		}
		if h := resolved["/hook"].Body; h["title"] != "[Resolved] CheckoutDown" {
			t.Errorf("the webhook's resolve %v", h)
		}

		// The case records each delivery: notificationSent, one per connector and event.
		cases := apitest.Decode[struct{ Cases []struct{ ID string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{}`)).Cases
		if len(cases) != 1 {
			t.Fatalf("cases: %+v", cases)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			events := apitest.Decode[struct {
				Events []struct{ EventData map[string]json.RawMessage }
			}](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+cases[0].ID+"/events", key, ""))
			sent := 0
			for _, e := range events.Events {
				if _, ok := e.EventData["notificationSent"]; ok {
					sent++
				}
				if _, ok := e.EventData["notificationFailed"]; ok {
					t.Fatalf("a delivery failed: %s", e.EventData["notificationFailed"])
				}
			}
			if sent == 12 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the case records %d notificationSent events, want 12", sent)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got := rc.waitFor(t, 12, "the end"); len(got) != 12 {
			t.Errorf("the receiver got %d requests in all, want 12", len(got))
		}
	})
}
