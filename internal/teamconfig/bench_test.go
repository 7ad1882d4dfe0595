package teamconfig_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// BenchmarkApply1000Sets applies a document of 1,000 recording-rule sets on SQLite: the first
// apply of each iteration creates them in a fresh team, the second finds them all unchanged
// (reported as unchanged-ms), and the export of the team is timed too (export-ms).
//
//	go test ./internal/teamconfig -run '^$' -bench Apply1000Sets -benchtime 3x
func BenchmarkApply1000Sets(b *testing.B) {
	env := apitest.Start(b, apitest.Options{}, db.SQLite)
	var doc strings.Builder
	doc.WriteString("recordingRuleSets:\n")
	for i := range 1000 {
		fmt.Fprintf(&doc, "- {name: set %d, groups: [{name: g, interval: 60, rules: [{record: 'job:up:sum', expr: 'sum by (job) (up)', labels: {n: '%d'}}]}]}\n", i, i)
	}
	var unchanged, exported float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		_, key := env.MustTeam(b, fmt.Sprintf("bench %d", i))
		b.StartTimer()
		res := env.Do(b, http.MethodPost, applyPath, "Bearer "+key, "application/yaml", doc.String())
		if res.Status != 200 {
			b.Fatalf("apply: %d %.300s", res.Status, res.Body)
		}
		b.StopTimer()
		start := nowMillis()
		exp := env.Do(b, http.MethodGet, exportPath, "Bearer "+key, "", "")
		exported += nowMillis() - start
		start = nowMillis()
		again := env.Do(b, http.MethodPost, applyPath, "Bearer "+key, "application/yaml", string(exp.Body))
		unchanged += nowMillis() - start
		if again.Status != 200 || !strings.Contains(string(again.Body), `"unchanged":1001`) {
			b.Fatalf("second apply: %d %.300s", again.Status, again.Body)
		}
		b.StartTimer()
	}
	b.ReportMetric(exported/float64(b.N), "export-ms")
	b.ReportMetric(unchanged/float64(b.N), "unchanged-ms")
}

func nowMillis() float64 { return float64(time.Now().UnixNano()) / 1e6 }
