package extensions_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/extensions"
)

// validFile is a catalog file that follows every rule; the table below breaks one rule at a time.
func validFile(id string) map[string]any {
	return map[string]any{
		"id":           id,
		"name":         "Test " + id,
		"integrations": []any{"test-agent"},
		"changelog":    []any{map[string]any{"version": "1.0.0", "descriptionMd": "First."}},
		"revisions": []any{
			map[string]any{
				"version":     "1.0.0",
				"description": "One revision.",
				"items": []any{
					map[string]any{"id": "first", "name": "First", "targetDomain": "PARSING_RULE", "permissionResource": "PARSING_RULE", "data": map[string]any{}},
					map[string]any{"id": "second", "name": "Second", "targetDomain": "ALERT", "permissionResource": "ALERT", "data": map[string]any{}},
					map[string]any{"id": "third", "name": "Third", "targetDomain": "ALERT", "permissionResource": "ALERT", "data": map[string]any{}},
				},
			},
		},
	}
}

func revision0(doc map[string]any) map[string]any {
	return doc["revisions"].([]any)[0].(map[string]any)
}

func item(doc map[string]any, i int) map[string]any {
	return revision0(doc)["items"].([]any)[i].(map[string]any)
}

func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func marshal(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuiltInCatalogLoads(t *testing.T) {
	c, err := extensions.LoadCatalog("")
	if err != nil {
		t.Fatalf("built-in catalog: %v", err)
	}
	if c.Len() < 1 {
		t.Fatalf("built-in catalog has %d extensions, want at least kubernetes", c.Len())
	}
}

func TestCatalogDirectory(t *testing.T) {
	builtIn, err := extensions.LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extensions.LoadCatalog(filepath.Join(t.TempDir(), "missing")); err == nil ||
		!strings.Contains(err.Error(), "extensions-dir ") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing dir: error %v, want one naming extensions-dir and the path", err)
	}
	empty, err := extensions.LoadCatalog(t.TempDir())
	if err != nil || empty.Len() != builtIn.Len() {
		t.Fatalf("empty dir: %v, %d extensions, want %d", err, empty.Len(), builtIn.Len())
	}
	// testdata/catalog also holds a text file and a subdirectory named like a catalog file, with a
	// broken file inside; both are ignored.
	withOperator, err := extensions.LoadCatalog("testdata/catalog")
	if err != nil || withOperator.Len() != builtIn.Len()+2 {
		t.Fatalf("testdata/catalog: %v, %d extensions, want %d", err, withOperator.Len(), builtIn.Len()+2)
	}
	// A directory given as a file path is unreadable.
	file := writeFile(t, t.TempDir(), "x.json", marshal(t, validFile("x")))
	if _, err := extensions.LoadCatalog(file); err == nil || !strings.Contains(err.Error(), "extensions-dir "+file) {
		t.Fatalf("file as dir: error %v", err)
	}
}

func TestCatalogErrors(t *testing.T) {
	type mutation func(doc map[string]any)
	cases := []struct {
		name      string
		mutate    mutation
		raw       string // the file's content instead of a mutated valid file
		fragments []string
	}{
		{name: "syntax error", raw: "{\n  \"id\": \"x\",\n  \"name\" \"broken\"\n}",
			fragments: []string{"invalid JSON at line 3, column 10"}},
		{name: "truncated", raw: "{\n  \"id\": \"x\"", fragments: []string{"invalid JSON at line 2"}},
		{name: "not an object", raw: `[1]`, fragments: []string{"document: must be a JSON object"}},
		{name: "unknown top-level field", mutate: func(d map[string]any) { d["colour"] = "red" },
			fragments: []string{"colour: unknown field"}},
		{name: "unknown item field", mutate: func(d map[string]any) { item(d, 1)["weight"] = 3 },
			fragments: []string{"revisions[0].items[1].weight: unknown field"}},
		{name: "field case matters", mutate: func(d map[string]any) { d["ID"] = "x" },
			fragments: []string{"ID: unknown field"}},
		{name: "wrong type", mutate: func(d map[string]any) { d["isHidden"] = "yes" },
			fragments: []string{"isHidden: must be true or false"}},
		{name: "bad id pattern", mutate: func(d map[string]any) { d["id"] = "Bad_Id" },
			fragments: []string{`id: "Bad_Id" must match ^[a-z0-9][a-z0-9-]{0,63}$`}},
		{name: "id too long", mutate: func(d map[string]any) { d["id"] = strings.Repeat("a", 65) },
			fragments: []string{"id: ", "must match"}},
		{name: "reserved id", mutate: func(d map[string]any) { d["id"] = "deployed" },
			fragments: []string{`id: "deployed" is reserved`}},
		{name: "reserved id all", mutate: func(d map[string]any) { d["id"] = "all" },
			fragments: []string{`id: "all" is reserved (it is the path of the list)`}},
		{name: "duplicate of a built-in", mutate: func(d map[string]any) { d["id"] = "kubernetes" },
			fragments: []string{`id: "kubernetes" is already defined by built-in kubernetes.json`}},
		{name: "permission resource does not fit", mutate: func(d map[string]any) { item(d, 2)["permissionResource"] = "GEO_ENRICHMENT" },
			fragments: []string{"revisions[0].items[2].permissionResource: GEO_ENRICHMENT does not fit targetDomain ALERT (allowed: ALERT)"}},
		{name: "unknown permission resource", mutate: func(d map[string]any) { item(d, 0)["permissionResource"] = "UNKNOWN" },
			fragments: []string{"revisions[0].items[0].permissionResource: UNKNOWN is refused"}},
		{name: "unknown target domain", mutate: func(d map[string]any) { item(d, 0)["targetDomain"] = "WIDGET" },
			fragments: []string{`revisions[0].items[0].targetDomain: "WIDGET" must be one of ACTION,`}},
		{name: "old brand target domain", mutate: func(d map[string]any) { item(d, 0)["targetDomain"] = "CX_CUSTOM_DASHBOARD" },
			fragments: []string{`revisions[0].items[0].targetDomain: "CX_CUSTOM_DASHBOARD" must be one of`, "PLATFORM_CUSTOM_DASHBOARD"}},
		{name: "old brand binary type", mutate: func(d map[string]any) {
			item(d, 0)["binaries"] = []any{map[string]any{"type": "CX_CUSTOM_DASHBOARD_DEFINITION", "fileName": "d.json", "data": "e30="}}
		}, fragments: []string{"revisions[0].items[0].binaries[0].type: ", "CX_CUSTOM_DASHBOARD_DEFINITION"}},
		{name: "no released revision", mutate: func(d map[string]any) { revision0(d)["isTesting"] = true },
			fragments: []string{"revisions: must hold at least one revision with isTesting false"}},
		{name: "no revisions", mutate: func(d map[string]any) { d["revisions"] = []any{}; delete(d, "changelog") },
			fragments: []string{"revisions: must have at least 1 revision"}},
		{name: "duplicate version", mutate: func(d map[string]any) {
			d["revisions"] = append(d["revisions"].([]any), revision0(validFile("x")))
		}, fragments: []string{`revisions[1].version: "1.0.0" is already the version of another revision`}},
		{name: "duplicate item id", mutate: func(d map[string]any) { item(d, 2)["id"] = "second" },
			fragments: []string{`revisions[0].items[2].id: "second" is already the id of another item of this revision`}},
		{name: "item data missing", mutate: func(d map[string]any) { delete(item(d, 1), "data") },
			fragments: []string{"revisions[0].items[1].data: is required"}},
		{name: "item data not an object", mutate: func(d map[string]any) { item(d, 1)["data"] = []any{} },
			fragments: []string{"revisions[0].items[1].data: must be a JSON object"}},
		{name: "binary not base64", mutate: func(d map[string]any) {
			item(d, 0)["binaries"] = []any{map[string]any{"type": "PREVIEW_IMAGE", "fileName": "a.png", "data": "%%%"}}
		}, fragments: []string{"revisions[0].items[0].binaries[0].data: must be base64"}},
		{name: "changelog names a missing version", mutate: func(d map[string]any) {
			d["changelog"] = []any{map[string]any{"version": "9.9.9", "descriptionMd": "Ghost."}}
		}, fragments: []string{`changelog[0].version: "9.9.9" names no revision of this extension`}},
		{name: "replacement names a missing extension", mutate: func(d map[string]any) {
			d["deprecation"] = map[string]any{"reason": "Old.", "replacementExtensions": []any{"no-such-extension"}}
		}, fragments: []string{`deprecation.replacementExtensions[0]: no extension "no-such-extension" in the catalog`}},
		{name: "replacement is itself", mutate: func(d map[string]any) {
			d["deprecation"] = map[string]any{"reason": "Old.", "replacementExtensions": []any{d["id"]}}
		}, fragments: []string{"deprecation.replacementExtensions[0]: an extension cannot replace itself"}},
		{name: "name of 101 characters", mutate: func(d map[string]any) { d["name"] = strings.Repeat("n", 101) },
			fragments: []string{"name: must have 1–100 characters (got 101)"}},
		{name: "name missing", mutate: func(d map[string]any) { delete(d, "name") },
			fragments: []string{"name: is required"}},
		{name: "no integrations", mutate: func(d map[string]any) { d["integrations"] = []any{} },
			fragments: []string{"integrations: must have at least 1 item(s) (got 0)"}},
		{name: "link not absolute", mutate: func(d map[string]any) {
			revision0(d)["integrationDetails"] = []any{map[string]any{"name": "Docs", "link": "/docs"}}
		}, fragments: []string{`revisions[0].integrationDetails[0].link: "/docs" must be an absolute http or https URL`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			content := []byte(c.raw)
			if c.raw == "" {
				doc := validFile("operator-ext")
				c.mutate(doc)
				content = marshal(t, doc)
			}
			p := writeFile(t, dir, "foo.json", content)
			_, err := extensions.LoadCatalog(dir)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			prefix := "extensions-dir " + p + ": "
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error %q does not start with %q", err, prefix)
			}
			for _, f := range c.fragments {
				if !strings.Contains(err.Error(), f) {
					t.Fatalf("error %q does not contain %q", err, f)
				}
			}
		})
	}
}

func TestCatalogNameAtBoundLoads(t *testing.T) {
	dir := t.TempDir()
	doc := validFile("long-name")
	doc["name"] = strings.Repeat("ü", 100) // characters, not bytes
	writeFile(t, dir, "long.json", marshal(t, doc))
	if _, err := extensions.LoadCatalog(dir); err != nil {
		t.Fatalf("name of 100 characters: %v", err)
	}
}

func TestCatalogCrossFileRules(t *testing.T) {
	t.Run("duplicate id between two files", func(t *testing.T) {
		dir := t.TempDir()
		a := writeFile(t, dir, "a.json", marshal(t, validFile("twin")))
		b := writeFile(t, dir, "b.json", marshal(t, validFile("twin")))
		_, err := extensions.LoadCatalog(dir)
		want := "extensions-dir " + b + `: id: "twin" is already defined by extensions-dir ` + a
		if err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	})
	t.Run("replacement read later is found", func(t *testing.T) {
		dir := t.TempDir()
		old := validFile("aaa-old")
		old["deprecation"] = map[string]any{"reason": "Use zzz-new.", "replacementExtensions": []any{"zzz-new"}}
		writeFile(t, dir, "aaa-old.json", marshal(t, old))
		writeFile(t, dir, "zzz-new.json", marshal(t, validFile("zzz-new")))
		if _, err := extensions.LoadCatalog(dir); err != nil {
			t.Fatalf("forward replacement: %v", err)
		}
	})
	t.Run("replacement that is itself deprecated", func(t *testing.T) {
		dir := t.TempDir()
		first := validFile("first")
		first["deprecation"] = map[string]any{"reason": "Use second.", "replacementExtensions": []any{"second"}}
		second := validFile("second")
		second["deprecation"] = map[string]any{"reason": "Use kubernetes.", "replacementExtensions": []any{"kubernetes"}}
		p := writeFile(t, dir, "first.json", marshal(t, first))
		writeFile(t, dir, "second.json", marshal(t, second))
		_, err := extensions.LoadCatalog(dir)
		want := "extensions-dir " + p + `: deprecation.replacementExtensions[0]: extension "second" is itself deprecated`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("error %v, want %q…", err, want)
		}
	})
}
