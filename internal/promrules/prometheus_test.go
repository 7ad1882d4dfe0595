package promrules_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// awkwardSets are sets whose names, expressions and labels test the YAML rendering: names and
// values YAML would read as something else unquoted, quotes, colons, '#', newlines, non-ASCII,
// the largest interval and limit the API takes, an empty label value and an empty group.
var awkwardSets = []string{
	`{"name":"HTTP request rates","groups":[{"name":"checkout-http","interval":60,"limit":"10","rules":[
		{"record":"service:http_requests:rate5m","expr":"sum by (service) (rate(http_requests_total[5m]))","labels":{"team":"payments"}}]}]}`,
	`{"name":"yes","groups":[{"name":"null","interval":4294967295,"limit":"18446744073709551615","rules":[
		{"record":"a:b","expr":"up","labels":{"on":"true","n":"007","e":"","t":"~","c":"a: b # not a comment"}}]}]}`,
	`{"name":"- not: [a, list] # x","groups":[{"name":"\"quoted\" 'both' ways: {}","rules":[
		{"record":"multi:line","expr":"sum by (job) (\n  rate(http_requests_total{path=\"/a: b\", code=~\"5..\"}[5m])\n)  \n","labels":{"note":"line one\nline two"}}]}]}`,
	`{"name":"Überwachung ✓","groups":[{"name":"日本","rules":[]},{"name":"  spaces  ","rules":[
		{"record":"x","expr":"vector(1)"}]}]}`,
	`{"name":"HTTP request rates","groups":[{"name":"checkout-http","rules":[{"record":"again","expr":"up == 1"}]}]}`,
}

// TestPromtoolChecksTheRuleFile: the real `promtool check rules` passes on the file the API
// answers for sets that test the rendering, and counts every rule.
func TestPromtoolChecksTheRuleFile(t *testing.T) {
	prometheustest.Binary(t, "promtool")
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, body := range awkwardSets {
			createSet(t, env, env.RootKey, body)
		}
		path := filepath.Join(t.TempDir(), "rules.yml")
		if err := os.WriteFile(path, []byte(ruleFile(t, env, env.RootKey)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, ok := prometheustest.CheckRules(t, path)
		if !ok {
			file, _ := os.ReadFile(path)
			t.Fatalf("promtool check rules failed:\n%s\nthe file:\n%s", out, file)
		}
		if !strings.Contains(out, "SUCCESS: 5 rules found") {
			t.Fatalf("promtool check rules: %s", out)
		}
	})
}

// TestPromtoolRefusesARepeatedGroupName shows why the file's group names are made unique: the
// same checker refuses a file that repeats one, so a pass above means something.
func TestPromtoolRefusesARepeatedGroupName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yml")
	doc := "groups:\n  - name: g\n    rules: []\n  - name: g\n    rules: []\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := prometheustest.CheckRules(t, path); ok || !strings.Contains(out, "repeated") {
		t.Fatalf("promtool passed a repeated group name (%v): %s", ok, out)
	}
}

// TestRealPrometheusRecordsTheExportedRule loads the API's rule file into a real Prometheus that
// scrapes nothing but itself, and sees the series of the set's recording rule appear: job:up:sum
// for the job "prometheus", value 1. The loaded groups keep the interval and limit of the set.
func TestRealPrometheusRecordsTheExportedRule(t *testing.T) {
	prometheustest.Binary(t, "prometheus")
	env := apitest.Start(t, apitest.Options{}, db.SQLite)
	createSet(t, env, env.RootKey, `{"name":"up","groups":[{"name":"jobs","rules":[
		{"record":"job:up:sum","expr":"sum by (job) (up)","labels":{"source":"mgmtapi"}}]}]}`)
	createSet(t, env, env.RootKey, `{"name":"slow","groups":[{"name":"minutely","interval":60,"limit":"10","rules":[
		{"record":"job:up:count","expr":"count by (job) (up)"}]}]}`)
	doc := ruleFile(t, env, env.RootKey)
	prom := prometheustest.Start(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "mgmtapi.yml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	samples := prom.WaitForSeries(t, "job:up:sum", time.Minute)
	if len(samples) != 1 || samples[0].Labels["job"] != "prometheus" || samples[0].Labels["source"] != "mgmtapi" ||
		samples[0].Value != "1" {
		t.Fatalf("job:up:sum = %+v, want one series {job=prometheus, source=mgmtapi} of value 1", samples)
	}
	groups := map[string]prometheustest.RuleGroup{}
	for _, g := range prom.RuleGroups(t) {
		groups[g.Name] = g
	}
	if g := groups["up/jobs"]; g.Interval != 1 || len(g.Rules) != 1 || g.Rules[0].Health == "err" {
		t.Fatalf("group up/jobs as loaded: %+v (want the global interval, 1s, and one healthy rule)", g)
	}
	if g := groups["slow/minutely"]; g.Interval != 60 || g.Limit != 10 || len(g.Rules) != 1 {
		t.Fatalf("group slow/minutely as loaded: %+v (want interval 60s, limit 10, one rule)", g)
	}
}
