package conformance

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDocument writes a one-operation public document (GET /x answering {a: one of values})
// into a new directory named folder, and loads it.
func writeDocument(t *testing.T, folder string, values ...string) *PublicOperation {
	t.Helper()
	dir := filepath.Join(t.TempDir(), folder)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"openapi":"3.0.3","info":{"title":"","version":"1.0.0"},
	  "paths":{"/x":{"get":{"operationId":"X_Get","responses":{"200":{"description":"ok","content":{"application/json":{"schema":
	    {"type":"object","properties":{"a":{"type":"string","enum":["` + strings.Join(values, `","`) + `"]}}}}}}}}}},
	  "components":{"schemas":{"Error":{"type":"object","properties":{"code":{"type":"integer"},"message":{"type":"string"}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "x_service.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return docs.OperationByID("X_Get")
}

// Where the newest document accepts what the older one refuses, the newest wins; what both
// refuse, or the newest alone refuses, is reported with the document that refused it.
func TestTheNewestDocumentWins(t *testing.T) {
	t.Setenv(LogVariable, "")
	op := &OurOperation{ID: "GetX", Method: "GET", Path: "/mgmt/openapi/5/x",
		Public: writeDocument(t, "public-spec", "A"), Latest: writeDocument(t, "public-spec-latest", "A", "B")}
	header := http.Header{"Content-Type": {"application/json"}}
	if vs := op.check(t, 200, header, []byte(`{"a":"B"}`)); len(vs) != 0 {
		t.Errorf("a value only the newest document has: %v", vs)
	}
	vs := op.check(t, 200, header, []byte(`{"a":"C"}`))
	if len(vs) != 2 || !strings.HasSuffix(vs[0].Document, "public-spec-latest/x_service.json") ||
		!strings.HasSuffix(vs[1].Document, "public-spec/x_service.json") {
		t.Errorf("a value neither has: %v", vs)
	}
	op.Latest = writeDocument(t, "public-spec-latest", "B")
	if vs := op.check(t, 200, header, []byte(`{"a":"A"}`)); len(vs) != 1 || !strings.Contains(vs[0].Document, "public-spec-latest") {
		t.Errorf("a value the newest document dropped: %v", vs)
	}
	op.Latest = nil
	if vs := op.check(t, 200, header, []byte(`{"a":"B"}`)); len(vs) != 1 {
		t.Errorf("without the newest documents the older one decides: %v", vs)
	}
}
