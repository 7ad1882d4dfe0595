package db_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// BenchmarkConcurrentWrites measures durable write transactions (one small insert each) from 64
// goroutines on SQLite with synchronous=FULL, the shape of concurrent API creates.
func BenchmarkConcurrentWrites(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, db.Options{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.InTx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE bench_writes (id TEXT PRIMARY KEY, at INTEGER NOT NULL)`)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	before := d.GroupCommitStats()
	var seq atomic.Int64
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // about 64 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprint(seq.Add(1))
			if err := d.InTx(ctx, func(tx *db.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO bench_writes (id, at) VALUES ($1, $2)`, id, tx.Now.UnixMicro())
				return err
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if after := d.GroupCommitStats(); after.Transactions > before.Transactions {
		b.ReportMetric(float64(after.Commits-before.Commits)/float64(after.Transactions-before.Transactions), "commits/tx")
	}
}
