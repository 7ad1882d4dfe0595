package permissiontable

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
)

var update = flag.Bool("update", false, "rewrite the generated block of docs/permissions.md")

// pagePath is docs/permissions.md seen from this package's directory.
var pagePath = filepath.Join("..", "..", "..", "docs", "permissions.md")

const regenerate = "go test ./internal/api/permissiontable -update"

func documentOperations(t *testing.T) []Operation {
	t.Helper()
	ops, err := Operations(spec.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) == 0 {
		t.Fatal("the OpenAPI document gave no operation")
	}
	return ops
}

// docs/permissions.md's generated block is exactly what api/openapi.yaml and the catalog give.
func TestPageIsUpToDate(t *testing.T) {
	raw, err := os.ReadFile(pagePath)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	want, err := Replace(page, Render(documentOperations(t), auth.Permissions(), auth.OldNames(), auth.Presets()))
	if err != nil {
		t.Fatalf("%s: %v", pagePath, err)
	}
	if want == page {
		return
	}
	if *update {
		if err := os.WriteFile(pagePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the generated block of %s", pagePath)
		return
	}
	got, exp := strings.Split(page, "\n"), strings.Split(want, "\n")
	line := 0
	for line < len(got) && line < len(exp) && got[line] == exp[line] {
		line++
	}
	show := func(lines []string) string {
		if line < len(lines) {
			return lines[line]
		}
		return "(end of page)"
	}
	t.Fatalf("docs/permissions.md differs from api/openapi.yaml and internal/auth's catalog from line %d:\n"+
		"  page: %s\n  want: %s\nregenerate it with: %s", line+1, show(got), show(exp), regenerate)
}

// Every permission an operation names, or deploying an extension item requires, is a public name
// of the catalog in its public spelling (or is the operator key); no operation names a retired
// name; every preset holds public names only.
func TestDocumentAndCatalogAgree(t *testing.T) {
	public := func(name string) bool {
		c, ok := auth.Canonical(name)
		return ok && c == name
	}
	if n := len(auth.Permissions()); n != 293 {
		t.Errorf("the catalog holds %d permissions, want the 293 public names", n)
	}
	for _, op := range documentOperations(t) {
		if op.Permission != OperatorPermission && !public(op.Permission) {
			t.Errorf("%s (%s %s): x-permission %q is not a public name of internal/auth's catalog", op.OperationID, op.Method, op.Path, op.Permission)
		}
	}
	for _, p := range extensions.ItemDeployPermissions() {
		if !public(p) {
			t.Errorf("deploying an extension item requires %q, which is not a public name of the catalog", p)
		}
	}
	for _, o := range auth.OldNames() {
		if auth.KnownPermission(o.Name) {
			t.Errorf("retired name %q is also in the catalog", o.Name)
		}
		if len(o.Public) == 0 {
			t.Errorf("retired name %q stands for no public name", o.Name)
		}
		for _, p := range o.Public {
			if !public(p) {
				t.Errorf("retired name %q stands for %q, not a public name", o.Name, p)
			}
		}
	}
	for _, preset := range auth.Presets() {
		if len(preset.Permissions) == 0 {
			t.Errorf("preset %q holds nothing", preset.Name)
		}
		for _, p := range preset.Permissions {
			if !public(p) {
				t.Errorf("preset %q holds %q, which is not a public name of the catalog", preset.Name, p)
			}
		}
	}
}

func TestOperationsRefusesAnOperationWithoutPermission(t *testing.T) {
	doc := []byte("openapi: 3.0.3\ntags:\n  - name: a\npaths:\n  /x:\n    get:\n      tags: [a]\n      operationId: GetX\n      summary: Get x\n")
	_, err := Operations(doc)
	if err == nil || !strings.Contains(err.Error(), "GetX") || !strings.Contains(err.Error(), "x-permission") {
		t.Fatalf("err = %v, want one naming GetX and x-permission", err)
	}
}

func TestOperationsOrdersByTagThenDocument(t *testing.T) {
	doc := []byte(`openapi: 3.0.3
tags:
  - name: first
  - name: second
paths:
  /b:
    parameters: []
    post: {tags: [second], operationId: PostB, summary: "B | b", x-permission: "b:Manage"}
    get: {tags: [first], operationId: GetB, summary: B, x-permission: "b:Read"}
  /a:
    get: {tags: [second], operationId: GetA, summary: A, x-permission: operator}
`)
	ops, err := Operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range ops {
		ids = append(ids, op.OperationID)
	}
	if want := []string{"GetB", "PostB", "GetA"}; !slices.Equal(ids, want) {
		t.Fatalf("order = %v, want %v", ids, want)
	}
	block := Render(ops, []auth.Permission{{Name: "b:Read", Group: "bees", Level: "team", Description: "read b"}},
		[]auth.OldName{{Name: "b:Look", Public: []string{"b:Read", "c:Read"}}}, nil)
	for _, want := range []string{
		"| second | B \\| b (`PostB`) | `POST /b` | `b:Manage` |",
		"| second | A (`GetA`) | `GET /a` | operator key |",
		"| `b:Read` | bees | team | read b | 1 |",
		"| `b:Look` | `b:Read`, `c:Read` |",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
}

func TestReplaceKeepsTheProseAround(t *testing.T) {
	page := "intro\n" + Begin + "\nold\n" + End + "\nafter\n"
	got, err := Replace(page, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + Begin + "\n\nnew\n\n" + End + "\nafter\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"no markers", Begin + "\nx\n", End + "\n" + Begin + "\n", Begin + Begin + End} {
		if _, err := Replace(bad, "new\n"); err == nil {
			t.Errorf("Replace(%q) succeeded, want an error", bad)
		}
	}
}
