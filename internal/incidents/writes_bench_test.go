package incidents_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// BenchmarkIncidentWrites measures what alert ingestion costs the incidents' side, one alert per
// transaction as internal/ingest writes them: a firing alert's new incident (trigger) and the
// source resolving the oldest open incident (resolve: a state change out of a row whose first
// creation it holds, the worst case of incident_rollup's upkeep), in a team that already holds
// 20,000 incidents of four kinds (5,000 incidents per rollup row). On SQLite, and on PostgreSQL
// (analyzed after the preload) when MGMTAPI_TEST_DATABASE_URL is set.
//
//	go test -run '^$' -bench IncidentWrites -count 3 ./internal/incidents/
func BenchmarkIncidentWrites(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	const preload = 20000
	for _, engine := range engines {
		b.Run(string(engine), func(b *testing.B) {
			ctx := context.Background()
			opts := db.Options{DataDir: b.TempDir()}
			if engine == db.Postgres {
				opts.URL = benchSchema(b)
			}
			database, err := db.Open(ctx, opts)
			if err != nil {
				b.Fatalf("open: %v", err)
			}
			defer database.Close()
			if _, err := teams.Bootstrap(ctx, database, "mgmt_bench_root_key"); err != nil {
				b.Fatalf("bootstrap: %v", err)
			}
			next := 0
			newAlert := func() incidents.Alert {
				i := next
				next++
				a := alert(fmt.Sprintf("w-%d", i))
				a.StartsAt = a.StartsAt.Add(time.Duration(i) * time.Second)
				a.Name = fmt.Sprintf("alert-%d", i%2)
				a.Severity = []oas.IncidentSeverity{oas.IncidentSeverityINCIDENTSEVERITYERROR, oas.IncidentSeverityINCIDENTSEVERITYINFO}[(i/2)%2]
				return a
			}
			var open []incidents.Alert
			for start := 0; start < preload; start += 500 {
				err := database.InTx(ctx, func(tx *db.Tx) error {
					for i := 0; i < 500; i++ {
						a := newAlert()
						if _, _, err := incidents.Trigger(ctx, tx, a); err != nil {
							return err
						}
						open = append(open, a)
					}
					return nil
				})
				if err != nil {
					b.Fatalf("preload: %v", err)
				}
			}
			if engine == db.Postgres {
				// autovacuum would do this soon after a load this size; without statistics the
				// planner takes a young table for a tiny one
				if err := database.InTx(ctx, func(tx *db.Tx) error { _, err := tx.ExecContext(ctx, `ANALYZE`); return err }); err != nil {
					b.Fatalf("analyze: %v", err)
				}
			}
			b.Run("trigger", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					a := newAlert()
					err := database.InTx(ctx, func(tx *db.Tx) error {
						_, _, err := incidents.Trigger(ctx, tx, a)
						return err
					})
					if err != nil {
						b.Fatalf("trigger: %v", err)
					}
					open = append(open, a)
				}
			})
			b.Run("resolve", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if len(open) == 0 {
						b.Fatalf("no open incident left")
					}
					a := open[0]
					open = open[1:]
					err := database.InTx(ctx, func(tx *db.Tx) error {
						_, _, _, err := incidents.ResolveFromSource(ctx, tx, a.TeamID, a.Fingerprint, a.StartsAt, a.StartsAt.Add(time.Minute), "bench")
						return err
					})
					if err != nil {
						b.Fatalf("resolve: %v", err)
					}
				}
			})
		})
	}
}
