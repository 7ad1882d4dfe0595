package conformance_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/conformance"
)

// TestPublicDocumentsAreChecked says whether the API tests of this run check their answers
// against the public documents. It fails when MGMTAPI_PUBLIC_SPEC_DIR is set and the documents
// there cannot be loaded, and is skipped, saying so, when no documents are available.
func TestPublicDocumentsAreChecked(t *testing.T) {
	checker, location, err := conformance.Shared()
	if err != nil {
		t.Fatal(err)
	}
	if checker == nil {
		t.Skipf("the API tests do NOT check answers against the public documents: %s is not set and "+
			"../shared/reference/public-spec does not exist beside the module root", conformance.DirVariable)
	}
	if n := len(checker.Docs.Files); n != 21+len(conformance.LatestOnly) {
		t.Errorf("%s: %d documents, want the 21 services and %v from public-spec-latest", location.Dir, n, conformance.LatestOnly)
	}
	if n := checker.Docs.Len(); n < 159 {
		t.Errorf("%s: %d public operations, want at least 159", location.Dir, n)
	}
	t.Logf("answers are checked against %d public operations of %d documents in %s (from %s: %v)",
		checker.Docs.Len(), len(checker.Docs.Files), location.Dir, conformance.DirVariable, location.FromVariable)
}

// TestLoadRefusesAnUnusableDirectory: a directory without documents, or with a document that
// does not parse, is an error (which fails every API test when MGMTAPI_PUBLIC_SPEC_DIR names it).
func TestLoadRefusesAnUnusableDirectory(t *testing.T) {
	empty := t.TempDir()
	if _, err := conformance.Load(empty); err == nil {
		t.Error("an empty directory loaded")
	}
	if _, err := conformance.Load(empty + "/missing"); err == nil {
		t.Error("a missing directory loaded")
	}
	broken := t.TempDir()
	if err := os.WriteFile(broken+"/x_service.json", []byte(`{"openapi": "3.0.0", "paths": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := conformance.Load(broken); err == nil {
		t.Error("a document that does not parse loaded")
	}
}

// TestEveryOperationIsMatchedOrListed: each operation of api/openapi.yaml implements a public
// operation or is listed in conformance.NotPublic, and each listed one exists and is unmatched.
// Every public operation is served: one not served fails it, by method, path and operationId.
func TestEveryOperationIsMatchedOrListed(t *testing.T) {
	checker := mustChecker(t)
	for _, id := range checker.Unmatched {
		if _, ok := conformance.NotPublic[id]; !ok {
			op := checker.Operation(id)
			t.Errorf("%s (%s %s) matches no public operation and is not in conformance.NotPublic: "+
				"fix its path, map it in publicPathRenamed, or list it", id, op.Method, op.Path)
		}
	}
	for id := range conformance.NotPublic {
		op := checker.Operation(id)
		switch {
		case op == nil:
			t.Errorf("conformance.NotPublic lists %s, which api/openapi.yaml does not declare", id)
		case op.Public != nil || op.Latest != nil:
			t.Errorf("conformance.NotPublic lists %s, which implements a public operation", id)
		}
	}
	for _, set := range []struct {
		docs   *conformance.Documents
		public func(*conformance.OurOperation) *conformance.PublicOperation
	}{
		{checker.Docs, func(o *conformance.OurOperation) *conformance.PublicOperation { return o.Public }},
		{checker.Latest, func(o *conformance.OurOperation) *conformance.PublicOperation { return o.Latest }},
	} {
		if set.docs == nil {
			t.Logf("the newest public documents are not loaded")
			continue
		}
		served := map[string]string{}
		for _, op := range checker.Operations() {
			p := set.public(op)
			if p == nil {
				continue
			}
			if prev, ok := served[p.ID]; ok && !conformance.SameOperation(prev, op.ID) {
				t.Errorf("%s and %s both implement public %s (%s)", prev, op.ID, p.ID, set.docs.Dir)
			}
			served[p.ID] = op.ID
		}
		var missing []string
		for _, file := range set.docs.Files {
			for _, p := range set.docs.Operations(file) {
				if _, ok := served[p.ID]; !ok {
					missing = append(missing, p.Method+" "+p.Path+" ("+p.ID+")")
				}
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: %d of %d public operations are served; not served:\n  %s", set.docs.Dir, len(served), set.docs.Len(),
				strings.Join(missing, "\n  "))
		}
		t.Logf("%s: %d of %d public operations are served", set.docs.Dir, len(served), set.docs.Len())
	}
}

func TestRenameBrand(t *testing.T) {
	for in, want := range map[string]string{
		"cxManaged":                      "platformManaged",
		"coralogixUserId":                "platformUserId",
		"cxUser":                         "platformUser",
		"cxEventKey":                     "platformEventKey",
		"cxQuotaUnits":                   "platformQuotaUnits",
		"isCxManaged":                    "isPlatformManaged",
		"CxUser":                         "PlatformUser",
		"CX_CUSTOM_DASHBOARD":            "PLATFORM_CUSTOM_DASHBOARD",
		"CX_CUSTOM_DASHBOARD_DEFINITION": "PLATFORM_CUSTOM_DASHBOARD_DEFINITION",
		"SOURCE_CORALOGIX":               "SOURCE_PLATFORM",
		"coralogix":                      "platform",
		// Not brand words.
		"cxx":                  "cxx",
		"maxCount":             "maxCount",
		"dpxlExpression":       "dpxlExpression",
		"customDataprimeQuery": "customDataprimeQuery",
		"PRIORITY_P1":          "PRIORITY_P1",
		"EXACT":                "EXACT",
	} {
		if got := conformance.RenameBrand(in); got != want {
			t.Errorf("RenameBrand(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSharedEnumsAreUnited: the presets document predates the entities document, whose entity
// type enum has OLLY_SCHEDULED_TASKS; both documents' enum carries it once loaded.
func TestSharedEnumsAreUnited(t *testing.T) {
	checker := mustChecker(t)
	for _, file := range []string{"presets_service.json", "entities_service.json"} {
		if !checker.Docs.HasEnumValue(file, "OLLY_SCHEDULED_TASKS") {
			t.Errorf("%s: the entity type enum lacks OLLY_SCHEDULED_TASKS", file)
		}
	}
	vs, err := checker.CheckBody("PresetsService_GetPreset", 200,
		[]byte(`{"preset": {"id": "p", "name": "n", "entityType": "OLLY_SCHEDULED_TASKS"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if strings.HasSuffix(v.Pointer, "/entityType") {
			t.Errorf("OLLY_SCHEDULED_TASKS refused in a preset: %v", v)
		}
	}
	vs, err = checker.CheckBody("PresetsService_GetPreset", 200, []byte(`{"preset": {"entityType": "NOT_A_TYPE"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(vs, func(v conformance.Violation) bool { return strings.HasSuffix(v.Pointer, "/entityType") }) {
		t.Errorf("an unknown entity type passed: %v", vs)
	}
}

// TestBrandNamesAreRenamedInTheDocuments: the loaded documents know the renamed property names
// and enum values, and no longer the brand ones.
func TestBrandNamesAreRenamedInTheDocuments(t *testing.T) {
	checker := mustChecker(t)
	// E24's answer carries platformManaged (cxManaged in the public document).
	vs, err := checker.CheckBody("QuotaAllocationRuleSetService_ReplaceQuotaAllocationRuleSet", 200,
		[]byte(`{"ruleSet": {"rules": [{"platformManaged": "yes"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(vs, func(v conformance.Violation) bool { return strings.HasSuffix(v.Pointer, "/platformManaged") }) {
		t.Errorf("a string platformManaged was not checked as the boolean cxManaged: %v", vs)
	}
	// PLATFORM_CUSTOM_DASHBOARD is an enum value of the preset entity types; CX_… is not.
	for _, c := range []struct {
		value string
		ok    bool
	}{{"PLATFORM_CUSTOM_DASHBOARD", true}, {"CX_CUSTOM_DASHBOARD", false}} {
		found := false
		for _, file := range checker.Docs.Files {
			if checker.Docs.HasEnumValue(file, c.value) {
				found = true
			}
		}
		if found != c.ok {
			t.Errorf("enum value %s present: %v, want %v", c.value, found, c.ok)
		}
	}
}

// TestCheckNamesThePathAndTheReason drives Check with answers of known shape.
func TestCheckNamesThePathAndTheReason(t *testing.T) {
	checker := mustChecker(t)
	retentions := "RetentionsService_GetRetentions"
	for _, c := range []struct {
		name      string
		operation string
		status    int
		body      string
		pointer   string // "" with reason "" means: conforms
		reason    string
	}{
		{"a conforming answer", retentions, 200, `{"retentions": [{"id": "a", "name": "Default", "order": 1}]}`, "", ""},
		{"a wrong type", retentions, 200, `{"retentions": [{"id": "a", "order": "one"}]}`, "/retentions/0/order", "value must be an integer"},
		{"our operationId names it too", "ListRetentionTags", 200, `{"retentions": {}}`, "/retentions", "value must be an array"},
		{"an undeclared 2xx", retentions, 201, `{}`, "", "status 201 is not declared (declared: 200, 400, 401, 500)"},
		{"a declared error", retentions, 400, `{"code": 400, "message": "name: too long"}`, "", ""},
		{"an undeclared error", retentions, 404, `{"code": 404, "message": "no such tag"}`, "", ""},
		{"an error code out of range", retentions, 404, `{"code": 4040, "message": "x"}`, "/code", "number must be at most 599"},
		{"a message over 4096", retentions, 409, `{"code": 409, "message": "` + strings.Repeat("x", 4097) + `"}`, "/message", "maximum string length is 4096"},
		// The role documents declare their errors without a schema: the shared Error schema applies.
		{"an error without a declared schema", "RoleManagementService_GetCustomRole", 404, `{"code": "404"}`, "/code", "value must be an integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs, err := checker.CheckBody(c.operation, c.status, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.reason == "" {
				if len(vs) != 0 {
					t.Errorf("violations %v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Pointer != c.pointer || vs[0].Reason != c.reason {
				t.Errorf("violations %v, want one at %q: %s", vs, c.pointer, c.reason)
			}
		})
	}
	if _, err := checker.CheckBody("NoSuchOperation", 200, []byte(`{}`)); err == nil {
		t.Error("an unknown operation was checked")
	}
	if _, err := checker.CheckBody("AdminListTeams", 200, []byte(`{}`)); err == nil {
		t.Error("an operation without a public counterpart was checked")
	}
}

// TestMiddlewareReportsTheViolationAndPassesTheAnswerOn: the answer reaches the client as the
// handler wrote it, and the test is failed with both operations and the JSON path named.
func TestMiddlewareReportsTheViolationAndPassesTheAnswerOn(t *testing.T) {
	checker := mustChecker(t)
	t.Setenv(conformance.LogVariable, "") // a made-up violation, not one of the API's
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Seen", "yes")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"retentions": [{"id": 7}]}`))
	})
	rec := &recordingTB{TB: t}
	served := checker.Middleware(rec, handler, func(*http.Request) string { return "ListRetentionTags" })
	for range 2 {
		w := httptest.NewRecorder()
		served.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/mgmt/openapi/5/dataengine/retention-tags/v1", nil))
		if w.Code != 200 || w.Body.String() != `{"retentions": [{"id": 7}]}` || w.Header().Get("X-Seen") != "yes" {
			t.Errorf("answer changed: %d %v %s", w.Code, w.Header(), w.Body)
		}
	}
	if len(rec.errors) != 1 {
		t.Fatalf("%d reports, want one (the same violation twice is reported once): %q", len(rec.errors), rec.errors)
	}
	for _, want := range []string{"ListRetentionTags", "RetentionsService_GetRetentions", `"/retentions/0/id"`, "value must be a string"} {
		if !strings.Contains(rec.errors[0], want) {
			t.Errorf("report %q does not name %s", rec.errors[0], want)
		}
	}
}

// recordingTB keeps what Errorf reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckBodyByHand validates one JSON body, for quick checks while fixing an answer:
//
//	CONFORMANCE_OPERATION=GetIncident CONFORMANCE_BODY=@answer.json [CONFORMANCE_STATUS=200] \
//	  go test ./internal/conformance -run TestCheckBodyByHand -v
//
// The operation is our operationId or the public one; the body is JSON text, or @file. Skipped
// unless CONFORMANCE_OPERATION is set.
func TestCheckBodyByHand(t *testing.T) {
	operation := os.Getenv("CONFORMANCE_OPERATION")
	if operation == "" {
		t.Skip("set CONFORMANCE_OPERATION and CONFORMANCE_BODY to check a body by hand")
	}
	checker := mustChecker(t)
	body := []byte(os.Getenv("CONFORMANCE_BODY"))
	if file, ok := strings.CutPrefix(string(body), "@"); ok {
		var err error
		if body, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
	}
	status := 200
	if s := os.Getenv("CONFORMANCE_STATUS"); s != "" {
		var err error
		if status, err = strconv.Atoi(s); err != nil {
			t.Fatalf("CONFORMANCE_STATUS: %v", err)
		}
	}
	vs, err := checker.CheckBody(operation, status, body)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Pointer < vs[j].Pointer })
	for _, v := range vs {
		t.Errorf("%s", v)
	}
	if len(vs) == 0 {
		t.Logf("%s %d: the body conforms", operation, status)
	}
}

func mustChecker(t *testing.T) *conformance.Checker {
	t.Helper()
	checker, _, err := conformance.Shared()
	if err != nil {
		t.Fatal(err)
	}
	if checker == nil {
		t.Skipf("no public documents (%s)", conformance.DirVariable)
	}
	return checker
}
