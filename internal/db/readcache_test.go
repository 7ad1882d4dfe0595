package db_test

import (
	"context"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestSQLiteReadConnectionsBoundTheirPageCache checks that every SQLite read connection, those of
// Read and those of LookupText, more than one of each, keeps a page cache of 256 KiB (cache_size
// -256), memory outside the Go heap that each of up to 16 read connections holds (see
// readCacheKiB), and maps nothing of the file (mmap_size 0: mapped pages a scan touches would
// count in the process's resident set once per connection). The write connection keeps SQLite's
// default cache.
func TestSQLiteReadConnectionsBoundTheirPageCache(t *testing.T) {
	ctx := context.Background()
	d := mustOpen(t, db.Options{DataDir: t.TempDir()})
	const pragmas = `SELECT CAST(cache_size AS TEXT) FROM pragma_cache_size`
	const want = "-256"

	// Read: hold one connection's rows open while asking on another, so two connections answer.
	rows, err := d.Read().QueryContext(ctx, pragmas)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	var first string
	if err := rows.Scan(&first); err != nil {
		t.Fatal(err)
	}
	var second string
	if err := d.Read().QueryRowContext(ctx, pragmas).Scan(&second); err != nil {
		t.Fatal(err)
	}
	if first != want || second != want {
		t.Errorf("read connections: cache_size %s and %s, want %s", first, second, want)
	}
	var mmapSize int64
	if err := d.Read().QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&mmapSize); err != nil {
		t.Fatal(err)
	}
	if mmapSize != 0 {
		t.Errorf("read connection: mmap_size %d, want 0", mmapSize)
	}

	// LookupText: lookups in flight at once, each on a connection of its own.
	got := make(chan string, 4)
	release := make(chan struct{})
	for range cap(got) {
		go func() {
			err := d.LookupText(ctx, pragmas, func(text []byte) error {
				got <- string(text)
				<-release
				return nil
			})
			if err != nil {
				got <- "error: " + err.Error()
			}
		}()
	}
	for i := range cap(got) {
		if v := <-got; v != want {
			t.Errorf("lookup connection %d: cache_size %s, want %s", i, v, want)
		}
	}
	close(release)

	var writeCache int
	err = d.InTx(ctx, func(tx *db.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT cache_size FROM pragma_cache_size`).Scan(&writeCache)
	})
	if err != nil {
		t.Fatal(err)
	}
	if writeCache != -2000 {
		t.Errorf("write connection: cache_size %d, want SQLite's default -2000", writeCache)
	}
}
