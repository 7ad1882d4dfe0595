package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The flood measurement (-scenarios flood, not in all) holds -flood-connections keep-alive
// connections to one mgmtapi at once, every one with a request in flight all the time for
// -duration: half list a team's recording-rule sets, half create one. A client answered 503 or
// 429 waits as its Retry-After says before its next request, or, with -flood-ignore-retry-after,
// sends it at once (a hostile client). It prints the latency of the admitted answers (2xx) and of
// the refused ones (503 and 429) apart, against the targets — admitted p99 ≤ 500 ms, refused
// p99 < 50 ms — with the refusals of the opening burst (every connection's first request, all
// sent at once) and of the later requests apart; how it was measured (shedding variables passed
// on, load average, -flood-pin); where the time went (floodcpu.go); and then checks that nothing
// is half-applied: every create answered 2xx is in the team's list, every create answered 503 is
// not, and the list holds nothing else.

// floodListedSets is how many sets the listed team holds.
const floodListedSets = 100

// Targets of the flood.
const (
	floodAdmittedP99 = 500 * time.Millisecond
	floodRefusedP99  = 50 * time.Millisecond
)

// floodOutcome is what one flood measured.
type floodOutcome struct {
	admitted, refused []time.Duration
	// openingRefused are the refusals of each connection's first request, which all
	// connections send in the same instant; laterRefused the others.
	openingRefused, laterRefused []time.Duration
	// statuses counts every answer by status; noAnswer the requests that got none.
	statuses map[int]int
	noAnswer int
	lastErr  string
	// created are the names of the sets whose create was answered 2xx, refusedCreates those
	// answered 503 or 429, unanswered those that got no answer (either may be true of them).
	created, refusedCreates, unanswered []string
}

// measureFlood runs the flood against a fresh mgmtapi and prints it; it fails when something is
// half-applied or an answer is neither 2xx nor a refusal.
func measureFlood(ctx context.Context, o options, bin, workDir, engine string, stdout, stderr io.Writer) error {
	if err := raiseOpenFileLimit(2*o.floodConnections + 1024); err != nil {
		return err
	}
	pinned := "not pinned: both processes (and the machine's other work) run on every CPU"
	if o.floodPin {
		if runtime.NumCPU() < 2 {
			return errors.New("-flood-pin: needs 2 CPUs")
		}
		// The server inherits CPU 1 from the thread that starts it, and its runtime sizes
		// GOMAXPROCS from it; this process then moves to CPU 0.
		if err := pinThreads(1); err != nil {
			return err
		}
	}
	server, err := startMgmtapi(ctx, bin, workDir, o.databaseURL)
	if err != nil {
		return err
	}
	defer server.stop()
	if o.floodPin {
		if err := pinThreads(0); err != nil {
			return err
		}
		runtime.GOMAXPROCS(1)
		pinned = "pinned: mgmtapi to CPU 1, the load generator to CPU 0 with GOMAXPROCS 1 (the machine's other work still runs on both)"
	}
	run := time.Now().UTC().Format("150405.000")
	createKey, err := createTeam(ctx, server, "mgmtload-flood-"+run)
	if err != nil {
		return err
	}
	listKey, err := createTeam(ctx, server, "mgmtload-flood-list-"+run)
	if err != nil {
		return err
	}
	f := &fixture{run: run}
	if err := f.seed(ctx, server, listKey, floodListedSets, f.createSet); err != nil {
		return err
	}

	var held *slotHolders
	if o.floodRefusalsOnly {
		if held, err = holdSlots(ctx, server.baseURL, createKey); err != nil {
			return err
		}
		defer held.release()
	}
	fmt.Fprintf(stderr, "mgmtload: flood: opening %d connections\n", o.floodConnections)
	loadStart := loadAverage()
	server.resetPeakRSS()
	// The server's and the processes' counters are read once the connections are open (their
	// probes are not the flood's), and again when it ends.
	var (
		before             serverTimes
		serverCPU, selfCPU cpuSample
		selfSched          *metrics.Float64Histogram
		began              time.Time
		limits             admissionLimits
	)
	out, err := flood(ctx, server.baseURL, createKey, listKey, o.floodConnections, o.duration, !o.floodIgnoreRetryAfter, !o.floodRefusalsOnly, func() error {
		var err error
		before, err = serverLatencies(ctx, server.baseURL)
		serverCPU, selfCPU, selfSched = sampleCPU(server.cmd.Process.Pid), sampleCPU(os.Getpid()), goSchedLatencies()
		began = time.Now()
		limits.start(ctx, server.baseURL)
		return err
	})
	limits.stop()
	if err != nil {
		return err
	}
	elapsed := time.Since(began)
	serverCPU, selfCPU = sampleCPU(server.cmd.Process.Pid).minus(serverCPU), sampleCPU(os.Getpid()).minus(selfCPU)
	selfSchedAfter := goSchedLatencies()
	peak := server.peakRSS()
	after, err := serverLatencies(ctx, server.baseURL)
	if err != nil {
		return err
	}

	if held != nil {
		if err := held.release(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "mgmtload: flood: reading the created sets back\n")
	var listed struct {
		Sets []struct {
			Name string `json:"name"`
		} `json:"sets"`
	}
	if err := call(ctx, server.baseURL, createKey, "GET", recordingRuleSetsPath, nil, &listed); err != nil {
		return err
	}
	present := map[string]bool{}
	for _, s := range listed.Sets {
		present[s.Name] = true
	}
	missing, leftBehind := 0, 0
	for _, name := range out.created {
		if !present[name] {
			missing++
		}
	}
	for _, name := range out.refusedCreates {
		if present[name] {
			leftBehind++
		}
	}
	unansweredApplied := 0
	for _, name := range out.unanswered {
		if present[name] {
			unansweredApplied++
		}
	}
	other := len(listed.Sets) - len(out.created) - unansweredApplied

	clients := "clients wait as Retry-After says"
	if o.floodIgnoreRetryAfter {
		clients = "clients ignore Retry-After"
	}
	fmt.Fprintf(stdout, "mgmtload flood %s: mgmtapi on %s, %d connections for %s, half listing %d sets, half creating; %s; shedding: %s; %d CPUs shared with the load generator; load average %s at the start, %s at the end; peak RSS %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), engine, o.floodConnections, o.duration, floodListedSets, clients,
		sheddingSettings(), runtime.NumCPU(), loadStart, loadAverage(), rss(peak, false))
	fmt.Fprintf(stdout, "%-22s %9s %9s %9s %9s  %s\n", "answers", "count", "p50", "p99", "max", "target")
	printFloodRow(stdout, "admitted (2xx)", out.admitted, fmt.Sprintf("p99 ≤ %s", floodAdmittedP99), floodAdmittedP99)
	printFloodRow(stdout, "refused (503, 429)", out.refused, fmt.Sprintf("p99 < %s", floodRefusedP99), floodRefusedP99-time.Microsecond)
	printFloodRow(stdout, "- opening burst", out.openingRefused, "the first request of each connection, all sent at once", floodRefusedP99-time.Microsecond)
	printFloodRow(stdout, "- after it", out.laterRefused, "every later request", floodRefusedP99-time.Microsecond)
	fmt.Fprintf(stdout, "the server's own time (its /metrics histogram, bucket bounds): admitted p50 ≤ %s p99 ≤ %s; refused p50 ≤ %s p99 ≤ %s\n",
		after.admitted.minus(before.admitted).quantile(0.5), after.admitted.minus(before.admitted).quantile(0.99),
		after.refused.minus(before.refused).quantile(0.5), after.refused.minus(before.refused).quantile(0.99))
	serverSched := after.sched.minus(before.sched)
	fmt.Fprintf(stdout, "%s; mgmtapi's GOMAXPROCS %s; its admission bound, read every %s: %s\n", pinned, after.gomaxprocs, admissionLimitEvery, &limits)
	fmt.Fprintf(stdout, "where the time went (%s): mgmtapi used %.2f cores and its threads waited %.2f s for one; the load generator used %.2f cores and waited %.2f s; goroutines runnable before running: mgmtapi p50 ≤ %s p99 ≤ %s (buckets), load generator p50 %s p99 %s (%.1f%% over 10ms)\n",
		elapsed.Round(time.Millisecond), serverCPU.cpu.Seconds()/elapsed.Seconds(), serverCPU.runQueue.Seconds(),
		selfCPU.cpu.Seconds()/elapsed.Seconds(), selfCPU.runQueue.Seconds(),
		serverSched.quantile(0.5), serverSched.quantile(0.99),
		durationOrDash(histogramQuantile(selfSched, selfSchedAfter, 0.5)), durationOrDash(histogramQuantile(selfSched, selfSchedAfter, 0.99)),
		100*histogramOver(selfSched, selfSchedAfter, 10*time.Millisecond))
	printFloodFloor(stdout, out, serverCPU.cpu, selfCPU.cpu, o.floodConnections, held != nil)
	codes := make([]int, 0, len(out.statuses))
	for code := range out.statuses {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	fmt.Fprint(stdout, "statuses:")
	for _, code := range codes {
		fmt.Fprintf(stdout, " %d×%d", code, out.statuses[code])
	}
	fmt.Fprintf(stdout, "; no answer: %d\n", out.noAnswer)
	fmt.Fprintf(stdout, "half-applied check: %d creates answered 2xx, %d of them missing; %d refused, %d of them left behind; %d unanswered (%d applied); %d sets nobody created\n",
		len(out.created), missing, len(out.refusedCreates), leftBehind, len(out.unanswered), unansweredApplied, other)

	var failed []error
	if missing > 0 || leftBehind > 0 || other != 0 {
		failed = append(failed, errors.New("something is half-applied"))
	}
	for code, n := range out.statuses {
		if code/100 != 2 && code != http.StatusServiceUnavailable && code != http.StatusTooManyRequests {
			failed = append(failed, fmt.Errorf("%d answers %d", n, code))
		}
	}
	if out.noAnswer > 0 {
		failed = append(failed, fmt.Errorf("%d requests got no answer (last: %s)", out.noAnswer, out.lastErr))
	}
	return errors.Join(failed...)
}

// sheddingSettings names the server's shedding settings that this process passes on to it from
// its environment, the others being the server's defaults.
func sheddingSettings() string {
	var set []string
	for _, name := range []string{"MGMTAPI_MAX_CONCURRENT_REQUESTS", "MGMTAPI_QUEUE_LENGTH", "MGMTAPI_QUEUE_WAIT", "MGMTAPI_CONCURRENCY_TARGET_LATENCY", "MGMTAPI_MIN_CONCURRENT_REQUESTS", "MGMTAPI_KEY_RATE_LIMIT", "GOMAXPROCS"} {
		if v, ok := os.LookupEnv(name); ok {
			set = append(set, name+"="+v)
		}
	}
	if len(set) == 0 {
		return "the server's defaults"
	}
	return strings.Join(set, " ") + ", the rest the server's defaults"
}

// loadAverage is the machine's 1-minute load average, from /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return "unknown"
	}
	return fields[0]
}

func printFloodRow(w io.Writer, name string, latencies []time.Duration, target string, bound time.Duration) {
	r := result{latencies: latencies}
	p99 := r.percentile(0.99)
	verdict := "met"
	if len(latencies) == 0 {
		verdict = "none measured"
	} else if p99 > bound {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "%-22s %9d %9s %9s %9s  %s: %s\n", name, len(latencies), latency(&r, 0.5), latency(&r, 0.99), latency(&r, 1), target, verdict)
}

// flood opens connections connections, waits until all are open, calls opened, then has them all
// send requests back to back for d: half lists and half creates, or only lists without creates.
//
// Each connection is written to and read from directly (floodConn), not through http.Client: the
// client's transport runs two goroutines of its own per connection and allocates a request, its
// header map and a context per request, and under 5,000 connections on two shared cores the load
// generator's own cost is part of every latency it measures.
func flood(ctx context.Context, baseURL, createKey, listKey string, connections int, d time.Duration, honourRetryAfter, creates bool, opened func() error) (floodOutcome, error) {
	addr := strings.TrimPrefix(baseURL, "http://")
	workers := make([]*floodConn, connections)
	outs := make([]floodOutcome, connections)
	var open sync.WaitGroup
	dialErrs := make(chan error, connections)
	probe := []byte("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	for i := range workers {
		workers[i] = &floodConn{addr: addr}
		outs[i] = floodOutcome{statuses: map[int]int{}}
		open.Add(1)
		go func() {
			defer open.Done()
			// A probe, never shed, opens the worker's connection before the flood starts.
			if _, _, err := workers[i].do(probe); err != nil {
				dialErrs <- err
			}
		}()
	}
	open.Wait()
	close(dialErrs)
	err := <-dialErrs
	if err != nil {
		err = fmt.Errorf("opening the connections: %w", err)
	} else {
		err = opened()
	}
	if err != nil {
		for _, w := range workers {
			w.close()
		}
		return floodOutcome{}, err
	}

	list := []byte("GET " + recordingRuleSetsPath + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + listKey + "\r\n\r\n")
	createHead := "POST " + recordingRuleSetsPath + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + createKey +
		"\r\nContent-Type: application/json\r\nContent-Length: "
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.close()
			out := &outs[i]
			var create, body []byte
			wait := time.NewTimer(time.Hour)
			wait.Stop()
			for seq := 0; ctx.Err() == nil; seq++ {
				req, name := list, ""
				if creates && i%2 == 1 {
					name = fmt.Sprintf("flood w%d #%d", i, seq)
					body = fmt.Appendf(body[:0], `{"name":%q,"groups":[{"name":"g","interval":60,"rules":[{"record":"r:x","expr":"sum(up)"}]}]}`, name)
					create = append(strconv.AppendInt(append(create[:0], createHead...), int64(len(body)), 10), "\r\n\r\n"...)
					req = append(create, body...)
				}
				began := time.Now()
				status, retry, err := w.do(req)
				took := time.Since(began)
				if err != nil {
					out.noAnswer++
					out.lastErr = err.Error()
					if name != "" {
						out.unanswered = append(out.unanswered, name)
					}
					continue
				}
				out.statuses[status]++
				switch {
				case status/100 == 2:
					out.admitted = append(out.admitted, took)
					if name != "" {
						out.created = append(out.created, name)
					}
				case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
					out.refused = append(out.refused, took)
					if seq == 0 {
						out.openingRefused = append(out.openingRefused, took)
					} else {
						out.laterRefused = append(out.laterRefused, took)
					}
					if name != "" {
						out.refusedCreates = append(out.refusedCreates, name)
					}
					if honourRetryAfter {
						pause := time.Second
						if seconds, err := strconv.Atoi(retry); err == nil && seconds > 0 {
							pause = time.Duration(seconds) * time.Second
						}
						wait.Reset(pause)
						select {
						case <-ctx.Done():
							wait.Stop()
						case <-wait.C:
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	total := floodOutcome{statuses: map[int]int{}}
	for _, out := range outs {
		total.admitted = append(total.admitted, out.admitted...)
		total.refused = append(total.refused, out.refused...)
		total.openingRefused = append(total.openingRefused, out.openingRefused...)
		total.laterRefused = append(total.laterRefused, out.laterRefused...)
		for code, n := range out.statuses {
			total.statuses[code] += n
		}
		total.noAnswer += out.noAnswer
		if out.lastErr != "" {
			total.lastErr = out.lastErr
		}
		total.created = append(total.created, out.created...)
		total.refusedCreates = append(total.refusedCreates, out.refusedCreates...)
		total.unanswered = append(total.unanswered, out.unanswered...)
	}
	return total, nil
}

// floodConn is one flood client: a keep-alive HTTP/1.1 connection, opened again when the server
// closes it (Connection: close, or an error).
type floodConn struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

// do writes req, a whole HTTP/1.1 request, and reads its answer to the end; it returns the
// answer's status and Retry-After.
func (c *floodConn) do(req []byte) (status int, retryAfter string, err error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 30*time.Second)
		if err != nil {
			return 0, "", err
		}
		c.conn = conn
		if c.r == nil {
			c.r = bufio.NewReaderSize(conn, 4096)
		} else {
			c.r.Reset(conn)
		}
	}
	if _, err := c.conn.Write(req); err != nil {
		c.close()
		return 0, "", err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.close()
		return 0, "", err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		c.close()
		return 0, "", err
	}
	if resp.Close {
		c.close()
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

func (c *floodConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// raiseOpenFileLimit raises this process's soft limit of open files to at least n (up to the hard
// limit); the mgmtapi child inherits it.
func raiseOpenFileLimit(n int) error {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return err
	}
	if limit.Cur >= uint64(n) {
		return nil
	}
	if limit.Max < uint64(n) {
		return fmt.Errorf("-flood-connections: needs %d open files, and the hard limit is %d (raise it: ulimit -Hn)", n, limit.Max)
	}
	limit.Cur = uint64(n)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return fmt.Errorf("raise the open-file limit to %d: %w", n, err)
	}
	return nil
}

// histogram is a cumulative Prometheus histogram: the count at or below each bound, in the order
// of the bounds.
type histogram struct {
	bounds []string
	counts []float64
}

func (h histogram) minus(o histogram) histogram {
	out := histogram{bounds: h.bounds, counts: slices.Clone(h.counts)}
	for i := range out.counts {
		if i < len(o.counts) {
			out.counts[i] -= o.counts[i]
		}
	}
	return out
}

// quantile returns the bound of the first bucket holding the q-quantile, or "-" when empty.
func (h histogram) quantile(q float64) string {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return "-"
	}
	total := h.counts[len(h.counts)-1]
	for i, c := range h.counts {
		if c >= q*total {
			if h.bounds[i] == "+Inf" {
				return "+Inf"
			}
			seconds, _ := strconv.ParseFloat(h.bounds[i], 64)
			return time.Duration(seconds * float64(time.Second)).String()
		}
	}
	return "+Inf"
}

// serverTimes are the server's request-duration histograms summed over the operations
// (admitted: routed to an operation) and over the requests refused before routing (operation
// "none", which the probes and /metrics share: the flood sends none while it runs, but the
// scrape read before it is counted in the one read after), and the time its
// goroutines waited, runnable, for a thread (go_sched_latencies_seconds, coarse buckets).
type serverTimes struct {
	admitted, refused, sched histogram
	gomaxprocs               string
}

// serverLatencies reads the server's request-duration histograms from its /metrics.
func serverLatencies(ctx context.Context, baseURL string) (serverTimes, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", baseURL+"/metrics", nil)
	if err != nil {
		return serverTimes{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return serverTimes{}, fmt.Errorf("/metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return serverTimes{}, err
	}
	var t serverTimes
	add := func(h *histogram, bound string, count float64) {
		i := slices.Index(h.bounds, bound)
		if i < 0 {
			h.bounds = append(h.bounds, bound)
			h.counts = append(h.counts, 0)
			i = len(h.bounds) - 1
		}
		h.counts[i] += count
	}
	const prefix = "mgmtapi_request_duration_seconds_bucket{"
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "go_sched_gomaxprocs_threads "); ok {
			t.gomaxprocs = rest
			continue
		}
		if rest, ok := strings.CutPrefix(line, `go_sched_latencies_seconds_bucket{le="`); ok {
			bound, value, _ := strings.Cut(rest, `"} `)
			if count, err := strconv.ParseFloat(value, 64); err == nil {
				add(&t.sched, bound, count)
			}
			continue
		}
		labels, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(labels, "} ")
		count, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		_, bound, _ := strings.Cut(labels, `le="`)
		bound = strings.TrimSuffix(bound, `"`)
		if strings.Contains(labels, `operation="none"`) {
			add(&t.refused, bound, count)
		} else {
			add(&t.admitted, bound, count)
		}
	}
	return t, nil
}

// slotHolders are connections each holding one of the server's slots with a create whose body
// never comes (the server reads it in the handler, after admission, and waits up to its read
// timeout of 60 s).
type slotHolders struct {
	baseURL string
	conns   []net.Conn
}

// holdSlots takes every slot of the server at baseURL — MGMTAPI_MAX_CONCURRENT_REQUESTS of this
// process's environment, which the server inherits, or its default of 64 — and waits until its
// /metrics says they are taken.
func holdSlots(ctx context.Context, baseURL, key string) (*slotHolders, error) {
	slots := 64
	if v, ok := os.LookupEnv("MGMTAPI_MAX_CONCURRENT_REQUESTS"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-flood-refusals-only: MGMTAPI_MAX_CONCURRENT_REQUESTS=%q is not a number of slots", v)
		}
		slots = n
	}
	addr := strings.TrimPrefix(baseURL, "http://")
	head := []byte("POST " + recordingRuleSetsPath + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	h := &slotHolders{baseURL: baseURL}
	for range slots {
		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			h.release()
			return nil, fmt.Errorf("-flood-refusals-only: %w", err)
		}
		h.conns = append(h.conns, conn)
		if _, err := conn.Write(head); err != nil {
			h.release()
			return nil, fmt.Errorf("-flood-refusals-only: %w", err)
		}
	}
	if err := waitForAdmitted(ctx, baseURL, slots); err != nil {
		h.release()
		return nil, err
	}
	return h, nil
}

// release closes the holding connections and waits until the server has freed their slots; it
// may be called again.
func (h *slotHolders) release() error {
	if len(h.conns) == 0 {
		return nil
	}
	for _, conn := range h.conns {
		conn.Close()
	}
	h.conns = nil
	return waitForAdmitted(context.Background(), h.baseURL, 0)
}

// waitForAdmitted polls the server's mgmtapi_requests_admitted until it is n, for at most 30 s.
func waitForAdmitted(ctx context.Context, baseURL string, n int) error {
	last := -1.0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		v, ok := readGauge(ctx, baseURL, "mgmtapi_requests_admitted")
		if ok && int(v) == n {
			return nil
		}
		if ok {
			last = v
		}
	}
	return fmt.Errorf("-flood-refusals-only: the server's mgmtapi_requests_admitted is %v, not %d, after 30 s", last, n)
}

// admissionLimits reads the server's admission bound (mgmtapi_requests_admission_limit) every
// admissionLimitEvery while the flood runs: how low an adaptive bound went, and where it stayed.
type admissionLimits struct {
	done   chan struct{}
	wg     sync.WaitGroup
	values []int
}

const admissionLimitEvery = 500 * time.Millisecond

func (l *admissionLimits) start(ctx context.Context, baseURL string) {
	l.done = make(chan struct{})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(admissionLimitEvery)
		defer tick.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if v, ok := readGauge(ctx, baseURL, "mgmtapi_requests_admission_limit"); ok {
				l.values = append(l.values, int(v))
			}
		}
	}()
}

func (l *admissionLimits) stop() {
	if l.done != nil {
		close(l.done)
		l.wg.Wait()
	}
}

// String gives the lowest, the median and the highest bound read, or "not read".
func (l *admissionLimits) String() string {
	if len(l.values) == 0 {
		return "not read"
	}
	sorted := slices.Sorted(slices.Values(l.values))
	return fmt.Sprintf("min %d, median %d, max %d over %d reads", sorted[0], sorted[len(sorted)/2], sorted[len(sorted)-1], len(sorted))
}

// readGauge reads one unlabelled series of the server's /metrics.
func readGauge(ctx context.Context, baseURL, name string) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", baseURL+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			return v, err == nil
		}
	}
	return 0, false
}
