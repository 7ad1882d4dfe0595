package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
)

// LogVariable names an environment variable that, when set, is a file to which every violation
// seen is appended as one JSON line: the way to list all of them
// over a whole test run.
const LogVariable = "MGMTAPI_CONFORMANCE_LOG"

// Middleware wraps next, the handler a test server serves, so that each answer to one of our
// operations that has a public counterpart is buffered, checked against the public operation,
// and then sent. operationName names our operation a request routes to ("" for none). A
// violation fails t with t.Errorf, naming both operations and the
// JSON path; each distinct violation is reported once per handler.
func (c *Checker) Middleware(t testing.TB, next http.Handler, operationName func(*http.Request) string) http.Handler {
	var mu sync.Mutex
	reported := map[Key]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ours := c.ours[operationName(r)]
		if ours == nil || (ours.Public == nil && ours.Latest == nil) || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedWriter{header: w.Header()}
		next.ServeHTTP(buf, r)
		status := buf.status
		if status == 0 {
			status = http.StatusOK
		}
		violations := ours.check(t, status, buf.header, buf.body.Bytes())
		for _, v := range violations {
			logViolation(t, ours, v)
			mu.Lock()
			first := !reported[v.Key()]
			reported[v.Key()] = true
			mu.Unlock()
			if first {
				t.Errorf("conformance: %s (%s %s) answers %s %s with %d, which breaks public %s (%s) at %q: %s%s\n body: %.600s",
					ours.ID, ours.Method, ours.Path, r.Method, r.URL.Path, status, v.Operation,
					v.Document, v.Pointer, v.Reason, detail(v), buf.body.Bytes())
			}
		}
		if buf.status != 0 {
			w.WriteHeader(buf.status)
		}
		_, _ = w.Write(buf.body.Bytes())
	})
}

// check validates an answer against the newest public operation and the older one. Where the
// newest accepts what the older refuses, the two documents disagree and the newest wins: the
// older's violations are only logged (with "superseded": true).
func (o *OurOperation) check(t testing.TB, status int, header http.Header, body []byte) []Violation {
	var older, newest []Violation
	if o.Public != nil {
		older = o.Public.Check(status, header, body)
	}
	if o.Latest == nil || slices.Contains(LatestOnly, o.Public.File) {
		return older // a LatestOnly document is the newest already: checked once
	}
	newest = o.Latest.Check(status, header, body)
	if len(newest) == 0 {
		for _, v := range older {
			v.Superseded = true
			logViolation(t, o, v)
		}
		return nil
	}
	return append(newest, older...)
}

func detail(v Violation) string {
	if v.Detail == "" {
		return ""
	}
	return "\n alternatives: " + v.Detail
}

// bufferedWriter holds an answer until it has been checked, so that a violation is reported
// while the test that made the request is still waiting for it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

var logMu sync.Mutex

// logViolation appends v to the file named by MGMTAPI_CONFORMANCE_LOG, when it is set.
func logViolation(t testing.TB, ours *OurOperation, v Violation) {
	file := os.Getenv(LogVariable)
	if file == "" {
		return
	}
	line, _ := json.Marshal(map[string]any{
		"test": t.Name(), "ours": ours.ID, "method": ours.Method, "path": ours.Path,
		"operation": v.Operation, "status": v.Status, "pointer": v.Pointer,
		"general": GeneralPointer(v.Pointer), "reason": v.Reason, "value": shortValue(v.Value), "detail": v.Detail,
		"document": v.Document, "superseded": v.Superseded,
	})
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("%s: %v", LogVariable, err)
		return
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s\n", line); err != nil {
		t.Errorf("%s: %v", LogVariable, err)
	}
}

// shortValue is v as JSON, cut to 300 bytes.
func shortValue(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
