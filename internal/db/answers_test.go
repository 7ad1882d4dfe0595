package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"
)

// A lookup's answer is kept and given again until the next write transaction on the file,
// through any handle of this process; a read made while a write transaction runs is not kept.
func TestAnswersAreKeptBetweenWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(opts Options) *DB {
		d, err := Open(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	d, other := open(Options{DataDir: dir}), open(Options{DataDir: dir})
	if d.answers == nil || d.answers != other.answers {
		t.Fatal("two handles on one file held alone do not share one answer cache")
	}
	write := func(on *DB, v string) {
		t.Helper()
		if err := on.InTx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO answers_test (k, v) VALUES (1, $1)
				ON CONFLICT (k) DO UPDATE SET v = excluded.v`, v)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func() string {
		t.Helper()
		var got string
		if err := d.LookupText(ctx, `SELECT v FROM answers_test WHERE k = $1`,
			func(text []byte) error { got = string(text); return nil }, 1); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE answers_test (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	write(d, "one")
	if got := lookup(); got != "one" {
		t.Fatalf("lookup = %q, want one", got)
	}
	// The kept answer is what the next lookup gives: mark it.
	key, _ := answerKey(nil, `SELECT v FROM answers_test WHERE k = $1`, namedInt(1))
	d.answers.mu.Lock()
	kept, ok := d.answers.answers[string(key)]
	if !ok {
		d.answers.mu.Unlock()
		t.Fatal("the answer was not kept")
	}
	kept.text = []byte("kept")
	d.answers.answers[string(key)] = kept
	d.answers.mu.Unlock()
	if got := lookup(); got != "kept" {
		t.Fatalf("second lookup = %q, want the kept answer", got)
	}
	// A write through the other handle ends it.
	write(other, "two")
	if got := lookup(); got != "two" {
		t.Fatalf("after a write through another handle: %q, want two", got)
	}
	// A lookup while a write transaction runs reads the file and keeps nothing.
	d.answers.mu.Lock()
	clear(d.answers.answers)
	d.answers.mu.Unlock()
	d.answers.writing()
	got := lookup()
	d.answers.written()
	if got != "two" {
		t.Fatalf("lookup during a write = %q, want two", got)
	}
	d.answers.mu.RLock()
	n := len(d.answers.answers)
	d.answers.mu.RUnlock()
	if n != 0 {
		t.Fatalf("a lookup made while a write transaction ran was kept (%d answers)", n)
	}
}

// No answers are kept where another process may write the database: a SQLite file opened
// shared, and PostgreSQL not held alone.
func TestNoAnswerCacheWhereOthersWrite(t *testing.T) {
	d, err := Open(context.Background(), Options{DataDir: t.TempDir(), SharedFile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.answers != nil {
		t.Fatal("a SQLite file opened shared has an answer cache")
	}
	p, err := openPostgres("postgres://127.0.0.1:1/none") // connects at its first use, not here
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.answers != nil {
		t.Fatal("PostgreSQL has an answer cache")
	}
}

// The cache holds at most answerCacheBytes.
func TestAnswerCacheIsBounded(t *testing.T) {
	c := &answerCache{answers: map[string]cachedAnswer{}}
	text := make([]byte, 60<<10)
	for i := range 1000 {
		key, _ := answerKey(nil, "q", namedInt(int64(i)))
		c.keep(key, 0, text)
		if c.bytes > answerCacheBytes {
			t.Fatalf("after %d answers the cache holds %d bytes", i+1, c.bytes)
		}
	}
	if len(c.answers) < answerCacheBytes/(61<<10) {
		t.Fatalf("the cache kept only %d answers", len(c.answers))
	}
	key, _ := answerKey(nil, "q", namedInt(5000))
	c.keep(key, 0, make([]byte, maxCachedAnswer+1))
	if _, ok := c.get(key); ok {
		t.Fatal("an answer larger than maxCachedAnswer was kept")
	}
}

func namedInt(v int64) []driver.NamedValue { return []driver.NamedValue{{Ordinal: 1, Value: v}} }

// A read during which a write transaction began is not kept, nor is one kept before a write
// given after it.
func TestAnswerCacheFencesWrites(t *testing.T) {
	c := &answerCache{answers: map[string]cachedAnswer{}}
	key, _ := answerKey(nil, "q", namedInt(1))
	gen, ok := c.before()
	if !ok {
		t.Fatal("no write runs, yet the read may not be kept")
	}
	c.writing() // begins while the read runs
	c.keep(key, gen, []byte("old"))
	c.written()
	if _, hit := c.get(key); hit {
		t.Fatal("a read during which a write began was kept")
	}
	gen, _ = c.before()
	c.keep(key, gen, []byte("old"))
	if _, hit := c.get(key); !hit {
		t.Fatal("a read with no write about it was not kept")
	}
	c.writing()
	if _, hit := c.get(key); hit {
		t.Fatal("an answer kept before a write was given while it ran")
	}
	c.written()
	if _, hit := c.get(key); hit {
		t.Fatal("an answer kept before a write was given after it")
	}
}

// heldSchema makes a PostgreSQL schema of its own for a test and returns the URL that opens it,
// or skips the test without MGMTAPI_TEST_DATABASE_URL. The schema is dropped when the test ends.
func heldSchema(t *testing.T) (schemaURL string, admin *sql.DB) {
	t.Helper()
	base := os.Getenv("MGMTAPI_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("MGMTAPI_TEST_DATABASE_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("held_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), admin
}

// waitFor polls cond for up to 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 15 s for %s", what)
		}
	}
}

// A PostgreSQL database held alone keeps LookupText's answers between write transactions, and
// no other process opens it, shared or alone, while it is held. When the hold's connection is
// lost no answer is kept or given until the hold is taken again; a process that took the database
// meanwhile makes this one's writes fail (ErrHeldElsewhere, not ready) until it lets go.
func TestPostgresHeldAlone(t *testing.T) {
	ctx := context.Background()
	schemaURL, admin := heldSchema(t)
	d, err := Open(ctx, Options{URL: schemaURL, PostgresAlone: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.answers == nil {
		t.Fatal("a PostgreSQL database held alone has no answer cache")
	}
	for _, alone := range []bool{false, true} {
		other, err := Open(ctx, Options{URL: schemaURL, PostgresAlone: alone})
		if !errors.Is(err, ErrHeldElsewhere) {
			if other != nil {
				other.Close()
			}
			t.Fatalf("another process opened the database held alone (alone %v): %v", alone, err)
		}
	}
	if err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE answers_test (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const query = `SELECT v FROM answers_test WHERE k = $1`
	write := func(v string) error {
		return d.InTx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO answers_test (k, v) VALUES (1, $1)
				ON CONFLICT (k) DO UPDATE SET v = excluded.v`, v)
			return err
		})
	}
	lookup := func() string {
		t.Helper()
		var got string
		if err := d.LookupText(ctx, query, func(text []byte) error { got = string(text); return nil }, 1); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// mark changes the kept answer, so that a lookup that gives it shows it was not read.
	key, _ := answerKey(nil, query, namedInt(1))
	mark := func() bool {
		d.answers.mu.Lock()
		defer d.answers.mu.Unlock()
		kept, ok := d.answers.answers[string(key)]
		if ok && kept.generation == d.answers.generation.Load() {
			kept.text = []byte("kept")
			d.answers.answers[string(key)] = kept
			return true
		}
		return false
	}
	if err := write("one"); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); got != "one" || !mark() {
		t.Fatalf("lookup = %q, or its answer was not kept", got)
	}
	if got := lookup(); got != "kept" {
		t.Fatalf("second lookup = %q, want the kept answer", got)
	}
	if err := write("two"); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); got != "two" {
		t.Fatalf("after a write: %q, want two", got)
	}

	// The hold's connection is lost and taken again at once: an answer kept before is not given
	// after (another process may have written in between).
	mark()
	if _, err := admin.Exec(`SELECT pg_terminate_backend($1)`, d.hold.pid.Load()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hold to be taken again", func() bool { return d.hold.lost.Load() == 1 && d.hold.taken.Load() == 2 })
	if got := lookup(); got != "two" || !mark() {
		t.Fatalf("with the hold back, lookup = %q, or its answer was not kept", got)
	}

	// Lost again, and another process takes the database first: a session waiting for the lock
	// gets it as PostgreSQL drops this process's. What it writes is read, not answered from the
	// cache; this process's writes are refused until it lets go.
	holder, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var holderPID int
	if err := holder.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&holderPID); err != nil {
		t.Fatal(err)
	}
	lockKey := `hashtextextended('mgmtapi.server:` + schemaName(t, schemaURL) + `', 0)`
	granted := make(chan error, 1)
	go func() {
		_, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock_shared(`+lockKey+`)`)
		granted <- err
	}()
	waitFor(t, "the other session to wait for the lock", func() bool {
		var waiting bool
		err := admin.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = $1 AND NOT granted)`,
			holderPID).Scan(&waiting)
		return err == nil && waiting
	})
	if _, err := admin.Exec(`SELECT pg_terminate_backend($1)`, d.hold.pid.Load()); err != nil {
		t.Fatal(err)
	}
	if err := <-granted; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hold to be refused", func() bool { return d.hold.lost.Load() == 2 && d.hold.refused.Load() })
	if _, err := admin.Exec(`UPDATE ` + schemaName(t, schemaURL) + `.answers_test SET v = 'three'`); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); got != "three" {
		t.Fatalf("with the hold lost, lookup = %q, want three (read from the database)", got)
	}
	if mark() {
		t.Fatal("an answer read while the hold was lost was kept")
	}
	if err := write("four"); !errors.Is(err, ErrHeldElsewhere) || FaultOf(err) != FaultUnavailable {
		t.Fatalf("a write while another process holds the database = %v, want ErrHeldElsewhere (unavailable)", err)
	}
	var notReady *NotReadyError
	if err := d.Ready(ctx); !errors.As(err, &notReady) {
		t.Fatalf("Ready while another process holds the database = %v", err)
	}
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock_shared(`+lockKey+`)`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hold to be taken back", func() bool { return d.hold.taken.Load() == 3 })
	if d.hold.refused.Load() {
		t.Fatal("the hold is taken back but still marked refused")
	}
	if err := write("five"); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); got != "five" || !mark() {
		t.Fatalf("after the hold came back, lookup = %q, or its answer was not kept", got)
	}
	if err := d.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}

// Processes that share a PostgreSQL database each hold it shared; one of them keeps another from
// holding it alone, and a database in another schema is held apart.
func TestPostgresSharedHoldsKeepOutOneAlone(t *testing.T) {
	ctx := context.Background()
	schemaURL, _ := heldSchema(t)
	var open []*DB
	defer func() {
		for _, d := range open {
			d.Close()
		}
	}()
	for range 2 {
		d, err := Open(ctx, Options{URL: schemaURL})
		if err != nil {
			t.Fatal(err)
		}
		if d.answers != nil {
			t.Fatal("a PostgreSQL database opened shared has an answer cache")
		}
		open = append(open, d)
	}
	if d, err := Open(ctx, Options{URL: schemaURL, PostgresAlone: true}); !errors.Is(err, ErrHeldElsewhere) {
		if d != nil {
			d.Close()
		}
		t.Fatalf("a database two processes share was held alone: %v", err)
	}
	otherURL, _ := heldSchema(t)
	d, err := Open(ctx, Options{URL: otherURL, PostgresAlone: true})
	if err != nil {
		t.Fatalf("a database in another schema could not be held alone: %v", err)
	}
	open = append(open, d)
	for _, d := range open[:2] {
		d.Close()
	}
	open = open[2:]
	d, err = Open(ctx, Options{URL: schemaURL, PostgresAlone: true})
	if err != nil {
		t.Fatalf("after the others closed, the database could not be held alone: %v", err)
	}
	open = append(open, d)
}

func schemaName(t *testing.T, schemaURL string) string {
	t.Helper()
	u, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}
