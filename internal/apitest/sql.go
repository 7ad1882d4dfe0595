package apitest

import (
	"context"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// MustExec runs one statement in a write transaction of d, failing the test when it fails: for
// tests that set up rows as an earlier version stored them (migration tests).
func MustExec(t testing.TB, d *db.DB, query string, args ...any) {
	t.Helper()
	if err := d.InTx(context.Background(), func(tx *db.Tx) error {
		_, err := tx.ExecContext(context.Background(), query, args...)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// MustQueryString reads the one text column of the one row query answers in d, failing the test
// when there is none.
func MustQueryString(t testing.TB, d *db.DB, query string, args ...any) string {
	t.Helper()
	var s string
	if err := d.Read().QueryRowContext(context.Background(), query, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}
