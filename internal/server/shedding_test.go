package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// errorBody is the {code, message} body the tests' WriteError writes, as the API's does.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeErrorBody(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{status, message})
}

// testHandler returns New's handler over api with opts' shedding settings.
func testHandler(api http.Handler, opts Options) *Handler {
	opts.API = api
	opts.WriteError = writeErrorBody
	opts.Ready = func(context.Context) error { return nil }
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(opts)
}

// blockingAPI holds every request until release is closed; entered receives one value per
// request that reached it.
type blockingAPI struct {
	entered chan string
	release chan struct{}
}

func newBlockingAPI() *blockingAPI {
	return &blockingAPI{entered: make(chan string, 100), release: make(chan struct{})}
}

func (b *blockingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.entered <- r.URL.Path
	<-b.release
	w.WriteHeader(http.StatusNoContent)
}

func serve(h http.Handler, method, path string, body io.Reader) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, body))
	return rec
}

// refused checks that rec is a 503 with Retry-After and the Error body whose message holds want.
func refused(t *testing.T, what string, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	var body errorBody
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != status || body.Code != status || !strings.Contains(body.Message, want) || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%s: %d Retry-After %q %s; want %d with Retry-After and a message holding %q",
			what, rec.Code, rec.Header().Get("Retry-After"), rec.Body.String(), status, want)
	}
}

// waitFor polls cond (the state of other goroutines) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s", what)
		}
	}
}

// TestSheddingBoundsTheRequestsInTheHandler: with 2 slots and a queue of 1, two requests are in
// the handler, a third waits and gets the first slot freed, a fourth is refused at once with 503,
// Retry-After and the Error body; the probes and /metrics are answered all along, and the
// metric counts the refusal.
func TestSheddingBoundsTheRequestsInTheHandler(t *testing.T) {
	api := newBlockingAPI()
	h := testHandler(api, Options{MaxConcurrent: 2, QueueLength: 1, QueueWait: time.Hour})
	var wg sync.WaitGroup
	answers := make(chan int, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- serve(h, "GET", fmt.Sprintf("/mgmt/openapi/5/x/%d", i), nil).Code
		}()
		if i < 2 {
			<-api.entered
		}
	}
	waitFor(t, "queued", func() bool { return h.admission.queued.Load() == 1 })

	refused(t, "fourth request", serve(h, "GET", "/mgmt/openapi/5/x/4", nil), 503, "retry later")
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
		if rec := serve(h, "GET", path, nil); rec.Code != 200 {
			t.Fatalf("%s while the API is full: %d", path, rec.Code)
		}
	}
	metrics := serve(h, "GET", "/metrics", nil).Body.String()
	for _, line := range []string{`mgmtapi_requests_shed_total{reason="concurrency"} 1`, "mgmtapi_requests_admitted 2", "mgmtapi_requests_queued 1"} {
		if !strings.Contains(metrics, line+"\n") {
			t.Fatalf("/metrics lacks %q", line)
		}
	}

	close(api.release)
	wg.Wait()
	close(answers)
	for code := range answers {
		if code != http.StatusNoContent {
			t.Fatalf("an admitted or queued request got %d", code)
		}
	}
	if h.admission.admitted() != 0 || h.admission.queued.Load() != 0 {
		t.Fatalf("after: %d in the handler, %d queued", h.admission.admitted(), h.admission.queued.Load())
	}
}

// TestSheddingQueueWaitEnds: a request that waits its whole turn in the queue is refused; with
// a queue of 0 it is refused without waiting.
func TestSheddingQueueWaitEnds(t *testing.T) {
	for _, queue := range []int{0, 1} {
		api := newBlockingAPI()
		h := testHandler(api, Options{MaxConcurrent: 1, QueueLength: queue, QueueWait: time.Millisecond})
		done := make(chan int)
		go func() { done <- serve(h, "GET", "/mgmt/openapi/5/x", nil).Code }()
		<-api.entered
		refused(t, fmt.Sprintf("queue %d", queue), serve(h, "GET", "/mgmt/openapi/5/y", nil), 503, "retry later")
		close(api.release)
		if code := <-done; code != http.StatusNoContent {
			t.Fatalf("the admitted request: %d", code)
		}
	}
}

// bodyReadingAPI reads the whole body, answering 400 when that fails (as the API does), and
// blocks until release is closed when the body has holdLength bytes.
type bodyReadingAPI struct {
	entered    chan int
	release    chan struct{}
	holdLength int
}

func (b *bodyReadingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeErrorBody(w, http.StatusBadRequest, "body: could not be read")
		b.entered <- -1
		return
	}
	b.entered <- len(body)
	if len(body) == b.holdLength {
		<-b.release
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestDecodeBudget: with a budget of 100 bytes, a request declaring 80 holds them while it is
// answered; one declaring 30 meanwhile is refused with 503 and Retry-After before the API sees
// it; a chunked body is refused as soon as its bytes read pass the budget, the API's own answer
// dropped. Once the first is answered the budget is whole again and the second fits.
func TestDecodeBudget(t *testing.T) {
	api := &bodyReadingAPI{entered: make(chan int, 10), release: make(chan struct{}), holdLength: 80}
	h := testHandler(api, Options{DecodeBudgetBytes: 100})
	done := make(chan int)
	go func() { done <- serve(h, "POST", "/mgmt/openapi/5/x", strings.NewReader(strings.Repeat("a", 80))).Code }()
	if n := <-api.entered; n != 80 {
		t.Fatalf("the first body: %d bytes read", n)
	}
	refused(t, "declared 30", serve(h, "POST", "/mgmt/openapi/5/x", strings.NewReader(strings.Repeat("b", 30))), 503, "budget")
	select {
	case n := <-api.entered:
		t.Fatalf("the API saw the refused request (%d bytes)", n)
	default:
	}

	chunked := httptest.NewRequest("POST", "/mgmt/openapi/5/x", io.MultiReader(strings.NewReader(strings.Repeat("c", 50))))
	chunked.ContentLength = -1
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, chunked)
	refused(t, "chunked 50", rec, 503, "budget")
	if n := <-api.entered; n != -1 {
		t.Fatalf("the API read %d bytes of the chunked body past the budget", n)
	}
	if rec.Header().Get("Connection") != "close" {
		t.Fatalf("the chunked refusal does not close the connection")
	}
	metrics := serve(h, "GET", "/metrics", nil).Body.String()
	if !strings.Contains(metrics, `mgmtapi_requests_shed_total{reason="decode_budget"} 2`+"\n") ||
		!strings.Contains(metrics, "mgmtapi_decode_budget_bytes_in_use 80\n") {
		t.Fatalf("/metrics:\n%s", metrics)
	}

	close(api.release)
	if code := <-done; code != http.StatusNoContent {
		t.Fatalf("the first request: %d", code)
	}
	if used := h.budget.inUse(); used != 0 {
		t.Fatalf("after every answer the budget holds %d bytes", used)
	}
	if rec := serve(h, "POST", "/mgmt/openapi/5/x", strings.NewReader(strings.Repeat("b", 30))); rec.Code != http.StatusNoContent {
		t.Fatalf("declared 30 once the budget is free: %d %s", rec.Code, rec.Body)
	}
	if n := <-api.entered; n != 30 {
		t.Fatalf("declared 30: %d bytes read", n)
	}
}

// TestDecodeBudgetLetsALoneLargeBodyThrough: a body larger than the whole budget is still served
// when nothing else holds any of it.
func TestDecodeBudgetLetsALoneLargeBodyThrough(t *testing.T) {
	api := &bodyReadingAPI{entered: make(chan int, 1)}
	h := testHandler(api, Options{DecodeBudgetBytes: 10})
	if rec := serve(h, "POST", "/mgmt/openapi/5/x", strings.NewReader(strings.Repeat("a", 50))); rec.Code != http.StatusNoContent {
		t.Fatalf("a lone body of 50 over a budget of 10: %d %s", rec.Code, rec.Body)
	}
}

// TestKeyRateLimit: a key gets its burst, then 429 with Retry-After and the Error body naming the
// limit; another key is not affected; a second later (on the limiter's clock) the key has a token
// again.
func TestKeyRateLimit(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization")
		SetKeyID(r.Context(), key)
		if err := LimitKey(r.Context(), key); err != nil {
			writeErrorBody(w, http.StatusTooManyRequests, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	h := testHandler(api, Options{KeyRate: 1, KeyBurst: 2})
	now := time.Unix(1000, 0)
	h.limiter.now = func() time.Time { return now }
	call := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/mgmt/openapi/5/x", nil)
		req.Header.Set("Authorization", key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i := range 2 {
		if rec := call("k1"); rec.Code != http.StatusNoContent {
			t.Fatalf("k1's request %d of its burst: %d", i+1, rec.Code)
		}
	}
	rec := call("k1")
	refused(t, "k1 past its burst", rec, 429, "more than 1 requests per second (burst 2)")
	if rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", rec.Header().Get("Retry-After"))
	}
	if rec := call("k2"); rec.Code != http.StatusNoContent {
		t.Fatalf("k2: %d", rec.Code)
	}
	now = now.Add(time.Second)
	if rec := call("k1"); rec.Code != http.StatusNoContent {
		t.Fatalf("k1 a second later: %d", rec.Code)
	}
	if !strings.Contains(serve(h, "GET", "/metrics", nil).Body.String(), "mgmtapi_requests_rate_limited_total 1\n") {
		t.Fatal("/metrics does not count the limited request")
	}
}

// TestKeyRateLimitOff: without a rate, LimitKey never refuses; outside a request it does
// nothing.
func TestKeyRateLimitOff(t *testing.T) {
	var errs []error
	h := testHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs = append(errs, LimitKey(r.Context(), "k1"))
	}), Options{})
	for range 1000 {
		serve(h, "GET", "/mgmt/openapi/5/x", nil)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := LimitKey(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
}

// TestKeyLimiterForgetsFullBuckets: the buckets of keys not seen for long are dropped, so the
// map does not keep every key ever seen.
func TestKeyLimiterForgetsFullBuckets(t *testing.T) {
	l := newKeyLimiter(10, 5)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for i := range 5000 {
		l.take(fmt.Sprint("old-", i))
	}
	now = now.Add(time.Hour)
	for i := range 5000 {
		l.take(fmt.Sprint("new-", i))
	}
	if n := len(l.buckets); n > 8192 {
		t.Fatalf("%d buckets kept for 10000 keys", n)
	}
	for key := range l.buckets {
		if strings.HasPrefix(key, "old-") {
			t.Fatalf("the bucket of %s, full for an hour, is still kept", key)
		}
	}
}

// TestBodyNotReceivedInTimeIs408: a body trickled past the server's read timeout is answered
// 408 with the Error body and Connection: close — declared length or chunked — where the API,
// whose read fails, would have answered 400.
func TestBodyNotReceivedInTimeIs408(t *testing.T) {
	api := &bodyReadingAPI{entered: make(chan int, 10)}
	srv := httptest.NewUnstartedServer(testHandler(api, Options{}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	for _, chunked := range []bool{false, true} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		head := "POST /mgmt/openapi/5/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
		piece := "a"
		if chunked {
			head = strings.Replace(head, "Content-Length: 100", "Transfer-Encoding: chunked", 1)
			piece = "1\r\na\r\n"
		}
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		// Trickle until the server answers (it stops reading once its deadline passed).
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Errorf("chunked %v: no answer: %v", chunked, err)
				close(answered)
				return
			}
			answered <- resp
		}()
		var resp *http.Response
	trickle:
		for {
			select {
			case resp = <-answered:
				break trickle
			case <-time.After(50 * time.Millisecond):
				_, _ = io.WriteString(conn, piece)
			}
		}
		if resp == nil {
			t.FailNow()
		}
		body, _ := io.ReadAll(resp.Body)
		var e errorBody
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != http.StatusRequestTimeout || e.Code != 408 || !strings.Contains(e.Message, "read timeout") ||
			!resp.Close {
			t.Fatalf("chunked %v: %d close=%v %s", chunked, resp.StatusCode, resp.Close, body)
		}
		conn.Close()
	}
}

// TestShedRequestsGetNoLogLineEach: a refused request gets no access-log line of its own (under
// a flood, one line per refusal would cost more than refusing); a WARN line counts them.
func TestShedRequestsGetNoLogLineEach(t *testing.T) {
	var logs lockedLog
	api := newBlockingAPI()
	h := New(Options{
		API: api, WriteError: writeErrorBody, Ready: func(context.Context) error { return nil },
		MaxBodyBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		MaxConcurrent: 1,
	})
	done := make(chan int)
	go func() { done <- serve(h, "GET", "/mgmt/openapi/5/x", nil).Code }()
	<-api.entered
	for range 5 {
		refused(t, "while full", serve(h, "GET", "/mgmt/openapi/5/y", nil), 503, "retry later")
	}
	close(api.release)
	<-done
	text := logs.String()
	if strings.Contains(text, "status=503") || !strings.Contains(text, `level=WARN msg="shedding load`) ||
		!strings.Contains(text, "refused=1 ") {
		t.Fatalf("log:\n%s", text)
	}
}

type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// BenchmarkShedRefusal is the root middleware's cost of a request refused by admission (every
// slot taken, no queue), net/http's reading and writing apart: the part of a refusal's CPU this
// package decides.
func BenchmarkShedRefusal(b *testing.B) {
	api := newBlockingAPI()
	h := testHandler(api, Options{MaxConcurrent: 1, QueueLength: 0, QueueWait: 0})
	done := make(chan struct{})
	go func() {
		serve(h, "GET", "/mgmt/openapi/5/x", nil)
		close(done)
	}()
	<-api.entered
	req := httptest.NewRequest("GET", "/mgmt/openapi/5/y", nil)
	w := &discardingWriter{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clear(w.header)
		h.ServeHTTP(w, req)
		if w.status != http.StatusServiceUnavailable {
			b.Fatalf("status %d", w.status)
		}
	}
	b.StopTimer()
	close(api.release)
	<-done
}

// discardingWriter is a ResponseWriter that keeps the status and the header only.
type discardingWriter struct {
	header http.Header
	status int
}

func (w *discardingWriter) Header() http.Header         { return w.header }
func (w *discardingWriter) WriteHeader(status int)      { w.status = status }
func (w *discardingWriter) Write(b []byte) (int, error) { return len(b), nil }
