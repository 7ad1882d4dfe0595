package delivery_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// benchEngines runs fn on SQLite and, when the test database is set, on PostgreSQL.
func benchEngines(b *testing.B, fn func(b *testing.B, env *apitest.Env, f *fixture)) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		b.Run(string(engine), func(b *testing.B) {
			env := apitest.Start(b, apitest.Options{}, engine)
			team, key := env.MustTeam(b, "bench")
			f := &fixture{env: env, team: team, key: key, caseID: "case-bench"}
			fn(b, env, f)
		})
	}
}

// BenchmarkOutboxThroughput: b.N records over 8 connectors, enqueued 100 per transaction, then
// sent by one worker to a local receiver answering 200 at once; reports deliveries per second
// of the sending alone (claim, POST, outcome recorded).
func BenchmarkOutboxThroughput(b *testing.B) {
	benchEngines(b, func(b *testing.B, env *apitest.Env, f *fixture) {
		rc := newReceiver(b, ok)
		var batch []delivery.Delivery
		for i := range b.N {
			d := f.record(rc.URL, fmt.Sprintf("hook-%d", i%8), fmt.Sprintf("bench-%d-%d", b.N, i))
			d.CaseID = "" // no case history: the outbox alone
			batch = append(batch, d)
			if len(batch) == 100 || i == b.N-1 {
				f.enqueue(b, batch...)
				batch = batch[:0]
			}
		}
		w := worker(env, nil)
		b.ResetTimer()
		start := time.Now()
		if err := w.Drain(context.Background()); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		if rc.count() != b.N {
			rows, _ := env.DB.Read().QueryContext(context.Background(), `SELECT state, error, attempts, count(*) FROM deliveries GROUP BY state, error, attempts`)
			for rows.Next() {
				var st, e string
				var a, n int
				_ = rows.Scan(&st, &e, &a, &n)
				b.Logf("%s %q %d: %d", st, e, a, n)
			}
			rows.Close()
			b.Fatalf("%d requests for %d records", rc.count(), b.N)
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	})
}

// BenchmarkEnqueue: the cost one Enqueue adds to a write transaction, measured as a transaction
// writing one row of its own (an incident-sized write stands in: one INSERT) with and without
// one delivery record.
func BenchmarkEnqueue(b *testing.B) {
	benchEngines(b, func(b *testing.B, env *apitest.Env, f *fixture) {
		ctx := context.Background()
		if err := env.DB.InTx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE bench_events (id TEXT PRIMARY KEY, body TEXT NOT NULL)`)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		n := 0
		write := func(b *testing.B, withDelivery bool) {
			n++
			err := env.DB.InTx(ctx, func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO bench_events (id, body) VALUES ($1, $2)`,
					fmt.Sprint(n), `{"title":"disk full","priority":"P1"}`); err != nil {
					return err
				}
				if !withDelivery {
					return nil
				}
				return delivery.Enqueue(ctx, tx, f.record("https://hooks.example.com/x", "hook-1", fmt.Sprint("enq-", n)))
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		// the marginal cost of one Enqueue, apart from the commit's fsync: 100 in one transaction
		b.Run("100 deliveries in one transaction", func(b *testing.B) {
			for b.Loop() {
				err := env.DB.InTx(ctx, func(tx *db.Tx) error {
					for range 100 {
						n++
						d := f.record("https://hooks.example.com/x", "hook-1", fmt.Sprint("enq-", n))
						if err := delivery.Enqueue(ctx, tx, d); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/delivery")
		})
		for _, withDelivery := range []bool{false, true} {
			name := "event only"
			if withDelivery {
				name = "event and one delivery"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					write(b, withDelivery)
				}
			})
		}
	})
}
