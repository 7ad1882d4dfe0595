package notifiers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
)

func kind(t *testing.T, typ string) notifiers.Kind {
	t.Helper()
	k, ok := notifiers.Lookup(typ)
	if !ok {
		t.Fatalf("no kind %s", typ)
	}
	return k
}

// TestEveryPublicTypeHasAKind: the table holds the twelve public types once each, UNKNOWN none.
func TestEveryPublicTypeHasAKind(t *testing.T) {
	want := []string{"GENERIC", "SLACK", "PAGERDUTY", "SEND_LOG", "EMAIL_GROUP", "MICROSOFT_TEAMS", "JIRA",
		"OPSGENIE", "DEMISTO", "AWS_EVENT_BRIDGE", "IBM_EVENT_NOTIFICATIONS", "MS_TEAMS_WORKFLOW"}
	var got []string
	for _, k := range notifiers.Kinds() {
		got = append(got, k.Type)
		if k.Label == "" || k.Config == "" || k.Notifier == nil {
			t.Errorf("%s: incomplete %+v", k.Type, k)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("kinds %v", got)
	}
	if _, ok := notifiers.Lookup("UNKNOWN"); ok {
		t.Error("UNKNOWN is a kind")
	}
}

// TestPayloadValuesAreEscaped: a value with quotes, a backslash and a line break stays inside its
// JSON string, and the rendered payload is JSON.
func TestPayloadValuesAreEscaped(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { body, _ = io.ReadAll(r.Body) }))
	defer srv.Close()
	s := delivery.NewSender(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}})
	m := notifiers.Message{Title: "a \"quoted\" \\ name\nnext", Status: notifiers.Triggered, Time: time.Unix(1700000000, 0),
		Fields: map[string]string{"TEAM_NAME": "ops"}}
	o := notifiers.Send(context.Background(), s, kind(t, "GENERIC"),
		notifiers.Target{URL: srv.URL, Settings: map[string]string{"payload": `{"n": "$ALERT_NAME", "team": "$TEAM_NAME", "ms": "$EVENT_TIMESTAMP_MS"}`}}, m)
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	var v map[string]string
	if err := json.Unmarshal(body, &v); err != nil || v["n"] != m.Title || v["team"] != "ops" || v["ms"] != "1700000000000" {
		t.Errorf("rendered %s (%v)", body, err)
	}
}

// TestRetryFollowsTheAnswer: 429 and 5xx answers are worth retrying, other refusals are final,
// a connection refused is retried; a resolution is a PagerDuty resolve.
func TestRetryFollowsTheAnswer(t *testing.T) {
	status := 0
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	s := delivery.NewSender(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}})
	target := notifiers.Target{URL: srv.URL, Settings: map[string]string{"serviceKey": "k"}}
	m := notifiers.Message{Title: "t", Status: notifiers.Resolved, Key: "alert-1"}
	for _, c := range []struct {
		status int
		retry  bool
	}{{429, true}, {503, true}, {400, false}, {404, false}} {
		status = c.status
		o := notifiers.Send(context.Background(), s, kind(t, "PAGERDUTY"), target, m)
		if o.Status != c.status || o.Err == nil || o.Retry != c.retry {
			t.Errorf("answer %d: %+v", c.status, o)
		}
	}
	if got["event_action"] != "resolve" || got["dedup_key"] != "alert-1" || got["payload"] != nil {
		t.Errorf("resolve event %v", got)
	}
	srv.Close()
	if o := notifiers.Send(context.Background(), s, kind(t, "PAGERDUTY"), target, m); o.Status != 0 || o.Err == nil || !o.Retry {
		t.Errorf("connection refused: %+v", o)
	}
}

// TestOpsgenieResolutionClosesTheAlert: a resolution through the Alerts API's URL is the close
// action of the alias the triggering opened, authorised by the URL's key.
func TestOpsgenieResolutionClosesTheAlert(t *testing.T) {
	var path, query, authz string
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, authz = r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	s := delivery.NewSender(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}})
	target := notifiers.Target{URL: srv.URL + "/v2/alerts?apiKey=K3Y"}
	m := notifiers.Message{Title: "disk full", Text: "back to normal", Status: notifiers.Resolved, Key: "team-1/alert 7"}
	if o := notifiers.Send(context.Background(), s, kind(t, "OPSGENIE"), target, m); o.Err != nil {
		t.Fatal(o.Err)
	}
	if path != "/v2/alerts/team-1/alert 7/close" || !strings.Contains(query, "identifierType=alias") || authz != "GenieKey K3Y" || body["source"] != "mgmtapi" {
		t.Errorf("close: %s ? %s, %q, %v", path, query, authz, body)
	}
	m.Status = notifiers.Triggered
	if o := notifiers.Send(context.Background(), s, kind(t, "OPSGENIE"), target, m); o.Err != nil {
		t.Fatal(o.Err)
	}
	if path != "/v2/alerts" || body["alias"] != "team-1/alert 7" || body["message"] != "disk full" {
		t.Errorf("create: %s %v", path, body)
	}
}
