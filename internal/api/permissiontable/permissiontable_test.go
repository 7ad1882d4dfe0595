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
	want, err := Replace(page, Render(documentOperations(t), auth.Permissions(), auth.Presets()))
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

// Every permission an operation names is in the catalog (or is the operator key), and every
// permission of the catalog is required by an operation or by deploying an extension item: a
// permission no one can need, or one no key can hold, is drift.
func TestDocumentAndCatalogAgree(t *testing.T) {
	known := make(map[string]bool)
	for _, p := range auth.Permissions() {
		known[p.Name] = true
	}
	used := make(map[string]bool)
	for _, op := range documentOperations(t) {
		used[op.Permission] = true
		if op.Permission != OperatorPermission && !known[op.Permission] {
			t.Errorf("%s (%s %s): x-permission %q is not in internal/auth's catalog", op.OperationID, op.Method, op.Path, op.Permission)
		}
	}
	itemPermissions := extensions.ItemDeployPermissions()
	for _, p := range itemPermissions {
		used[p] = true
		if !known[p] {
			t.Errorf("deploying an extension item requires %q, which is not in internal/auth's catalog", p)
		}
	}
	for name := range known {
		if !used[name] {
			t.Errorf("catalog permission %q is required by no operation of api/openapi.yaml and by no extension item", name)
		}
	}
	for _, preset := range auth.Presets() {
		for _, p := range preset.Permissions {
			if !known[p] {
				t.Errorf("preset %q holds %q, which is not in the catalog", preset.Name, p)
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
	block := Render(ops, []auth.Permission{{Name: "b:Read", Description: "read b"}}, nil)
	for _, want := range []string{
		"| second | B \\| b (`PostB`) | `POST /b` | `b:Manage` |",
		"| second | A (`GetA`) | `GET /a` | operator key |",
		"| `b:Read` | read b | 1 |",
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
