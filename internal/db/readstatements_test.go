package db

import (
	"context"
	"database/sql/driver"
	"fmt"
	"testing"
)

// TestPreparedReads checks that reads through the statement cache answer as the pool does: for
// texts it keeps, for texts beyond its bound, for a query that does not prepare, and in a read
// transaction.
func TestPreparedReads(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	reads, ok := d.Read().(*preparedReads)
	if !ok {
		t.Fatalf("Read() on SQLite is %T, want *preparedReads", d.Read())
	}
	for i := range maxPreparedReads + 10 {
		for range 2 {
			var got int
			if err := reads.QueryRowContext(ctx, fmt.Sprintf("SELECT $1 + %d", i), 1).Scan(&got); err != nil {
				t.Fatalf("query %d: %v", i, err)
			}
			if got != i+1 {
				t.Fatalf("query %d: %d, want %d", i, got, i+1)
			}
		}
	}
	if n := len(reads.statements); n != maxPreparedReads {
		t.Fatalf("%d statements kept, want the bound %d", n, maxPreparedReads)
	}
	if _, err := reads.QueryContext(ctx, "SELECT FROM nowhere"); err == nil {
		t.Fatal("a query that does not prepare gave no error")
	}
	tx, err := reads.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := tx.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("read transaction: %d, %v", one, err)
	}
	_ = tx.Rollback()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if len(reads.statements) != 0 {
		t.Fatal("Close left statements prepared")
	}
}

// TestLookupStatementsBound checks that a lookup connection keeps at most maxPreparedReads
// statements, and that texts beyond the bound still answer (prepared for their call only).
func TestLookupStatementsBound(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// One connection's statements are bounded: every text through the same connection.
	c, err := d.lookups.get()
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxPreparedReads + 10 {
		var got string
		_, err := c.lookupText(ctx, fmt.Sprintf("SELECT CAST($1 + %d AS TEXT)", i),
			[]driver.NamedValue{{Ordinal: 1, Value: int64(1)}}, func(text []byte) error {
				got = string(text)
				return nil
			})
		if err != nil || got != fmt.Sprint(i+1) {
			t.Fatalf("lookup %d: %q, %v", i, got, err)
		}
	}
	if n := len(c.statements); n != maxPreparedReads {
		t.Fatalf("%d statements kept, want the bound %d", n, maxPreparedReads)
	}
	d.lookups.put(c, false)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(d.lookups.idle); n != 0 {
		t.Fatalf("Close left %d lookup connections open", n)
	}
}
