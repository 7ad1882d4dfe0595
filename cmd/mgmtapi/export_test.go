package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestExportCommand: mgmtapi export writes the team's document, YAML or JSON, with the key from
// MGMTAPI_KEY; the key is never printed, also when the server refuses it.
func TestExportCommand(t *testing.T) {
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	res := env.JSON(t, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", env.RootKey,
		`{"name":"api","groups":[{"name":"g","rules":[{"record":"job:up:sum","expr":"sum(up)"}]}]}`)
	if res.Status != 200 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	vars := map[string]string{"MGMTAPI_URL": env.URL, "MGMTAPI_KEY": env.RootKey}
	out, errOut, err := runOnce([]string{"export"}, vars)
	if err != nil || !strings.HasPrefix(out, "version: 1\n") || !strings.Contains(out, "record: job:up:sum") {
		t.Fatalf("export: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	out, _, err = runOnce([]string{"export", "--format", "json", "--url", env.URL + "/"}, vars)
	if err != nil || !json.Valid([]byte(out)) {
		t.Fatalf("export --format json: %v\n%s", err, out)
	}
	const wrong = "mgmt_not_a_key_0123456789abcdefghij"
	out, errOut, err = runOnce([]string{"export", "--key", wrong, "--url", env.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong key: %v", err)
	}
	for _, text := range []string{out, errOut, err.Error()} {
		if strings.Contains(text, wrong) || strings.Contains(text, env.RootKey) {
			t.Errorf("the key is printed: %s", text)
		}
	}
	if _, _, err := runOnce([]string{"export", "--url", env.URL}, nil); err == nil || !strings.Contains(err.Error(), "MGMTAPI_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, _, err := runOnce([]string{"export", "--format", "xml"}, vars); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("bad format: %v", err)
	}
}
