package db_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// postgresURL returns a fresh PostgreSQL schema, or skips without MGMTAPI_TEST_DATABASE_URL.
func postgresURL(t *testing.T) string {
	t.Helper()
	if os.Getenv(apitest.DatabaseURLVariable) == "" {
		t.Skip(apitest.DatabaseURLVariable + " is not set")
	}
	return apitest.FreshSchema(t)
}

// TestPostgresDeadlockAcrossReplicasRunsAgain has two replicas (two DBs on one schema) each run a
// transaction that locks one row, waits until the other locked the other row, then locks the
// other's row: a deadlock. Both answer success (the one PostgreSQL picks runs again) and both
// increments are there.
func TestPostgresDeadlockAcrossReplicasRunsAgain(t *testing.T) {
	url := postgresURL(t)
	a := open(t, db.Options{URL: url})
	b, err := db.Open(context.Background(), db.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	exec(t, a, `INSERT INTO gc_counter (id, n) VALUES (2, 0)`)
	ctx := context.Background()
	var locked sync.WaitGroup
	locked.Add(2)
	var once [2]sync.Once
	cross := func(d *db.DB, who, first, second int) error {
		return d.InTx(ctx, func(tx *db.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE gc_counter SET n = n + 1 WHERE id = $1`, first); err != nil {
				return err
			}
			once[who].Do(func() { // the first attempt only: a second one runs straight through
				locked.Done()
				locked.Wait()
			})
			_, err := tx.ExecContext(ctx, `UPDATE gc_counter SET n = n + 1 WHERE id = $1`, second)
			return err
		})
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = cross(a, 0, 1, 2) }()
	go func() { defer wg.Done(); errs[1] = cross(b, 1, 2, 1) }()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v, want success", i, err)
		}
	}
	for _, id := range []int{1, 2} {
		var n int
		if err := a.Read().QueryRowContext(ctx, `SELECT n FROM gc_counter WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("counter %d = %d, want 2 (one increment per replica)", id, n)
		}
	}
}
