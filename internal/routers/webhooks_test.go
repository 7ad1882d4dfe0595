package routers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

const webhooksPath = "/mgmt/openapi/latest/integrations/webhooks/v1"

// hookRequest is one request a loopback receiver got.
type hookRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// hookReceiver is a loopback HTTP server keeping every request; answer chooses the status of the
// n-th request (from 1) to a path.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []hookRequest
	counts map[string]int
}

func newHookReceiver(t *testing.T, answer func(path string, n int) int) *hookReceiver {
	h := &hookReceiver{counts: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		h.counts[r.URL.Path]++
		n := h.counts[r.URL.Path]
		h.mu.Unlock()
		w.WriteHeader(answer(r.URL.Path, n))
	}))
	t.Cleanup(h.Close)
	return h
}

// take returns the requests got since the last take, by path (a path's last request).
func (h *hookReceiver) take() (map[string]hookRequest, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]hookRequest{}
	for _, r := range h.got {
		out[r.Path] = r
	}
	n := len(h.got)
	h.got = nil
	return out, n
}

// outgoingWebhook creates an outgoing webhook and answers its externalId.
func outgoingWebhook(t *testing.T, env *apitest.Env, key, data string) int64 {
	t.Helper()
	res := env.JSON(t, http.MethodPost, webhooksPath, key, `{"data":`+data+`}`)
	if res.Status != http.StatusOK {
		t.Fatalf("webhook %s: %d %s", data, res.Status, res.Body)
	}
	id := apitest.Decode[struct{ ID string }](t, res).ID
	w := apitest.Decode[struct {
		Webhook struct{ ExternalID int64 }
	}](t, env.JSON(t, http.MethodGet, webhooksPath+"/"+id, key, "")).Webhook
	if w.ExternalID == 0 {
		t.Fatalf("webhook %s has no externalId", id)
	}
	return w.ExternalID
}

// definitionWithWebhooks creates a metric alert definition whose notification group holds the
// webhooks (a JSON array) and answers its id.
func definitionWithWebhooks(t *testing.T, env *apitest.Env, key, name, webhooks string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
		"description":"`+name+` is high","metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
		"notificationGroup":{"webhooks":`+webhooks+`}}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("definition %s: %d %s", name, res.Status, res.Body)
	}
	return apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID
}

// hookWorker is a worker as the server wires it (outgoing webhooks through their types'
// delivery), with short retry delays, that may connect to loopback.
func hookWorker(env *apitest.Env, smtp *delivery.SMTPServer) *delivery.Worker {
	return env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}, SMTP: smtp, PollInterval: 10 * time.Millisecond,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, AttemptTimeout: 5 * time.Second})
}

func drain(t *testing.T, w *delivery.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// hookRecord is an outbox record's outcome.
type hookRecord struct {
	Kind, State, Error string
	Status, Attempts   int
}

// hookRecords are the outbox records of outgoing webhooks, oldest first.
func hookRecords(t *testing.T, env *apitest.Env) []hookRecord {
	t.Helper()
	rows, err := env.DB.Read().QueryContext(context.Background(), `SELECT event_kind, state, error, status_code, attempts
		FROM deliveries WHERE connector_type = 'OUTGOING_WEBHOOK' ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []hookRecord
	for rows.Next() {
		var r hookRecord
		if err := rows.Scan(&r.Kind, &r.State, &r.Error, &r.Status, &r.Attempts); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// syncBuffer is a buffer that log handlers on several goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func jstr(v any) string { s, _ := v.(string); return s }

// TestAlertDefinitionWebhooksDeliverInTheirFormats: an Alertmanager alert of a definition whose
// notification group names outgoing webhooks (by externalId) of types GENERIC, SLACK, PAGERDUTY
// and OPSGENIE, and recipients, reaches each receiver on loopback in its own format (the Events
// API v2 event, the Opsgenie alert, the Slack message, the generic JSON body with the
// Idempotency-Key header) and the recipients as one email through the SMTP server; a webhook
// that does not exist sends nothing and fails nothing. The resolution reaches the settings of
// NOTIFY_ON_TRIGGERED_AND_RESOLVED (PagerDuty resolves the same dedup_key, Opsgenie closes the
// alias) and not the Slack one of TRIGGERED_ONLY. Every record ends sent.
func TestAlertDefinitionWebhooksDeliverInTheirFormats(t *testing.T) {
	mail := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		rc := newHookReceiver(t, func(string, int) int { return http.StatusAccepted })
		generic := outgoingWebhook(t, env, key, `{"name":"g","type":"GENERIC","url":"`+rc.URL+`/generic"}`)
		slack := outgoingWebhook(t, env, key, `{"name":"s","type":"SLACK","url":"`+rc.URL+`/slack","slack":{}}`)
		pd := outgoingWebhook(t, env, key, `{"name":"p","type":"PAGERDUTY","url":"`+rc.URL+`/v2/enqueue","pagerDuty":{"serviceKey":"PDKEY"}}`)
		og := outgoingWebhook(t, env, key, `{"name":"o","type":"OPSGENIE","url":"`+rc.URL+`/v2/alerts?apiKey=GKEY","opsgenie":{}}`)
		gone := outgoingWebhook(t, env, key, `{"name":"gone","type":"SLACK","url":"`+rc.URL+`/gone","slack":{}}`)
		both := `"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"`
		def := definitionWithWebhooks(t, env, key, "CPU", fmt.Sprintf(`[
			{"integration":{"integrationId":%d},%s},
			{"integration":{"integrationId":%d},"notifyOn":"NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED"},
			{"integration":{"integrationId":%d},%s},
			{"integration":{"integrationId":%d},%s},
			{"integration":{"integrationId":%d},%s},
			{"integration":{"recipients":{"emails":["ops@example.com","dba@example.com"]}},%s}]`,
			generic, both, slack, pd, both, og, both, gone, both, both))
		// A webhook a definition names cannot be deleted (409); a database of an earlier version
		// may still hold a definition naming one that is gone.
		apitest.MustExec(t, env.DB, `DELETE FROM outgoing_webhooks WHERE external_id = $1`, gone)
		before := len(mail.Messages(t))
		var logs syncBuffer

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		labels := map[string]string{"alert_def_id": def}
		alertmanagerWith(t, env, ingest, "CPU", "error", labels, t0, time.Time{})
		// the routing as the server wires it, logging where the test reads it
		env.Route(t, slog.New(slog.NewTextHandler(&logs, nil)))
		w := hookWorker(env, mail.SMTPServer("alerts@example.com"))
		drain(t, w)
		got, n := rc.take()
		if n != 4 {
			t.Fatalf("the firing: %d requests, want 4: %v", n, got)
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN msg=\"alert definition's webhook is gone; nothing is sent through it\" alert_def_id="+def+" webhook="+strconv.FormatInt(gone, 10)) {
			t.Errorf("the missing webhook is not logged: %s", l)
		}
		g := got["/generic"]
		if g.Method != http.MethodPost || g.Header.Get("Idempotency-Key") == "" || g.Body["status"] != "triggered" ||
			g.Body["title"] != "CPU" || g.Body["text"] != "CPU is high" || g.Body["severity"] != "error" ||
			apitest.At(g.Body, "fields", "alertDefId") != def || apitest.At(g.Body, "fields", "alertname") != "CPU" {
			t.Errorf("generic %s %v %v", g.Method, g.Header, g.Body)
		}
		s := got["/slack"]
		if s.Body["text"] != "CPU" || apitest.At(s.Body, "attachments", 0, "color") != "#E8590C" || apitest.At(s.Body, "attachments", 0, "text") != "CPU is high" {
			t.Errorf("slack %v", s.Body)
		}
		p := got["/v2/enqueue"]
		dedup := jstr(p.Body["dedup_key"])
		if p.Body["routing_key"] != "PDKEY" || p.Body["event_action"] != "trigger" || dedup == "" ||
			apitest.At(p.Body, "payload", "summary") != "CPU" || apitest.At(p.Body, "payload", "severity") != "error" || apitest.At(p.Body, "payload", "source") != "mgmtapi" {
			t.Errorf("pagerduty %v", p.Body)
		}
		o := got["/v2/alerts"]
		if o.Header.Get("Authorization") != "GenieKey GKEY" || o.Body["message"] != "CPU" || o.Body["alias"] != dedup ||
			o.Body["priority"] != "P2" || apitest.At(o.Body, "details", "status") != "triggered" {
			t.Errorf("opsgenie %v %v", o.Header, o.Body)
		}
		msgs := mail.WaitMessages(t, before+1)[before:]
		if len(msgs) != 1 {
			t.Fatalf("%d emails", len(msgs))
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(msgs[0].Header.Get("Subject"))
		if strings.Join(msgs[0].To, ",") != "ops@example.com,dba@example.com" || err != nil || subject != "CPU" {
			t.Errorf("email to %q, subject %q (%v)", msgs[0].To, subject, err)
		}

		alertmanagerWith(t, env, ingest, "CPU", "error", labels, t0, t0.Add(time.Minute))
		drain(t, w)
		got, n = rc.take()
		if n != 3 {
			t.Fatalf("the resolution: %d requests, want 3 (not Slack's, triggered only): %v", n, got)
		}
		if g := got["/generic"]; g.Body["status"] != "resolved" {
			t.Errorf("generic resolution %v", g.Body)
		}
		if p := got["/v2/enqueue"]; p.Body["event_action"] != "resolve" || p.Body["dedup_key"] != dedup || p.Body["routing_key"] != "PDKEY" {
			t.Errorf("pagerduty resolution %v", p.Body)
		}
		if o, ok := got["/v2/alerts/"+dedup+"/close"]; !ok || !strings.Contains(o.Query, "identifierType=alias") || o.Header.Get("Authorization") != "GenieKey GKEY" {
			t.Errorf("opsgenie resolution: %v", got)
		}
		if msgs := mail.WaitMessages(t, before+2)[before:]; len(msgs) != 2 {
			t.Fatalf("%d emails after the resolution", len(msgs))
		}
		recs := hookRecords(t, env)
		var kinds []string
		for _, r := range recs {
			if r.State != "sent" {
				t.Errorf("record %+v", r)
			}
			kinds = append(kinds, r.Kind)
		}
		if len(recs) != 9 || strings.Count(strings.Join(kinds, " "), "resolved") != 4 {
			t.Errorf("records %v", kinds)
		}
	})
}

// TestAlertDefinitionWebhookRetriggersAndFailures: a webhook setting with minutes is sent one
// triggered notification of an alert (the definition and the alert's labels) per that many
// minutes: the alert firing again within them, after its resolution, sends nothing, nor does its
// resolution (the webhook was not sent that trigger); once they have passed, it is sent again. Another alert of the definition is its own. A webhook
// answering 503 is retried and ends sent after two attempts; one answering 400 fails after one,
// with the status and the host recorded.
func TestAlertDefinitionWebhookRetriggersAndFailures(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		rc := newHookReceiver(t, func(path string, n int) int {
			switch {
			case path == "/flaky" && n == 1:
				return http.StatusServiceUnavailable
			case path == "/refusing":
				return http.StatusBadRequest
			}
			return http.StatusOK
		})
		hook := outgoingWebhook(t, env, key, `{"name":"g","type":"GENERIC","url":"`+rc.URL+`/hook"}`)
		def := definitionWithWebhooks(t, env, key, "Disk", fmt.Sprintf(
			`[{"integration":{"integrationId":%d},"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED","minutes":10}]`, hook))
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		labels := map[string]string{"alert_def_id": def}
		w := hookWorker(env, nil)
		fire := func(startsAt, endsAt time.Time) {
			t.Helper()
			alertmanagerWith(t, env, ingest, "Disk", "error", labels, startsAt, endsAt)
			drain(t, w)
		}
		statuses := func() string {
			t.Helper()
			got := []string{}
			rc.mu.Lock()
			for _, r := range rc.got {
				got = append(got, jstr(r.Body["status"]))
			}
			rc.got = nil
			rc.mu.Unlock()
			return strings.Join(got, " ")
		}
		fire(t0, time.Time{})
		fire(t0, t0.Add(time.Minute))
		t1 := t0.Add(2 * time.Minute)
		fire(t1, time.Time{}) // the same alert again, within 10 minutes: not sent
		if s := statuses(); s != "triggered resolved" {
			t.Fatalf("fired, resolved and fired again within the period: the receiver got %q", s)
		}
		fire(t1, t1.Add(time.Minute)) // its resolution is not sent: the webhook was not sent its trigger
		// another alert of the definition (other labels: another service) is not held back by the first
		alertmanagerWith(t, env, ingest, "DiskB", "error", map[string]string{"alert_def_id": def, "service": "b"}, t1, time.Time{})
		drain(t, w)
		if s := statuses(); s != "triggered" {
			t.Fatalf("the held-back firing's resolution and another alert: the receiver got %q", s)
		}
		env.Clock.Advance(11 * time.Minute)
		fire(t0.Add(3*time.Minute), time.Time{}) // once the period has passed, sent again
		// and DiskB, which still fires, is reminded of: its period has passed too
		if s := statuses(); s != "triggered triggered" {
			t.Fatalf("fired after the period, and a reminder of the other alert: the receiver got %q", s)
		}

		// A group by service: another alert of the same service is the same alert; another
		// service's is not.
		grouped := definitionWithWebhooks(t, env, key, "Mem", fmt.Sprintf(
			`[{"integration":{"integrationId":%d},"minutes":10}],"groupByKeys":["service"]`, hook))
		byService := func(name, service string) {
			t.Helper()
			alertmanagerWith(t, env, ingest, name, "error", map[string]string{"alert_def_id": grouped, "service": service}, t0, time.Time{})
			drain(t, w)
		}
		byService("MemA", "api")
		byService("MemB", "api")
		byService("MemC", "db")
		if s := statuses(); s != "triggered triggered" {
			t.Fatalf("alerts of a group by service (api, api, db): the receiver got %q", s)
		}

		flaky := outgoingWebhook(t, env, key, `{"name":"f","type":"GENERIC","url":"`+rc.URL+`/flaky"}`)
		refusing := outgoingWebhook(t, env, key, `{"name":"r","type":"SLACK","url":"`+rc.URL+`/refusing","slack":{}}`)
		failing := definitionWithWebhooks(t, env, key, "Net", fmt.Sprintf(
			`[{"integration":{"integrationId":%d}},{"integration":{"integrationId":%d}}]`, flaky, refusing))
		alertmanagerWith(t, env, ingest, "Net", "error", map[string]string{"alert_def_id": failing}, t0, time.Time{})
		// the retry is due after its backoff: drain until nothing is pending
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			drain(t, w)
			var pending int
			if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM deliveries WHERE state = 'pending'`).Scan(&pending); err != nil {
				t.Fatal(err)
			}
			if pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d records still pending", pending)
			}
		}
		recs := hookRecords(t, env)
		last := recs[len(recs)-2:]
		var sent, failed *hookRecord
		for i := range last {
			switch last[i].State {
			case "sent":
				sent = &last[i]
			case "failed":
				failed = &last[i]
			}
		}
		if sent == nil || sent.Status != http.StatusOK || sent.Attempts != 2 {
			t.Errorf("the webhook answering 503 then 200: %+v", last)
		}
		if failed == nil || failed.Status != http.StatusBadRequest || failed.Attempts != 1 ||
			!strings.Contains(failed.Error, "answered 400") || !strings.Contains(failed.Error, "127.0.0.1") {
			t.Errorf("the webhook answering 400: %+v", last)
		}
	})
}

// TestDefinitionsNameExistingWebhooks: a definition's webhook setting names one of the team's
// outgoing webhooks (400 naming the path otherwise, nothing stored); the webhook it names can be
// neither deleted nor retyped (409 naming the definition) until the definition lets it go.
func TestDefinitionsNameExistingWebhooks(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		hook := outgoingWebhook(t, env, key, `{"name":"s","type":"SLACK","url":"https://hooks.slack.com/services/x","slack":{}}`)
		res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"Nowhere",
			"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
			"notificationGroup":{"webhooks":[{"integration":{"integrationId":`+strconv.FormatInt(hook+1000, 10)+`}}]}}}`)
		apitest.ExpectError(t, res, 400, "alertDefProperties.notificationGroup.webhooks[0].integration.integrationId", strconv.FormatInt(hook+1000, 10))
		def := definitionWithWebhooks(t, env, key, "CPU", fmt.Sprintf(`[{"integration":{"integrationId":%d}}]`, hook))
		ext := strconv.FormatInt(hook, 10)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, webhooksPath+"/"+ext, key, ""), 409, `alert definition "CPU" (id `+def+`)`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, webhooksPath, key, `{"id":"`+ext+`","data":{"name":"s","type":"GENERIC","url":"https://example.com/x"}}`),
			409, `alert definition "CPU"`)
		if res := env.JSON(t, http.MethodDelete, "/mgmt/openapi/latest/alerts/alerts/v3/"+def, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete the definition: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, webhooksPath+"/"+ext, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete the webhook no definition names: %d %s", res.Status, res.Body)
		}
	})
}

// TestWebhookRecordsHonourRetryAfter: an outgoing webhook that answers 429 with Retry-After: 120
// is tried again no sooner than it asked (the worker's own backoff here is 10–50 ms), as a
// connector's receiver is.
func TestWebhookRecordsHonourRetryAfter(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		var mu sync.Mutex
		requests := 0
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			requests++
			mu.Unlock()
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		defer rc.Close()
		hook := outgoingWebhook(t, env, key, `{"name":"g","type":"GENERIC","url":"`+rc.URL+`/hook"}`)
		def := definitionWithWebhooks(t, env, key, "Disk", fmt.Sprintf(`[{"integration":{"integrationId":%d}}]`, hook))
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		alertmanagerWith(t, env, ingest, "Disk", "error", map[string]string{"alert_def_id": def}, time.Now().UTC().Add(-time.Hour), time.Time{})
		drain(t, hookWorker(env, nil))
		var created, next int64
		var state string
		if err := env.DB.Read().QueryRowContext(context.Background(),
			`SELECT created_at, next_attempt_at, state FROM deliveries WHERE connector_id LIKE 'webhook-%'`).Scan(&created, &next, &state); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if wait := time.Duration(next-created) * time.Microsecond; requests != 1 || state != "pending" || wait < 120*time.Second {
			t.Fatalf("after one 429 with Retry-After: 120, %d requests, the record %s and due %s after it was made", requests, state, wait)
		}
	})
}

// TestDefinitionWebhooksFollowNotifyOn (issue 37): a definition's webhook is sent a resolution
// as its destinations are: when its own notifyOn, else the definition's
// incidentsSettings.notifyOn, is NOTIFY_ON_TRIGGERED_AND_RESOLVED, and only when the webhook was
// sent the alert's trigger. A definition whose incidentsSettings say triggered only sends its
// webhooks no resolution, unless a webhook's own notifyOn says otherwise; one whose settings say
// both sends it to webhooks that do not say otherwise; a webhook named after the alert fired
// (an edit) is not sent the resolution of a trigger it never had.
func TestDefinitionWebhooksFollowNotifyOn(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		hookA := outgoingWebhook(t, env, key, `{"name":"a","type":"GENERIC","url":"http://127.0.0.1:9/a"}`)
		hookB := outgoingWebhook(t, env, key, `{"name":"b","type":"GENERIC","url":"http://127.0.0.1:9/b"}`)
		definition := func(name, settings, webhooks string) string {
			t.Helper()
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
				"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
				"incidentsSettings":`+settings+`,"notificationGroup":{"webhooks":`+webhooks+`}}}`)
			if res.Status != http.StatusOK {
				t.Fatalf("definition %s: %d %s", name, res.Status, res.Body)
			}
			return apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID
		}
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		kindsOf := func(name string) string {
			t.Helper()
			rows, err := env.DB.Read().QueryContext(t.Context(), `SELECT d.event_kind, d.connector_name FROM deliveries d
				JOIN incidents i ON i.team_id = d.team_id AND i.id = d.entity_id WHERE i.name = $1 ORDER BY d.created_at, d.connector_name`, name)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var kind, conn string
				if err := rows.Scan(&kind, &conn); err != nil {
					t.Fatal(err)
				}
				out = append(out, strings.TrimPrefix(conn, "outgoing webhook ")+":"+kind)
			}
			return strings.Join(out, " ")
		}
		a, b := strconv.FormatInt(hookA, 10), strconv.FormatInt(hookB, 10)
		fireAndResolve := func(name, def string) {
			t.Helper()
			alertmanagerWith(t, env, ingest, name, "error", map[string]string{"alert_def_id": def}, t0, time.Time{})
			outbox(t, env)
			alertmanagerWith(t, env, ingest, name, "error", map[string]string{"alert_def_id": def}, t0, t0.Add(time.Minute))
			outbox(t, env)
		}
		only := definition("Only", `{"notifyOn":"NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED"}`, fmt.Sprintf(
			`[{"integration":{"integrationId":%d}},{"integration":{"integrationId":%d},"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}]`, hookA, hookB))
		fireAndResolve("Only", only)
		if got, want := kindsOf("Only"), a+":triggered "+b+":triggered "+b+":resolved"; got != want {
			t.Errorf("settings triggered only, webhook b triggered and resolved: %q, want %q", got, want)
		}
		both := definition("Both", `{"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}`, fmt.Sprintf(
			`[{"integration":{"integrationId":%d}},{"integration":{"integrationId":%d},"notifyOn":"NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED"}]`, hookA, hookB))
		fireAndResolve("Both", both)
		if got, want := kindsOf("Both"), a+":triggered "+b+":triggered "+a+":resolved"; got != want {
			t.Errorf("settings triggered and resolved, webhook b triggered only: %q, want %q", got, want)
		}

		// Webhook b is named while the alert fires: the resolution goes to a only.
		late := definition("Late", `{"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}`, fmt.Sprintf(`[{"integration":{"integrationId":%d}}]`, hookA))
		alertmanagerWith(t, env, ingest, "Late", "error", map[string]string{"alert_def_id": late}, t0, time.Time{})
		outbox(t, env)
		res := env.JSON(t, http.MethodPut, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"id":"`+late+`","alertDefProperties":{"name":"Late",
			"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
			"incidentsSettings":{"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"},"notificationGroup":{"webhooks":`+fmt.Sprintf(
			`[{"integration":{"integrationId":%d}},{"integration":{"integrationId":%d}}]`, hookA, hookB)+`}}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("edit: %d %s", res.Status, res.Body)
		}
		alertmanagerWith(t, env, ingest, "Late", "error", map[string]string{"alert_def_id": late}, t0, t0.Add(time.Minute))
		outbox(t, env)
		if got, want := kindsOf("Late"), a+":triggered "+a+":resolved"; got != want {
			t.Errorf("a webhook named while the alert fired: %q, want %q", got, want)
		}
	})
}
