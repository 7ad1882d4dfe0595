package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestApplyCommand: mgmtapi apply prints the plan as a diff (dry run first, then for real, then
// all unchanged), refuses a bad document with the server's message, and never prints the key.
func TestApplyCommand(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	vars := map[string]string{"MGMTAPI_URL": env.URL, "MGMTAPI_KEY": env.RootKey}
	dir := t.TempDir()
	file := filepath.Join(dir, "team.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := runOnce([]string{"apply", "-f", file}, vars); err == nil {
		t.Fatal("a missing file is accepted")
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, errOut, err := runOnce(args, vars)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		if strings.Contains(out+errOut, env.RootKey) {
			t.Fatalf("the key is printed")
		}
		return out
	}
	write(`recordingRuleSets:
- {id: set-a, name: api, groups: []}
- {id: set-b, name: db, groups: []}
`)
	dry := mustRun("apply", "-f", file, "--dry-run")
	for _, want := range []string{"recordingRuleSets\n", `  + "api" (set-a)`, `  + "db" (set-b)`, "Dry run, nothing changed: 2 to create, 0 to update, 0 to delete, 0 unchanged."} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if out := mustRun("export"); strings.Contains(out, "set-a") {
		t.Fatalf("the dry run changed the team:\n%s", out)
	}
	if out := mustRun("apply", "-f", file); !strings.Contains(out, "Applied: 2 to create") {
		t.Errorf("apply:\n%s", out)
	}
	write("recordingRuleSets:\n- {id: set-a, name: api v2, groups: []}\n")
	out := mustRun("apply", "-f", file, "--prune")
	for _, want := range []string{`  ~ "api v2" (set-a)` + "\n" + `      ~ name "api" → "api v2"` + "\n", `  - "db" (set-b)`, "Applied: 0 to create, 1 to update, 1 to delete, 0 unchanged."} {
		if !strings.Contains(out, want) {
			t.Errorf("prune lacks %q:\n%s", want, out)
		}
	}
	out = mustRun("apply", "-f", file)
	if !strings.Contains(out, "    (1 unchanged)") || !strings.Contains(out, "Applied: 0 to create, 0 to update, 0 to delete, 1 unchanged.") {
		t.Errorf("again:\n%s", out)
	}
	if out := mustRun("apply", "-f", file, "--verbose"); !strings.Contains(out, `  = "api v2" (set-a)`) {
		t.Errorf("verbose:\n%s", out)
	}
	// A JSON document, from an export, round trips.
	jsonFile := filepath.Join(dir, "team.json")
	if err := os.WriteFile(jsonFile, []byte(mustRun("export", "--format", "json")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := mustRun("apply", "-f", jsonFile); !strings.Contains(out, "Applied: 0 to create, 0 to update, 0 to delete") {
		t.Errorf("JSON document:\n%s", out)
	}
	write("recordingRuleSets:\n- {id: set-a, name: api, groups: [{name: g, rules: [{record: r, expr: 'sum(('}]}]}\n")
	_, _, err := runOnce([]string{"apply", "-f", file}, vars)
	if err == nil || !strings.Contains(err.Error(), `400: recordingRuleSets[0] ("api"): groups[0] ("g").rules[0].expr: not valid PromQL`) {
		t.Errorf("a bad document: %v", err)
	}
}

// TestApplyProgress: a large document gets a line saying what is sent and, while the server
// works, lines saying how long apply has waited.
func TestApplyProgress(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	var doc strings.Builder
	doc.WriteString("recordingRuleSets:\n")
	for i := range progressThreshold {
		fmt.Fprintf(&doc, "- {name: set %d, groups: [{name: g, rules: [{record: r, expr: up}]}]}\n", i)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(doc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	old := progressEvery
	progressEvery = time.Millisecond
	defer func() { progressEvery = old }()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"apply", "-f", file, "--dry-run"},
		func(k string) string { return map[string]string{"MGMTAPI_URL": env.URL, "MGMTAPI_KEY": env.RootKey}[k] },
		&out, &errOut, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("mgmtapi apply: sending %d resources", progressThreshold); !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%d to create", progressThreshold)) {
		t.Errorf("plan:\n%s", out.String())
	}
}

// TestApplyCommandMatchesByName: a set without an id applied twice is one set, the second plan
// says it was matched by name, and a change shows the field's path and its values.
func TestApplyCommandMatchesByName(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	vars := map[string]string{"MGMTAPI_URL": env.URL, "MGMTAPI_KEY": env.RootKey}
	file := filepath.Join(t.TempDir(), "team.yaml")
	applyExpr := func(expr string) string {
		t.Helper()
		doc := "recordingRuleSets:\n- {name: Checkout error rate, groups: [{name: g, rules: [{record: r, expr: " + expr + "}]}]}\n"
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runOnce([]string{"apply", "-f", file, "--verbose"}, vars)
		if err != nil {
			t.Fatalf("apply: %v\n%s", err, errOut)
		}
		return out
	}
	applyExpr("a")
	if out := applyExpr("a"); !strings.Contains(out, `  = "Checkout error rate" (`) || !strings.Contains(out, "), matched by name\n") ||
		!strings.Contains(out, "0 to create, 0 to update, 0 to delete, 1 unchanged") {
		t.Errorf("the same file again:\n%s", out)
	}
	if out := applyExpr("b"); !strings.Contains(out, "), matched by name\n"+`      ~ groups[0].rules[0].expr "a" → "b"`+"\n") {
		t.Errorf("a changed expression:\n%s", out)
	}
	if out, _, _ := runOnce([]string{"export"}, vars); strings.Count(out, "Checkout error rate") != 1 {
		t.Errorf("three applies of a set without an id left:\n%s", out)
	}
}
