package db

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A PostgreSQL lookup reader answers each lookup of one message with its own answer: a row, no
// row, or the error of its own statement, after which PostgreSQL skips the rest of the message
// and the reader sends the lookups behind it again. When its connection is lost it answers on a
// new one.
func TestPgLookupReaderAnswersEachLookup(t *testing.T) {
	schemaURL, admin := heldSchema(t)
	ctx := context.Background()
	d, err := Open(ctx, Options{URL: schemaURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	err = d.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE lookup_batch (k BIGINT PRIMARY KEY, v TEXT NOT NULL, n INTEGER NOT NULL)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO lookup_batch (k, v, n) VALUES (1, 'one', 1), (2, 'two', 2), (3, '', 3)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	config, err := pgx.ParseConfig(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	r := &pgLookupReader{connect: patientConnector{stdlib.GetConnector(*config)}.Connect}
	t.Cleanup(r.close)

	byKey := `SELECT v FROM lookup_batch WHERE k = $1`
	ask := func(query, k string) *pgLookup { return &pgLookup{query: query, args: [][]byte{[]byte(k)}} }
	batch := []*pgLookup{
		ask(byKey, "1"),
		ask(byKey, "not a number"), // 22P02: its statement fails, and PostgreSQL skips the rest
		ask(byKey, "2"),
		ask(byKey, "99"),
		ask(`SELECT n FROM lookup_batch WHERE k = $1`, "1"), // not a text column: never sent
		ask(byKey, "3"),
		ask(`SELECT v FROM nowhere WHERE k = $1`, "1"), // 42P01 when prepared
		ask(byKey, "1"),
	}
	r.answer(batch)
	want := []struct {
		text  string
		found bool
		code  string // the PgError's SQLSTATE; "-" for errLookupNotText
	}{{"one", true, ""}, {"", false, "22P02"}, {"two", true, ""}, {"", false, ""}, {"", false, "-"},
		{"", true, ""}, {"", false, "42P01"}, {"one", true, ""}}
	for i, q := range batch {
		w := want[i]
		var pgErr *pgconn.PgError
		switch {
		case w.code == "-":
			if !errors.Is(q.err, errLookupNotText) {
				t.Errorf("lookup %d: error %v, want errLookupNotText", i, q.err)
			}
		case w.code != "":
			if !errors.As(q.err, &pgErr) || pgErr.Code != w.code {
				t.Errorf("lookup %d: error %v, want SQLSTATE %s", i, q.err, w.code)
			}
		case q.err != nil:
			t.Errorf("lookup %d: %v", i, q.err)
		}
		if string(q.text) != w.text || q.found != w.found {
			t.Errorf("lookup %d: %q, found %v; want %q, %v", i, q.text, q.found, w.text, w.found)
		}
	}

	pid := r.pg.PID()
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	again := []*pgLookup{ask(byKey, "2"), ask(byKey, "1")}
	r.answer(again)
	for i, w := range []string{"two", "one"} {
		if q := again[i]; q.err != nil || string(q.text) != w || !q.found {
			t.Errorf("after the connection was lost, lookup %d: %q, %v, %v; want %q", i, q.text, q.found, q.err, w)
		}
	}
	if r.pg == nil || r.pg.PID() == pid {
		t.Errorf("the reader did not answer on a new connection (pid %d before)", pid)
	}
}

// After Close, a PostgreSQL lookup is refused at once, and a second Close is harmless.
func TestPgLookupsRefusedAfterClose(t *testing.T) {
	schemaURL, _ := heldSchema(t)
	d, err := Open(context.Background(), Options{URL: schemaURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_ = d.Close() // the database/sql pool's own answer to a second Close is its error
	err = d.LookupText(context.Background(), `SELECT name FROM teams WHERE id = $1`, func([]byte) error { return nil }, int64(1))
	if !errors.Is(err, errLookupsClosed) {
		t.Fatalf("a lookup after Close: %v, want errLookupsClosed", err)
	}
}
