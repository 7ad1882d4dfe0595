package routers_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/routers"
)

// BenchmarkRetriggerLookup is the question routing asks before each trigger and reminder of a
// definition's alert with a retriggering period (routers' lastTriggers): which connectors were
// sent a trigger of the same alert identity within the period. The team holds `history`
// resolved incidents of that identity (a flapping alert's past, each closed long before the
// period, each with triggers to 3 connectors), one open incident of it with a week of minutely
// reminders to one connector, and 20,000 incidents of other alerts with 2 triggers each. The
// answer must name the 3 connectors of the open incident's recent deliveries.
func BenchmarkRetriggerLookup(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		for _, history := range []int{10, 2000} {
			b.Run(fmt.Sprintf("%s/history=%d", engine, history), func(b *testing.B) {
				env := apitest.Start(b, apitest.Options{}, engine)
				ctx := context.Background()
				team := int64(1) // the bootstrap team, RootKey's
				now := time.Now().UTC().Truncate(time.Microsecond)
				period := 30 * time.Minute
				insertIncident := func(tx *db.Tx, id, fingerprint string, created time.Time, closed bool) error {
					var closedAt, resolvedAt any
					state := "INCIDENT_STATE_TRIGGERED"
					if closed {
						closedAt, resolvedAt, state = created.Add(time.Minute).UnixMicro(), created.Add(time.Minute).UnixMicro(), "INCIDENT_STATE_RESOLVED"
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO incidents (team_id, id, case_id, fingerprint, starts_at, name, description,
						severity, state, status, is_muted, application_name, subsystem_name, contextual_labels, display_labels, meta_labels,
						created_at, closed_at, last_state_update_time, last_state_update_key, source_resolved_at)
						VALUES ($1, $2, '', $3, $4, 'n', '', 'INCIDENT_SEVERITY_ERROR', $5, $5, $9, '', '', '{}', '{}', '', $4, $6, $7, '', $8)`,
						team, id, fingerprint, created.UnixMicro(), state, closedAt, created.Add(time.Minute).UnixMicro(), resolvedAt, false)
					return err
				}
				delivery := func(tx *db.Tx, n int, incident, connector string, at time.Time) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO deliveries (team_id, id, request_id, router_id, router_name, connector_id,
						connector_name, connector_type, url, routing_key, method, headers, payload, entity_type, entity_id, case_id,
						event_kind, idempotency_key, dedup_key, state, attempts, created_at, next_attempt_at, lease_owner, lease_until,
						status_code, error, finished_at) VALUES ($1, $2, 'r', 'router', 'router', $3, 'c', 'GENERIC_HTTPS', 'https://x', '',
						'POST', '{}', '{}', 'ALERTS', $4, '', 'triggered', $2, '', 'sent', 1, $5, $5, '', 0, 200, '', $5)`,
						team, fmt.Sprintf("d%d", n), connector, incident, at.UnixMicro())
					return err
				}
				n := 0
				err := env.DB.InTx(db.WithoutAudit(ctx), func(tx *db.Tx) error {
					for i := range 20000 {
						at := now.Add(-time.Duration(i) * time.Minute)
						id := fmt.Sprintf("other-%d", i)
						if err := insertIncident(tx, id, fmt.Sprintf("fp-%d", i%5000), at, i > 10); err != nil {
							return err
						}
						for c := range 2 {
							n++
							if err := delivery(tx, n, id, fmt.Sprintf("conn-%d", c), at); err != nil {
								return err
							}
						}
					}
					for i := range history {
						at := now.Add(-2*period - time.Duration(i)*time.Hour)
						id := fmt.Sprintf("past-%d", i)
						if err := insertIncident(tx, id, "def:identity", at, true); err != nil {
							return err
						}
						for c := range 3 {
							n++
							if err := delivery(tx, n, id, fmt.Sprintf("conn-%d", c), at); err != nil {
								return err
							}
						}
					}
					opened := now.Add(-7*24*time.Hour + time.Minute)
					if err := insertIncident(tx, "open", "def:identity", opened, false); err != nil {
						return err
					}
					for c := range 3 {
						n++
						if err := delivery(tx, n, "open", fmt.Sprintf("conn-%d", c), now.Add(-time.Duration(c+1)*time.Minute)); err != nil {
							return err
						}
					}
					for m := 10; m < 7*24*60; m++ {
						n++
						if err := delivery(tx, n, "open", "conn-0", now.Add(-time.Duration(m)*time.Minute)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := env.DB.InTx(db.WithoutAudit(ctx), func(tx *db.Tx) error {
					_, err := tx.ExecContext(ctx, `ANALYZE`)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				since := now.Add(-period).UnixMicro()
				if os.Getenv("PLAN") != "" {
					q := "EXPLAIN QUERY PLAN "
					if engine == db.Postgres {
						q = "EXPLAIN ANALYZE "
					}
					rows, err := env.DB.Read().QueryContext(ctx, q+routers.LastTriggersQuery, team, since, "ALERTS", "open")
					if err != nil {
						b.Fatal(err)
					}
					cols, _ := rows.Columns()
					for rows.Next() {
						vals := make([]any, len(cols))
						ptrs := make([]any, len(cols))
						for i := range vals {
							ptrs[i] = &vals[i]
						}
						_ = rows.Scan(ptrs...)
						b.Log(vals...)
					}
					rows.Close()
				}
				b.ResetTimer()
				for b.Loop() {
					got, err := routers.LastTriggers(ctx, env.DB.Read(), team, "ALERTS", "open", since)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) != 3 {
						b.Fatalf("%d connectors, want 3: %v", len(got), got)
					}
				}
			})
		}
	}
}
