package api_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestEveryOperationNamesItsRequests drives each operation of the document without a key and with
// an unknown one, and expects /metrics to count both refusals under the operation's id: the router
// finds a route once, and the operation itself (its security handler, or the error of a missing
// key) names the request.
func TestEveryOperationNamesItsRequests(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	parameter := regexp.MustCompile(`\{[^}]+\}`)
	want := map[string]bool{}
	for path, item := range doc.Paths {
		for method, node := range item {
			var op struct {
				OperationID string `yaml:"operationId"`
			}
			if method == "parameters" {
				continue
			}
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			for _, authorization := range []string{"", "Bearer not-a-key"} {
				res := env.Do(t, strings.ToUpper(method), parameter.ReplaceAllString(path, "x"), authorization, "", "")
				if res.Status != 401 {
					t.Errorf("%s %s with Authorization %q: %d, want 401", method, path, authorization, res.Status)
				}
			}
			want[op.OperationID] = true
		}
	}
	metrics := string(env.Do(t, "GET", "/metrics", "", "", "").Body)
	for id := range want {
		if !strings.Contains(metrics, `mgmtapi_requests_total{operation="`+id+`",status="401"} 2`) {
			t.Errorf("/metrics counts no refused request of %s", id)
		}
	}
	if len(want) < 100 {
		t.Fatalf("only %d operations in the document", len(want))
	}
}
