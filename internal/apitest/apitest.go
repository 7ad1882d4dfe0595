// Package apitest runs the whole handler stack for black-box tests: a real database (SQLite in a
// temporary directory, or PostgreSQL in a fresh schema when MGMTAPI_TEST_DATABASE_URL is set),
// the generated router, authentication and every area, served by httptest.
package apitest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/archive"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/conformance"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
	"github.com/mgmtapi/mgmtapi/internal/integrations"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/service"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// DatabaseURLVariable names the variable that, when set, adds a PostgreSQL run of every test.
const DatabaseURLVariable = "MGMTAPI_TEST_DATABASE_URL"

// ExternalURL is the external URL (--external-url) every test server is given.
const ExternalURL = "https://mgmt.example.test"

// OperatorKey is the operator key of every test server.
const OperatorKey = "test-operator-key-0123456789abcdef"

// Env is one running server over one fresh database.
type Env struct {
	URL    string
	Engine db.Engine
	DB     *db.DB
	// RootKey holds every permission in the bootstrap team (id 1).
	RootKey string
	// Clock is the database's and the authenticator's clock; tests move it with Advance.
	Clock *Clock

	opts    Options
	dataDir string
	dbURL   string
	server  *httptest.Server
	// served is the root handler of the Env's own server (not a second replica's): workers
	// that NewWorker returns pace their templates by it.
	served *server.Handler
}

// Options change how an Env starts.
type Options struct {
	MaxBodyBytes int64
	// PolicyLimit is the most data-plan policies per team and data type; 200 when 0.
	PolicyLimit int
	// Extensions is the extension catalog; nil means the built-in one.
	Extensions *extensions.Catalog
	// Integrations is the integration definition catalog; nil means the built-in one.
	Integrations *integrations.Catalog
	// PublicDeliveriesOnly keeps the test notifications of the notification-center testing
	// operations to public addresses, as mgmtapi's default policy does; by default an Env lets
	// them reach loopback receivers (httptest servers).
	PublicDeliveriesOnly bool
	// SMTP is the SMTP server the test notifications of EMAIL connectors go through (nil: none).
	SMTP *delivery.SMTPServer
	// TrustedProxies are the peers whose X-Forwarded-For the server believes (--trusted-proxies).
	TrustedProxies []netip.Prefix
	// Unchecked turns off the check of answers against the public documents, which reports
	// through the testing.TB the Env was started with: a fuzz target starts its Env with its *F,
	// which must not be used inside the fuzz function, and checks its own property instead.
	Unchecked bool
	// S3Endpoint is the S3 endpoint the archive operations check buckets at; empty means a
	// loopback port where nothing listens, so that a check fails at once without leaving the
	// machine (see S3Server for a real one).
	S3Endpoint string
}

// Engines runs fn once on SQLite and, when MGMTAPI_TEST_DATABASE_URL is set, once on PostgreSQL,
// each time with a fresh database.
func Engines(t *testing.T, fn func(t *testing.T, env *Env)) {
	EnginesWith(t, Options{}, fn)
}

// EnginesWith is Engines with options.
func EnginesWith(t *testing.T, opts Options, fn func(t *testing.T, env *Env)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, start(t, opts, db.SQLite))
	})
	if os.Getenv(DatabaseURLVariable) != "" {
		t.Run("postgres", func(t *testing.T) {
			fn(t, start(t, opts, db.Postgres))
		})
	}
}

// Start runs a server on a fresh database of one engine, for benchmarks (tests use Engines). The
// server and database go away when t ends.
func Start(t testing.TB, opts Options, engine db.Engine) *Env {
	return start(t, opts, engine)
}

var schemaCounter atomic.Int64

func start(t testing.TB, opts Options, engine db.Engine) *Env {
	t.Helper()
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 16 << 20
	}
	if opts.PolicyLimit == 0 {
		opts.PolicyLimit = 200
	}
	env := &Env{Engine: engine, opts: opts, Clock: NewClock()}
	switch engine {
	case db.SQLite:
		env.dataDir = t.TempDir()
	case db.Postgres:
		env.dbURL = FreshSchema(t)
	}
	env.RootKey = "mgmt_root_" + strings.ReplaceAll(t.Name(), "/", "_")
	env.open(t)
	t.Cleanup(env.stop)
	return env
}

// FreshSchema creates an empty schema in the test PostgreSQL database and returns a URL whose
// connections use it; the schema is dropped when the test ends.
func FreshSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(DatabaseURLVariable)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	name := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaCounter.Add(1))
	if _, err := admin.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", DatabaseURLVariable, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func (e *Env) open(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	database, err := db.Open(ctx, db.Options{URL: e.dbURL, DataDir: e.dataDir, Now: e.Clock.Now})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	if _, err := teams.Bootstrap(ctx, database, e.RootKey); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	e.DB = database
	// Served as mgmtapi serves: requests net/http refuses before any handler get the Error body.
	e.server = httptest.NewUnstartedServer(e.Handler(t, database, auth.NewAuthenticator(database, e.Clock.Now)))
	e.server.Listener = server.RefusalListener(e.server.Listener, e.server.Config)
	e.server.Start()
	e.URL = e.server.URL
}

// OpenDB opens a second connection pool to the Env's database, as another process would; it is
// closed when the test ends.
func (e *Env) OpenDB(t testing.TB) *db.DB {
	t.Helper()
	database, err := db.Open(context.Background(), db.Options{URL: e.dbURL, DataDir: e.dataDir, Now: e.Clock.Now})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { _ = database.Close() })
	return database
}

// Handler builds the root handler over database with the given authenticator, as the server
// process does; tests use it to run a second replica over the same database. When the public
// documents are available, its answers are checked against them (see package conformance).
func (e *Env) Handler(t testing.TB, database *db.DB, authn *auth.Authenticator) http.Handler {
	t.Helper()
	yamlDoc, jsonDoc, err := spec.Documents("http://test", "test")
	if err != nil {
		t.Fatalf("documents: %v", err)
	}
	svc, err := service.New(service.Config{API: api.Options{DB: database, Authn: authn, OperatorKey: OperatorKey, PolicyLimit: e.opts.PolicyLimit,
		Extensions: e.opts.Extensions, Integrations: e.opts.Integrations,
		Delivery:    delivery.Options{Policy: delivery.Policy{AllowPrivate: !e.opts.PublicDeliveriesOnly}, AttemptTimeout: 5 * time.Second, SMTP: e.opts.SMTP},
		ExternalURL: ExternalURL, S3: e.s3()},
		Root: server.Options{
			OpenAPIJSON:    jsonDoc,
			OpenAPIYAML:    yamlDoc,
			MaxBodyBytes:   e.opts.MaxBodyBytes,
			Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
			TrustedProxies: e.opts.TrustedProxies,
		}})
	if err != nil {
		t.Fatalf("api: %v", err)
	}
	if e.served == nil {
		e.served = svc.Handler
	}
	handler := http.Handler(svc.Handler)
	if e.opts.Unchecked {
		return handler
	}
	return checkedAgainstPublicDocuments(t, handler, svc.API.OperationName)
}

// checkedAgainstPublicDocuments wraps handler so that every answer it gives to an operation of
// the public documents is validated against them (package conformance), when they are available;
// it fails t when MGMTAPI_PUBLIC_SPEC_DIR names documents that cannot be loaded.
func checkedAgainstPublicDocuments(t testing.TB, handler http.Handler, operationName func(*http.Request) string) http.Handler {
	t.Helper()
	checker, _, err := conformance.Shared()
	if err != nil {
		t.Fatalf("conformance check: %v", err)
	}
	if checker == nil {
		return handler
	}
	return checker.Middleware(t, handler, operationName)
}

func (e *Env) stop() {
	if e.server != nil {
		e.server.Close()
		e.server = nil
	}
	if e.DB != nil {
		_ = e.DB.Close()
		e.DB = nil
	}
}

// Restart stops the server and closes the database, then opens the same database again and
// serves it at a new URL, as a process restart would.
func (e *Env) Restart(t testing.TB) {
	t.Helper()
	e.stop()
	e.open(t)
}

// Client returns a generated client that sends key in the Authorization header.
func (e *Env) Client(t testing.TB, key string) *oas.Client {
	t.Helper()
	c, err := oas.NewClient(e.URL, keySource(key))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

type keySource string

func (k keySource) ApiKey(context.Context, oas.OperationName) (oas.ApiKey, error) {
	return oas.ApiKey{APIKey: "Bearer " + string(k)}, nil
}

func (k keySource) OperatorKey(context.Context, oas.OperationName) (oas.OperatorKey, error) {
	return oas.OperatorKey{APIKey: "Bearer " + string(k)}, nil
}

// MustTeam creates a team through the operator API and returns its id and a key holding every
// permission.
func (e *Env) MustTeam(t testing.TB, name string) (int64, string) {
	t.Helper()
	res, err := e.Client(t, OperatorKey).AdminCreateTeam(context.Background(), &oas.AdminTeamInput{Name: name})
	if err != nil {
		t.Fatalf("create team %q: %v", name, err)
	}
	return res.Team.ID, res.ApiKey.Value
}

// MustRouter creates, with the team key teamKey, a notification router of entityType ("ALERTS"
// or "CASES") without rules: it sends nothing, but the team's writes then record their
// notification events (db.Tx.Emit records none for a team with nothing to route them), which
// tests of those events read.
func (e *Env) MustRouter(t testing.TB, teamKey, entityType string) {
	t.Helper()
	res := e.JSON(t, http.MethodPost, "/mgmt/openapi/latest/notifications/notification-center/v1/routers", teamKey,
		`{"router":{"name":"records events","entityType":"`+entityType+`","rules":[]}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("create a router of %s: %d %s", entityType, res.Status, res.Body)
	}
}

// MustKey creates, with the team key teamKey, a key holding exactly the given permissions.
func (e *Env) MustKey(t testing.TB, teamKey string, permissions ...string) string {
	t.Helper()
	res, err := e.Client(t, teamKey).CreateApiKey(context.Background(), &oas.ApiKeyCreateInput{
		Name:           "test key",
		KeyPermissions: oas.NewOptKeyPermissionsInput(oas.KeyPermissionsInput{Permissions: permissions}),
	})
	if err != nil {
		t.Fatalf("create key with %v: %v", permissions, err)
	}
	return res.Value
}

// Response is a raw answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a raw request: method, path (with query), the Authorization header value (none when
// empty), the Content-Type (none when empty) and the body.
func (e *Env) Do(t testing.TB, method, path, authorization, contentType, body string) Response {
	t.Helper()
	return do(t, e.URL, method, path, authorization, contentType, body, nil)
}

// DoWith is Do with more request headers (X-Forwarded-For…).
func (e *Env) DoWith(t testing.TB, method, path, authorization, contentType, body string, headers map[string]string) Response {
	t.Helper()
	return do(t, e.URL, method, path, authorization, contentType, body, headers)
}

func do(t testing.TB, base, method, path, authorization, contentType, body string, headers map[string]string) Response {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if body == "" {
		req.Body = nil
		req.ContentLength = 0
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Get sends a GET of path with "Bearer key" and the given headers besides (If-None-Match,
// Accept…).
func (e *Env) Get(t testing.TB, path, key string, headers map[string]string) Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// JSON sends body as application/json with "Bearer key".
func (e *Env) JSON(t testing.TB, method, path, key, body string) Response {
	t.Helper()
	return e.Do(t, method, path, "Bearer "+key, "application/json", body)
}

// Replica is a second server over an Env's database.
type Replica struct{ url string }

// Serve runs handler on a test server until the test ends.
func Serve(t testing.TB, handler http.Handler) *Replica {
	t.Helper()
	s := httptest.NewServer(handler)
	t.Cleanup(s.Close)
	return &Replica{url: s.URL}
}

// Do sends a raw request to the replica, as Env.Do does.
func (r *Replica) Do(t testing.TB, method, path, authorization, contentType, body string) Response {
	t.Helper()
	return do(t, r.url, method, path, authorization, contentType, body, nil)
}

// JSONOf is v as JSON text, for building request bodies; it fails the test when v cannot be
// encoded.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Decode checks that res is a 200 and decodes its JSON body into a T; it fails the test
// otherwise.
func Decode[T any](t testing.TB, res Response) T {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %.300s", res.Status, res.Body)
	}
	var out T
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("decode %.300s: %v", res.Body, err)
	}
	return out
}

// NewWorker returns a delivery worker as the server process wires it (service.NewWorker): over
// the environment's database unless o names one, routing the recorded events through the teams'
// routers and alert definitions (Router) and sending outgoing webhooks' records through their
// types' own delivery, unless o says otherwise.
func (e *Env) NewWorker(o delivery.Options) *delivery.Worker {
	if o.DB == nil {
		o.DB = e.DB
	}
	if o.Serving == nil && e.served != nil {
		o.Serving = e.served.Serving
	}
	return service.NewWorker(o, ExternalURL)
}

// Router is the routing the server process wires into its worker (service.EventRouter), logging
// to logger (nil discards), with links on ExternalURL.
func Router(logger *slog.Logger) routers.Router {
	return service.EventRouter(logger, ExternalURL)
}

// Route routes every event recorded so far into the outbox, as the worker's routing stage does,
// without sending anything: tests that read the outbox call it first. logger receives what the
// routing logs (nil discards).
func (e *Env) Route(t testing.TB, logger *slog.Logger) {
	t.Helper()
	w := delivery.NewWorker(delivery.Options{DB: e.DB, Router: Router(logger), Logger: logger})
	if err := w.RouteEvents(context.Background()); err != nil {
		t.Fatalf("route the recorded events: %v", err)
	}
}

// At walks a decoded JSON value (maps and slices from encoding/json) by member names (string)
// and indexes (int); nil when a step is missing.
func At(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// s3 is where the Env's archive operations check buckets: opts.S3Endpoint with the credentials
// S3Server gives its servers, or a loopback port nothing listens on (port 9, discard).
func (e *Env) s3() archive.S3 {
	if e.opts.S3Endpoint == "" {
		return archive.S3{Endpoint: "http://127.0.0.1:9", Timeout: 5 * time.Second}
	}
	return archive.S3{Endpoint: e.opts.S3Endpoint, AccessKeyID: S3AccessKey, SecretAccessKey: S3SecretKey}
}
