package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

const syncSetsPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"

// syncedBuffer is sync-rules' log: the command writes it while the test reads it.
type syncedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSyncRules runs `mgmtapi sync-rules args...` with the variables env until the test ends,
// and returns its log.
func startSyncRules(t *testing.T, env map[string]string, args ...string) *syncedBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"sync-rules"}, args...), func(k string) string { return env[k] }, log, log, nil)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sync-rules ended with %v; log:\n%s", err, log.String())
		}
	})
	return log
}

// waitForLog waits until the log holds want n times or more; it fails t after a minute (a bound
// on a failing test, not a measure of speed).
func waitForLog(t *testing.T, log *syncedBuffer, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(log.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not hold %q %d times after a minute:\n%s", want, n, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustStatus(t *testing.T, res apitest.Response, status int) apitest.Response {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	return res
}

// TestSyncRulesDrivesARealPrometheus: sync-rules writes the team's rule file into the rules
// directory of a real Prometheus and reloads it; the recorded series of the set appears; a set
// changed through the API shows up as a new recorded series after the next sync, a deleted set's
// group leaves the server. The log names the groups added, changed and removed, and never the
// key; no temporary file is left in the directory.
func TestSyncRulesDrivesARealPrometheus(t *testing.T) {
	prometheustest.Binary(t, "prometheus")
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	key := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig")
	id := createRuleSet(t, env, `{"name":"up","groups":[{"name":"jobs","rules":[{"record":"job:up:sum","expr":"sum by (job) (up)"}]}]}`)

	prom := prometheustest.Start(t, nil)
	log := startSyncRules(t, map[string]string{"MGMTAPI_KEY": key},
		"--url", env.URL, "--dir", prom.RulesDir, "--reload-url", prom.URL+"/-/reload", "--interval", "200ms")
	if got := prom.WaitForSeries(t, "job:up:sum", time.Minute); got[0].Labels["job"] != "prometheus" || got[0].Value != "1" {
		t.Fatalf("job:up:sum = %+v", got)
	}
	waitForLog(t, log, `added=[up/jobs]`, 1)

	// Change the set and add another: both appear after a sync.
	mustStatus(t, env.JSON(t, http.MethodPut, syncSetsPath+"/"+id, env.RootKey,
		`{"name":"up","groups":[{"name":"jobs","rules":[{"record":"job:up:count","expr":"count by (job) (up)"}]}]}`), http.StatusOK)
	other := createRuleSet(t, env, `{"name":"more","groups":[{"name":"g","rules":[{"record":"job:up:max","expr":"max by (job) (up)"}]}]}`)
	prom.WaitForSeries(t, "job:up:count", time.Minute)
	prom.WaitForSeries(t, "job:up:max", time.Minute)
	waitForLog(t, log, `changed=[up/jobs]`, 1)

	// Delete the other set: its group leaves the server.
	mustStatus(t, env.JSON(t, http.MethodDelete, syncSetsPath+"/"+other, env.RootKey, ""), http.StatusOK)
	waitForLog(t, log, `removed=[more/g]`, 1)
	deadline := time.Now().Add(time.Minute)
	for groupLoaded(t, prom, "more/g") {
		if time.Now().After(deadline) {
			t.Fatalf("group more/g still loaded a minute after the set's deletion; log:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	if strings.Contains(log.String(), key) {
		t.Fatalf("the log holds the key:\n%s", log.String())
	}
	entries, err := os.ReadDir(prom.RulesDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "mgmtapi.yml" {
		t.Fatalf("the rules directory holds %v, want mgmtapi.yml only", entries)
	}
	if info, err := os.Stat(filepath.Join(prom.RulesDir, "mgmtapi.yml")); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("mgmtapi.yml: %v, %v; want mode 0644", info, err)
	}
}

func groupLoaded(t *testing.T, prom *prometheustest.Server, name string) bool {
	for _, g := range prom.RuleGroups(t) {
		if g.Name == name {
			return true
		}
	}
	return false
}

func createRuleSet(t *testing.T, env *apitest.Env, body string) string {
	t.Helper()
	return apitest.Decode[struct {
		ID string `json:"id"`
	}](t, mustStatus(t, env.JSON(t, http.MethodPost, syncSetsPath, env.RootKey, body), http.StatusOK)).ID
}

// TestSyncRulesWritesOnlyChanges: a sync that finds the file up to date writes nothing and
// reloads only when no reload has succeeded yet; a change writes a new file (a new inode: it was
// renamed into place) and reloads; a failed reload is tried again at the next sync.
func TestSyncRulesWritesOnlyChanges(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	id := createRuleSet(t, env, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
	var reloads atomic.Int64
	var failReloads atomic.Bool
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/-/reload" {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		if failReloads.Load() {
			http.Error(w, "failed to reload config", http.StatusInternalServerError)
			return
		}
		reloads.Add(1)
	}))
	defer prom.Close()
	dir := t.TempDir()
	var log bytes.Buffer
	s := newTestSyncer(t, env.URL, env.RootKey, dir, prom.URL+"/-/reload", &log)
	path := filepath.Join(dir, "mgmtapi.yml")
	ctx := context.Background()

	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(path); !os.SameFile(first, again) || reloads.Load() != 1 {
		t.Fatalf("an unchanged sync: same file %v, reloads %d; want the same file and one reload", os.SameFile(first, again), reloads.Load())
	}
	doc, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(doc), "# Written by mgmtapi sync-rules from "+env.URL+"/config/v1/prometheus/rules;") ||
		!strings.Contains(string(doc), "- name: s/g\n") {
		t.Fatalf("the file:\n%s", doc)
	}

	mustStatus(t, env.JSON(t, http.MethodPut, syncSetsPath+"/"+id, env.RootKey,
		`{"name":"s","groups":[{"name":"g","rules":[{"record":"c:d","expr":"up"}]}]}`), http.StatusOK)
	failReloads.Store(true)
	if err := s.sync(ctx); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("sync with a failing reload: %v, want the reload's 500", err)
	}
	if changed, _ := os.Stat(path); os.SameFile(first, changed) {
		t.Fatal("a changed rule file was not replaced")
	}
	failReloads.Store(false)
	if err := s.sync(ctx); err != nil || reloads.Load() != 2 {
		t.Fatalf("the next sync: %v, reloads %d; want the reload tried again (2)", err, reloads.Load())
	}
	if err := s.sync(ctx); err != nil || reloads.Load() != 2 {
		t.Fatalf("an unchanged sync after it: %v, reloads %d; want none more", err, reloads.Load())
	}
	if !strings.Contains(log.String(), `changed=[s/g]`) {
		t.Fatalf("the log does not name the changed group:\n%s", log.String())
	}
}

// TestSyncRulesLeavesTheFileOnFailures: an answer that is not a rule file (a refused key, a page
// of another server) changes nothing on disk, and the error says why.
func TestSyncRulesLeavesTheFileOnFailures(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	createRuleSet(t, env, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
	dir := t.TempDir()
	path := filepath.Join(dir, "mgmtapi.yml")
	if err := os.WriteFile(path, []byte("groups: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>a login page</body></html>\n"))
	}))
	defer html.Close()
	unreachable := httptest.NewServer(http.NotFoundHandler())
	unreachable.Close()
	noPermission := env.MustKey(t, env.RootKey, "metrics.recording-rules:UpdateConfig")
	for _, c := range []struct {
		name, url, key, want string
	}{
		{"key without the permission", env.URL, noPermission, `403 Forbidden: the API key lacks the permission "metrics.recording-rules:ReadConfig"`},
		{"unknown key", env.URL, "mgmt_not_a_key", "401"},
		{"not a rule file", html.URL, "k", "the answer is not a rule file"},
		{"no server", unreachable.URL, "k", "connection refused"},
	} {
		var log bytes.Buffer
		err := newTestSyncer(t, c.url, c.key, dir, "", &log).sync(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if doc, _ := os.ReadFile(path); string(doc) != "groups: []\n" {
			t.Errorf("%s: the file changed to %q", c.name, doc)
		}
	}
}

func newTestSyncer(t *testing.T, baseURL, key, dir, reloadURL string, log *bytes.Buffer) *ruleSyncer {
	t.Helper()
	return &ruleSyncer{
		source:    baseURL + "/config/v1/prometheus/rules",
		key:       key,
		path:      filepath.Join(dir, "mgmtapi.yml"),
		reloadURL: reloadURL,
		shownURL:  reloadURL,
		client:    &http.Client{Timeout: 30 * time.Second},
		logger:    syncRulesLogger(log),
	}
}

// TestSyncRulesOnce runs the command itself with --once: the key from MGMTAPI_KEY_FILE, the file
// written, status nil, a warning naming an SLO the file leaves out; a failure is returned, without
// the key in it.
func TestSyncRulesOnce(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	createRuleSet(t, env, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
	apm := mustStatus(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/slo/slos/v1", env.RootKey,
		`{"name":"apm","targetThresholdPercentage":99,"sloTimeFrame":"SLO_TIME_FRAME_7_DAYS",`+
			`"apmSli":{"services":["checkout"],"errorConfig":{}}}`), http.StatusOK)
	apmID := apitest.Decode[struct{ Slo struct{ ID string } }](t, apm).Slo.ID
	dir := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(env.RootKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runOnce([]string{"sync-rules", "--once", "--url", env.URL + "/", "--dir", dir, "--file", "team.yml"},
		map[string]string{"MGMTAPI_KEY_FILE": keyFile})
	if err != nil {
		t.Fatalf("sync-rules --once: %v\n%s", err, stderr)
	}
	if doc, err := os.ReadFile(filepath.Join(dir, "team.yml")); err != nil || !strings.Contains(string(doc), "- name: s/g\n") {
		t.Fatalf("team.yml: %v\n%s", err, doc)
	}
	if strings.Contains(stderr, env.RootKey) {
		t.Fatalf("the log holds the key:\n%s", stderr)
	}
	if want := `level=WARN msg="left out of the rule file: it has no rules" what="SLO ` + apmID + ` \"apm\": its SLI is apmSli`; !strings.Contains(stderr, want) {
		t.Fatalf("the log does not hold %s:\n%s", want, stderr)
	}
	const wrongKey = "mgmt_wrong_key_value_0123456789"
	_, stderr, err = runOnce([]string{"sync-rules", "--once", "--url", env.URL, "--dir", dir, "--key", wrongKey}, nil)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error()+stderr, wrongKey) {
		t.Fatalf("a wrong key: %v (log %s), want a 401 without the key", err, stderr)
	}
}

// TestSyncRulesCommandLine: every bad command line is a usage error naming the flag, and none
// holds the key.
func TestSyncRulesCommandLine(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const key = "mgmt_secret_value_0123456789abcdef"
	withKey := map[string]string{"MGMTAPI_KEY": key}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--dir", dir}, withKey, "--url: must name"},
		{[]string{"--url", "ftp://x", "--dir", dir}, withKey, "--url \"ftp://x\""},
		{[]string{"--url", "http://user:" + key + "@x", "--dir", dir}, nil, "--url: must not hold credentials"},
		{[]string{"--url", "http://x"}, withKey, "--dir: must name"},
		{[]string{"--url", "http://x", "--dir", filepath.Join(dir, "missing")}, withKey, "not an existing directory"},
		{[]string{"--url", "http://x", "--dir", notADir}, withKey, "not an existing directory"},
		{[]string{"--url", "http://x", "--dir", dir, "--interval", "0s"}, withKey, "--interval 0s: must be positive"},
		{[]string{"--url", "http://x", "--dir", dir, "--reload-url", "x/-/reload"}, withKey, "--reload-url"},
		{[]string{"--url", "http://x", "--dir", dir, "--file", "../up.yml"}, withKey, "--file"},
		{[]string{"--url", "http://x", "--dir", dir, "--file", ".hidden.yml"}, withKey, "--file"},
		{[]string{"--url", "http://x", "--dir", dir}, nil, "no key"},
		{[]string{"--url", "http://x", "--dir", dir}, map[string]string{"MGMTAPI_KEY_FILE": filepath.Join(dir, "nope")}, "MGMTAPI_KEY_FILE"},
		{[]string{"--url", "http://x", "--dir", dir, "extra"}, withKey, `unexpected argument "extra"`},
		{[]string{"--bogus"}, withKey, "bogus"},
	} {
		_, stderr, err := runOnce(append([]string{"sync-rules"}, c.args...), c.env)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error containing %q", c.args, err, c.want)
		}
		if err != nil && strings.Contains(err.Error()+stderr, key) {
			t.Errorf("%v: the key is in the output: %v %s", c.args, err, stderr)
		}
	}
	stdout, stderr, err := runOnce([]string{"sync-rules", "--help"}, nil)
	if err != nil || !strings.Contains(stdout+stderr, "MGMTAPI_KEY_FILE") {
		t.Fatalf("sync-rules --help: %v\n%s%s", err, stdout, stderr)
	}
}

// TestSyncRulesUsesETag: after the first read, sync-rules sends the file's ETag in If-None-Match
// and the server answers 304 while the file is the same; a 304 still restores a file removed on
// disk (from the last answer), and a change is read in full again.
func TestSyncRulesUsesETag(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	id := createRuleSet(t, env, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
	target, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string // "If-None-Match → status" per read
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s → %d", res.Request.Header.Get("If-None-Match"), res.StatusCode))
		return nil
	}
	front := httptest.NewServer(proxy)
	defer front.Close()
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}

	dir := t.TempDir()
	var log bytes.Buffer
	s := newTestSyncer(t, front.URL, env.RootKey, dir, "", &log)
	path := filepath.Join(dir, "mgmtapi.yml")
	ctx := context.Background()
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := last(); got != " → 200" || s.etag == "" {
		t.Fatalf("first read %q, ETag %q; want a 200 without If-None-Match, and its ETag kept", got, s.etag)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.Stat(path)
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := last(), s.etag+" → 304"; got != want {
		t.Fatalf("second read %q, want %q", got, want)
	}
	if again, _ := os.Stat(path); !os.SameFile(first, again) {
		t.Fatal("an unchanged (304) sync rewrote the file")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if restored, err := os.ReadFile(path); err != nil || string(restored) != string(written) || !strings.HasSuffix(last(), " → 304") {
		t.Fatalf("after removing the file: read %q, file %v %q", last(), err, restored)
	}
	old := s.etag
	mustStatus(t, env.JSON(t, http.MethodPut, syncSetsPath+"/"+id, env.RootKey,
		`{"name":"s","groups":[{"name":"g","rules":[{"record":"c:d","expr":"up"}]}]}`), http.StatusOK)
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := last(); got != old+" → 200" || s.etag == old {
		t.Fatalf("after a change: read %q, ETag %q (was %q)", got, s.etag, old)
	}
	if doc, _ := os.ReadFile(path); !strings.Contains(string(doc), "record: c:d") {
		t.Fatalf("the changed file was not written:\n%s", doc)
	}
}
