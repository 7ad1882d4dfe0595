package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

const (
	centerPath     = "/mgmt/openapi/latest/notifications/notification-center/v1/"
	ingestPath     = "/ingest/alertmanager/v1"
	crashIngesters = 6
)

// received is one request a receiver got, in arrival order.
type received struct {
	seq             int
	path, key, body string
	// PagerDuty's dedup_key and event_action; empty for the webhook.
	dedup, action string
}

// recorder is a loopback receiver that records every request and answers 200 after a delay, so
// that deliveries are in flight and pending when the server is killed.
type recorder struct {
	mu   sync.Mutex
	got  []received
	slow func() time.Duration
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		DedupKey    string `json:"dedup_key"`
		EventAction string `json:"event_action"`
	}
	if r.URL.Path == "/pd" {
		_ = json.Unmarshal(body, &ev)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, received{seq: len(rc.got), path: r.URL.Path, key: r.Header.Get("Idempotency-Key"),
		body: string(body), dedup: ev.DedupKey, action: ev.EventAction})
	rc.mu.Unlock()
	time.Sleep(rc.slow())
	w.WriteHeader(http.StatusOK)
}

func (rc *recorder) snapshot() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// firedAlert is an Alertmanager notification the server answered 2xx: its deliveries are in the
// outbox.
type firedAlert struct {
	name     string
	resolved bool // its resolve was acknowledged too
}

// TestKillDuringDeliveries: deliveries survive kill -9. The server runs as a process with a
// generic HTTPS and a PagerDuty connector pointing at a slow loopback receiver (20–50 ms per
// answer) and a router sending every ALERTS event to both; six ingesters post distinct
// Alertmanager alerts (and the resolve of every third) until the process is killed with SIGKILL
// mid-stream, with deliveries pending and in flight. Restarted on the same database, the server
// drains the outbox. Then: every outbox record is sent and its idempotency key reached the
// receiver; every acknowledged alert's trigger (and acknowledged resolve) reached each connector;
// a key received more than once (an attempt in flight at the kill, sent again once its lease
// ends: at-least-once) carried the identical body each time; per PagerDuty dedup key no resolve
// arrived before the first trigger. SQLite and PostgreSQL run side by side: each waits out the
// killed worker's lease (attempt timeout 1 s + 30 s).
func TestKillDuringDeliveries(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a delivery lease after kill -9 (about 35 s)")
	}
	engines(t, func(t *testing.T, database []string) {
		t.Parallel()
		killDuringDeliveries(t, database)
	})
}

func killDuringDeliveries(t *testing.T, database []string) {
	rc := &recorder{slow: func() time.Duration { return time.Duration(20+rand.IntN(31)) * time.Millisecond }}
	receiver := httptest.NewServer(rc)
	defer receiver.Close()
	opts := db.Options{SharedFile: true}
	if database[0] == "--data-dir" {
		opts.DataDir = database[1]
		database = append(database, "--sqlite-file-access", "shared")
	} else {
		opts.URL = database[1]
	}
	database = append(database, "--notify-allow-private", "--notify-attempt-timeout", "1s")
	logs := filepath.Join(t.TempDir(), "server.log")

	srv := startServer(t, logs, database)
	api := newAPIClient(srv.base, crashIngesters)
	defer api.client.CloseIdleConnections()
	call := api.call
	hook := api.connector(t, "GENERIC_HTTPS", map[string]string{"url": receiver.URL + "/hook"})
	pd := api.connector(t, "PAGERDUTY", map[string]string{"integrationKey": "rk-0123456789", "eventsUrl": receiver.URL + "/pd"})
	if status, out, err := call(centerPath+"routers", `{"router":{"name":"Everything","entityType":"ALERTS",
		"rules":[{"name":"all","condition":"true","targets":[{"connectorId":"`+hook+`"},{"connectorId":"`+pd+`"}]}]}}`); err != nil || status != http.StatusOK {
		t.Fatalf("create router: %d %s %v", status, out, err)
	}

	// Ingest until killed.
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var mu sync.Mutex
	var fired []firedAlert
	var unexpected []string
	var wg sync.WaitGroup
	for w := range crashIngesters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				// Fixed width: no name is a prefix of another, so a body names one alert.
				name := fmt.Sprintf("crash%02dn%05d", w, i)
				status, out, err := call(ingestPath, alertmanagerBody(name, "api", t0, time.Time{}))
				if err != nil {
					return // the server is gone, or died while answering: not acknowledged
				}
				if status != http.StatusOK {
					mu.Lock()
					unexpected = append(unexpected, fmt.Sprintf("%s: %d %s", name, status, out))
					mu.Unlock()
					return
				}
				a := firedAlert{name: name}
				if i%3 == 0 {
					status, out, err = call(ingestPath, alertmanagerBody(name, "api", t0, time.Now().UTC()))
					if err == nil && status != http.StatusOK {
						mu.Lock()
						unexpected = append(unexpected, fmt.Sprintf("resolve %s: %d %s", name, status, out))
						mu.Unlock()
					}
					a.resolved = err == nil && status == http.StatusOK
				}
				mu.Lock()
				fired = append(fired, a)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(time.Duration(1000+rand.IntN(1000)) * time.Millisecond)
	srv.kill(t)
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("%d ingestions answered an error, first: %s\n%s", len(unexpected), unexpected[0], tail(logs))
	}
	atKill := len(rc.snapshot())

	// Restart on the same database and wait until no recorded event waits to be routed and the
	// outbox has no pending record.
	restarted := time.Now()
	srv = startServer(t, logs, database)
	store, err := db.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	pendingAtRestart := -1
	for {
		var pending int
		if err := store.Read().QueryRowContext(context.Background(),
			`SELECT (SELECT count(*) FROM deliveries WHERE state = 'pending') + (SELECT count(*) FROM notification_events)`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pendingAtRestart < 0 {
			pendingAtRestart = pending
		}
		if pending == 0 {
			break
		}
		if time.Since(restarted) > 2*time.Minute {
			t.Fatalf("%d events and deliveries still pending 2 min after the restart\n%s", pending, tail(logs))
		}
		time.Sleep(50 * time.Millisecond)
	}
	drained := time.Since(restarted)
	srv.kill(t)

	// Every record of the outbox was sent, and its key reached the receiver.
	type outboxRecord struct{ connector, kind, key, state string }
	rows, err := store.Read().QueryContext(context.Background(),
		`SELECT connector_id, event_kind, idempotency_key, state FROM deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	var records []outboxRecord
	for rows.Next() {
		var r outboxRecord
		if err := rows.Scan(&r.connector, &r.kind, &r.key, &r.state); err != nil {
			t.Fatal(err)
		}
		records = append(records, r)
	}
	rows.Close()
	got := rc.snapshot()
	byKey := map[string][]received{}
	for _, g := range got {
		byKey[g.key] = append(byKey[g.key], g)
	}
	for _, r := range records {
		if r.state != "sent" {
			t.Errorf("outbox record %s (%s %s) is %s, want sent", r.key, r.connector, r.kind, r.state)
		}
		if len(byKey[r.key]) == 0 {
			t.Errorf("outbox record %s (%s %s) never reached the receiver", r.key, r.connector, r.kind)
		}
	}
	if len(byKey) != len(records) {
		t.Errorf("the receiver saw %d distinct keys, the outbox holds %d records", len(byKey), len(records))
	}
	// At-least-once: a key seen twice is the same notification sent again, byte for byte.
	duplicates := 0
	for key, gs := range byKey {
		if key == "" {
			t.Errorf("%d requests without an Idempotency-Key", len(gs))
			continue
		}
		for _, g := range gs[1:] {
			duplicates++
			if g.body != gs[0].body || g.path != gs[0].path {
				t.Errorf("key %s was sent twice with different requests:\n%s %s\n%s %s", key, gs[0].path, gs[0].body, g.path, g.body)
			}
		}
	}

	// Every acknowledged alert's trigger reached both connectors; an acknowledged resolve reached
	// PagerDuty after the trigger of the same dedup key, and the webhook.
	hookBodies := map[string][]string{} // alert name → the webhook bodies naming it
	pdTrigger := map[string]string{}    // alert name → its dedup key
	firstSeq := map[[2]string]int{}     // dedup key, action → first arrival
	for _, g := range got {
		switch g.path {
		case "/hook":
			if i := strings.Index(g.body, "crash"); i >= 0 && i+len("crash00n00000") <= len(g.body) {
				name := g.body[i : i+len("crash00n00000")]
				hookBodies[name] = append(hookBodies[name], g.body)
			}
		case "/pd":
			if g.action == "trigger" {
				if i := strings.Index(g.body, "crash"); i >= 0 && i+len("crash00n00000") <= len(g.body) {
					pdTrigger[g.body[i:i+len("crash00n00000")]] = g.dedup
				}
			}
			k := [2]string{g.dedup, g.action}
			if _, seen := firstSeq[k]; !seen {
				firstSeq[k] = g.seq
			}
		}
	}
	resolves := 0
	for _, a := range fired {
		if len(hookBodies[a.name]) == 0 {
			t.Errorf("acknowledged alert %s: the webhook got nothing", a.name)
		}
		dedup, ok := pdTrigger[a.name]
		if !ok {
			t.Errorf("acknowledged alert %s: PagerDuty got no trigger", a.name)
			continue
		}
		if !a.resolved {
			continue
		}
		resolves++
		resolvedHook := false
		for _, b := range hookBodies[a.name] {
			resolvedHook = resolvedHook || strings.Contains(b, "Resolved")
		}
		if !resolvedHook {
			t.Errorf("acknowledged resolve of %s: the webhook got %q", a.name, hookBodies[a.name])
		}
		if _, ok := firstSeq[[2]string{dedup, "resolve"}]; !ok {
			t.Errorf("acknowledged resolve of %s: PagerDuty got no resolve for %s", a.name, dedup)
		}
	}
	for k, seq := range firstSeq {
		if k[1] != "resolve" {
			continue
		}
		if trigger, ok := firstSeq[[2]string{k[0], "trigger"}]; !ok || trigger > seq {
			t.Errorf("PagerDuty dedup key %s: a resolve (request %d) arrived before its trigger (%v, %d)", k[0], seq, ok, trigger)
		}
	}
	if len(fired) == 0 {
		t.Error("no alert was acknowledged before the kill")
	}
	t.Logf("%d alerts acknowledged before the kill (%d resolves); %d outbox records, %d requests received (%d at the kill), %d duplicates (same key and body); %d events and deliveries pending at the restart, drained %.1f s after it",
		len(fired), resolves, len(records), len(got), atKill, duplicates, pendingAtRestart, drained.Seconds())
}

// apiClient calls the server under test with the bootstrap key.
type apiClient struct {
	base   string
	client *http.Client
}

func newAPIClient(base string, conns int) *apiClient {
	return &apiClient{base: base, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conns}}}
}

// call sends a request (GET when body is empty, else POST) and reads the answer.
func (a *apiClient) call(path, body string) (int, string, error) {
	method, reader := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, reader = http.MethodPost, strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, a.base+path, reader)
	req.Header.Set("Authorization", "Bearer "+crashKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	out, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(out), err
}

// connector creates a notification-center connector of the type with the configuration fields.
func (a *apiClient) connector(t *testing.T, typ string, fields map[string]string) string {
	t.Helper()
	var fs []map[string]string
	for name, value := range fields {
		fs = append(fs, map[string]string{"fieldName": name, "value": value})
	}
	body, _ := json.Marshal(map[string]any{"connector": map[string]any{"name": typ + " receiver", "type": typ,
		"connectorConfig": map[string]any{"fields": fs}}})
	status, out, err := a.call(centerPath+"connectors", string(body))
	var c struct{ Connector struct{ ID string } }
	if err != nil || status != http.StatusOK || json.Unmarshal([]byte(out), &c) != nil || c.Connector.ID == "" {
		t.Fatalf("create %s connector: %d %s %v", typ, status, out, err)
	}
	return c.Connector.ID
}

// alertmanagerBody is an Alertmanager webhook notification of one alert with the service label:
// firing when endsAt is zero, resolved otherwise.
func alertmanagerBody(name, service string, startsAt, endsAt time.Time) string {
	status, ends := "firing", "0001-01-01T00:00:00Z"
	if !endsAt.IsZero() {
		status, ends = "resolved", endsAt.Format(time.RFC3339)
	}
	alert := map[string]any{"status": status, "fingerprint": "fp-" + name,
		"labels":      map[string]string{"alertname": name, "severity": "critical", "environment": "production", "service": service},
		"annotations": map[string]string{"summary": name + " summary"},
		"startsAt":    startsAt.Format(time.RFC3339), "endsAt": ends}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(map[string]any{"version": "4", "groupKey": `{}:{alertname="` + name + `"}`, "status": status,
		"receiver": "mgmtapi", "groupLabels": map[string]string{"alertname": name}, "commonLabels": map[string]string{},
		"commonAnnotations": map[string]string{}, "externalURL": "http://am", "alerts": []any{alert}})
	return b.String()
}
