package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// cuttableLink forwards TCP connections to PostgreSQL until it is cut: then every connection
// through it is closed and new ones are refused (its port is closed), as when PostgreSQL stops.
// mend listens on the same port again.
type cuttableLink struct {
	t      *testing.T
	addr   string
	target string

	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
}

func newCuttableLink(t *testing.T, target string) *cuttableLink {
	l := &cuttableLink{t: t, target: target, conns: map[net.Conn]struct{}{}}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.addr = listener.Addr().String()
	l.serve(listener)
	t.Cleanup(l.cut)
	return l
}

func (l *cuttableLink) serve(listener net.Listener) {
	l.mu.Lock()
	l.listener = listener
	l.mu.Unlock()
	go func() {
		for {
			client, err := listener.Accept()
			if err != nil {
				return
			}
			upstream, err := net.Dial("tcp", l.target)
			if err != nil {
				client.Close()
				continue
			}
			l.mu.Lock()
			l.conns[client], l.conns[upstream] = struct{}{}, struct{}{}
			l.mu.Unlock()
			go func() { _, _ = io.Copy(upstream, client); upstream.Close(); client.Close() }()
			go func() { _, _ = io.Copy(client, upstream); upstream.Close(); client.Close() }()
		}
	}()
}

func (l *cuttableLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listener != nil {
		l.listener.Close()
		l.listener = nil
	}
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
}

func (l *cuttableLink) mend() {
	listener, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.t.Fatalf("listen again on %s: %v", l.addr, err)
	}
	l.serve(listener)
}

// overLink serves the API over a PostgreSQL schema reached through a cuttableLink, with the
// bootstrap team's key (cached: it authenticates the first requests) and a second team's key
// that no request has used yet (uncached: its first request looks it up).
func overLink(t *testing.T) (replica *apitest.Replica, link *cuttableLink, cached, uncached string) {
	t.Helper()
	base := os.Getenv(apitest.DatabaseURLVariable)
	if base == "" {
		t.Skip(apitest.DatabaseURLVariable + " is not set")
	}
	env := apitest.Start(t, apitest.Options{Unchecked: true}, db.Postgres)
	schemaURL, err := url.Parse(apitest.FreshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	link = newCuttableLink(t, schemaURL.Host)
	schemaURL.Host = link.addr
	ctx := context.Background()
	database, err := db.Open(ctx, db.Options{URL: schemaURL.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close() })
	cached = "mgmt_outage_cached_key_0123456789"
	if _, err := teams.Bootstrap(ctx, database, cached); err != nil {
		t.Fatal(err)
	}
	replica = apitest.Serve(t, env.Handler(t, database, auth.NewAuthenticator(database, nil)))
	created := replica.Do(t, "POST", "/admin/v1/teams", "Bearer "+apitest.OperatorKey, "application/json", `{"name":"outage"}`)
	if created.Status != http.StatusOK {
		t.Fatalf("create a team: %d %s", created.Status, created.Body)
	}
	var team struct {
		APIKey struct{ Value string } `json:"apiKey"`
	}
	if err := json.Unmarshal(created.Body, &team); err != nil || team.APIKey.Value == "" {
		t.Fatalf("create a team: %s (%v)", created.Body, err)
	}
	return replica, link, cached, team.APIKey.Value
}

// TestShortOutageIsADelay: requests that arrive while PostgreSQL refuses connections for a moment
// (a fast restart) wait for it, up to 2 s, and succeed instead of a 503: a write, a read, and the
// first request of a key no request has used, whose lookup needs the database.
func TestShortOutageIsADelay(t *testing.T) {
	replica, link, cached, uncached := overLink(t)
	if res := replica.Do(t, "GET", rulesPath, "Bearer "+cached, "", ""); res.Status != http.StatusOK {
		t.Fatalf("before the cut: %d %s", res.Status, res.Body)
	}
	link.cut()
	type answer struct {
		what string
		res  apitest.Response
	}
	answered := make(chan answer, 3)
	for _, r := range []struct{ what, method, key, body string }{
		{"a write", "POST", cached, `{"name":"during a restart","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`},
		{"a read", "GET", cached, ""},
		{"a key's first request", "GET", uncached, ""},
	} {
		go func() {
			contentType := ""
			if r.body != "" {
				contentType = "application/json"
			}
			answered <- answer{r.what, replica.Do(t, r.method, rulesPath, "Bearer "+r.key, contentType, r.body)}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the requests are waiting: the link is down
	link.mend()
	for range 3 {
		if a := <-answered; a.res.Status != http.StatusOK {
			t.Errorf("%s during a 300 ms outage: %d %s; want it to wait and succeed", a.what, a.res.Status, a.res.Body)
		}
	}
}

// TestDatabaseOutageIsA503 cuts the server off PostgreSQL: every API request, the lookup of a key
// not cached included, is answered 503 with Retry-After and a message naming the database, never
// 401; /readyz is 503 and /healthz 200; the refusals are counted as database faults, not as
// authentication failures. When the link is mended, the same requests succeed without a restart.
func TestDatabaseOutageIsA503(t *testing.T) {
	replica, link, cached, uncached := overLink(t)
	if res := replica.Do(t, "GET", rulesPath, "Bearer "+cached, "", ""); res.Status != http.StatusOK {
		t.Fatalf("before the cut: %d %s", res.Status, res.Body)
	}
	before := metricValue(t, replica, `mgmtapi_auth_failures_total`)

	link.cut()
	set := `{"name":"during the outage","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`
	alert := `{"version":"4","groupKey":"{}:{alertname=\"Down\"}","status":"firing","receiver":"mgmtapi","groupLabels":{"alertname":"Down"},` +
		`"commonLabels":{},"commonAnnotations":{},"externalURL":"http://am","alerts":[{"status":"firing","fingerprint":"fp-down",` +
		`"labels":{"alertname":"Down","severity":"critical"},"annotations":{},"startsAt":"2026-11-28T10:00:00Z","endsAt":"0001-01-01T00:00:00Z"}]}`
	for _, c := range []struct{ name, method, path, key, body string }{
		{"read, key not cached", "GET", rulesPath, uncached, ""},
		{"read, key cached", "GET", rulesPath, cached, ""},
		{"write, key not cached", "POST", rulesPath, uncached, set},
		{"write, key cached", "POST", rulesPath, cached, set},
		{"Alertmanager's notification, key cached", "POST", "/ingest/alertmanager/v1", cached, alert},
	} {
		contentType := ""
		if c.body != "" {
			contentType = "application/json"
		}
		res := replica.Do(t, c.method, c.path, "Bearer "+c.key, contentType, c.body)
		var e struct {
			Code    int
			Message string
		}
		_ = json.Unmarshal(res.Body, &e)
		seconds, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if res.Status != http.StatusServiceUnavailable || e.Code != 503 || !strings.HasPrefix(e.Message, "database: unavailable") ||
			err != nil || seconds < 1 {
			t.Errorf("%s during the outage: %d, Retry-After %q, %s; want 503 with Retry-After and a message naming the database",
				c.name, res.Status, res.Header.Get("Retry-After"), res.Body)
		}
	}
	if res := replica.Do(t, "GET", "/readyz", "", "", ""); res.Status != http.StatusServiceUnavailable ||
		!strings.Contains(string(res.Body), `"not ready: database: does not answer"`) {
		t.Errorf("/readyz during the outage: %d %s", res.Status, res.Body)
	}
	if res := replica.Do(t, "GET", "/healthz", "", "", ""); res.Status != http.StatusOK {
		t.Errorf("/healthz during the outage: %d %s", res.Status, res.Body)
	}
	if got := metricValue(t, replica, `mgmtapi_database_faults_total{fault="unavailable"}`); got < 5 {
		t.Errorf("mgmtapi_database_faults_total{fault=\"unavailable\"} = %v after 5 refusals", got)
	}
	if after := metricValue(t, replica, `mgmtapi_auth_failures_total`); after != before {
		t.Errorf("authentication failures went from %v to %v during the outage", before, after)
	}

	link.mend()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := replica.Do(t, "POST", rulesPath, "Bearer "+uncached, "application/json", set)
		if res.Status == http.StatusOK {
			break
		}
		if res.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the link is mended: %d %s", res.Status, res.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res := replica.Do(t, "GET", "/readyz", "", "", ""); res.Status != http.StatusOK {
		t.Errorf("/readyz after the outage: %d %s", res.Status, res.Body)
	}
	if res := replica.Do(t, "POST", "/ingest/alertmanager/v1", "Bearer "+cached, "application/json", alert); res.Status/100 != 2 {
		t.Errorf("Alertmanager's notification sent again after the outage: %d %s", res.Status, res.Body)
	}
}

// answering is an Env or a Replica.
type answering interface {
	Do(t testing.TB, method, path, authorization, contentType, body string) apitest.Response
}

// metricValue sums the samples of /metrics whose name and labels start with series.
func metricValue(t *testing.T, srv answering, series string) float64 {
	t.Helper()
	res := srv.Do(t, "GET", "/metrics", "", "", "")
	sum := 0.0
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(strings.TrimSuffix(series, "}")) + `[^ ]* ([0-9.e+]+)$`)
	for _, m := range line.FindAllStringSubmatch(string(res.Body), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}

// TestFullDatabaseIsA507: a write SQLite refuses for lack of space (SQLITE_FULL, here from a
// max_page_count the database has reached, as a full disk gives it) is answered 507 with
// Retry-After and a message saying storage is full, and counted as such; once there is room the
// same write succeeds.
func TestFullDatabaseIsA507(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	ctx := context.Background()
	setPageLimit := func(pages string) {
		t.Helper()
		if err := env.DB.InTx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `PRAGMA max_page_count = `+pages)
			return err
		}); err != nil {
			t.Fatalf("max_page_count = %s: %v", pages, err)
		}
	}
	var pages int
	if err := env.DB.Read().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setPageLimit(strconv.Itoa(pages))
	rules := make([]string, 200)
	for i := range rules {
		rules[i] = `{"record":"r` + strconv.Itoa(i) + `","expr":"sum(rate(http_requests_total{job=\"` + strings.Repeat("x", 400) + `\"}[5m]))"}`
	}
	set := `{"name":"big","groups":[{"name":"g","rules":[` + strings.Join(rules, ",") + `]}]}`
	res := env.Do(t, "POST", rulesPath, "Bearer "+env.RootKey, "application/json", set)
	var e struct {
		Code    int
		Message string
	}
	_ = json.Unmarshal(res.Body, &e)
	if res.Status != http.StatusInsufficientStorage || e.Code != 507 || !strings.HasPrefix(e.Message, "storage full:") ||
		res.Header.Get("Retry-After") != "10" {
		t.Fatalf("write into a full database: %d, Retry-After %q, %s; want 507, Retry-After 10, storage full",
			res.Status, res.Header.Get("Retry-After"), res.Body)
	}
	if got := metricValue(t, env, `mgmtapi_database_faults_total{fault="storage_full"}`); got != 1 {
		t.Errorf(`mgmtapi_database_faults_total{fault="storage_full"} = %v after one refusal`, got)
	}
	setPageLimit("1073741823")
	if res := env.Do(t, "POST", rulesPath, "Bearer "+env.RootKey, "application/json", set); res.Status != http.StatusOK {
		t.Fatalf("the same write with room: %d %s", res.Status, res.Body)
	}
}
