package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	badReceiverClients = 8
	// badReceiverPhaseVariable lengthens each phase (a Go duration) for a measurement; the test
	// takes 2 s per phase.
	badReceiverPhaseVariable = "MGMTAPI_BAD_RECEIVER_PHASE"
	hugeBody                 = 100 << 20
)

// TestBadReceiversDoNotSlowTheAPI: a receiver that never answers and one that answers 100 MB
// bodies neither fail the API nor starve a healthy connector. The server runs as a process
// (default delivery settings: 10 s attempt timeout, 4 attempts in flight per connector) with a
// router sending every ALERTS event to a healthy webhook. Eight clients ingest distinct
// Alertmanager alerts and list the routers in four phases; each event goes to the healthy webhook
// and two more, chosen by the alert's service label: two spare healthy ones ("none"), the silent
// receiver and a spare one ("silent"), the silent and the huge receivers ("silent-huge"), so the
// outbox's work per event is the same in each phase; a last "none" shows the drift of a growing
// database. Every API request must answer 200, and every acknowledged alert's notification must
// reach the healthy receiver. The latencies of the phases are logged (go test -v), not asserted:
// they are the figures of docs/performance.md, "Notification deliveries under bad receivers".
// SQLite, then PostgreSQL.
func TestBadReceiversDoNotSlowTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server under load for a few seconds per engine")
	}
	phase := 2 * time.Second
	if v := os.Getenv(badReceiverPhaseVariable); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", badReceiverPhaseVariable, err)
		}
		phase = d
	}
	engines(t, func(t *testing.T, database []string) { badReceivers(t, database, phase) })
}

func badReceivers(t *testing.T, database []string, phase time.Duration) {
	// The healthy receiver records the keys it got and answers at once.
	// and when each alert's first notification arrived.
	var mu sync.Mutex
	healthyKeys := map[string]bool{}
	arrived := map[string]time.Time{}
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		now := time.Now()
		mu.Lock()
		healthyKeys[r.Header.Get("Idempotency-Key")] = true
		if name := phaseAlert.Find(body); name != nil {
			if _, ok := arrived[string(name)]; !ok {
				arrived[string(name)] = now
			}
		}
		mu.Unlock()
	}))
	defer healthy.Close()
	var spareRequests atomic.Int64
	spare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { spareRequests.Add(1) }))
	defer spare.Close()
	// The silent receiver reads the request and never answers (until the test ends).
	stop := make(chan struct{})
	var silentRequests atomic.Int64
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		silentRequests.Add(1)
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer silent.Close()
	// The huge receiver answers 200 with a body of 100 MB, as far as the client reads it.
	var hugeRequests, hugeWritten atomic.Int64
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hugeRequests.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(hugeBody))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for written := 0; written < hugeBody; written += len(chunk) {
			n, err := w.Write(chunk)
			hugeWritten.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	defer close(stop) // before the servers close: their Close waits for the handlers

	logs := filepath.Join(t.TempDir(), "server.log")
	srv := startServer(t, logs, append(database, "--notify-allow-private"))
	defer srv.kill(t)
	api := newAPIClient(srv.base, badReceiverClients)
	defer api.client.CloseIdleConnections()
	router := func(name, service string, connectors ...string) {
		var targets []string
		for _, c := range connectors {
			targets = append(targets, `{"connectorId":"`+c+`"}`)
		}
		if status, out, err := api.call(centerPath+"routers", `{"router":{"name":"`+name+`","entityType":"ALERTS","entityLabels":{"service":"`+service+`"},
			"rules":[{"name":"all","condition":"true","targets":[`+strings.Join(targets, ",")+`]}]}}`); err != nil || status != http.StatusOK {
			t.Fatalf("create router %s: %d %s %v", name, status, out, err)
		}
	}
	// Every event goes to three connectors in each phase: the healthy one, and two of the spare
	// (healthy too), silent and huge ones, according to its service label, the phase.
	connector := func(u string) string { return api.connector(t, "GENERIC_HTTPS", map[string]string{"url": u + "/hook"}) }
	healthyID, spare1, spare2 := connector(healthy.URL), connector(spare.URL), connector(spare.URL)
	silentID, hugeID := connector(silent.URL), connector(huge.URL)
	router("Healthy", "*", healthyID)
	router("None", "none", spare1, spare2)
	router("Silent", "silent", silentID, spare1)
	router("Huge", "silent-huge", silentID, hugeID)

	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	acknowledged := 0
	ackedAt := make([]map[string]time.Time, 4) // per phase: alert name → when its ingestion was answered
	measure := func(phaseNumber int, label string) {
		var lmu sync.Mutex
		var reads, ingests []time.Duration
		var failures []string
		var wg sync.WaitGroup
		ackedAt[phaseNumber] = map[string]time.Time{}
		cpu := processCPU(srv)
		end := time.Now().Add(phase)
		for c := range badReceiverClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(end); i++ {
					name := fmt.Sprintf("phase%d-%d-%d", phaseNumber, c, i)
					start := time.Now()
					status, out, err := api.call(ingestPath, alertmanagerBody(name, label, t0, time.Time{}))
					ingestTook := time.Since(start)
					answered := time.Now()
					start = time.Now()
					rstatus, rout, rerr := api.call(centerPath+"routers", "")
					readTook := time.Since(start)
					lmu.Lock()
					if err != nil || status != http.StatusOK {
						failures = append(failures, fmt.Sprintf("ingest %s: %d %s %v", name, status, out, err))
					} else {
						ingests = append(ingests, ingestTook)
						ackedAt[phaseNumber][name] = answered
					}
					if rerr != nil || rstatus != http.StatusOK {
						failures = append(failures, fmt.Sprintf("list routers: %d %s %v", rstatus, rout, rerr))
					} else {
						reads = append(reads, readTook)
					}
					lmu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("bad receivers %s: %d API requests failed, first: %s\n%s", label, len(failures), failures[0], tail(logs))
		}
		acknowledged += len(ingests)
		t.Logf("bad receivers %-11s: ingest %s; list routers %s; server CPU %.2f s", label,
			percentiles(ingests, phase), percentiles(reads, phase), (processCPU(srv) - cpu).Seconds())
	}

	for i, label := range []string{"none", "silent", "silent-huge", "none"} {
		measure(i, label)
	}

	// Every acknowledged alert's notification reaches the healthy receiver.
	loaded := time.Now()
	for {
		mu.Lock()
		n := len(healthyKeys)
		mu.Unlock()
		if n >= acknowledged {
			if n > acknowledged {
				t.Errorf("the healthy receiver got %d notifications for %d alerts", n, acknowledged)
			}
			break
		}
		if time.Since(loaded) > time.Minute {
			t.Fatalf("the healthy receiver got %d of %d notifications a minute after the load\n%s", n, acknowledged, tail(logs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, acks := range ackedAt {
		var lags []time.Duration
		mu.Lock()
		for name, at := range acks {
			if got, ok := arrived[name]; ok {
				lags = append(lags, got.Sub(at))
			} else {
				t.Errorf("alert %s: its notification did not name it at the healthy receiver", name)
			}
		}
		mu.Unlock()
		t.Logf("phase %d: from the ingestion's answer to the healthy receiver: %s", i, percentiles(lags, phase))
	}
	_, metrics, _ := api.call("/metrics", "")
	var outcomes []string
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "mgmtapi_deliveries_total{") {
			outcomes = append(outcomes, strings.TrimPrefix(line, "mgmtapi_deliveries_total"))
		}
	}
	t.Logf("delivery attempts recorded: %s", strings.Join(outcomes, " "))
	t.Logf("the healthy receiver had all %d notifications %.2f s after the load; the spare ones got %d requests, the silent one %d, the huge one %d (%.1f MiB written in all)",
		acknowledged, time.Since(loaded).Seconds(), spareRequests.Load(), silentRequests.Load(), hugeRequests.Load(), float64(hugeWritten.Load())/(1<<20))
}

// processCPU is the user and system CPU time the server process has used so far (Linux; zero
// elsewhere).
func processCPU(srv *serverProcess) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	var user, system int64
	fmt.Sscan(fields[11], &user)
	fmt.Sscan(fields[12], &system)
	return time.Duration(user+system) * time.Second / 100 // clock ticks (USER_HZ, 100 on Linux)
}

// phaseAlert finds the alert's name in a notification's body.
var phaseAlert = regexp.MustCompile(`phase[0-9]-[0-9]+-[0-9]+`)

// percentiles summarises latencies: count, rate, p50, p99 and max.
func percentiles(ds []time.Duration, over time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	round := func(d time.Duration) time.Duration {
		if d >= time.Second {
			return d.Round(10 * time.Millisecond)
		}
		return d.Round(10 * time.Microsecond)
	}
	at := func(q float64) time.Duration { return round(s[min(len(s)-1, int(q*float64(len(s))))]) }
	return fmt.Sprintf("%d (%.0f/s) p50 %s p99 %s max %s", len(s), float64(len(s))/over.Seconds(), at(0.5), at(0.99), round(s[len(s)-1]))
}
