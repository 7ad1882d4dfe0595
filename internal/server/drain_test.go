package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDrain: after Drain, /readyz answers 503 even though the database answers, the API still
// answers, and every answer carries Connection: close.
func TestDrain(t *testing.T) {
	h := New(Options{
		API:          http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }),
		WriteError:   func(w http.ResponseWriter, status int, message string) { w.WriteHeader(status) },
		Ready:        func(context.Context) error { return nil },
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	serve := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	for _, c := range []struct {
		path   string
		status int
	}{{"/readyz", 200}, {"/mgmt/openapi/5/x", 204}} {
		if rec := serve(c.path); rec.Code != c.status || rec.Header().Get("Connection") != "" {
			t.Fatalf("before Drain, %s: %d Connection %q", c.path, rec.Code, rec.Header().Get("Connection"))
		}
	}
	h.Drain()
	for _, c := range []struct {
		path   string
		status int
	}{{"/readyz", 503}, {"/mgmt/openapi/5/x", 204}, {"/healthz", 200}} {
		if rec := serve(c.path); rec.Code != c.status || rec.Header().Get("Connection") != "close" {
			t.Fatalf("draining, %s: %d Connection %q", c.path, rec.Code, rec.Header().Get("Connection"))
		}
	}
}

// TestAccessLogLine: an API line is INFO and carries the key id the API recorded and the client
// address; a probe's line is DEBUG.
func TestAccessLogLine(t *testing.T) {
	var logs bytes.Buffer
	h := New(Options{
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			SetOperation(r.Context(), "getThing")
			SetKeyID(r.Context(), "key-7")
			w.WriteHeader(http.StatusOK)
		}),
		WriteError:   func(w http.ResponseWriter, status int, message string) { w.WriteHeader(status) },
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AccessLog:    AccessLogAll,
	})
	for _, path := range []string{"/mgmt/openapi/5/x", "/healthz"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "192.0.2.7:5555"
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 ||
		!strings.Contains(lines[0], "level=INFO msg=request method=GET path=/mgmt/openapi/5/x operation=getThing status=200") ||
		!strings.Contains(lines[0], "client=192.0.2.7:5555 key_id=key-7") ||
		!strings.Contains(lines[1], "level=DEBUG msg=request method=GET path=/healthz operation=none status=200") {
		t.Fatalf("log lines:\n%s", logs.String())
	}
}
