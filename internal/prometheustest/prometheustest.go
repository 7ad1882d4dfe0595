// Package prometheustest runs the real Prometheus server and promtool (Debian's `prometheus`
// package) for tests: `promtool check rules` on a rule file, and a Prometheus that scrapes
// itself every second and evaluates the rule files of a directory every second.
//
// Without the binaries the tests that need them are skipped, saying so; with
// MGMTAPI_REQUIRE_PROMETHEUS=1 (.ci/run sets it) they fail instead.
package prometheustest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireVariable, set to 1, makes a missing prometheus or promtool fail the test instead of
// skipping it.
const RequireVariable = "MGMTAPI_REQUIRE_PROMETHEUS"

// Binary returns the path of name ("prometheus" or "promtool") on the PATH; when it is missing it
// skips t, or fails it when RequireVariable is 1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv(RequireVariable) == "1" {
		t.Fatalf("%s is not on the PATH and %s=1 (apt-get install prometheus)", name, RequireVariable)
	}
	t.Skipf("%s is not installed (apt-get install prometheus); .ci/run installs it and sets %s=1", name, RequireVariable)
	return ""
}

// CheckRules runs `promtool check rules` on the rule file at path and returns its combined output
// and whether it passed (exit status 0).
func CheckRules(t testing.TB, path string) (output string, ok bool) {
	t.Helper()
	cmd := exec.Command(Binary(t, "promtool"), "check", "rules", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			t.Fatalf("run promtool: %v", err)
		}
		return string(out), false
	}
	return string(out), true
}

// Server is a running Prometheus. It stops when the test ends.
type Server struct {
	// URL is its base URL, http://127.0.0.1:<port>.
	URL string
	// RulesDir is the directory whose *.yml and *.yaml files it loads as rule files (at start, and
	// on each reload).
	RulesDir string
	log      *lockedBuffer
}

// lockedBuffer is the server's log: the process writes it while the test reads it.
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

// Start runs a Prometheus on a free port of 127.0.0.1, with its storage in a temporary directory,
// scraping only itself (job "prometheus") every second, evaluating the rule files of RulesDir
// every second, with the lifecycle API (/-/reload) enabled. Rule files the test wants loaded at
// start go in RulesDir before Start: pass a function that writes them, or nil. It fails t when the
// server does not become ready within a minute.
func Start(t testing.TB, writeRules func(rulesDir string)) *Server {
	t.Helper()
	return StartAlerting(t, writeRules, "")
}

// StartAlerting is Start with the alerts of its alerting rules sent to the Alertmanager at
// alertmanagerURL (none when it is ""), re-sent every second while they fire.
func StartAlerting(t testing.TB, writeRules func(rulesDir string), alertmanagerURL string) *Server {
	t.Helper()
	return StartWith(t, Options{WriteRules: writeRules, AlertmanagerURL: alertmanagerURL})
}

// Options are what StartWith sets up beyond Start's defaults.
type Options struct {
	// WriteRules writes the rule files to load at start into the rules directory (nil: none).
	WriteRules func(rulesDir string)
	// AlertmanagerURL is where alerts go, re-sent every second while they fire ("": nowhere).
	AlertmanagerURL string
	// Targets are host:port addresses scraped every second as the job "targets" (at /metrics),
	// besides the server itself.
	Targets []string
	// ResendDelay is how often a firing alert is sent again (0: every second). An alert sent is
	// valid for 4 times the longer of it and the evaluation interval: a test that reloads the
	// rules while alerts fire needs a few seconds, or Alertmanager may time the alerts out
	// while Prometheus reloads.
	ResendDelay time.Duration
}

// StartWith is Start with the options: the alerts sent to an Alertmanager, targets scraped.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	writeRules, alertmanagerURL := o.WriteRules, o.AlertmanagerURL
	bin := Binary(t, "prometheus")
	dir := t.TempDir()
	rulesDir := filepath.Join(dir, "rules")
	if err := os.Mkdir(rulesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if writeRules != nil {
		writeRules(rulesDir)
	}
	port := freePort(t)
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
  - %q
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, filepath.Join(rulesDir, "*.yml"), filepath.Join(rulesDir, "*.yaml"), port)
	if len(o.Targets) > 0 {
		quoted := make([]string, len(o.Targets))
		for i, target := range o.Targets {
			quoted[i] = strconv.Quote(target)
		}
		config += fmt.Sprintf(`  - job_name: targets
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", "))
	}
	if alertmanagerURL != "" {
		am, err := url.Parse(alertmanagerURL)
		if err != nil || am.Host == "" {
			t.Fatalf("alertmanager URL %q: not an absolute URL", alertmanagerURL)
		}
		config += fmt.Sprintf(`alerting:
  alertmanagers:
    - scheme: %s
      static_configs:
        - targets: [%q]
`, am.Scheme, am.Host)
	}
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), RulesDir: rulesDir, log: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{
		"--config.file=" + configFile,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
		"--web.enable-lifecycle",
		"--log.level=info",
	}
	if alertmanagerURL != "" {
		delay := "1s"
		if o.ResendDelay > 0 {
			delay = o.ResendDelay.String()
		}
		args = append(args, "--rules.alert.resend-delay="+delay)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	run(t, "prometheus", cmd, cancel, s.URL+"/-/ready", s.log)
	return s
}

// run starts cmd (made by exec.CommandContext with a context cancel ends), its output going to
// log; stops it (an interrupt, then at most 10 s) when the test ends, logging its output when the
// test failed; and waits up to a minute until readyURL answers 200. It fails t when the process
// cannot start, exits before it is ready, or is not ready in time.
func run(t testing.TB, name string, cmd *exec.Cmd, cancel context.CancelFunc, readyURL string, log *lockedBuffer) {
	t.Helper()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("%s log:\n%s", name, log.String())
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited before it was ready (%v); its log:\n%s", name, err, log.String())
		default:
		}
		if res, err := http.Get(readyURL); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within a minute; its log:\n%s", name, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Value  string
}

// Query runs an instant PromQL query and returns the series of its vector answer.
func (s *Server) Query(t testing.TB, query string) []Sample {
	t.Helper()
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	s.getJSON(t, "/api/v1/query?query="+url.QueryEscape(query), &answer)
	if answer.Status != "success" || answer.Data.ResultType != "vector" {
		t.Fatalf("query %s: status %q, result type %q, error %q", query, answer.Status, answer.Data.ResultType, answer.Error)
	}
	samples := make([]Sample, 0, len(answer.Data.Result))
	for _, r := range answer.Data.Result {
		value, _ := r.Value[1].(string)
		samples = append(samples, Sample{Labels: r.Metric, Value: value})
	}
	return samples
}

// WaitForSeries queries until the answer has at least one series and returns it; it fails t when
// none has appeared within timeout (a bound on a failing test, not a measure of speed).
func (s *Server) WaitForSeries(t testing.TB, query string, timeout time.Duration) []Sample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if samples := s.Query(t, query); len(samples) > 0 {
			return samples
		}
		if time.Now().After(deadline) {
			t.Fatalf("no series for %s after %s; loaded rule groups: %v; prometheus log:\n%s",
				query, timeout, s.RuleGroups(t), s.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// RuleGroup is a rule group as the server has loaded it.
type RuleGroup struct {
	Name     string  `json:"name"`
	File     string  `json:"file"`
	Interval float64 `json:"interval"`
	Limit    int     `json:"limit"`
	Rules    []struct {
		Name   string `json:"name"`
		Query  string `json:"query"`
		Health string `json:"health"`
		Type   string `json:"type"`
		// Labels are an alerting rule's own labels.
		Labels map[string]string `json:"labels"`
		// Annotations are an alerting rule's annotations.
		Annotations map[string]string `json:"annotations"`
		// State is an alerting rule's state (inactive, pending, firing); LastError the error of
		// its last evaluation.
		State     string `json:"state"`
		LastError string `json:"lastError"`
	} `json:"rules"`
}

// RuleGroups returns the rule groups the server has loaded (/api/v1/rules).
func (s *Server) RuleGroups(t testing.TB) []RuleGroup {
	t.Helper()
	var answer struct {
		Status string `json:"status"`
		Data   struct {
			Groups []RuleGroup `json:"groups"`
		} `json:"data"`
	}
	s.getJSON(t, "/api/v1/rules", &answer)
	if answer.Status != "success" {
		t.Fatalf("GET /api/v1/rules: status %q", answer.Status)
	}
	return answer.Data.Groups
}

// Log returns what the server has logged so far.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) getJSON(t testing.TB, path string, into any) {
	t.Helper()
	res, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: status %d, body %s: %v", path, res.StatusCode, strings.TrimSpace(string(body)), err)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
