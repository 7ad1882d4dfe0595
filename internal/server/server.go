// Package server is the HTTP side of the process: the routes that need no key (/healthz,
// /readyz, /metrics, /openapi.json, /openapi.yaml), and the middleware every request crosses —
// request id, structured log line, panic recovery, body limit and metrics.
package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure the handler returned by New.
type Options struct {
	// API serves every operation; WriteError writes an Error body for failures outside it.
	API        http.Handler
	WriteError func(w http.ResponseWriter, status int, message string)
	// OperationName names the operation a request routes to ("" for none), for metrics and logs.
	OperationName func(r *http.Request) string
	// Ready reports whether the database answers.
	Ready func(ctx context.Context) error
	// DBStats gives the connection-pool figures for /metrics.
	DBStats func() sql.DBStats
	// OpenAPIJSON and OpenAPIYAML are served as they are.
	OpenAPIJSON, OpenAPIYAML []byte
	MaxBodyBytes             int64
	Logger                   *slog.Logger
}

// New returns the process's root handler.
func New(opts Options) http.Handler {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, opts.DBStats)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := opts.Ready(ctx); err != nil {
			opts.Logger.WarnContext(r.Context(), "not ready", "error", err.Error())
			opts.WriteError(w, http.StatusServiceUnavailable, "the database does not answer")
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
	mux.Handle("/", opts.API)

	return &root{opts: opts, next: mux, metrics: m}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

type root struct {
	opts    Options
	next    http.Handler
	metrics *metrics
}

type requestIDKey struct{}

// RequestID returns the id of the request whose context this is, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func (h *root) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 128 {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	ctx := context.WithValue(r.Context(), requestIDKey{}, id)
	r = r.WithContext(ctx)
	w.Header().Set("X-Request-Id", id)
	rec := &statusRecorder{ResponseWriter: w}

	operation := h.opts.OperationName(r)
	if operation == "" {
		operation = "none"
	}
	h.metrics.inFlight.Inc()
	defer func() {
		h.metrics.inFlight.Dec()
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
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
		elapsed := time.Since(start)
		h.metrics.observe(operation, status, elapsed)
		h.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("operation", operation), slog.Int("status", status),
			slog.Int64("bytes", rec.bytes), slog.Duration("duration", elapsed))
	}()

	if r.ContentLength > h.opts.MaxBodyBytes {
		h.opts.WriteError(rec, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("body: larger than the limit of %d bytes", h.opts.MaxBodyBytes))
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(rec, r.Body, h.opts.MaxBodyBytes)
	}
	h.next.ServeHTTP(rec, r)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
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
