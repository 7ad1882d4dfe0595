package incidents_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// BenchmarkIncidentWrites measures what each kind of incident write costs, rollups and counts
// included, one incident per transaction, in a team that already holds 20,000 incidents of four
// kinds (5,000 incidents per rollup row) over 20 values of a contextual label: a firing alert's
// new incident as internal/ingest writes it (trigger), then the users' writes through the handler
// (acknowledge, assign, close: closedAt = now), then the source resolving an incident (resolve:
// closedAt = the alert's end; a state change out of a row whose first creation it holds, the
// worst case of incident_rollup's upkeep), then acknowledging the newest incidents
// (acknowledge-newest). Each other write acts on the oldest incident it has not yet met. On
// SQLite, and on PostgreSQL (analyzed after the preload) when MGMTAPI_TEST_DATABASE_URL is set.
// A fixed count per run keeps runs comparable:
//
//	go test -run '^$' -bench IncidentWrites -benchtime 400x -count 5 ./internal/incidents/
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
				a.Labels = map[string]string{"alertname": a.Name, "service": fmt.Sprintf("svc-%d", i%20)}
				return a
			}
			type opened struct {
				id string
				a  incidents.Alert
			}
			var open []opened
			trigger := func(tx *db.Tx) error {
				a := newAlert()
				id, _, err := incidents.Trigger(ctx, tx, a)
				open = append(open, opened{id, a})
				return err
			}
			for start := 0; start < preload; start += 500 {
				err := database.InTx(ctx, func(tx *db.Tx) error {
					for i := 0; i < 500; i++ {
						if err := trigger(tx); err != nil {
							return err
						}
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
					if err := database.InTx(ctx, trigger); err != nil {
						b.Fatalf("trigger: %v", err)
					}
				}
			})
			h := incidents.NewHandler(database)
			caller := auth.WithPrincipal(ctx, &auth.Principal{TeamID: 1, KeyID: "bench"})
			// the users' writes walk the incidents from the oldest; the source resolves from the
			// second half of the preload, which they do not reach
			byUser := func(name string, write func(id oas.IncidentID) error) {
				b.Run(name, func(b *testing.B) {
					if b.N > preload/2 {
						b.Fatalf("%s: %d writes, more than the %d incidents set apart", name, b.N, preload/2)
					}
					for i := 0; i < b.N; i++ {
						if err := write(oas.IncidentID(open[i].id)); err != nil {
							b.Fatalf("%s: %v", name, err)
						}
					}
				})
			}
			byUser("acknowledge", func(id oas.IncidentID) error {
				_, err := h.AcknowledgeIncidents(caller, &oas.IncidentIDsRequest{IncidentIds: []oas.IncidentID{id}})
				return err
			})
			byUser("assign", func(id oas.IncidentID) error {
				_, err := h.AssignIncidents(caller, &oas.IncidentAssignInput{IncidentIds: []oas.IncidentID{id},
					AssignedTo: oas.IncidentUser{UserId: "user-1"}})
				return err
			})
			byUser("close", func(id oas.IncidentID) error {
				_, err := h.CloseIncidents(caller, &oas.IncidentIDsRequest{IncidentIds: []oas.IncidentID{id}})
				return err
			})
			resolved := 0
			b.Run("resolve", func(b *testing.B) {
				if b.N > preload/2 {
					b.Fatalf("resolve: %d writes, more than the %d incidents set apart", b.N, preload/2)
				}
				resolved = b.N
				for i := 0; i < b.N; i++ {
					a := open[preload/2+i].a
					err := database.InTx(ctx, func(tx *db.Tx) error {
						_, _, _, err := incidents.ResolveFromSource(ctx, tx, a.TeamID, a.Fingerprint, a.StartsAt, a.StartsAt.Add(time.Minute), "bench")
						return err
					})
					if err != nil {
						b.Fatalf("resolve: %v", err)
					}
				}
			})
			// the users acknowledge the newest incident, walking down from the last triggered: it
			// holds the last update of each row it leaves (incident_rollup's, its day's and its
			// label's day's)
			b.Run("acknowledge-newest", func(b *testing.B) {
				if untouched := len(open) - preload/2 - resolved; b.N > untouched {
					b.Fatalf("acknowledge-newest: %d writes, more than the %d incidents no other write met", b.N, untouched)
				}
				for i := 0; i < b.N; i++ {
					_, err := h.AcknowledgeIncidents(caller, &oas.IncidentIDsRequest{IncidentIds: []oas.IncidentID{oas.IncidentID(open[len(open)-1-i].id)}})
					if err != nil {
						b.Fatalf("acknowledge-newest: %v", err)
					}
				}
			})
		})
	}
}
