package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func TestVersionPathsLookup(t *testing.T) {
	paths := mustVersionPaths(t)
	const p = "/mgmt/openapi/"
	cases := []struct {
		method, path string
		target       string // "" when the path is served as it is
		allow        string // set for a 405
		found        bool
	}{
		{"GET", p + "5/recording-rules/recording-rules/v1", "", "", true},
		{"GET", p + "latest/recording-rules/recording-rules/v1", p + "5/recording-rules/recording-rules/v1", "", true},
		{"GET", p + "3/recording-rules/recording-rules/v1/abc", p + "5/recording-rules/recording-rules/v1/abc", "", true},
		// E3 lives under 4 and the team members' key list (GET) under 5: each method finds its own.
		{"POST", p + "5/aaa/api-keys/v3", p + "4/aaa/api-keys/v3", "", true},
		{"POST", p + "latest/aaa/api-keys/v3", p + "4/aaa/api-keys/v3", "", true},
		{"GET", p + "4/aaa/api-keys/v3", p + "5/aaa/api-keys/v3", "", true},
		{"PATCH", p + "latest/aaa/api-keys/v3", "", "GET,POST", true},
		// E25 keeps the version 4 shape under 4; every other segment answers the newest.
		{"POST", p + "4/dataplan/quota-rules/v1", "", "", true},
		{"POST", p + "5/dataplan/quota-rules/v1", "", "", true},
		{"POST", p + "latest/dataplan/quota-rules/v1", p + "5/dataplan/quota-rules/v1", "", true},
		{"POST", p + "3/dataplan/quota-rules/v1", p + "5/dataplan/quota-rules/v1", "", true},
		{"PUT", p + "4/dataplan/quota-rules/v1", p + "5/dataplan/quota-rules/v1", "", true},
		// Names from the newest public documents, with their parameters carried over.
		{"GET", p + "latest/integrations/extensions/v1/catalog/ext-1", p + "3/integrations/extensions/v1/ext-1", "", true},
		{"POST", p + "latest/integrations/extensions/v1", p + "3/integrations/extensions/v1/all", "", true},
		{"GET", p + "latest/integrations/extensions/v1/deployed", p + "3/integrations/extensions/v1/deployed", "", true},
		{"GET", p + "latest/integrations/extensions/v1/catalog", p + "3/integrations/extensions/v1/catalog", "", true},
		{"PUT", p + "latest/aaa/custom-roles/v1", p + "3/aaa/team-roles/v1/custom-roles", "", true},
		{"GET", p + "5/aaa/custom-roles/v1", p + "5/aaa/team-roles/v1/custom-roles", "", true},
		{"DELETE", p + "4/aaa/custom-roles/v1/17", p + "5/aaa/team-roles/v1/custom-roles/17", "", true},
		{"GET", p + "latest/aaa/system-roles/v1", p + "5/aaa/team-roles/v1/system-roles", "", true},
		{"POST", p + "latest/notifications/notification-center/v1/presets:createCustom", p + "4/notifications/notification-center/v1/presets/custom", "", true},
		{"PUT", p + "latest/notifications/notification-center/v1/presets:replaceCustom", p + "5/notifications/notification-center/v1/presets/custom", "", true},
		{"GET", p + "latest/notifications/notification-center/v1/presets:getDefaultSummary", p + "5/notifications/notification-center/v1/presets/summaries", "", true},
		{"POST", p + "latest/notifications/notification-center/v1/presets/p-1/default/apply", p + "5/notifications/notification-center/v1/presets/p-1/default", "", true},
		// The old names keep working under every segment.
		{"POST", p + "latest/notifications/notification-center/v1/presets/custom", p + "4/notifications/notification-center/v1/presets/custom", "", true},
		{"POST", p + "latest/notifications/notification-center/v1/presets/p-1/default", p + "5/notifications/notification-center/v1/presets/p-1/default", "", true},
		// An escaped parameter stays escaped and one segment.
		{"GET", p + "latest/cases/cases/v1/a%2Fb", p + "5/cases/cases/v1/a%2Fb", "", true},
		// Not a version segment, not a template, a trailing slash, an empty segment: the router
		// answers them as they are.
		{"GET", p + "6/recording-rules/recording-rules/v1", "", "", false},
		{"GET", p + "latest/nothing/here", "", "", false},
		{"GET", p + "latest/recording-rules/recording-rules/v1/", "", "", false},
		{"GET", p + "latest/recording-rules//recording-rules/v1", "", "", false},
		{"GET", p + "latest", "", "", false},
		{"POST", "/ingest/alertmanager/v1", "", "", false},
	}
	for _, c := range cases {
		target, allow, found := paths.lookup(c.method, c.path)
		if target != c.target || allow != c.allow || found != c.found {
			t.Errorf("%s %s: got (%q, %q, %v), want (%q, %q, %v)", c.method, c.path,
				target, allow, found, c.target, c.allow, c.found)
		}
	}
}

func TestVersionPathsRouteKeepsTheRequest(t *testing.T) {
	paths := mustVersionPaths(t)
	r := httptest.NewRequest("GET", "/mgmt/openapi/latest/cases/cases/v1/a%2Fb?x=1", nil)
	w := httptest.NewRecorder()
	m, path, rawPath, done := paths.route(w, r)
	if done || m.op == nil || m.op.id != "GetCase" {
		t.Fatalf("route: done %v, operation %+v", done, m.op)
	}
	if path != "/mgmt/openapi/5/cases/cases/v1/a/b" || rawPath != "/mgmt/openapi/5/cases/cases/v1/a%2Fb" {
		t.Errorf("routed to %q (%q)", path, rawPath)
	}
	if m.args.n != 1 || m.args.values[0] != "a/b" {
		t.Errorf("args %+v, want the parameter unescaped", m.args)
	}
	if r.URL.Path != "/mgmt/openapi/latest/cases/cases/v1/a/b" {
		t.Errorf("the caller's request changed: %s", r.URL.Path)
	}

	r = httptest.NewRequest("GET", "/mgmt/openapi/5/cases/cases/v1/x", nil)
	if m, path, _, done := paths.route(w, r); done || path != "" || m.op == nil {
		t.Errorf("a path the router knows is served as it is")
	}

	r = httptest.NewRequest("OPTIONS", "/mgmt/openapi/latest/aaa/api-keys/v3", nil)
	w = httptest.NewRecorder()
	if _, _, _, done := paths.route(w, r); !done {
		t.Fatal("OPTIONS: not answered")
	}
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET,POST" ||
		!strings.Contains(w.Body.String(), "OPTIONS is not allowed on /mgmt/openapi/latest/aaa/api-keys/v3") {
		t.Errorf("OPTIONS: %d %q %s", w.Code, w.Header().Get("Allow"), w.Body)
	}
}

func TestVersionPathsRefuseBadOtherPaths(t *testing.T) {
	for _, c := range []struct{ name, method, template, target string }{
		{"taken by an operation", "GET", "/recording-rules/recording-rules/v1", "/mgmt/openapi/5/recording-rules/recording-rules/v1/{id}"},
		{"parameter in a segment", "GET", "/a/x{id}", "/mgmt/openapi/5/a/{id}"},
		{"fewer parameters", "GET", "/a/b", "/mgmt/openapi/5/a/{id}"},
		{"more parameters", "GET", "/a/{x}/{y}", "/mgmt/openapi/5/a/{id}"},
		{"trailing slash", "GET", "/a/{x}/", "/mgmt/openapi/5/a/{id}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths := mustVersionPaths(t)
			segment, rest, _ := splitVersion(c.target)
			if err := add(paths.versioned, c.method, c.template, segment, rest, true, nil); err == nil {
				t.Errorf("%s %s → %s accepted", c.method, c.template, c.target)
			}
		})
	}
}

func BenchmarkVersionPaths(b *testing.B) {
	paths := mustVersionPaths(b)
	r := httptest.NewRequest("GET", "/mgmt/openapi/5/recording-rules/recording-rules/v1/3f1c2b7e-0000-4000-8000-000000000001", nil)
	w := httptest.NewRecorder()
	b.Run("as-served", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			paths.route(w, r)
		}
	})
	r2 := httptest.NewRequest("GET", "/mgmt/openapi/latest/recording-rules/recording-rules/v1/3f1c2b7e-0000-4000-8000-000000000001", nil)
	b.Run("latest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			paths.route(w, r2)
		}
	})
	r3 := httptest.NewRequest("GET", "/mgmt/openapi/latest/aaa/custom-roles/v1/17", nil)
	b.Run("renamed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			paths.route(w, r3)
		}
	})
}

func BenchmarkRouterFindRoute(b *testing.B) {
	a, err := New(Options{})
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a.router.FindRoute("GET", "/mgmt/openapi/5/recording-rules/recording-rules/v1/3f1c2b7e-0000-4000-8000-000000000001")
	}
}

// mustVersionPaths builds a routing table of its own from the embedded document (a test may
// change it).
func mustVersionPaths(tb testing.TB) *routeTable {
	tb.Helper()
	table, err := readOperations(spec.OpenAPIYAML)
	if err != nil {
		tb.Fatal(err)
	}
	return table.routes
}

// The route table and the generated router agree: every operation's template, with its
// parameters filled in, leads the table to the operation's record, and under every version
// segment to a document path at which the generated router finds the same operation.
func TestRouteTableAgreesWithTheGeneratedRouter(t *testing.T) {
	table, err := operations()
	if err != nil {
		t.Fatal(err)
	}
	router, err := oas.NewServer(handler{}, &security{})
	if err != nil {
		t.Fatal(err)
	}
	fill := func(template string) string {
		parts := strings.Split(template, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, "{") {
				parts[i] = "x1"
			}
		}
		return strings.Join(parts, "/")
	}
	for id, op := range table.byID {
		path := fill(op.path)
		m := table.routes.match(op.method, path)
		if m.op == nil {
			t.Errorf("%s %s: no operation", op.method, path)
			continue
		}
		served := path
		if m.target != "" {
			served = m.target
		}
		route, ok := router.FindRoute(op.method, served)
		if !ok || route.OperationID() != m.op.id {
			t.Errorf("%s %s: the table finds %s at %s, the generated router %q", op.method, path, m.op.id, served, route.OperationID())
		}
		if m.op.id != id && m.target == "" {
			t.Errorf("%s %s: the table finds %s, not %s", op.method, path, m.op.id, id)
		}
		_, rest, versioned := splitVersion(op.path)
		if !versioned {
			continue
		}
		for _, other := range append([]string{rest}, op.otherPaths...) {
			for _, seg := range versionSegments {
				p := operationPrefix + seg + fill(other)
				m := table.routes.match(op.method, p)
				if m.op == nil {
					t.Errorf("%s %s: no operation", op.method, p)
					continue
				}
				served := p
				if m.target != "" {
					served = m.target
				}
				route, ok := router.FindRoute(op.method, served)
				if !ok || route.OperationID() != m.op.id {
					t.Errorf("%s %s: the table finds %s at %s, the generated router %q", op.method, p, m.op.id, served, route.OperationID())
				}
			}
		}
	}
}
