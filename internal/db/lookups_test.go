package db_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// lookupEngines runs fn on a fresh SQLite database and, when MGMTAPI_TEST_DATABASE_URL is set, on
// a fresh PostgreSQL schema; open opens one more handle on the same database.
func lookupEngines(t *testing.T, fn func(t *testing.T, open func() *db.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, func() *db.DB { return mustOpen(t, db.Options{DataDir: dir}) })
	})
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		t.Run("postgres", func(t *testing.T) {
			url := apitest.FreshSchema(t)
			fn(t, func() *db.DB { return mustOpen(t, db.Options{URL: url}) })
		})
	}
}

func mustOpen(t *testing.T, opts db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func lookup(d *db.DB, k int) (string, error) {
	var got string
	err := d.LookupText(context.Background(), `SELECT v FROM lookup_test WHERE k = $1`,
		func(text []byte) error { got = string(text); return nil }, k)
	return got, err
}

// TestLookupText checks LookupText's answers (the value, ErrNotFound, use's error, a query's
// error) and that it sees every write committed before it began, from this handle and from
// another one on the same database (another replica or process), with more lookups in flight
// than it has connections.
func TestLookupText(t *testing.T) {
	lookupEngines(t, func(t *testing.T, open func() *db.DB) {
		ctx := context.Background()
		d, other := open(), open()
		err := d.InTx(ctx, func(tx *db.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE lookup_test (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO lookup_test (k, v) VALUES (1, 'one'), (2, '')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := lookup(d, 1); err != nil || got != "one" {
			t.Fatalf("lookup 1: %q, %v", got, err)
		}
		if got, err := lookup(d, 2); err != nil || got != "" {
			t.Fatalf("lookup 2: %q, %v", got, err)
		}
		if got, err := lookup(d, 3); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("lookup 3: %q, %v, want ErrNotFound", got, err)
		}
		refused := errors.New("refused")
		if err := d.LookupText(ctx, `SELECT v FROM lookup_test WHERE k = $1`, func([]byte) error { return refused }, 1); !errors.Is(err, refused) {
			t.Fatalf("use's error: %v", err)
		}
		if err := d.LookupText(ctx, `SELECT v FROM nowhere WHERE k = $1`, func([]byte) error { return nil }, 1); err == nil {
			t.Fatal("a query on a missing table gave no error")
		}
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := d.LookupText(canceled, `SELECT v FROM lookup_test WHERE k = $1`, func([]byte) error { return nil }, 1); err != nil {
			t.Fatalf("a lookup does not watch cancellation, yet: %v", err)
		}

		// Writers, through both handles, each look up its own row after each write.
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				writer, k := d, 100+w
				if w%2 == 1 {
					writer = other
				}
				for i := range 20 {
					want := fmt.Sprintf("w%d-%d", w, i)
					err := writer.InTx(ctx, func(tx *db.Tx) error {
						_, err := tx.ExecContext(ctx, `INSERT INTO lookup_test (k, v) VALUES ($1, $2)
							ON CONFLICT (k) DO UPDATE SET v = excluded.v`, k, want)
						return err
					})
					if err != nil {
						errs <- err
						return
					}
					for _, reader := range []*db.DB{d, other} {
						if got, err := lookup(reader, k); err != nil || got != want {
							errs <- fmt.Errorf("row %d after writing %q: %q, %v", k, want, got, err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
