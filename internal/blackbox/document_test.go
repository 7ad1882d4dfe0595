package blackbox

import (
	"regexp"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
)

// The document's reading (operations, minimal instances) is apidocument's, shared with the
// robustness tests of internal/api and the load command.
type (
	document  = apidocument.Document
	operation = apidocument.Operation
	parameter = apidocument.Parameter
)

func loadDocument(t testing.TB) *document {
	t.Helper()
	doc, err := apidocument.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// operations lists every operation of the document; every one must carry an x-permission.
func operations(t testing.TB, doc *document) []operation {
	t.Helper()
	ops, err := doc.Operations()
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	for _, op := range ops {
		if op.Permission == "" {
			t.Fatalf("%s has no x-permission", op)
		}
	}
	return ops
}

// versionSegment is the API version at the start of a management path, which fixtures ignore:
// /mgmt/openapi/3/slo/... and /mgmt/openapi/4/slo/... name the same resources.
var versionSegment = regexp.MustCompile(`^/mgmt/openapi/\d+`)

func versionless(path string) string { return versionSegment.ReplaceAllString(path, "") }
