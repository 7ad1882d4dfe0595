package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/docspage"
)

// TestDocsRoutes: with Options.Docs, GET / and everything under /docs go to the reference page
// and other methods on / still reach the API; without it, / is the API's as before.
func TestDocsRoutes(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	writeError := func(w http.ResponseWriter, status int, message string) { w.WriteHeader(status) }
	opts := Options{API: api, WriteError: writeError, MaxBodyBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	withoutDocs := New(opts)
	opts.Docs = docspage.New(writeError)
	withDocs := New(opts)

	for _, c := range []struct {
		handler      http.Handler
		method, path string
		want         int
	}{
		{withDocs, "GET", "/", http.StatusFound},
		{withDocs, "HEAD", "/", http.StatusFound},
		{withDocs, "GET", "/docs", http.StatusOK},
		{withDocs, "GET", "/docs/", http.StatusPermanentRedirect},
		{withDocs, "GET", "/docs/assets/NOTICE", http.StatusOK},
		{withDocs, "GET", "/docs/assets/none", http.StatusNotFound},
		{withDocs, "POST", "/", http.StatusTeapot},
		{withDocs, "GET", "/docsx", http.StatusTeapot},
		{withoutDocs, "GET", "/", http.StatusTeapot},
		{withoutDocs, "GET", "/docs", http.StatusTeapot},
	} {
		rec := httptest.NewRecorder()
		c.handler.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.want {
			t.Errorf("%s %s (docs %v): %d, want %d", c.method, c.path, c.handler == withDocs, rec.Code, c.want)
		}
	}
}
