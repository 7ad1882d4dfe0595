package db_test

import (
	"context"
	"os"
	"strings"
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

// TestPostgresCommitOfAnAbortedTransactionFails runs a transaction whose statement fails while
// fn goes on and returns nil: PostgreSQL answers its COMMIT with ROLLBACK, which InTx reports as
// an error (with and without an audit record), and nothing of it remains.
func TestPostgresCommitOfAnAbortedTransactionFails(t *testing.T) {
	if os.Getenv(apitest.DatabaseURLVariable) == "" {
		t.Skip("needs " + apitest.DatabaseURLVariable)
	}
	d := open(t, db.Options{URL: apitest.FreshSchema(t)})
	plain := context.Background()
	audited := db.WithAudit(plain, &db.AuditEntry{TeamID: 1, KeyID: "k", KeyName: "test", Operation: "Test", Status: 200})
	for name, ctx := range map[string]context.Context{"plain": plain, "audited": audited} {
		err := d.InTx(ctx, func(tx *db.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, name); err != nil {
				return err
			}
			_, _ = tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, name) // duplicate: aborts
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "commit") {
			t.Errorf("%s: got %v, want a commit error", name, err)
		}
	}
	if ids := rowIDs(t, d); len(ids) != 0 {
		t.Errorf("rows after aborted transactions: %v, want none", ids)
	}
	var records int
	if err := d.Read().QueryRowContext(plain, `SELECT COUNT(*) FROM audit_records`).Scan(&records); err != nil || records != 0 {
		t.Errorf("audit records = %d (%v), want 0", records, err)
	}
}
