package blackbox

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// FuzzRequest is the HTTP-level mutation fuzzer: one server over SQLite, and requests the fuzzer
// mutates from the document's operations: the operation (its operationId; any other text picks
// one by its hash), the value of every path parameter, the raw query, the Content-Type and the
// body, sent with the bootstrap team's key (the operator key for operator operations). Every
// operation of api/openapi.yaml is a seed, with its example body (or minimal instance) and
// required query parameters, so an operation added later is fuzzed without an edit; the corpus
// in testdata/fuzz/FuzzRequest adds hostile inputs (lone surrogates, NUL, deep nesting, huge
// numbers, invalid UTF-8, a UTF-16 charset). The property: no 5xx and no dropped connection, and
// every 4xx is exactly the {code, message} body. Run longer with
//
//	go test ./internal/blackbox -run '^$' -fuzz FuzzRequest -fuzztime 60s
func FuzzRequest(f *testing.F) {
	doc := loadDocument(f)
	ops := operations(f, doc)
	byID := map[string]operation{}
	m := &matrix{doc: doc}
	for _, op := range ops {
		byID[op.ID] = op
		pathValue := "1"
		f.Add(op.ID, pathValue, m.query(op, false).Encode(), contentType(op), []byte(m.body(op, false)))
	}
	env := apitest.Start(f, apitest.Options{Unchecked: true}, db.SQLite)
	// A request without an answer after 5 s is a failure of its own (a hang): the fuzzer then
	// keeps the input, where the engine's own limit (10 s a call) would kill the worker and keep
	// nothing. The failure carries every goroutine of the server, which runs in this process.
	client := &http.Client{Timeout: 5 * time.Second}
	f.Fuzz(func(t *testing.T, operationID, pathValue, rawQuery, contentType string, body []byte) {
		op, ok := byID[operationID]
		if !ok {
			h := fnv.New32a()
			h.Write([]byte(operationID))
			op = ops[int(h.Sum32()%uint32(len(ops)))]
		}
		path := op.Path
		for _, p := range op.PathParams() {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", pathSegment(pathValue))
		}
		target := env.URL + path
		if rawQuery != "" {
			// net/http's client writes a raw query as it is: a space breaks the request line,
			// which the server's net/http refuses before any handler, with the Error body
			// (server.RefusalListener) like every other 4xx.
			target += "?" + rawQuery
		}
		req, err := http.NewRequest(op.Method, target, bytes.NewReader(body))
		if err != nil {
			t.Skipf("not a request a client can send: %v", err)
		}
		if len(body) == 0 {
			req.Body, req.ContentLength = nil, 0
		}
		if contentType != "" {
			if !validHeaderValue(contentType) {
				t.Skip("not a header value a client can send")
			}
			req.Header.Set("Content-Type", contentType)
		}
		key := env.RootKey
		if op.Operator {
			key = apitest.OperatorKey
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			var goroutines strings.Builder
			if os.IsTimeout(err) {
				_ = pprof.Lookup("goroutine").WriteTo(&goroutines, 1)
			}
			t.Fatalf("%s: %s %s: no answer: %v\n%s", op, op.Method, short(target, 300), err, goroutines.String())
		}
		answer, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s: %s %s: the answer was cut: %v", op, op.Method, short(target, 300), err)
		}
		describe := func() string {
			return op.String() + ": " + op.Method + " " + short(target, 300) + "\n Content-Type " + contentType +
				"\n body " + short(string(body), 300) + "\n answer " + res.Status + " " + short(string(answer), 400)
		}
		if res.StatusCode >= 500 {
			t.Fatalf("%s", describe())
		}
		if res.StatusCode >= 400 {
			if problem := errorBodyProblem(apitest.Response{Status: res.StatusCode, Header: res.Header, Body: answer}); problem != "" {
				t.Fatalf("%s\n %s", describe(), problem)
			}
		}
		// A 200 is JSON, or YAML where the operation says so (the configuration document and the
		// Prometheus rule file).
		if res.StatusCode == http.StatusOK && len(answer) > 0 && !json.Valid(answer) &&
			!(res.Header.Get("Content-Type") == "application/yaml" && yaml.Unmarshal(answer, new(any)) == nil) {
			t.Fatalf("%s\n a 200 that is neither JSON nor YAML said to be YAML", describe())
		}
	})
}

// pathSegment is v as one path segment: as written when it is already a valid escaped segment
// (so that %00 and %ff reach the server), escaped otherwise.
func pathSegment(v string) string {
	if _, err := url.PathUnescape(v); err == nil && !strings.ContainsAny(v, "/?#") &&
		strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r >= 0x7f }) < 0 {
		return v
	}
	return url.PathEscape(v)
}

// validHeaderValue reports whether net/http's client sends v as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
