package e2m_test

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// BenchmarkCreateInLargeTeam measures a single E2M create (and the delete that keeps the team's
// size) in a team already holding 9000 rules, on SQLite and, when MGMTAPI_TEST_DATABASE_URL is set,
// on PostgreSQL. A write reads only the rules it names or whose names it sets, so its time should
// not grow with the team. Besides ns/op (create plus delete) it reports the create's median (p50-ms).
//
//	go test -run '^$' -bench CreateInLargeTeam -benchtime 200x ./internal/e2m/
func BenchmarkCreateInLargeTeam(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	const teamSize = 9000
	for _, engine := range engines {
		b.Run(string(engine), func(b *testing.B) {
			env := apitest.Start(b, apitest.Options{}, engine)
			key := env.RootKey
			for batch := 0; batch < teamSize/100; batch++ {
				requests := make([]string, 100)
				for i := range requests {
					requests[i] = `{"create":{"e2m":` + benchRule(fmt.Sprintf("seed-%d-%d", batch, i)) + `}}`
				}
				res := env.JSON(b, http.MethodPost, rulesPath+"/all/execute", key, `{"requests":[`+strings.Join(requests, ",")+`]}`)
				if res.Status != http.StatusOK {
					b.Fatalf("seed batch %d: %d %s", batch, res.Status, res.Body)
				}
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				created := apitest.Decode[struct{ E2m struct{ ID string } }](b,
					env.JSON(b, http.MethodPost, rulesPath, key, benchRule(fmt.Sprintf("bench-%d", i))))
				took = append(took, time.Since(start))
				if res := env.JSON(b, http.MethodDelete, rulesPath+"/"+created.E2m.ID, key, ""); res.Status != http.StatusOK {
					b.Fatalf("delete: %d %s", res.Status, res.Body)
				}
			}
			b.StopTimer()
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

func benchRule(name string) string {
	return `{"name":"` + name + `","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"level:error"},` +
		`"metricFields":[{"sourceField":"duration","targetBaseMetricName":"req_duration",` +
		`"aggregations":[{"histogram":{"buckets":[0.1,0.5,1]}}]}]}`
}
