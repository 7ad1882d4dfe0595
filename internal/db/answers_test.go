package db

import (
	"context"
	"database/sql/driver"
	"testing"
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
// shared, and PostgreSQL.
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
