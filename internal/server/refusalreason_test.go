package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAccessLogLineOfARefusalCarriesItsReason: a 4xx's access log line carries the message of its
// {code, message} body as reason=, cut at maxReasonChars; a 2xx's and a 5xx's carry none (a 5xx's
// message says only that the log has the details).
func TestAccessLogLineOfARefusalCarriesItsReason(t *testing.T) {
	long := strings.Repeat("é", maxReasonChars+50)
	var logs bytes.Buffer
	h := New(Options{
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			status, msg := 200, ""
			switch r.URL.Path {
			case "/mgmt/openapi/5/bad":
				status, msg = 400, "groups[0].rules[0].expr: not valid PromQL"
			case "/mgmt/openapi/5/long":
				status, msg = 422, long
			case "/mgmt/openapi/5/broken":
				status, msg = 500, "internal error; the server log has the details under this request's id"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if msg != "" {
				fmt.Fprintf(w, `{"code":%d,"message":%q}`, status, msg)
			}
		}),
		WriteError:   func(w http.ResponseWriter, status int, message string) { w.WriteHeader(status) },
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
		AccessLog:    AccessLogAll,
	})
	for _, path := range []string{"/mgmt/openapi/5/bad", "/mgmt/openapi/5/long", "/mgmt/openapi/5/broken", "/mgmt/openapi/5/fine"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("log lines:\n%s", logs.String())
	}
	if !strings.Contains(lines[0], `status=400`) || !strings.Contains(lines[0], `reason="groups[0].rules[0].expr: not valid PromQL"`) {
		t.Errorf("a 400's line lacks its reason: %s", lines[0])
	}
	if want := `reason=` + strings.Repeat("é", maxReasonChars-1) + "…"; !strings.Contains(lines[1], want) {
		t.Errorf("a long reason is not cut at %d characters: %s", maxReasonChars, lines[1])
	}
	for _, line := range lines[2:] {
		if strings.Contains(line, "reason=") {
			t.Errorf("a 5xx or 2xx line carries a reason: %s", line)
		}
	}
}
