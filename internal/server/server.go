// Package server is the HTTP side of the process: the routes that need no key (/healthz,
// /readyz, /metrics, /openapi.json, /openapi.yaml, and the reference page at /docs when given),
// and the middleware every request crosses — request id, access log line (all, errors or none;
// probes and scrapes at DEBUG), panic recovery, body limit, metrics, load shedding (a bound on
// the API requests in the handler, with a short queue: shedding.go), the decode budget
// (budget.go), the per-key rate limit (ratelimit.go), 408 for a body not received in time
// (bodyguard.go) and, once shutdown begins, draining (/readyz 503, Connection: close).
package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/foreground"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure the handler returned by New.
type Options struct {
	// API serves every operation; WriteError writes an Error body for failures outside it. The API
	// names the operation of each request it routes with SetOperation, for metrics and logs.
	API        http.Handler
	WriteError func(w http.ResponseWriter, status int, message string)
	// Ready reports whether writes can succeed now. /readyz answers 503 "not ready: " and the
	// error's PublicReason() (a method of the error, when it has one; "database: does not answer"
	// otherwise); the whole error goes to the log.
	Ready func(ctx context.Context) error
	// DBStats gives the connection-pool figures for /metrics.
	DBStats func() sql.DBStats
	// OpenAPIJSON and OpenAPIYAML are served as they are.
	OpenAPIJSON, OpenAPIYAML []byte
	MaxBodyBytes             int64
	Logger                   *slog.Logger
	// AccessLog chooses the requests that get an INFO "request" line; AccessLogErrors when empty.
	// The probes (/healthz, /readyz) and /metrics scrapes get theirs at DEBUG unless it is none.
	AccessLog AccessLog
	// Docs, when set, serves the API reference page: GET /, GET /docs and GET /docs/... go to it.
	Docs http.Handler

	// MaxConcurrent bounds the API requests in the handler at once (0: no bound). A request
	// finding every slot taken waits for one at most QueueWait, behind at most QueueLength others;
	// otherwise it is answered 503 with Retry-After at once (see shedding.go).
	MaxConcurrent int
	QueueLength   int
	QueueWait     time.Duration
	// ConcurrencyTarget, when above 0, makes the bound adaptive: between MinConcurrent (0: two per
	// GOMAXPROCS) and MaxConcurrent, lowered while requests are refused and the admitted ones take
	// longer than it in the handler (see shedding.go, admission).
	ConcurrencyTarget time.Duration
	MinConcurrent     int
	// DecodeBudgetBytes bounds the body bytes of API requests being read and decoded at once
	// (0: no budget); beyond it, 503 with Retry-After (see budget.go).
	DecodeBudgetBytes int64
	// KeyRate, when above 0, limits each API key to KeyRate requests per second with a burst of
	// KeyBurst; beyond it, 429 with Retry-After (see ratelimit.go, LimitKey).
	KeyRate  float64
	KeyBurst int
	// Collectors are more series for /metrics (the delivery worker's).
	Collectors []prometheus.Collector
	// TrustedProxies are the peers whose X-Forwarded-For header is believed (see ClientAddr);
	// empty, the client is always the connection's peer.
	TrustedProxies []netip.Prefix
}

// AccessLog chooses which answered requests are logged at INFO as a "request" line.
type AccessLog string

const (
	// AccessLogAll logs every request (probes and /metrics at DEBUG).
	AccessLogAll AccessLog = "all"
	// AccessLogErrors logs the requests answered with a status of 400 or more.
	AccessLogErrors AccessLog = "errors"
	// AccessLogNone logs no request line (failures inside still log their own WARN or ERROR).
	AccessLogNone AccessLog = "none"
)

// AccessLogModes lists the values of AccessLog, for flags and their errors.
var AccessLogModes = []AccessLog{AccessLogAll, AccessLogErrors, AccessLogNone}

// New returns the process's root handler.
func New(opts Options) *Handler {
	if opts.AccessLog == "" {
		opts.AccessLog = AccessLogErrors
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(opts.Collectors...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	h := &Handler{opts: opts, mux: mux,
		admission: newAdmission(opts.MaxConcurrent, opts.QueueLength, opts.QueueWait, opts.ConcurrencyTarget, opts.MinConcurrent),
		budget:    newDecodeBudget(opts.DecodeBudgetBytes),
		limiter:   newKeyLimiter(opts.KeyRate, opts.KeyBurst),
	}
	h.shedAnswer = newShedAnswer(opts.WriteError, opts.MaxConcurrent, opts.QueueLength)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if h.draining.Load() {
			opts.WriteError(w, http.StatusServiceUnavailable, "the server is shutting down")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := opts.Ready(ctx); err != nil {
			opts.Logger.WarnContext(r.Context(), "not ready", "error", err.Error())
			reason := "database: does not answer"
			if public, ok := err.(interface{ PublicReason() string }); ok {
				reason = public.PublicReason()
			}
			opts.WriteError(w, http.StatusServiceUnavailable, "not ready: "+reason)
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, opts.OpenAPIJSON)
	})
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(opts.OpenAPIYAML)
	})
	if opts.Docs != nil {
		mux.Handle("GET /{$}", opts.Docs)
		mux.Handle("GET /docs", opts.Docs)
		mux.Handle("GET /docs/", opts.Docs)
	}
	mux.Handle("/", opts.API)

	var prefix [8]byte
	_, _ = rand.Read(prefix[:])
	h.metrics, h.idPrefix = newMetrics(reg, opts.DBStats, h.admission, h.budget), hex.EncodeToString(prefix[:])
	return h
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Handler is the process's root handler, made by New.
type Handler struct {
	opts    Options
	mux     *http.ServeMux
	metrics *metrics
	// idPrefix and idCounter make the ids of requests that bring none: unique in the process,
	// different from one start to the next.
	idPrefix  string
	idCounter atomic.Uint32
	// draining is set once shutdown begins.
	draining atomic.Bool
	shedLog  shedLog
	// serving counts the API requests in the handler now (admitted or not yet decided).
	serving atomic.Int64
	// admission, budget and limiter are nil when not configured.
	admission *admission
	budget    *decodeBudget
	limiter   *keyLimiter
	// shedAnswer is the answer to a request refused by admission.
	shedAnswer *shedAnswer
}

// Drain tells the handler that shutdown has begun: from now on /readyz answers 503 and every
// answer carries Connection: close, so that load balancers stop sending and keep-alive clients
// open their next request elsewhere. It cannot be undone.
func (h *Handler) Drain() { h.draining.Store(true) }

// Serving reports whether an API request is in the handler now: background work that can wait
// (rendering notifications) steps aside while it does (notifyexpr.Paced).
func (h *Handler) Serving() bool { return h.serving.Load() > 0 }

// request is what the root middleware knows of a request, in its context.
type request struct {
	id          string
	operation   string
	keyID       string
	authFailure AuthFailure // why the request is refused, when it is (see SetAuthFailure)
	// shed is set when the request was refused by load shedding: it gets no log line of its own
	// (see shedLog).
	shed bool
	// handler, limiter and header (the answer's) serve LimitKey.
	handler *Handler
	limiter *keyLimiter
	header  http.Header
	// remoteAddr and forwardedFor (the X-Forwarded-For values, not copied) serve ClientAddr.
	remoteAddr   string
	forwardedFor []string
}

type requestKey struct{}

// exchange is the root middleware's state for one request, in one allocation: what it knows of
// the request (in the request's context), the recorder of the answer, and the X-Request-Id
// header's value.
type exchange struct {
	request
	statusRecorder
	idHeader [1]string
	// body is the request's body as the API reads it, nil when it has none; aborted is set when
	// the handler aborts the connection (http.ErrAbortHandler). Both serve lingerAfterAnswer.
	body    *guardedBody
	aborted bool
}

// RequestID returns the id of the request whose context this is, or "".
func RequestID(ctx context.Context) string {
	if req, ok := ctx.Value(requestKey{}).(*request); ok {
		return req.id
	}
	return ""
}

// SetKeyID records the id (never the value) of the API key that authenticated the request whose
// context this is, for its log line. Outside a request served by New's handler it does nothing.
func SetKeyID(ctx context.Context, keyID string) {
	if req, ok := ctx.Value(requestKey{}).(*request); ok {
		req.keyID = keyID
	}
}

// SetOperation names the operation that the request whose context this is routes to, for its
// metrics and log line. Outside a request served by New's handler it does nothing.
func SetOperation(ctx context.Context, operation string) {
	if req, ok := ctx.Value(requestKey{}).(*request); ok {
		req.operation = operation
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := &exchange{}
	defer h.lingerAfterAnswer(w, r, x) // runs last: after the answer is complete and every slot given back
	req, rec := &x.request, &x.statusRecorder
	req.handler, req.limiter, req.header = h, h.limiter, w.Header()
	req.remoteAddr, req.forwardedFor = r.RemoteAddr, r.Header["X-Forwarded-For"]
	req.id = r.Header.Get("X-Request-Id")
	if req.id == "" || len(req.id) > 128 {
		req.id = h.newRequestID()
	}
	ctx := context.WithValue(r.Context(), requestKey{}, req)
	r = r.WithContext(ctx)
	x.idHeader[0] = req.id
	w.Header()["X-Request-Id"] = x.idHeader[:] // as Header().Set does, without allocating the slice
	if h.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	rec.ResponseWriter = w

	h.metrics.inFlight.Inc()
	defer func() {
		h.metrics.inFlight.Dec()
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				x.aborted = true
				panic(p)
			}
			h.opts.Logger.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p))
			if rec.status == 0 {
				h.opts.WriteError(rec, http.StatusInternalServerError,
					"internal error; the server log has the details under this request's id")
			}
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		operation := req.operation
		if operation == "" {
			operation = "none"
		}
		elapsed := time.Since(start)
		h.metrics.observe(operation, status, elapsed)
		h.metrics.countAuthFailure(r, req, status)
		if req.shed {
			if n, due := h.shedLog.count(start); due {
				h.opts.Logger.WarnContext(ctx, "shedding load: requests refused with 503 since the last such line",
					"refused", n, "max_concurrent_requests", h.opts.MaxConcurrent, "queue_length", h.opts.QueueLength,
					"decode_budget_bytes", h.opts.DecodeBudgetBytes)
			}
			return
		}
		level := slog.LevelInfo
		if operation == "none" && isProbeOrScrape(r.URL.Path) {
			level = slog.LevelDebug
		}
		if h.opts.AccessLog == AccessLogAll || h.opts.AccessLog == AccessLogErrors && (status >= 400 || level == slog.LevelDebug) {
			h.logRequest(ctx, level, r, req, operation, status, rec.bytes, elapsed, rec.refusal)
		}
	}()

	if r.ContentLength > h.opts.MaxBodyBytes {
		x.body = &guardedBody{ReadCloser: r.Body, h: h, x: x} // never read: drained after the answer
		h.opts.WriteError(rec, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("body: larger than the limit of %d bytes", h.opts.MaxBodyBytes))
		return
	}
	if r.RequestURI == "*" { // net/http serves OPTIONS * itself; ServeMux answers the rest an empty 400
		h.opts.WriteError(rec, http.StatusBadRequest, "request line: the request target * is only for OPTIONS")
		return
	}
	api := r.Method != http.MethodConnect && isOperationPath(r.URL.EscapedPath())
	if api {
		h.serving.Add(1)
		defer h.serving.Add(-1)
		foreground.Enter() // the process's count, which its evaluation child reads
		defer foreground.Leave()
	}
	if api && h.admission != nil {
		entered, ok := h.admission.enter(ctx)
		if !ok {
			if r.Body != nil && r.Body != http.NoBody {
				x.body = &guardedBody{ReadCloser: r.Body, h: h, x: x} // never read: drained after the answer
			}
			h.refuseShed(rec, req)
			return
		}
		defer h.admission.leave(entered)
	}
	if r.Body != nil && r.Body != http.NoBody {
		body := &guardedBody{ReadCloser: r.Body, h: h, x: x}
		x.body = body
		if api && h.budget != nil {
			if r.ContentLength > 0 {
				if !h.budget.take(r.ContentLength) {
					req.shed = true
					h.metrics.shed.WithLabelValues(shedDecodeBudget).Inc()
					rec.Header().Set("Retry-After", retryAfter())
					h.opts.WriteError(rec, http.StatusServiceUnavailable, fmt.Sprintf(
						"body: the server is decoding %d bytes of other requests' bodies, its budget; retry later",
						h.budget.limit))
					return
				}
				defer h.budget.give(r.ContentLength)
			} else {
				body.budget = h.budget
				defer func() { h.budget.give(body.taken) }()
			}
		}
		r.Body = http.MaxBytesReader(rec, body, h.opts.MaxBodyBytes)
	}
	if api {
		h.opts.API.ServeHTTP(rec, r)
		return
	}
	h.mux.ServeHTTP(rec, r)
}

// logRequest writes a request's access log line. A request with no key id was not authenticated
// by a team key (a probe, a refused key, an operator request). A 4xx's line carries its reason:
// the message of its {code, message} body (refusal), which names the field and the rule.
func (h *Handler) logRequest(ctx context.Context, level slog.Level, r *http.Request, req *request, operation string,
	status int, bytes int64, elapsed time.Duration, refusal []byte) {
	if !h.opts.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("operation", operation), slog.Int("status", status),
		slog.Int64("bytes", bytes), slog.Duration("duration", elapsed),
		slog.String("client", r.RemoteAddr), slog.String("key_id", req.keyID)}
	if status >= 400 && status < 500 {
		if reason := refusalReason(refusal); reason != "" {
			attrs = append(attrs, slog.String("reason", reason))
		}
	}
	h.opts.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// isProbeOrScrape reports whether path is one of the routes that orchestrators and Prometheus
// call every few seconds.
func isProbeOrScrape(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// newRequestID returns 24 hex digits: the process's random prefix and a counter.
func (h *Handler) newRequestID() string {
	var b [24]byte
	copy(b[:16], h.idPrefix)
	n := h.idCounter.Add(1)
	const digits = "0123456789abcdef"
	for i := 23; i >= 16; i-- {
		b[i] = digits[n&0xf]
		n >>= 4
	}
	return string(b[:])
}

// isOperationPath reports whether the escaped path p is one the ServeMux would hand to the API as
// it is: under /mgmt/, /admin/, /config/ or /ingest/ and already clean as the mux cleans it (the
// mux redirects unclean paths, so those still go to it, as CONNECT requests do).
func isOperationPath(p string) bool {
	if !strings.HasPrefix(p, "/mgmt/") && !strings.HasPrefix(p, "/admin/") && !strings.HasPrefix(p, "/config/") &&
		!strings.HasPrefix(p, "/ingest/") {
		return false
	}
	clean := path.Clean(p)
	return clean == p || len(p) == len(clean)+1 && p[len(clean)] == '/' && p[:len(clean)] == clean
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	// answered is set once the server answered from inside a body read (bodyguard.go): what the
	// API writes after is dropped.
	answered bool
	// refusal is the start of a 4xx answer's body, whose message is the access log line's reason.
	refusal []byte
}

// maxRefusalBytes bounds what statusRecorder keeps of a 4xx body for the access log.
const maxRefusalBytes = 2048

func (s *statusRecorder) WriteHeader(code int) {
	if s.answered {
		return
	}
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.answered {
		return len(b), nil
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	if s.status >= 400 && s.status < 500 && len(s.refusal) < maxRefusalBytes {
		s.refusal = append(s.refusal, b[:min(n, maxRefusalBytes-len(s.refusal))]...)
	}
	return n, err
}

// maxReasonChars bounds the reason an access log line carries.
const maxReasonChars = 300

// refusalReason is the message of a refusal's {code, message} body, cut at maxReasonChars; "" when
// the body is not one.
func refusalReason(body []byte) string {
	var refusal struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &refusal) != nil {
		return ""
	}
	if r := []rune(refusal.Message); len(r) > maxReasonChars {
		return string(r[:maxReasonChars-1]) + "…"
	}
	return refusal.Message
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// LogHandler wraps a slog handler so that every record logged with a request's context carries
// that request's id.
func LogHandler(next slog.Handler) slog.Handler { return requestIDLog{next} }

type requestIDLog struct{ slog.Handler }

func (h requestIDLog) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h requestIDLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDLog{h.Handler.WithAttrs(attrs)}
}

func (h requestIDLog) WithGroup(name string) slog.Handler {
	return requestIDLog{h.Handler.WithGroup(name)}
}
