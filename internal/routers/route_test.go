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
)

// connectorWith creates a connector of the type with the given configuration fields.
func connectorWith(t testing.TB, env *apitest.Env, key, typ string, fields map[string]string) string {
	t.Helper()
	var fs []map[string]string
	for name, value := range fields {
		fs = append(fs, map[string]string{"fieldName": name, "value": value})
	}
	body, _ := json.Marshal(map[string]any{"connector": map[string]any{"name": typ + " connector", "type": typ,
		"connectorConfig": map[string]any{"fields": fs}}})
	return apitest.Decode[struct{ Connector struct{ ID string } }](t, env.JSON(t, http.MethodPost, connPath, key, string(body))).Connector.ID
}

// alertmanager posts one Alertmanager webhook notification of one alert to the ingestion
// endpoint: firing when endsAt is zero, resolved otherwise.
func alertmanager(t *testing.T, env *apitest.Env, key, name, severity string, startsAt, endsAt time.Time) {
	t.Helper()
	alertmanagerWith(t, env, key, name, severity, nil, startsAt, endsAt)
}

// alertmanagerWith is alertmanager with more labels on the alert.
func alertmanagerWith(t *testing.T, env *apitest.Env, key, name, severity string, more map[string]string, startsAt, endsAt time.Time) {
	t.Helper()
	status, ends := "firing", "0001-01-01T00:00:00Z"
	if !endsAt.IsZero() {
		status, ends = "resolved", endsAt.Format(time.RFC3339)
	}
	labels := map[string]string{"alertname": name, "severity": severity, "environment": "production", "service": "api"}
	for k, v := range more {
		labels[k] = v
	}
	alert := map[string]any{"status": status, "fingerprint": "fp-" + name,
		"labels":      labels,
		"annotations": map[string]string{"summary": name + " summary"},
		"startsAt":    startsAt.Format(time.RFC3339), "endsAt": ends}
	body, _ := json.Marshal(map[string]any{"version": "4", "groupKey": `{}:{alertname="` + name + `"}`, "status": status,
		"receiver": "mgmtapi", "groupLabels": map[string]string{"alertname": name}, "commonLabels": map[string]string{},
		"commonAnnotations": map[string]string{}, "externalURL": "http://am", "alerts": []any{alert}})
	if res := env.JSON(t, http.MethodPost, "/ingest/alertmanager/v1", key, string(body)); res.Status != http.StatusOK {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
}

// outboxRow is one delivery record as the worker would read it.
type outboxRow struct{ Router, Connector, Kind, Dedup, Payload string }

// outbox routes the events recorded so far (as the worker's routing stage does) and reads the
// delivery records, oldest first.
func outbox(t *testing.T, env *apitest.Env) []outboxRow {
	t.Helper()
	env.Route(t, nil)
	rows, err := env.DB.Read().QueryContext(context.Background(),
		`SELECT router_name, connector_id, event_kind, dedup_key, payload FROM deliveries ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.Router, &r.Connector, &r.Kind, &r.Dedup, &r.Payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// kinds summarises rows as connector:kind.
func kinds(rows []outboxRow, names map[string]string) string {
	var s []string
	for _, r := range rows {
		s = append(s, names[r.Connector]+":"+r.Kind)
	}
	return strings.Join(s, " ")
}

// TestEventsAreRoutedToTheOutbox: incidents' and cases' events reach the routers in their own
// transaction. A P1 alert goes to the rule's PagerDuty target, a P3 one to the fallback webhook;
// acknowledging and resolving the P1 incident follow it to PagerDuty with the same dedup key; a
// comment on a case reaches the cases router; a disabled router and a router whose entity labels
// do not match send nothing. A worker then delivers the records to receivers on loopback: the
// PagerDuty receiver gets trigger, acknowledge, resolve under one dedup_key, the webhook the
// rendered title.
func TestEventsAreRoutedToTheOutbox(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var mu sync.Mutex
		var got []string
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, r.URL.Path+" "+string(body))
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		}))
		defer receiver.Close()

		key := env.RootKey
		pd := connectorWith(t, env, key, "PAGERDUTY", map[string]string{"integrationKey": "routing-key-1", "eventsUrl": receiver.URL + "/pd"})
		hook := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": receiver.URL + "/hook"})
		slack := connectorWith(t, env, key, "SLACK", map[string]string{"integrationId": hookTo(t, env, key, "SLACK", receiver.URL+"/slack")})
		names := map[string]string{pd: "pd", hook: "hook", slack: "slack"}
		create(t, env, key, `{"name":"Paging","entityType":"ALERTS","entityLabels":{"environment":"production","service":"*"},
			"rules":[{"name":"P1","condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"`+pd+`"}]}],
			"fallbackTargets":[{"entityType":"ALERTS","target":{"connectorId":"`+hook+`"}}]}`)
		create(t, env, key, `{"name":"Off","entityType":"ALERTS","disabled":true,"rules":[{"condition":"true","targets":[{"connectorId":"`+slack+`"}]}]}`)
		create(t, env, key, `{"name":"Staging","entityType":"ALERTS","entityLabels":{"environment":"staging"},
			"rules":[{"condition":"true","targets":[{"connectorId":"`+slack+`"}]}]}`)
		create(t, env, key, `{"name":"Cases","entityType":"CASES","rules":[{"condition":"case.priority == 'P1'","targets":[{"connectorId":"`+slack+`"}]}]}`)

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		alertmanager(t, env, ingest, "DiskFull", "critical", t0, time.Time{})
		alertmanager(t, env, ingest, "SlowQueries", "warning", t0, time.Time{})
		// The P1 alert opened a P1 case, which the cases router sends to Slack.
		if k := kinds(outbox(t, env), names); k != "slack:opened pd:triggered hook:triggered" {
			t.Fatalf("after two alerts firing, the outbox holds %q", k)
		}

		incidents := apitest.Decode[struct{ Incidents []struct{ ID, Name string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`))
		var diskFull, caseID string
		for _, inc := range incidents.Incidents {
			if inc.Name == "DiskFull" {
				diskFull = inc.ID
			}
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge", key,
			`{"incidentIds":["`+diskFull+`"]}`))
		alertmanager(t, env, ingest, "DiskFull", "critical", t0, time.Now().UTC())
		cases := apitest.Decode[struct {
			Cases []struct{ ID, Title, Priority string }
		}](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{}`))
		for _, c := range cases.Cases {
			if c.Priority == "CASE_PRIORITY_P1" {
				caseID = c.ID
			}
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1/"+caseID+"/comments", key, `{"text":"on it"}`))

		rows := outbox(t, env)
		// The P1 case was opened (and changed) by the alert too: the cases router sent those.
		var alertRows, caseRows []string
		for _, r := range rows {
			if names[r.Connector] == "slack" {
				caseRows = append(caseRows, r.Kind)
			} else {
				alertRows = append(alertRows, names[r.Connector]+":"+r.Kind)
			}
		}
		if a := strings.Join(alertRows, " "); a != "pd:triggered hook:triggered pd:acknowledged pd:resolved" {
			t.Fatalf("alert deliveries %q", a)
		}
		if c := strings.Join(caseRows, " "); !strings.HasPrefix(c, "opened") || !strings.HasSuffix(c, "commented") {
			t.Fatalf("case deliveries %q", c)
		}
		dedup := map[string]bool{}
		for _, r := range rows {
			if names[r.Connector] == "pd" {
				dedup[r.Dedup] = true
			}
		}
		if len(dedup) != 1 {
			t.Fatalf("PagerDuty dedup keys %v: one incident must keep one", dedup)
		}

		w := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true},
			PollInterval: 10 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		var pdActions []string
		var hookBody string
		for _, g := range got {
			path, body, _ := strings.Cut(g, " ")
			switch path {
			case "/pd":
				var ev struct {
					RoutingKey, EventAction, DedupKey string `json:"-"`
				}
				var raw map[string]any
				if err := json.Unmarshal([]byte(body), &raw); err != nil {
					t.Fatal(err)
				}
				ev.RoutingKey, _ = raw["routing_key"].(string)
				ev.EventAction, _ = raw["event_action"].(string)
				ev.DedupKey, _ = raw["dedup_key"].(string)
				if ev.RoutingKey != "routing-key-1" || !dedup[ev.DedupKey] {
					t.Errorf("PagerDuty event %s", body)
				}
				pdActions = append(pdActions, ev.EventAction)
			case "/hook":
				hookBody = body
			}
		}
		if a := strings.Join(pdActions, ","); a != "trigger,acknowledge,resolve" {
			t.Errorf("PagerDuty got %s", a)
		}
		if !strings.Contains(hookBody, `"title":"[Triggered] SlowQueries"`) {
			t.Errorf("the webhook got %s", hookBody)
		}
	})
}

// TestAnUnsendableNotificationDoesNotRefuseTheAlert: a connector whose composed request cannot be
// sent (its additional headers replace one mgmtapi sets itself) gets no record, and the alert's
// write, and the other connector's notification, go on; a connector named by several routers and
// rules gets one notification.
func TestAnUnsendableNotificationDoesNotRefuseTheAlert(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		bad := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "https://hooks.example/bad",
			"additionalHeaders": `{"Idempotency-Key":"mine"}`})
		good := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "https://hooks.example/good"})
		create(t, env, key, `{"name":"both","entityType":"ALERTS","rules":[{"condition":"true",
			"targets":[{"connectorId":"`+bad+`"},{"connectorId":"`+good+`"}]}]}`)
		// A second router and a second rule naming the same connector: still one notification.
		create(t, env, key, `{"name":"again","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+good+`"}]},
			{"condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"`+good+`","presetId":"preset_system_generic_https_alerts_basic"}]}]}`)
		alertmanager(t, env, env.MustKey(t, key, "contextual-data:SendData"), "DiskFull", "critical",
			time.Now().UTC().Add(-time.Minute).Truncate(time.Second), time.Time{})
		if k := kinds(outbox(t, env), map[string]string{bad: "bad", good: "good"}); k != "good:triggered" {
			t.Fatalf("the outbox holds %q", k)
		}
		if n := len(apitest.Decode[struct{ Incidents []struct{ ID string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents); n != 1 {
			t.Fatalf("%d incidents", n)
		}
	})
}
