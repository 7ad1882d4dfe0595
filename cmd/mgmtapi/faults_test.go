package main

// The fault-injection suite (issue 27): the server runs as an OS process (startServerUnder) while
// the tests break what it stands on — PostgreSQL restarted and stopped, the disk filled, the
// process stopped, its descriptors exhausted, bodies it refuses early — and check what clients
// are told: only 2xx, or the refusals the contract names (503 or 507 with Retry-After and the
// {code, message} body), and that every acknowledged write is read back at the end. The tests are
// named TestFaults…; they need root and run only with MGMTAPI_REQUIRE_FAULTS=1.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// faultsVariable, set to 1, runs the fault-injection suite; then anything it needs that is missing
// fails the test instead of skipping it.
const faultsVariable = "MGMTAPI_REQUIRE_FAULTS"

// requireFaults skips t unless faultsVariable is 1 (and always under -short), and fails it when
// the suite cannot run as root.
func requireFaults(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the fault-injection suite takes minutes")
	}
	if os.Getenv(faultsVariable) != "1" {
		t.Skipf("the fault-injection suite needs root (mount, runuser), PostgreSQL's server binaries, prlimit and prometheus-alertmanager, and takes a few minutes: run it with %s=1 (.ci/run sets it), which makes anything missing a failure", faultsVariable)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s=1, but the suite needs root (mount, runuser); this is uid %d", faultsVariable, os.Geteuid())
	}
}

// faultTool returns the last path matching pattern (a glob; the highest version where the path
// names one), failing t when there is none: the suite runs only when required.
func faultTool(t *testing.T, pattern, install string) string {
	t.Helper()
	matches, _ := filepath.Glob(pattern)
	if len(matches) == 0 {
		t.Fatalf("%s=1, but nothing matches %s (%s)", faultsVariable, pattern, install)
	}
	slices.Sort(matches)
	return matches[len(matches)-1]
}

// faultContract is what clients may be told during a fault besides a 2xx: one of the refusal
// statuses, with a Retry-After of whole seconds (at least 1) and the body {code, message} whose
// code is the status and whose message contains word.
type faultContract struct {
	refusals []int
	word     string
	// timeoutsAllowed: a request the client gave up on (its timeout) is counted, not a breach:
	// while the server is stopped, nothing answers.
	timeoutsAllowed bool
	// anyBody: a refusal need not carry the Error body (the connection cap answers a new
	// connection before any handler, with a raw 503).
	anyBody bool
}

// judge returns the label an answer is counted under ("200", "503 database", "401 …") and whether
// it keeps the contract.
func (c faultContract) judge(status int, header http.Header, body []byte) (string, bool) {
	if status >= 200 && status < 300 {
		return strconv.Itoa(status), true
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	decoded := json.Unmarshal(body, &e) == nil
	reason, _, _ := strings.Cut(e.Message, ":")
	label := fmt.Sprintf("%d %.60s", status, reason)
	if !decoded {
		label = fmt.Sprintf("%d (not the Error body) %.60q", status, body)
	}
	bodyKept := decoded && e.Code == status && strings.Contains(e.Message, c.word)
	if !slices.Contains(c.refusals, status) || (!bodyKept && !c.anyBody) {
		return label, false
	}
	seconds, err := strconv.Atoi(header.Get("Retry-After"))
	if err != nil || seconds < 1 {
		return label + fmt.Sprintf(" with Retry-After %q", header.Get("Retry-After")), false
	}
	return label, true
}

// createSendDataKey creates a send-data key of the bootstrap team (the kind Alertmanager is given:
// it authenticates only ingestion) and returns its secret.
func createSendDataKey(t *testing.T, base string) string {
	t.Helper()
	status, _, out, err := freshRequest(base, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3",
		`{"name":"faults ingestion","keyPermissions":{"presets":["SendData"]}}`)
	var created struct {
		Value string `json:"value"`
	}
	if err != nil || status != http.StatusOK || json.Unmarshal([]byte(out), &created) != nil || created.Value == "" {
		t.Fatalf("create a send-data key: %d %s %v", status, out, err)
	}
	return created.Value
}

// faultLoad drives the server while a fault happens: writers create recording-rule sets (every
// eighth write an Alertmanager notification to the ingest path, with a send-data key, instead),
// and a reader reads acknowledged sets back, each on its own keep-alive connection, back to back;
// after a refusal a client waits 100 ms, as a client honouring Retry-After at least waits. It
// counts every answer and transport error and keeps the acknowledged writes.
type faultLoad struct {
	base string
	// ingestKey authenticates the notifications: a send-data key.
	ingestKey string
	contract  faultContract
	timeout   time.Duration
	stop      chan struct{}
	finished  sync.Once
	wg        sync.WaitGroup
	// t0 is the startsAt of the notifications.
	t0 time.Time

	mu        sync.Mutex
	counts    map[string]int // label → answers and errors
	breaches  []string       // the first answers outside the contract
	acks      []acknowledged // sets created
	alerts    []string       // alerts whose notification was answered 2xx
	successes []time.Time    // when each 2xx write answer arrived
}

// startFaultLoad creates a send-data key, then starts writers writers and one reader against
// base, each client with the timeout.
func startFaultLoad(t *testing.T, base string, writers int, contract faultContract, timeout time.Duration) *faultLoad {
	t.Helper()
	l := &faultLoad{base: base, ingestKey: createSendDataKey(t, base), contract: contract, timeout: timeout, stop: make(chan struct{}),
		t0: time.Now().UTC().Add(-time.Minute).Truncate(time.Second), counts: map[string]int{}}
	for w := range writers {
		l.wg.Add(1)
		go l.write(w)
	}
	l.wg.Add(1)
	go l.read()
	return l
}

func (l *faultLoad) client() *http.Client {
	return &http.Client{Timeout: l.timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
}

func (l *faultLoad) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *faultLoad) write(w int) {
	defer l.wg.Done()
	client := l.client()
	defer client.CloseIdleConnections()
	for i := 0; !l.stopped(); i++ {
		if i%8 == 7 {
			// Fixed width: no name is a prefix of another.
			name := fmt.Sprintf("fault%02dn%06d", w, i)
			if l.exchange(client, l.ingestKey, http.MethodPost, ingestPath, alertmanagerBody(name, "faults", l.t0, time.Time{}), true) != nil {
				l.mu.Lock()
				l.alerts = append(l.alerts, name)
				l.mu.Unlock()
			}
			continue
		}
		a := acknowledged{name: fmt.Sprintf("fault writer %d set %d", w, i), expr: fmt.Sprintf(`sum(up{writer="%d",set="%d"})`, w, i)}
		body, _ := json.Marshal(map[string]any{"name": a.name, "groups": []any{
			map[string]any{"name": "g", "rules": []any{map[string]any{"record": "r", "expr": a.expr}}}}})
		out := l.exchange(client, crashKey, http.MethodPost, crashRulesPath, string(body), true)
		var created struct {
			ID string `json:"id"`
		}
		if out != nil && json.Unmarshal(out, &created) == nil && created.ID != "" {
			a.id = created.ID
			l.mu.Lock()
			l.acks = append(l.acks, a)
			l.mu.Unlock()
		}
	}
}

func (l *faultLoad) read() {
	defer l.wg.Done()
	client := l.client()
	defer client.CloseIdleConnections()
	for !l.stopped() {
		path := crashRulesPath
		l.mu.Lock()
		if n := len(l.acks); n > 0 {
			path = crashRulesPath + "/" + url.PathEscape(l.acks[rand.IntN(n)].id)
		}
		l.mu.Unlock()
		l.exchange(client, crashKey, http.MethodGet, path, "", false)
	}
}

// exchange sends one request with the key, counts what came back and returns the body of a 2xx
// answer (nil otherwise).
func (l *faultLoad) exchange(client *http.Client, key, method, path, body string, write bool) []byte {
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, l.base+path, reader)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	var out []byte
	if err == nil {
		out, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	answered := time.Now()
	if err != nil {
		label, allowed := transportLabel(err), false
		if label == "client timeout" {
			allowed = l.contract.timeoutsAllowed
		}
		l.count(label, allowed, fmt.Sprintf("%s %s: %v", method, path, err))
		return nil
	}
	label, allowed := l.contract.judge(res.StatusCode, res.Header, out)
	l.count(label, allowed, fmt.Sprintf("%s %s: %d %s (Retry-After %q)", method, path, res.StatusCode, out, res.Header.Get("Retry-After")))
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		time.Sleep(100 * time.Millisecond)
		return nil
	}
	if write {
		l.mu.Lock()
		l.successes = append(l.successes, answered)
		l.mu.Unlock()
	}
	return out
}

func (l *faultLoad) count(label string, allowed bool, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[label]++
	if !allowed && len(l.breaches) < 10 {
		l.breaches = append(l.breaches, detail)
	}
}

// transportLabel names a request that got no answer: the client's timeout, or how the connection
// failed.
func transportLabel(err error) string {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return "client timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed without an answer"
	}
	return "transport error"
}

// finish stops the clients and waits for them; once done, it does nothing.
func (l *faultLoad) finish() {
	l.finished.Do(func() {
		close(l.stop)
		l.wg.Wait()
	})
}

// recovered is the end of a fault: it waits up to 10 s for a write to succeed after since (the
// moment the fault ended) and up to 10 s for /readyz to be ready, lets the load run 2 s more, stops
// it and checks the server process is still the one started. It returns how long after since the
// first write succeeded, and how long /readyz took to be ready.
func (l *faultLoad) recovered(t *testing.T, srv *serverProcess, logs string, since time.Time, what string) (firstWrite, readyAfter time.Duration) {
	t.Helper()
	firstWrite = l.awaitWriteAfter(t, since, 10*time.Second, what)
	readyAfter = awaitReadiness(t, srv.base, 10*time.Second, "after "+what, ready)
	time.Sleep(2 * time.Second)
	l.finish()
	srv.alive(t, logs)
	return firstWrite, readyAfter
}

// snapshot returns the counts so far, and whether any answer or error broke the contract.
func (l *faultLoad) snapshot() (map[string]int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts), slices.Clone(l.breaches)
}

// unsuccessful returns how many requests so far got no 2xx answer: refusals, other answers and
// transport errors.
func (l *faultLoad) unsuccessful() int {
	counts, _ := l.snapshot()
	n := 0
	for label, c := range counts {
		if !strings.HasPrefix(label, "2") {
			n += c
		}
	}
	return n
}

// firstWriteAfter returns how long after since the first 2xx write answer arrived.
func (l *faultLoad) firstWriteAfter(since time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.successes {
		if s.After(since) {
			return s.Sub(since), true
		}
	}
	return 0, false
}

// awaitWriteAfter waits up to bound for a 2xx write answer after since and returns how long after
// since it came, failing t when none did.
func (l *faultLoad) awaitWriteAfter(t *testing.T, since time.Time, bound time.Duration, what string) time.Duration {
	t.Helper()
	for {
		if d, ok := l.firstWriteAfter(since); ok {
			return d
		}
		if time.Since(since) > bound {
			counts, breaches := l.snapshot()
			t.Fatalf("no write succeeded within %s after %s; answers so far: %v; first outside the contract: %q", bound, what, counts, breaches)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check fails t when any answer broke the contract, and logs the counts.
func (l *faultLoad) check(t *testing.T, what string) {
	t.Helper()
	counts, breaches := l.snapshot()
	t.Logf("%s: answers by status: %v; %d sets and %d Alertmanager notifications acknowledged", what, counts, len(l.acks), len(l.alerts))
	if len(breaches) > 0 {
		t.Errorf("%s: answers outside the contract (only 2xx, or %v with Retry-After and a message containing %q), first %d: %s",
			what, l.contract.refusals, l.contract.word, len(breaches), strings.Join(breaches, "\n  "))
	}
}

// verifyAlerts checks that every acknowledged notification's alert is an incident of the team.
func (l *faultLoad) verifyAlerts(t *testing.T, base string) {
	t.Helper()
	names, status, body := incidentNames(base)
	if status != http.StatusOK {
		t.Fatalf("list incidents: %d %.300s", status, body)
	}
	missing := 0
	for _, name := range l.alerts {
		if !names[name] {
			if missing == 0 {
				t.Errorf("acknowledged alert %s is not an incident", name)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged Alertmanager notifications have no incident", missing, len(l.alerts))
	}
}

const incidentsPath = "/mgmt/openapi/5/incidents/incidents/v1"

// incidentNames lists the bootstrap team's incidents (up to 10,000) and returns their names
// (an incident from Alertmanager is named after its alertname).
func incidentNames(base string) (names map[string]bool, status int, body string) {
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, base+incidentsPath, strings.NewReader(`{"pagination":{"pageSize":10000}}`))
	req.Header.Set("Authorization", "Bearer "+crashKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, 0, err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	var page struct {
		Incidents []struct {
			Name string `json:"name"`
		} `json:"incidents"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(out, &page) != nil {
		return nil, res.StatusCode, string(out)
	}
	names = map[string]bool{}
	for _, inc := range page.Incidents {
		names[inc.Name] = true
	}
	return names, res.StatusCode, string(out)
}

// readiness asks /readyz once.
func readiness(base string) (status int, body string) {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Get(base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(bytes.TrimSpace(out))
}

// notReady reports whether a /readyz answer is the contract's 503 naming reason.
func notReady(status int, body, reason string) bool {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	return status == http.StatusServiceUnavailable && json.Unmarshal([]byte(body), &e) == nil && e.Code == 503 &&
		strings.HasPrefix(e.Message, "not ready: ") && strings.Contains(e.Message, reason)
}

// awaitReadiness polls /readyz until answer(status, body) holds, for up to bound, marking t
// failed otherwise (the test goes on, to see the rest of the fault); it returns how long it took.
func awaitReadiness(t *testing.T, base string, bound time.Duration, what string, answer func(int, string) bool) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		status, body := readiness(base)
		if answer(status, body) {
			return time.Since(began)
		}
		if time.Since(began) > bound {
			t.Errorf("/readyz %s: still %d %s after %s", what, status, body, bound)
			return time.Since(began)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ready reports whether a /readyz answer is 200 {"status":"ready"}.
func ready(status int, body string) bool {
	return status == http.StatusOK && body == `{"status":"ready"}`
}

// alive fails t when the server process has ended: the faults must not end it.
func (s *serverProcess) alive(t *testing.T, logs string) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the server process ended during the fault: %v\n%s", err, tail(logs))
	}
}

// interrupt stops the server as Ctrl-C does (no shutdown delay) and waits up to 30 s for it to
// end, then kills it.
func (s *serverProcess) interrupt(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt the server: %v", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- s.cmd.Wait() }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-ended
		t.Errorf("the server did not stop within 30 s of an interrupt")
	}
}

// metricLines returns the samples of the server's /metrics that name one of the words and are
// not 0, for the figures a test logs.
func metricLines(base string, words ...string) string {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	var lines []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasSuffix(line, " 0") {
			continue
		}
		for _, w := range words {
			if strings.Contains(line, w) {
				lines = append(lines, line)
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// logSummary counts the lines of the server log by their level= field and quotes the first
// ERROR line, for the figures a test logs.
func logSummary(logs string) string {
	b, _ := os.ReadFile(logs)
	levels := map[string]int{}
	firstError := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if _, rest, ok := strings.Cut(line, "level="); ok {
			level, _, _ := strings.Cut(rest, " ")
			levels[level]++
			if level == "ERROR" && firstError == "" {
				firstError = line
			}
		}
	}
	return fmt.Sprintf("server log lines by level: %v; the first ERROR: %.400s", levels, firstError)
}

// logMentions counts how often phrase occurs in the server log.
func logMentions(logs, phrase string) int {
	b, _ := os.ReadFile(logs)
	return strings.Count(string(b), phrase)
}
