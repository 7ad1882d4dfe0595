package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/apidocument"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/conformance"
)

// TestEveryNewestPublicOperationIsReached sends every operation of the newest public documents of
// the services mgmtapi serves (those public-spec/ has an older document of, and
// conformance.LatestOnly) the
// way a client generated from them does: one base URL, /mgmt/openapi/latest or /mgmt/openapi/5,
// the document's path after it, its required query parameters and a body built from its request
// schema. No answer may say that the path or method does not exist (404 "no operation at", 405),
// no answer may be a 5xx, and the operation the router picks must be the one of ours that
// implements that public operation.
func TestEveryNewestPublicOperationIsReached(t *testing.T) {
	latest := conformance.LocateLatest()
	if latest.Dir == "" {
		t.Skip("the newest public documents are not beside the checkout and " + conformance.LatestDirVariable + " is not set")
	}
	older := conformance.Locate()
	checker, _, err := conformance.Shared()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(latest.Dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no documents (%v)", latest.Dir, err)
	}
	type publicOp struct {
		file string
		doc  *apidocument.Document
		op   apidocument.Operation
	}
	var ops []publicOp
	for _, f := range files {
		name := filepath.Base(f)
		if _, err := os.Stat(filepath.Join(older.Dir, name)); err != nil && !slices.Contains(conformance.LatestOnly, name) {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := apidocument.Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		list, err := doc.Operations()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, op := range list {
			ops = append(ops, publicOp{name, doc, op})
		}
	}
	if len(ops) < 195 {
		t.Fatalf("only %d operations in the served services' newest documents", len(ops))
	}
	// Our operations by the public operation they implement.
	ours := map[string][]string{}
	if checker != nil {
		for _, o := range checker.Operations() {
			if o.Public != nil {
				ours[o.Public.ID] = append(ours[o.Public.ID], o.ID)
			}
		}
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		router, err := api.New(api.Options{DB: env.DB, Authn: auth.NewAuthenticator(env.DB, env.Clock.Now)})
		if err != nil {
			t.Fatal(err)
		}
		for _, base := range []string{"/mgmt/openapi/latest", "/mgmt/openapi/5"} {
			reached := 0
			for _, p := range ops {
				target := base + requestPath(p.doc, p.op)
				body := ""
				if p.op.Body != nil {
					b, _ := json.Marshal(p.doc.Minimal(p.op.Body))
					body = string(b)
				}
				res := env.Do(t, p.op.Method, target, "Bearer "+env.RootKey, "application/json", body)
				var e struct{ Message string }
				_ = json.Unmarshal(res.Body, &e)
				switch {
				case res.Status == http.StatusMethodNotAllowed,
					res.Status == http.StatusNotFound && strings.HasPrefix(e.Message, "no operation at"):
					t.Errorf("%s %s (%s, %s): %d %s", p.op.Method, target, p.op.ID, p.file, res.Status, res.Body)
					continue
				case res.Status >= 500:
					t.Errorf("%s %s (%s): %d %s", p.op.Method, target, p.op.ID, res.Status, res.Body)
					continue
				}
				if checker != nil {
					got := router.OperationName(httptest.NewRequest(p.op.Method, target, nil))
					if want := ours[p.op.ID]; !slices.Contains(want, got) {
						t.Errorf("%s %s is routed to %q; the operations of ours that implement %s are %v",
							p.op.Method, target, got, p.op.ID, want)
						continue
					}
				}
				reached++
			}
			t.Logf("%s: %d of %d operations reached", base, reached, len(ops))
		}
	})
}

var undeclaredParameter = regexp.MustCompile(`\{[^}/]+\}`)

// requestPath is op's path with each path parameter filled with a value its schema takes: a
// number for an integer, the first real value of an enumeration, a UUID otherwise.
func requestPath(doc *apidocument.Document, op apidocument.Operation) string {
	path := op.Path
	for _, p := range op.PathParams() {
		value := "00000000-0000-4000-8000-000000000001"
		switch {
		case p.Schema["type"] == "integer":
			value = "1"
		case p.Schema["enum"] != nil:
			if s, ok := doc.Minimal(p.Schema).(string); ok && s != "" {
				value = s
			}
		}
		path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(value))
	}
	// A parameter the document uses but does not declare (the newest role document has one).
	path = undeclaredParameter.ReplaceAllString(path, "1")
	q := url.Values{}
	for _, p := range op.Params {
		if p.In == "query" && p.Required {
			doc.AddMinimal(q, p)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}
