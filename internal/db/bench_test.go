package db_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// benchEngine is an engine a benchmark runs on: its name and the options of a fresh database.
type benchEngine struct {
	name string
	opts func(b *testing.B) db.Options
}

// benchEngines are SQLite and, when MGMTAPI_TEST_DATABASE_URL is set, PostgreSQL.
func benchEngines() []benchEngine {
	engines := []benchEngine{{"sqlite", func(b *testing.B) db.Options { return db.Options{DataDir: b.TempDir()} }}}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, benchEngine{"postgres", func(b *testing.B) db.Options { return db.Options{URL: apitest.FreshSchema(b)} }})
	}
	return engines
}

// BenchmarkConcurrentWrites measures durable write transactions (one small insert each) on SQLite
// with synchronous=FULL and, when MGMTAPI_TEST_DATABASE_URL is set, on PostgreSQL with
// synchronous_commit on, from one goroutine (the cost of a commit, an fsync, alone) and from 64
// (the shape of concurrent API creates), and reports how many commits each transaction cost.
func BenchmarkConcurrentWrites(b *testing.B) {
	for _, e := range benchEngines() {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", e.name, writers), func(b *testing.B) { benchmarkWrites(b, e.opts(b), writers, false) })
		}
	}
}

// BenchmarkAuditedWrites is BenchmarkConcurrentWrites with an audit entry on every transaction,
// as the API layer gives every mutation: each transaction also writes its audit record. The
// difference between the two is the cost of the audit log on writes.
func BenchmarkAuditedWrites(b *testing.B) {
	for _, e := range benchEngines() {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", e.name, writers), func(b *testing.B) { benchmarkWrites(b, e.opts(b), writers, true) })
		}
	}
}

// benchmarkWrites runs the write transactions of BenchmarkConcurrentWrites on a database opened
// with opts, with an audit entry on each when audited.
func benchmarkWrites(b *testing.B, opts db.Options, writers int, audited bool) {
	ctx := context.Background()
	d, err := db.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.InTx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE bench_writes (id TEXT PRIMARY KEY, at BIGINT NOT NULL)`)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	if audited {
		ctx = db.WithAudit(ctx, &db.AuditEntry{TeamID: 1, KeyID: "bench-key", KeyName: "bench", Operation: "BenchWrite",
			PathIDs: []string{"0190a4e2-0000-7000-8000-000000000000"}, RequestID: "0123456789abcdef01234567",
			Client: "127.0.0.1", Status: 200})
	}
	write := func() error {
		id := fmt.Sprint(seq.Add(1))
		return d.InTx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO bench_writes (id, at) VALUES ($1, $2)`, id, tx.Now.UnixMicro())
			return err
		})
	}
	before := d.GroupCommitStats()
	b.ResetTimer()
	if writers == 1 {
		for b.Loop() {
			if err := write(); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := write(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	if after := d.GroupCommitStats(); after.Transactions > before.Transactions {
		b.ReportMetric(float64(after.Commits-before.Commits)/float64(after.Transactions-before.Transactions), "commits/tx")
	}
}

// BenchmarkHotRowWrites measures the shape of an E1 comment on one case from 64 concurrent
// callers: every transaction updates the same row and reads it back (RETURNING), then appends a
// row with ExecAtEnd, and writes its audit record. On PostgreSQL, when MGMTAPI_TEST_DATABASE_URL
// is set, it is the cost of a member in the group committer's one writer: two round trips.
func BenchmarkHotRowWrites(b *testing.B) {
	for _, e := range benchEngines() {
		b.Run(e.name, func(b *testing.B) {
			ctx := context.Background()
			d, err := db.Open(ctx, e.opts(b))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if err := d.InTx(ctx, func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `CREATE TABLE bench_hot (id INTEGER PRIMARY KEY, n BIGINT NOT NULL, at BIGINT NOT NULL)`); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `CREATE TABLE bench_appended (id TEXT PRIMARY KEY, n BIGINT NOT NULL, body TEXT NOT NULL)`); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO bench_hot (id, n, at) VALUES (1, 0, 0)`)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			ctx = db.WithAudit(ctx, &db.AuditEntry{TeamID: 1, KeyID: "bench-key", KeyName: "bench", Operation: "BenchComment",
				PathIDs: []string{"0190a4e2-0000-7000-8000-000000000000"}, RequestID: "0123456789abcdef01234567",
				Client: "127.0.0.1", Status: 201})
			before := d.GroupCommitStats()
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					err := d.InTx(ctx, func(tx *db.Tx) error {
						var n int64
						if err := tx.QueryRowContext(ctx, `UPDATE bench_hot SET n = n + 1, at = $1 WHERE id = 1 RETURNING n`,
							tx.Now.UnixMicro()).Scan(&n); err != nil {
							return err
						}
						tx.ExecAtEnd("append", `INSERT INTO bench_appended (id, n, body) VALUES ($1, $2, $3)`,
							tx.NewID(), n, "Rolled checkout back; the error rate is recovering.")
						return nil
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if after := d.GroupCommitStats(); after.Transactions > before.Transactions {
				b.ReportMetric(float64(after.Commits-before.Commits)/float64(after.Transactions-before.Transactions), "commits/tx")
			}
		})
	}
}
