package apitest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ExpectError checks that the answer is the Error body with the status, and that its message
// contains every fragment.
func ExpectError(t testing.TB, res Response, status int, fragments ...string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d; body %s", res.Status, status, res.Body)
	}
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil || body.Code == nil || body.Message == nil {
		t.Fatalf("body is not {code, message}: %s", res.Body)
	}
	if *body.Code != status {
		t.Fatalf("code %d, want %d", *body.Code, status)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	for _, f := range fragments {
		if !strings.Contains(*body.Message, f) {
			t.Fatalf("message %q does not contain %q", *body.Message, f)
		}
	}
}

// ExpectStatus checks that a generated client's call failed with the Error body and status, and
// returns the message.
func ExpectStatus(t testing.TB, err error, status int) string {
	t.Helper()
	var e *oas.ErrorStatusCode
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an answer with status %d", err, status)
	}
	if e.StatusCode != status || int(e.Response.Code) != status {
		t.Fatalf("status %d (code %d: %s), want %d", e.StatusCode, e.Response.Code, e.Response.Message, status)
	}
	return e.Response.Message
}
