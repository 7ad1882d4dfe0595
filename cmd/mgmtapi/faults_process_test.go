package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFaultsSIGSTOP stops the server process with SIGSTOP for 10 s under load (8 writers and a
// reader, each client giving up after 3 s), then continues it with SIGCONT, on both engines. The
// server answers only 2xx (or 503 with Retry-After) before, during and after; the requests the
// clients gave up on while it was stopped are counted apart (no server answered them); a write
// succeeds and /readyz is ready within 10 s of SIGCONT; every acknowledged write is read back.
func TestFaultsSIGSTOP(t *testing.T) {
	requireFaults(t)
	engines(t, func(t *testing.T, database []string) {
		logs := filepath.Join(t.TempDir(), "server.log")
		srv := startServer(t, logs, database)
		load := startFaultLoad(t, srv.base, 8, faultContract{refusals: []int{http.StatusServiceUnavailable}, timeoutsAllowed: true}, 3*time.Second)
		defer load.finish()
		time.Sleep(2 * time.Second)
		before, _ := load.snapshot()
		if err := srv.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		if err := srv.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		continued := time.Now()
		during, _ := load.snapshot()
		first, readyAfter := load.recovered(t, srv, logs, continued, "SIGCONT")
		t.Logf("stopped 10 s: answers and errors meanwhile: %v; first write acknowledged %s after SIGCONT, /readyz 200 after %s",
			countsSince(before, during), first.Round(time.Millisecond), readyAfter.Round(time.Millisecond))
		load.check(t, "SIGSTOP for 10 s, then SIGCONT")
		t.Logf("%s; metrics:\n%s", logSummary(logs), metricLines(srv.base, "mgmtapi_database_", `status="5`, `status="4`))
		// The requests the clients gave up on are the clients' leaving (499), not failures of the
		// server: no 500 is counted and no ERROR is logged for them.
		if lines := metricLines(srv.base, `status="500"`); lines != "" {
			t.Errorf("requests counted as 500 after the stop:\n%s", lines)
		}
		if n := logMentions(logs, "level=ERROR"); n > 0 {
			t.Errorf("%d ERROR lines in the server log after the stop; %s", n, logSummary(logs))
		}
		verifyAcknowledged(t, srv, load.acks, logs)
		load.verifyAlerts(t, srv.base)
	})
}

// heldConnections is how many idle keep-alive connections the descriptor test holds, at a limit
// of 256 descriptors.
const heldConnections = 600

// TestFaultsDescriptorExhaustion runs the server under prlimit --nofile=256:256 on both engines,
// opens 600 keep-alive connections that each make one request and stay open, idle, and then has a
// fresh client read a set and create one: each gets an answer within 10 s — a 2xx or a 503 with
// Retry-After, never a 500 and never silence. Once the 600 are closed, reads and writes succeed.
func TestFaultsDescriptorExhaustion(t *testing.T) {
	requireFaults(t)
	prlimit := faultTool(t, "/usr/bin/prlimit", "apt-get install util-linux")
	engines(t, func(t *testing.T, database []string) {
		logs := filepath.Join(t.TempDir(), "server.log")
		srv := startServerUnder(t, logs, []string{prlimit, "--nofile=256:256", "--"}, database)
		client := &http.Client{Timeout: 10 * time.Second}
		seeded := acknowledged{name: "before the descriptors ran out", expr: "up"}
		id, err := createSet(client, srv.base, seeded)
		if err != nil {
			t.Fatal(err)
		}
		seeded.id = id
		client.CloseIdleConnections()

		held, outcomes := holdConnections(srv.base, heldConnections)
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		t.Logf("%d connections opened, each with one request (3 s to answer): %v", heldConnections, outcomes)
		if n := outcomes["500"]; n > 0 {
			t.Errorf("%d of the held connections' requests were answered 500", n)
		}

		// A fresh client, while the 600 are held.
		contract := faultContract{refusals: []int{http.StatusServiceUnavailable}, anyBody: true}
		fresh := func(method, path, body string) {
			t.Helper()
			began := time.Now()
			status, header, out, err := freshRequest(srv.base, method, path, body)
			took := time.Since(began).Round(time.Millisecond)
			if err != nil {
				t.Errorf("fresh %s %s with %d connections held: no answer after %s (%v)", method, path, heldConnections, took, err)
				return
			}
			label, ok := contract.judge(status, header, []byte(out))
			if !ok {
				t.Errorf("fresh %s %s with %d connections held: %d %s (Retry-After %q), want a 2xx or 503 with Retry-After",
					method, path, heldConnections, status, out, header.Get("Retry-After"))
			}
			t.Logf("fresh %s %s with %d connections held: %s after %s", method, path, heldConnections, label, took)
		}
		fresh(http.MethodGet, crashRulesPath+"/"+url.PathEscape(seeded.id), "")
		fresh(http.MethodPost, crashRulesPath, `{"name":"with the descriptors exhausted","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`)

		for _, c := range held {
			c.Close()
		}
		held = nil
		closed := time.Now()
		var acks []acknowledged
		for {
			a := acknowledged{name: "after the connections closed", expr: "up"}
			id, err := createSet(client, srv.base, a)
			if err == nil {
				a.id = id
				acks = append(acks, seeded, a)
				break
			}
			if time.Since(closed) > 10*time.Second {
				t.Fatalf("no write succeeded within 10 s of closing the held connections: %v\n%s", err, tail(logs))
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("service back %s after the held connections closed; %s, naming too many open files: %d; metrics:\n%s",
			time.Since(closed).Round(time.Millisecond), logSummary(logs), logMentions(logs, "too many open files"),
			metricLines(srv.base, "connections", `status="5`))
		srv.alive(t, logs)
		verifyAcknowledged(t, srv, acks, logs)
	})
}

// holdConnections opens n connections to base (100 at a time), each sending GET /healthz and
// waiting up to 3 s for its answer, and returns the ones still open (to be closed by the caller)
// with the count of each outcome: the status answered, or how the connection ended.
func holdConnections(base string, n int) ([]net.Conn, map[string]int) {
	addr := base[len("http://"):]
	var mu sync.Mutex
	var held []net.Conn
	outcomes := map[string]int{}
	slots := make(chan struct{}, 100)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			outcome, conn := oneRequestConnection(addr)
			mu.Lock()
			defer mu.Unlock()
			outcomes[outcome]++
			if conn != nil {
				held = append(held, conn)
			}
		}()
	}
	wg.Wait()
	return held, outcomes
}

// oneRequestConnection dials addr, makes one keep-alive request and returns what came of it, with
// the connection when it is still open.
func oneRequestConnection(addr string) (string, net.Conn) {
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "dial: " + transportLabel(err), nil
	}
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: faults\r\n\r\n"); err != nil {
		conn.Close()
		return "write: " + transportLabel(err), nil
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		label := transportLabel(err)
		if label == "client timeout" {
			label = "no answer within 3 s"
		}
		// Held even so: a connection the server has not accepted yet still takes a place in
		// its queue.
		_ = conn.SetDeadline(time.Time{})
		return label, conn
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_ = conn.SetDeadline(time.Time{})
	outcome := strconv.Itoa(res.StatusCode)
	if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" {
		outcome += " with Retry-After"
	}
	if res.Close {
		conn.Close()
		return outcome + ", then closed", nil
	}
	return outcome, conn
}

// freshRequest sends one request with the bootstrap key on a new connection, with a 10 s
// timeout, and reads the whole answer.
func freshRequest(base, method, path, body string) (int, http.Header, string, error) {
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 10 * time.Second, Transport: transport}
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, reader)
	req.Header.Set("Authorization", "Bearer "+crashKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(out), err
}
