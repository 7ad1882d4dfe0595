package promrules_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// BenchmarkRuleFile GETs the rule file of a team of 100 sets of 10 groups of 10 rules (10,000
// rules, about 1.3 MB of YAML) on SQLite: reading the sets, converting and rendering.
func BenchmarkRuleFile(b *testing.B) {
	env := apitest.Start(b, apitest.Options{}, db.SQLite)
	for s := range 100 {
		var groups []string
		for g := range 10 {
			var rules []string
			for r := range 10 {
				rules = append(rules, fmt.Sprintf(`{"record":"set%d:group%d:rule%d","expr":"sum by (job, instance) (rate(http_requests_total{code=~\"5..\"}[5m]))","labels":{"team":"t%d","tier":"1"}}`, s, g, r, s))
			}
			groups = append(groups, fmt.Sprintf(`{"name":"group %d","interval":60,"limit":"100","rules":[%s]}`, g, strings.Join(rules, ",")))
		}
		res := env.JSON(b, http.MethodPost, setsPath, env.RootKey, fmt.Sprintf(`{"name":"set %d","groups":[%s]}`, s, strings.Join(groups, ",")))
		if res.Status != http.StatusOK {
			b.Fatalf("create: %d %s", res.Status, res.Body)
		}
	}
	b.ResetTimer()
	var size int
	for b.Loop() {
		res := env.Do(b, http.MethodGet, rulesPath, "Bearer "+env.RootKey, "", "")
		if res.Status != http.StatusOK {
			b.Fatalf("GET: %d %s", res.Status, res.Body)
		}
		size = len(res.Body)
	}
	b.ReportMetric(float64(size), "bytes/file")
}
