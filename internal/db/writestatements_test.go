package db

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestPreparedWrites checks that SQLite write transactions run their texts as statements
// prepared on the write connection, from the first run on, with the same outcomes as unprepared
// ones: rows written, a constraint error that rolls back only its own savepoint, a query's rows,
// a text that does not prepare answers its own error, texts beyond the bound run unprepared, and
// Close closes them.
func TestPreparedWrites(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	prepared := d.group.prepared
	if err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE pw_rows (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO pw_rows (id, n) VALUES ($1, $2)`
	const count = `SELECT COUNT(*), COALESCE(SUM(n), 0) FROM pw_rows`
	for i := range 4 {
		// Each InTx here is a batch of its own; the first prepares both texts, the others reuse them.
		err := d.InTx(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, insert, fmt.Sprint("row-", i), i); err != nil {
				return err
			}
			var rows, sum int
			if err := tx.QueryRowContext(ctx, count).Scan(&rows, &sum); err != nil {
				return err
			}
			if rows != i+1 || sum != i*(i+1)/2 {
				t.Errorf("batch %d sees %d rows summing to %d, want %d and %d", i, rows, sum, i+1, i*(i+1)/2)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	prepared.mu.Lock()
	_, insertKept := prepared.statements[insert]
	_, countKept := prepared.statements[count]
	prepared.mu.Unlock()
	if !insertKept || !countKept {
		t.Fatalf("after four batches insert prepared %v, count prepared %v; want both", insertKept, countKept)
	}

	// A text that does not prepare runs, and fails, as the statement it is, and only its own
	// transaction fails.
	err = d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pw_missing (id) VALUES ($1)`, "x")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "pw_missing") {
		t.Fatalf("insert into a missing table: %v, want SQLite's error naming the table", err)
	}

	// A prepared statement that fails (a duplicate key) fails its own transaction only.
	err = d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, insert, "row-0", 100)
		return err
	})
	if !IsConflict(err) {
		t.Fatalf("duplicate insert through a prepared statement: %v, want a conflict", err)
	}
	var rows, sum int
	if err := d.Read().QueryRowContext(ctx, count).Scan(&rows, &sum); err != nil || rows != 4 || sum != 6 {
		t.Fatalf("after the failed insert: %d rows summing to %d (%v), want 4 and 6", rows, sum, err)
	}

	// Texts beyond the bound still run, unprepared.
	for i := range maxPreparedWrites + 10 {
		err := d.InTx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE pw_rows SET n = n + %d WHERE id = 'row-0'`, i+1))
			return err
		})
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	if n := prepared.prepared(); n > maxPreparedWrites {
		t.Fatalf("%d statements prepared, want at most %d", n, maxPreparedWrites)
	}
	want := (maxPreparedWrites + 10) * (maxPreparedWrites + 11) / 2
	var n int
	if err := d.Read().QueryRowContext(ctx, `SELECT n FROM pw_rows WHERE id = 'row-0'`).Scan(&n); err != nil || n != want {
		t.Fatalf("row-0 holds %d (%v), want %d", n, err, want)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if prepared.prepared() != 0 {
		t.Fatal("Close left write statements prepared")
	}
}

// TestGroupCommitReplacesAWriteConnectionThatCannotBegin checks that a write connection on which
// BEGIN fails (here a transaction left open on it) is discarded, with its prepared statements,
// and the batch runs on a fresh connection: the write succeeds and is durable.
func TestGroupCommitReplacesAWriteConnectionThatCannotBegin(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	write := func(stmt string) error {
		return d.InTx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, stmt)
			return err
		})
	}
	if err := write(`CREATE TABLE rc_rows (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	stale := d.group.conn // the writer is idle: no InTx is in flight
	if _, err := stale.ExecContext(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if err := write(`INSERT INTO rc_rows (id) VALUES ('after')`); err != nil {
		t.Fatalf("write after a transaction was left open on the write connection: %v", err)
	}
	if d.group.conn == stale {
		t.Error("the writer still holds the connection on which BEGIN failed")
	}
	var n int
	if err := d.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM rc_rows WHERE id = 'after'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the row written on the fresh connection: %d rows (%v), want 1", n, err)
	}
}
