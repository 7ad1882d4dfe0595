package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every command answers --help with its usage and success; bare mgmtapi lists the commands (not
// serve's flags, which serve --help lists).
func TestEveryCommandsHelpSucceeds(t *testing.T) {
	for _, args := range [][]string{{"serve"}, {"backup"}, {"restore"}, {"keys"}, {"keys", "create"}, {"export"}, {"apply"}, {"sync-rules"}} {
		for _, help := range []string{"--help", "-h"} {
			stdout, stderr, err := runOnce(append(append([]string{}, args...), help), nil)
			if err != nil {
				t.Errorf("%v %s: %v, want success", args, help, err)
			}
			if !strings.Contains(stdout+stderr, "usage") && !strings.Contains(stdout+stderr, "Usage") {
				t.Errorf("%v %s printed no usage: %q %q", args, help, stdout, stderr)
			}
		}
	}
	var out lockedBuffer
	if code := healthcheck([]string{"--help"}, func(string) string { return "" }, &out); code != 0 {
		t.Errorf("healthcheck --help: exit %d", code)
	}

	_, stderr, err := runOnce(nil, nil)
	if err == nil {
		t.Fatal("bare mgmtapi: success, want a usage error")
	}
	for _, want := range []string{"mgmtapi serve", "mgmtapi keys create", "mgmtapi healthcheck [--url BASE-URL]", "mgmtapi sync-rules", "--help"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("bare mgmtapi: the list lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "--tls-cert-file") || strings.Count(stderr, "\n") > 40 {
		t.Errorf("bare mgmtapi printed serve's flags (%d lines):\n%s", strings.Count(stderr, "\n"), stderr)
	}
}

// sync-rules --help names the three permissions its key needs.
func TestSyncRulesHelpNamesItsPermissions(t *testing.T) {
	_, stderr, err := runOnce([]string{"sync-rules", "--help"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig"} {
		if !strings.Contains(stderr, p) {
			t.Errorf("sync-rules --help does not name %s:\n%s", p, stderr)
		}
	}
}

// healthcheck --url takes the base URL, as every other command does, and still the health URL.
func TestHealthcheckTakesTheBaseURL(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		switch r.URL.Path {
		case "/healthz", "/prefix/healthz", "/readyz":
			w.WriteHeader(http.StatusOK)
		default:
			http.Redirect(w, r, "/docs", http.StatusFound) // what / answers
		}
	}))
	defer srv.Close()
	for _, c := range []struct{ url, path string }{
		{srv.URL, "/healthz"}, {srv.URL + "/", "/healthz"}, {srv.URL + "/healthz", "/healthz"},
		{srv.URL + "/readyz", "/readyz"}, {srv.URL + "/prefix", "/prefix/healthz"},
	} {
		asked = nil
		var out lockedBuffer
		if code := healthcheck([]string{"--url", c.url}, func(string) string { return "" }, &out); code != 0 || len(asked) != 1 || asked[0] != c.path {
			t.Errorf("--url %s: exit %d, asked %v, want 0 and %s: %s", c.url, code, asked, c.path, out.String())
		}
	}
	var out lockedBuffer
	if code := healthcheck([]string{"--url", "127.0.0.1:8080"}, func(string) string { return "" }, &out); code != 2 || !strings.Contains(out.String(), "base URL") {
		t.Errorf("--url without a scheme: exit %d, want 2 and a message: %s", code, out.String())
	}
}
