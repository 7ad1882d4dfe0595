package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// The decoders of the request path under Go's native fuzzing. Each target's seed corpus is in
// testdata/fuzz/<target> (surrogate escapes, NUL, deep nesting, huge numbers, invalid UTF-8) and
// runs with every `go test`; CI fuzzes each for a bounded time:
//
//	go test ./internal/api -run '^$' -fuzz FuzzCheckText -fuzztime 30s

// FuzzCheckText sends any path and raw query through checkText, the first reader of every
// request, and any body through the body scanner (scanBody) of an operation with a body (chosen by
// the lengths of the path and body, so the seeds in testdata keep their three values). The property: no panic; a refusal of the path or query is a 400 or 413
// whose message names where ("path", "query", a parameter's name) before ": "; the scanner
// passes the body on byte for byte up to its refusal, and a refusal is a *bodyRuleError that
// names where; an accepted body is valid UTF-8 with no NUL escape.
func FuzzCheckText(f *testing.F) {
	f.Add("/mgmt/openapi/5/cases/cases/v1", "a=1&b=2", []byte(`{"a":"b"}`))
	operations := operationsWithABody()
	f.Fuzz(func(t *testing.T, path, rawQuery string, body []byte) {
		r := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: path, RawQuery: rawQuery}, Header: http.Header{},
			Body: io.NopCloser(bytes.NewReader(body))}
		_, msg, status := checkText(r)
		if msg != "" {
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("refused with status %d: %s", status, msg)
			}
			if i := strings.Index(msg, ": "); i <= 0 {
				t.Fatalf("message %q does not name where", msg)
			}
		}
		id := operations[(len(path)+len(body))%len(operations)]
		kept, err := io.ReadAll(scanBody(recordOf(id), io.NopCloser(bytes.NewReader(body))))
		if !bytes.HasPrefix(body, kept) {
			t.Fatalf("%s: the scanner changed the body: read %q of %q", id, kept, body)
		}
		if err != nil {
			var refused *bodyRuleError
			if !errors.As(err, &refused) || !strings.Contains(refused.Message, ": ") {
				t.Fatalf("%s: refusal %v does not name where", id, err)
			}
			return
		}
		if !utf8.Valid(body) || bytes.Contains(bytes.ToLower(body), []byte(`\u0000`)) && json.Valid(body) && hasNULString(body) {
			t.Fatalf("%s: accepted %q", id, body)
		}
	})
}

// hasNULString reports whether a JSON document holds a string (key or value) with U+0000.
func hasNULString(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

// FuzzBodyDiagnosis runs the helpers that word a refused body on any body: describeMalformed,
// firstWrongType against the body schema of one operation (chosen by the fuzzer among every
// operation with a body), pathAtOffset, pathOfMissing and pathOfOutOfRange. The property: no
// panic; valid JSON is never called malformed and anything called malformed says where
// ("malformed JSON at line L, column C: …"); a wrong type names a path and a type.
func FuzzBodyDiagnosis(f *testing.F) {
	f.Add(uint16(0), []byte(`{"name":"a","groups":[{"rules":[{"record":1}]}]}`), int64(30), "groups")
	operations := operationsWithABody()
	if len(operations) < 50 {
		f.Fatalf("only %d operations with a body", len(operations))
	}
	f.Fuzz(func(t *testing.T, operation uint16, body []byte, offset int64, field string) {
		msg, malformed := describeMalformed(body)
		if malformed && !strings.HasPrefix(msg, "malformed JSON at line ") {
			t.Fatalf("malformed, but the message says not where: %q", msg)
		}
		if malformed && json.Valid(body) {
			t.Fatalf("valid JSON called malformed: %q", msg)
		}
		id := operations[int(operation)%len(operations)]
		if path, want, ok := firstWrongType(id, body); ok && (path == "" || want == "") {
			t.Fatalf("%s: a wrong type without a path or a type: %q, %q", id, path, want)
		}
		_ = pathAtOffset(body, offset)
		fields := strings.Split(field, ".")
		_ = pathOfMissing(body, fields[:len(fields)-1], fields[len(fields)-1])
		_, _ = pathOfOutOfRange(body, fields)
	})
}

// operationsWithABody are the operationIds of the operations with a JSON request body, sorted.
func operationsWithABody() []string {
	var ids []string
	for id, op := range schemas().byID {
		if op.body != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}
