package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// lockedBuffer is a writer that the server and the test can share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type process struct {
	addr   string
	stderr *lockedBuffer
	stdout *lockedBuffer
	stop   func() error
	// terminate ends run as SIGTERM does (with the shutdown delay); wait then returns run's error.
	terminate func()
	wait      func() error
}

// start runs run() with serve on :0 and the given variables until stop is called.
func start(t *testing.T, env map[string]string, args ...string) *process {
	t.Helper()
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancel := func() { cancelCause(nil) }
	ready := make(chan string, 1)
	done := make(chan error, 1)
	p := &process{stderr: &lockedBuffer{}, stdout: &lockedBuffer{}}
	getenv := func(k string) string { return env[k] }
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), getenv, p.stdout, p.stderr, ready)
	}()
	select {
	case p.addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("run ended before serving: %v\n%s", err, p.stderr)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("run did not start in time")
	}
	var result error
	var ended sync.Once
	p.wait = func() error {
		ended.Do(func() { result = <-done })
		return result
	}
	p.stop = func() error {
		cancel()
		return p.wait()
	}
	p.terminate = func() { cancelCause(stopSignal{syscall.SIGTERM}) }
	t.Cleanup(func() { _ = p.stop() })
	return p
}

func (p *process) get(t *testing.T, path, key string) (int, string) {
	t.Helper()
	return p.call(t, "GET", path, key, "")
}

func (p *process) call(t *testing.T, method, path, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+p.addr+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// engines runs fn with the arguments that select SQLite in a fresh directory and, when the
// test database is configured, PostgreSQL in a fresh schema.
func engines(t *testing.T, fn func(t *testing.T, args []string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, []string{"--data-dir", t.TempDir()}) })
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		t.Run("postgres", func(t *testing.T) { fn(t, []string{"--database-url", apitest.FreshSchema(t)}) })
	}
}

// operatorKey and chosenKey are secrets of the 32 characters or more that the start requires.
const (
	operatorKey = "op-secret-0123456789abcdef0123456789"
	chosenKey   = "my-chosen-key-0123456789abcdef0123"
)

var printedKey = regexp.MustCompile(`(?m)^\s+(mgmt_[A-Za-z0-9_-]{43})$`)

func TestBootstrapPrintsAGeneratedKeyOnceAndRestartKeepsIt(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, nil, args...)
		m := printedKey.FindStringSubmatch(p.stderr.String())
		if m == nil {
			t.Fatalf("no key on standard error:\n%s", p.stderr)
		}
		key := m[1]
		if strings.Contains(p.stdout.String(), key) {
			t.Fatal("the key was logged on standard output")
		}
		if status, body := p.call(t, "POST", "/mgmt/openapi/5/recording-rules/recording-rules/v1", key,
			`{"name":"kept","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`); status != 200 {
			t.Fatalf("create with bootstrap key: %d %s", status, body)
		}
		if err := p.stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}

		// A restart with the variable set neither prints nor changes anything.
		const ignored = "ignored-now-0123456789abcdef0123456789"
		p = start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": ignored}, args...)
		if printedKey.MatchString(p.stderr.String()) {
			t.Fatal("a restart printed a key again")
		}
		status, body := p.get(t, "/mgmt/openapi/5/recording-rules/recording-rules/v1", key)
		if status != 200 || !strings.Contains(body, `"name":"kept"`) {
			t.Fatalf("after restart: %d %s", status, body)
		}
		if status, _ := p.get(t, "/mgmt/openapi/5/recording-rules/recording-rules/v1", ignored); status != 401 {
			t.Fatalf("the variable became a key on a later start: %d", status)
		}
	})
}

func TestBootstrapUsesTheVariable(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey}, args...)
		if printedKey.MatchString(p.stderr.String()) || strings.Contains(p.stderr.String()+p.stdout.String(), "my-chosen-key") {
			t.Fatal("the chosen key was printed")
		}
		if status, body := p.get(t, "/mgmt/openapi/5/aaa/api-keys/v3/list/all", chosenKey); status != 200 {
			t.Fatalf("chosen key: %d %s", status, body)
		}
	})
}

func TestOperatorAPI(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, nil, args...)
		if status, _ := p.get(t, "/admin/v1/teams", "anything"); status != 404 {
			t.Fatalf("operator API without MGMTAPI_OPERATOR_KEY: %d, want 404", status)
		}
		_ = p.stop()

		p = start(t, map[string]string{"MGMTAPI_OPERATOR_KEY": operatorKey}, args...)
		if status, _ := p.get(t, "/admin/v1/teams", "wrong"); status != 401 {
			t.Fatalf("wrong operator key: %d", status)
		}
		status, body := p.call(t, "POST", "/admin/v1/teams", operatorKey, `{"name":"payments"}`)
		if status != 200 || !strings.Contains(body, `"team":{"id":2,"name":"payments"}`) {
			t.Fatalf("create team: %d %s", status, body)
		}
		teamKey := regexp.MustCompile(`"value":"([^"]+)"`).FindStringSubmatch(body)[1]
		if status, _ := p.get(t, "/mgmt/openapi/5/aaa/api-keys/v3/list/all", teamKey); status != 200 {
			t.Fatalf("new team's key: %d", status)
		}
		if status, body := p.call(t, "POST", "/admin/v1/teams", operatorKey, `{"name":"payments"}`); status != 409 {
			t.Fatalf("duplicate team: %d %s", status, body)
		}
		if status, body := p.call(t, "POST", "/admin/v1/teams", operatorKey, `{"name":""}`); status != 400 {
			t.Fatalf("empty name: %d %s", status, body)
		}
		status, body = p.get(t, "/admin/v1/teams", operatorKey)
		if status != 200 || body != `{"teams":[{"id":1,"name":"default"},{"id":2,"name":"payments"}]}` {
			t.Fatalf("list teams: %d %s", status, body)
		}
	})
}

func TestServedDocumentNamesTheRegion(t *testing.T) {
	p := start(t, nil, "--data-dir", t.TempDir(), "--region", "eu2")
	status, body := p.get(t, "/openapi.json", "")
	if status != 200 || !strings.Contains(body, `"description":"region eu2"`) || !strings.Contains(body, "http://"+p.addr) {
		t.Fatalf("openapi.json: %d %.300s", status, body)
	}
	status, body = p.get(t, "/openapi.yaml", "")
	if status != 200 || !strings.Contains(body, "region eu2") {
		t.Fatalf("openapi.yaml: %d", status)
	}
}

func TestBadConfigurationIsRefused(t *testing.T) {
	for _, c := range []struct {
		args     []string
		env      map[string]string
		fragment string
	}{
		{[]string{"serve", "--log-format", "xml"}, nil, "--log-format"},
		{[]string{"serve", "--access-log", "some"}, nil, "--access-log"},
		{[]string{"serve"}, map[string]string{"MGMTAPI_ACCESS_LOG": "sampled"}, "--access-log"},
		{[]string{"serve", "--database-url", "mysql://x"}, nil, "--database-url"},
		{[]string{"serve", "--policy-limit", "0"}, nil, "--policy-limit"},
		{[]string{"serve", "--kpi-interval", "999ms"}, nil, "--kpi-interval"},
		{[]string{"serve", "--kpi-interval", "61m"}, nil, "--kpi-interval"},
		{[]string{"serve"}, map[string]string{"MGMTAPI_KPI_INTERVAL": "soon"}, "--kpi-interval"},
		{[]string{"serve"}, map[string]string{"MGMTAPI_POLICY_LIMIT": "many"}, "MGMTAPI_POLICY_LIMIT"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, nil, "listen"},
		{[]string{"serve", "extra"}, nil, "unexpected argument"},
		{[]string{"bogus"}, nil, "serve"},
		{nil, nil, "serve"},
	} {
		err := run(context.Background(), c.args, func(k string) string { return c.env[k] }, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), c.fragment) {
			t.Errorf("run %v: error %v, want one mentioning %q", c.args, err, c.fragment)
		}
	}
}

func TestShutdownWaitsAndReturns(t *testing.T) {
	p := start(t, nil, "--data-dir", t.TempDir(), "--log-format", "json", "--access-log", "all", "--log-level", "debug")
	if status, _ := p.get(t, "/healthz", ""); status != 200 {
		t.Fatalf("healthz %d", status)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !strings.Contains(p.stdout.String(), `"msg":"stopped"`) {
		t.Fatalf("no stop line in the JSON log:\n%s", p.stdout)
	}
	if !strings.Contains(p.stdout.String(), `"request_id":`) {
		t.Fatal("request log lines carry no request_id")
	}
}

// TestAccessLogModes checks which requests get a line under each --access-log, that the flag wins
// over MGMTAPI_ACCESS_LOG, that probes and scrapes log at DEBUG only, and that a line carries the
// key id (never the key) and the client address.
func TestAccessLogModes(t *testing.T) {
	const rulesPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	request := regexp.MustCompile(`"level":"([A-Z]+)","msg":"request".*"path":"([^"]*)".*"status":([0-9]+).*"client":"([^"]*)","key_id":"([^"]*)"`)
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "INFO " + rulesPath + " 401"}, // errors by default
		{[]string{"--access-log", "none"}, nil, ""},
		{nil, map[string]string{"MGMTAPI_ACCESS_LOG": "none"}, ""},
		{[]string{"--access-log", "none", "--log-level", "debug"}, nil, ""},
		{[]string{"--access-log", "errors"}, map[string]string{"MGMTAPI_ACCESS_LOG": "none"}, "INFO " + rulesPath + " 401"},
		{[]string{"--access-log", "all"}, nil, "INFO " + rulesPath + " 401,INFO " + rulesPath + " 200"},
		{[]string{"--access-log", "all", "--log-level", "debug"}, nil,
			"DEBUG /healthz 200,DEBUG /readyz 200,DEBUG /metrics 200,INFO " + rulesPath + " 401,INFO " + rulesPath + " 200"},
		{[]string{"--log-level", "debug"}, nil, "DEBUG /healthz 200,DEBUG /readyz 200,DEBUG /metrics 200,INFO " + rulesPath + " 401"},
	} {
		env := map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey}
		for k, v := range c.env {
			env[k] = v
		}
		p := start(t, env, append([]string{"--data-dir", t.TempDir(), "--log-format", "json"}, c.args...)...)
		for _, probe := range []string{"/healthz", "/readyz", "/metrics"} {
			if status, _ := p.get(t, probe, ""); status != 200 {
				t.Fatalf("%s %d", probe, status)
			}
		}
		if status, _ := p.get(t, rulesPath, "not-a-key"); status != 401 {
			t.Fatalf("GET %s with a bad key: %d", rulesPath, status)
		}
		if status, _ := p.get(t, rulesPath, chosenKey); status != 200 {
			t.Fatalf("GET %s with the bootstrap key: %d", rulesPath, status)
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.stdout.String(), chosenKey) || strings.Contains(p.stdout.String(), "not-a-key") {
			t.Fatalf("a key's value was logged:\n%s", p.stdout)
		}
		var got []string
		for _, m := range request.FindAllStringSubmatch(p.stdout.String(), -1) {
			got = append(got, m[1]+" "+m[2]+" "+m[3])
			if !strings.HasPrefix(m[4], "127.0.0.1:") {
				t.Errorf("request line without the client address: %q", m[0])
			}
			if want := m[3] == "200" && m[2] == rulesPath; want != (m[5] != "") {
				t.Errorf("request line key_id %q (a key authenticated it: %t): %q", m[5], want, m[0])
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("args %v env %v: request lines %q, want %q", c.args, c.env, got, c.want)
		}
	}
}

func TestExtensionsDirectory(t *testing.T) {
	// A bad catalog file stops the start with a message naming the file and the field.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"id": "Bad"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve", "--data-dir", t.TempDir(), "--extensions-dir", dir}, nil, "extensions-dir " + bad + `: id: "Bad" must match`},
		{[]string{"serve", "--data-dir", t.TempDir()}, map[string]string{"MGMTAPI_EXTENSIONS_DIR": dir}, "extensions-dir " + bad + ": id:"},
		{[]string{"serve", "--data-dir", t.TempDir(), "--extensions-dir", filepath.Join(dir, "missing")}, nil, "extensions-dir " + filepath.Join(dir, "missing")},
	} {
		err := run(context.Background(), c.args, func(k string) string { return c.env[k] }, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %v %v: error %v, want one containing %q", c.args, c.env, err, c.want)
		}
	}

	// A good directory adds its extensions to the served catalog.
	p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey},
		"--data-dir", t.TempDir(), "--extensions-dir", "../../internal/extensions/testdata/catalog")
	if status, body := p.get(t, "/mgmt/openapi/3/integrations/extensions/v1/acme-widgets", chosenKey); status != 200 ||
		!strings.Contains(body, `"name":"Acme Widgets"`) {
		t.Fatalf("operator extension: %d %.300s", status, body)
	}
}

func TestIntegrationsDirectory(t *testing.T) {
	// A bad definition file stops the start with a message naming the file and the field.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"key": "Bad"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve", "--data-dir", t.TempDir(), "--integrations-dir", dir}, nil, "integrations-dir " + bad + `: key: "Bad"`},
		{[]string{"serve", "--data-dir", t.TempDir()}, map[string]string{"MGMTAPI_INTEGRATIONS_DIR": dir}, "integrations-dir " + bad + ": key:"},
		{[]string{"serve", "--data-dir", t.TempDir(), "--integrations-dir", filepath.Join(dir, "missing")}, nil, "integrations-dir " + filepath.Join(dir, "missing")},
	} {
		err := run(context.Background(), c.args, func(k string) string { return c.env[k] }, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %v %v: error %v, want one containing %q", c.args, c.env, err, c.want)
		}
	}

	// A good directory adds its definitions to the served catalog.
	p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey},
		"--data-dir", t.TempDir(), "--integrations-dir", "../../internal/integrations/testdata/catalog")
	if status, body := p.get(t, "/mgmt/openapi/latest/integrations/integrations/v1/definitions/acme-logs", chosenKey); status != 200 ||
		!strings.Contains(body, `"key":"acme-logs"`) {
		t.Fatalf("operator integration: %d %.300s", status, body)
	}
}
