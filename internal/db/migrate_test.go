package db_test

import (
	"context"
	"os"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Opening a database reads which migrations it has seen and applies only the others: one whose
// record is missing is applied again at the next open (its indexes come back), and opening a
// database that has seen them all changes nothing.
func TestOpenAppliesOnlyThePendingMigrations(t *testing.T) {
	run := func(t *testing.T, opts db.Options) {
		ctx := context.Background()
		reopen := func() *db.DB {
			t.Helper()
			d, err := db.Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		indexes := func(d *db.DB) int {
			t.Helper()
			query := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN ('incidents_by_closed', 'incidents_by_updated')`
			if d.Engine == db.Postgres {
				query = `SELECT (to_regclass('incidents_by_closed') IS NOT NULL)::int + (to_regclass('incidents_by_updated') IS NOT NULL)::int`
			}
			var n int
			if err := d.Read().QueryRowContext(ctx, query).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		d := reopen()
		if n := indexes(d); n != 2 {
			t.Fatalf("after the first open: %d of the indexes of migration 22", n)
		}
		for _, q := range []string{`DROP INDEX incidents_by_closed`, `DROP INDEX incidents_by_updated`,
			`DELETE FROM schema_migrations WHERE version = 22`} {
			exec(t, d, q)
		}
		d.Close()

		d = reopen()
		if n := indexes(d); n != 2 {
			t.Fatalf("migration 22, no longer recorded, was not applied again: %d of its indexes", n)
		}
		var recorded int
		if err := d.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = 22`).Scan(&recorded); err != nil || recorded != 1 {
			t.Fatalf("migration 22 recorded %d times: %v", recorded, err)
		}
		d.Close()
		d = reopen() // every migration seen: nothing to do
		defer d.Close()
		if n := indexes(d); n != 2 {
			t.Fatalf("after an open with nothing to do: %d indexes", n)
		}
	}
	t.Run("sqlite", func(t *testing.T) { run(t, db.Options{DataDir: t.TempDir()}) })
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		t.Run("postgres", func(t *testing.T) { run(t, db.Options{URL: apitest.FreshSchema(t)}) })
	}
}
