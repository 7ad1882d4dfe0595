package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startCappedServer serves h through LimitConnections (cap maxConns) and RefusalListener, as
// main does, over TLS when tlsConfig is set; it returns the address and the limiter.
func startCappedServer(t *testing.T, h *Handler, maxConns int, tlsConfig *tls.Config) (string, *connLimiter) {
	t.Helper()
	srv := &http.Server{Handler: h, TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := h.LimitConnections(l, srv, maxConns)
	served := RefusalListener(limited, srv)
	go func() {
		if tlsConfig != nil {
			_ = srv.ServeTLS(served, "", "")
			return
		}
		_ = srv.Serve(served)
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String(), limited.(*connLimiter)
}

// keptConn is a client's keep-alive connection.
type keptConn struct {
	net.Conn
	r *bufio.Reader
}

func dialKept(t *testing.T, addr string) *keptConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // keeps a broken server from hanging the test
	t.Cleanup(func() { c.Close() })
	return &keptConn{Conn: c, r: bufio.NewReader(c)}
}

// send writes a keep-alive request for path.
func (c *keptConn) send(t *testing.T, path string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads one answer and its body.
func (c *keptConn) answer(t *testing.T, what string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", what, err)
	}
	return res, body
}

// closedByServer reports whether the server closed c (it has nothing more to read).
func (c *keptConn) closedByServer() bool {
	_, err := c.r.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func (l *connLimiter) counts() (open, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := l.idle.next; c != &l.idle; c = c.next {
		idle++
	}
	return l.open, idle
}

// checkMetrics fails unless /metrics holds every line.
func checkMetrics(t *testing.T, h *Handler, lines ...string) {
	t.Helper()
	metrics := serve(h, "GET", "/metrics", nil).Body.String()
	for _, line := range lines {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// TestConnectionCapClosesTheLongestIdleFirst: at a cap of 4 held by idle keep-alive connections,
// each new connection closes the one idle the longest and is served; the gauge ends at 0.
func TestConnectionCapClosesTheLongestIdleFirst(t *testing.T) {
	h := testHandler(newBlockingAPI(), Options{})
	addr, limiter := startCappedServer(t, h, 4, nil)
	var kept []*keptConn
	for i := range 4 {
		c := dialKept(t, addr)
		c.send(t, "/healthz")
		if res, _ := c.answer(t, "kept connection"); res.StatusCode != http.StatusOK {
			t.Fatalf("kept connection %d: %d", i, res.StatusCode)
		}
		// Idle in this order: the first is the longest idle.
		waitFor(t, "idle", func() bool { _, idle := limiter.counts(); return idle == i+1 })
		kept = append(kept, c)
	}
	for i := range 2 {
		c := dialKept(t, addr)
		c.send(t, "/healthz")
		if res, _ := c.answer(t, "new connection"); res.StatusCode != http.StatusOK {
			t.Fatalf("new connection %d: %d", i, res.StatusCode)
		}
		if !kept[i].closedByServer() {
			t.Fatalf("the connection idle the longest (%d) is still open", i)
		}
		// c stays open (idle after the kept ones): closing it would leave room under the cap.
		kept = append(kept, c)
	}
	// The ones not closed are still served.
	for i := 2; i < 6; i++ {
		kept[i].send(t, "/healthz")
		if res, _ := kept[i].answer(t, "kept connection"); res.StatusCode != http.StatusOK {
			t.Fatalf("kept connection %d: %d", i, res.StatusCode)
		}
	}
	checkMetrics(t, h, "mgmtapi_connections_idle_closed_total 2", "mgmtapi_connections_max 4",
		`mgmtapi_connections_refused_total{answer="503"} 0`)
	for _, c := range kept {
		c.Close()
	}
	waitFor(t, "all closed", func() bool { open, _ := limiter.counts(); return open == 0 })
	checkMetrics(t, h, "mgmtapi_connections_open 0")
}

// TestConnectionCapRefusesWhenNoneIsIdle: at a cap of 4 held by requests in the handler, a new
// connection reads a 503 with the Error body, Retry-After: 1 and Connection: close; the held
// requests are answered, and the gauge ends at 0.
func TestConnectionCapRefusesWhenNoneIsIdle(t *testing.T) {
	api := newBlockingAPI()
	h := testHandler(api, Options{})
	addr, limiter := startCappedServer(t, h, 4, nil)
	var busy []*keptConn
	for range 4 {
		c := dialKept(t, addr)
		c.send(t, "/mgmt/openapi/5/held")
		<-api.entered
		busy = append(busy, c)
	}
	checkMetrics(t, h, "mgmtapi_connections_open 4")
	for round := range 3 {
		c := dialKept(t, addr)
		c.send(t, "/healthz")
		res, body := c.answer(t, "refused connection")
		checkErrorAnswer(t, "refused connection", res.StatusCode, body, http.StatusServiceUnavailable)
		if res.Header.Get("Retry-After") != "1" || !res.Close || !strings.Contains(string(body), "(4)") {
			t.Fatalf("round %d: Retry-After %q, close %v, %s", round, res.Header.Get("Retry-After"), res.Close, body)
		}
		if !c.closedByServer() {
			t.Fatalf("round %d: the refused connection is still open", round)
		}
	}
	checkMetrics(t, h, `mgmtapi_connections_refused_total{answer="503"} 3`, "mgmtapi_connections_idle_closed_total 0")
	close(api.release)
	for _, c := range busy {
		if res, _ := c.answer(t, "held request"); res.StatusCode != http.StatusNoContent {
			t.Fatalf("held request: %d", res.StatusCode)
		}
		c.Close()
	}
	waitFor(t, "all closed", func() bool { open, _ := limiter.counts(); return open == 0 })
	checkMetrics(t, h, "mgmtapi_connections_open 0")
}

// TestConnectionCapRefusesOverTLS: on a TLS port the refusal is the same answer, inside TLS.
func TestConnectionCapRefusesOverTLS(t *testing.T) {
	api := newBlockingAPI()
	h := testHandler(api, Options{})
	cert := selfSignedCertificate(t)
	addr, _ := startCappedServer(t, h, 1, &tls.Config{Certificates: []tls.Certificate{cert}})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	defer client.CloseIdleConnections()
	held := make(chan error, 1)
	go func() {
		res, err := client.Get("https://" + addr + "/mgmt/openapi/5/held")
		if err == nil {
			res.Body.Close()
		}
		held <- err
	}()
	<-api.entered
	other := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	res, err := other.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	checkErrorAnswer(t, "refused TLS connection", res.StatusCode, body, http.StatusServiceUnavailable)
	if res.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	close(api.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}

// TestDerivedMaxConnections: the reserve is max(64, limit/4), the cap at least 16, none for an
// unlimited descriptor limit.
func TestDerivedMaxConnections(t *testing.T) {
	for _, c := range []struct {
		descriptors uint64
		want        int
	}{{256, 192}, {1024, 768}, {4096, 3072}, {100, 36}, {64, 16}, {1 << 20, 786432}, {^uint64(0), 0}} {
		if got := maxConnectionsFor(c.descriptors); got != c.want {
			t.Errorf("maxConnectionsFor(%d) = %d, want %d", c.descriptors, got, c.want)
		}
	}
	if n, err := DerivedMaxConnections(); err != nil || n < minMaxConnections && n != 0 {
		t.Fatalf("DerivedMaxConnections() = %d, %v", n, err)
	}
}

// BenchmarkConnectionCap measures what LimitConnections adds to a request over a keep-alive
// connection (two ConnState transitions, each a lock and a ring update) and to one connection
// per request (the count at accept and close): RefusalListener alone, then under the cap.
func BenchmarkConnectionCap(b *testing.B) {
	for _, capped := range []bool{false, true} {
		for _, keepAlive := range []bool{true, false} {
			b.Run(fmt.Sprintf("capped=%v/keep-alive=%v", capped, keepAlive), func(b *testing.B) {
				h := testHandler(newBlockingAPI(), Options{})
				srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				var served net.Listener = l
				if capped {
					served = h.LimitConnections(l, srv, 1000)
				}
				served = RefusalListener(served, srv)
				go func() { _ = srv.Serve(served) }()
				defer srv.Close()
				request := "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
				if !keepAlive {
					request = "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
				}
				benchmarkRawRequests(b, l.Addr().String(), request, keepAlive)
			})
		}
	}
}
