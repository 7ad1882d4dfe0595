package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestIDs: every answer carries X-Request-Id, the caller's when it sent one of up to 128
// characters, otherwise a fresh one; the request's context carries the same id, and a header the
// API adds to the answer's X-Request-Id does not change another request's.
func TestRequestIDs(t *testing.T) {
	var seen []string
	h := New(Options{
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, RequestID(r.Context()))
			w.Header().Add("X-Request-Id", "added")
			w.WriteHeader(http.StatusNoContent)
		}),
		WriteError:   func(w http.ResponseWriter, status int, message string) { w.WriteHeader(status) },
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	serve := func(id string) []string {
		req := httptest.NewRequest(http.MethodGet, "/mgmt/openapi/5/x", nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Header().Values("X-Request-Id")
	}

	if got := serve("caller-id"); len(got) != 2 || got[0] != "caller-id" || got[1] != "added" {
		t.Fatalf("with the caller's id: X-Request-Id %q", got)
	}
	first, second := serve(""), serve(strings.Repeat("x", 129))
	for _, got := range [][]string{first, second} {
		if len(got) != 2 || len(got[0]) != 24 || got[1] != "added" {
			t.Fatalf("without a usable id: X-Request-Id %q, want a fresh 24-digit id and the API's", got)
		}
	}
	if first[0] == second[0] {
		t.Fatalf("two requests got the same id %q", first[0])
	}
	if want := []string{"caller-id", first[0], second[0]}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("ids in the requests' contexts %q, want %q", seen, want)
	}
}
