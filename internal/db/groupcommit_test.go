package db_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// engines runs fn on a fresh SQLite database and, when MGMTAPI_TEST_DATABASE_URL is set, on a
// fresh PostgreSQL schema.
func engines(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, open(t, db.Options{DataDir: t.TempDir()})) })
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		t.Run("postgres", func(t *testing.T) { fn(t, open(t, db.Options{URL: apitest.FreshSchema(t)})) })
	}
}

func open(t *testing.T, opts db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	exec(t, d, `CREATE TABLE gc_rows (id TEXT PRIMARY KEY, at BIGINT NOT NULL)`)
	exec(t, d, `CREATE TABLE gc_counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`)
	exec(t, d, `INSERT INTO gc_counter (id, n) VALUES (1, 0)`)
	return d
}

func exec(t *testing.T, d *db.DB, query string) {
	t.Helper()
	if err := d.InTx(context.Background(), func(tx *db.Tx) error {
		_, err := tx.ExecContext(context.Background(), query)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func rowIDs(t *testing.T, d *db.DB) map[string]bool {
	t.Helper()
	rows, err := d.Read().QueryContext(context.Background(), `SELECT id FROM gc_rows`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func counter(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	if err := d.Read().QueryRowContext(context.Background(), `SELECT n FROM gc_counter WHERE id = 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// holdWriter is apitest.HoldWriter with a held transaction that writes row "holder".
func holdWriter(t *testing.T, d *db.DB) (release func(), answer <-chan error) {
	t.Helper()
	return apitest.HoldWriter(t, d, func(tx *db.Tx) error {
		_, err := tx.ExecContext(context.Background(), `INSERT INTO gc_rows (id, at) VALUES ('holder', 0)`)
		return err
	})
}

// queueBehindHeldWriter runs call(i) for i from 0 to n-1, each on its own goroutine, while
// holdWriter holds the writer, and releases it once all n wait for their turn: their transactions
// then share the batches that follow the held one. It returns each call's error and the held
// transaction's.
func queueBehindHeldWriter(t *testing.T, d *db.DB, n int, call func(i int) error) (errs []error, heldErr error) {
	t.Helper()
	release, held := holdWriter(t, d)
	errs = make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = call(i)
		}()
	}
	apitest.WhenQueued(t, n)
	release()
	heldErr = <-held
	wg.Wait()
	return errs, heldErr
}

// kind says what the i-th transaction of the mixed batch does.
func kind(i int) string {
	switch i % 6 {
	case 1:
		return "fails" // writes, then returns an error
	case 3:
		return "conflicts" // writes, then breaks a uniqueness rule and returns that error
	case 4:
		return "before-commit-fails" // writes; its BeforeCommit work fails
	case 5:
		return "cancelled-while-running" // its context is cancelled after it started
	default:
		return "succeeds"
	}
}

// TestGroupCommitKeepsTheGoodAndDropsTheFailed runs 64 concurrent write transactions, a third of
// which fail in different ways after writing, each doing a read-modify-write of one counter and
// inserting its own row. The failed ones leave nothing, the others everything, and the counter
// equals the number that succeeded (each saw the ones before it). On SQLite the transactions
// queued behind a held writer share one commit, and one whose context is cancelled after it
// started still commits.
func TestGroupCommitKeepsTheGoodAndDropsTheFailed(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		const n = 64
		ctx := context.Background()
		before := d.GroupCommitStats()
		errs, heldErr := queueBehindHeldWriter(t, d, n, func(i int) error {
			id := fmt.Sprint("row-", i)
			txCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			return d.InTx(txCtx, func(tx *db.Tx) error {
				if err := tx.Serialize(txCtx, "gc_counter"); err != nil {
					return err
				}
				var c int
				if err := tx.QueryRowContext(txCtx, `SELECT n FROM gc_counter WHERE id = 1`).Scan(&c); err != nil {
					return err
				}
				if _, err := tx.ExecContext(txCtx, `UPDATE gc_counter SET n = $1 WHERE id = 1`, c+1); err != nil {
					return err
				}
				if kind(i) == "cancelled-while-running" {
					cancel()
				}
				if _, err := tx.ExecContext(txCtx, `INSERT INTO gc_rows (id, at) VALUES ($1, $2)`, id, tx.Now.UnixMicro()); err != nil {
					return err
				}
				switch kind(i) {
				case "fails":
					return errors.New("refused")
				case "conflicts":
					_, err := tx.ExecContext(txCtx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id)
					return db.Translate(err)
				case "before-commit-fails":
					tx.BeforeCommit(func() error {
						_, err := tx.ExecContext(txCtx, `UPDATE gc_counter SET n = n + 100 WHERE id = 1`)
						return errors.Join(err, errors.New("late refusal"))
					})
				}
				return nil
			})
		})
		if heldErr != nil {
			t.Fatalf("held transaction: %v", heldErr)
		}

		ids := rowIDs(t, d)
		succeeded := 0
		for i, err := range errs {
			id := fmt.Sprint("row-", i)
			k := kind(i)
			switch k {
			case "succeeds", "cancelled-while-running":
				if err != nil {
					t.Errorf("transaction %d (%s): %v", i, k, err)
				}
				if !ids[id] {
					t.Errorf("transaction %d (%s) succeeded but its row is missing", i, k)
				}
				succeeded++
			default:
				want := map[string]string{"fails": "refused", "conflicts": "conflict", "before-commit-fails": "late refusal"}[k]
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("transaction %d (%s): got %v, want an error with %q", i, k, err, want)
				}
				if ids[id] {
					t.Errorf("transaction %d (%s) failed but its row is there", i, k)
				}
			}
		}
		if got := counter(t, d); got != succeeded {
			t.Errorf("counter = %d, want %d (one per transaction that succeeded)", got, succeeded)
		}
		stats := d.GroupCommitStats()
		commits, txs := stats.Commits-before.Commits, stats.Transactions-before.Transactions
		// The held transaction and every one queued behind it share the commit (on PostgreSQL
		// up to two: a batch carries at most 63).
		wantCommits := int64(1)
		if d.Engine == db.Postgres {
			wantCommits = 2
		}
		if commits < 1 || commits > wantCommits || txs != int64(succeeded+1) {
			t.Errorf("commits = %d for %d transactions, want 1 to %d for %d", commits, txs, wantCommits, succeeded+1)
		}
	})
}

// TestGroupCommitPanicStaysWithItsCaller panics in one transaction of a batch: the panic reaches
// its caller's goroutine, its work is rolled back, and the others of the batch commit.
func TestGroupCommitPanicStaysWithItsCaller(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		release, held := holdWriter(t, d)
		errs := make([]error, 3)
		var recovered any
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 1 {
					defer func() { recovered = recover() }()
				}
				errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i)); err != nil {
						return err
					}
					if i == 1 {
						panic("boom")
					}
					return nil
				})
			}()
		}
		apitest.WhenQueued(t, 3)
		release()
		if err := <-held; err != nil {
			t.Fatalf("held transaction: %v", err)
		}
		wg.Wait()
		if recovered != "boom" {
			t.Errorf("the panicking caller recovered %v, want boom", recovered)
		}
		ids := rowIDs(t, d)
		for _, i := range []int{0, 2} {
			if errs[i] != nil || !ids[fmt.Sprint("row-", i)] {
				t.Errorf("transaction %d: err %v, row present %v; want committed", i, errs[i], ids[fmt.Sprint("row-", i)])
			}
		}
		if ids["row-1"] {
			t.Error("the panicking transaction's row is there")
		}
		// The writer goes on after the panic.
		exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
	})
}

// TestGroupCommitGoexitEndsOnlyItsCaller has one transaction of a batch call runtime.Goexit, as a
// test's t.FailNow does. On SQLite the writer runs the members' functions on its own goroutine:
// the caller's goroutine ends (its deferred calls run), the member's row is not kept, the other
// members of the batch are answered (on SQLite with an error, since the writer's goroutine ended
// in their batch; on PostgreSQL they commit), and later transactions commit.
func TestGroupCommitGoexitEndsOnlyItsCaller(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		release, held := holdWriter(t, d)
		errs := make([]error, 3)
		answered := make([]bool, 3)
		exited := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 1 {
					defer close(exited)
				}
				errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i)); err != nil {
						return err
					}
					if i == 1 {
						runtime.Goexit()
					}
					return nil
				})
				answered[i] = true
			}()
		}
		apitest.WhenQueued(t, 3)
		release()
		if err := <-held; err != nil && d.Engine == db.Postgres {
			t.Fatalf("held transaction: %v", err)
		}
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Fatal("the caller that called runtime.Goexit did not end")
		}
		wg.Wait()
		if answered[1] {
			t.Error("InTx returned to the caller that called runtime.Goexit")
		}
		ids := rowIDs(t, d)
		if ids["row-1"] {
			t.Error("the exited transaction's row is there")
		}
		for _, i := range []int{0, 2} {
			if !answered[i] {
				t.Errorf("transaction %d was not answered", i)
			}
			if committed := errs[i] == nil; committed != ids[fmt.Sprint("row-", i)] {
				t.Errorf("transaction %d: err %v, row present %v", i, errs[i], ids[fmt.Sprint("row-", i)])
			}
		}
		// The writer goes on.
		exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
		if !rowIDs(t, d)["after"] {
			t.Error("the transaction after the exit did not commit")
		}
	})
}

// TestGroupCommitFailedCommitFailsTheBatch makes the COMMIT of a batch fail: one member breaks a
// deferred foreign key, which SQLite checks only at COMMIT. Every member of the batch gets an
// error and none of their work remains; the next transaction commits normally.
func TestGroupCommitFailedCommitFailsTheBatch(t *testing.T) {
	engines(t, testFailedCommitFailsTheBatch)
}

func testFailedCommitFailsTheBatch(t *testing.T, d *db.DB) {
	ctx := context.Background()
	exec(t, d, `CREATE TABLE gc_parent (id TEXT PRIMARY KEY)`)
	exec(t, d, `CREATE TABLE gc_child (id TEXT PRIMARY KEY,
		parent_id TEXT REFERENCES gc_parent (id) DEFERRABLE INITIALLY DEFERRED)`)
	release, held := holdWriter(t, d)
	before := d.GroupCommitStats()
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
				if i == n/2 {
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_child (id, parent_id) VALUES ('orphan', 'missing')`)
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i))
				return err
			})
		}()
	}
	apitest.WhenQueued(t, n)
	release()
	heldErr := <-held
	wg.Wait()
	for i, err := range append(errs, heldErr) {
		if err == nil || !strings.Contains(err.Error(), "commit") {
			t.Errorf("transaction %d: got %v, want a commit error", i, err)
		}
	}
	if ids := rowIDs(t, d); len(ids) != 0 {
		t.Errorf("rows after a failed commit: %v, want none", ids)
	}
	if after := d.GroupCommitStats(); after.Commits != before.Commits || after.Transactions != before.Transactions {
		t.Errorf("stats moved from %+v to %+v after a failed commit", before, after)
	}
	exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
	if ids := rowIDs(t, d); !ids["after"] {
		t.Error("the transaction after the failed commit is missing")
	}
}

// TestGroupCommitCancelledWhileWaiting cancels a transaction that waits for its turn: InTx
// answers the cancellation and fn never runs; the transactions around it commit.
func TestGroupCommitCancelledWhileWaiting(t *testing.T) {
	engines(t, testCancelledWhileWaiting)
}

func testCancelledWhileWaiting(t *testing.T, d *db.DB) {
	ctx := context.Background()
	release, held := holdWriter(t, d)
	waitCtx, cancel := context.WithCancel(ctx)
	ran := atomic.Bool{}
	answer := make(chan error, 1)
	go func() {
		answer <- d.InTx(waitCtx, func(tx *db.Tx) error {
			ran.Store(true)
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ('cancelled', 0)`)
			return err
		})
	}()
	apitest.WhenQueued(t, 1)
	cancel()
	if err := <-answer; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled transaction: got %v, want context.Canceled", err)
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("held transaction: %v", err)
	}
	if ran.Load() {
		t.Error("the cancelled transaction's function ran")
	}
	if ids := rowIDs(t, d); ids["cancelled"] || !ids["holder"] {
		t.Errorf("rows %v, want holder and not cancelled", ids)
	}
}

// TestGroupCommitBatchesConcurrentWriters has 64 goroutines write 20 transactions each and checks
// that commits carried several transactions each and that every row is there.
func TestGroupCommitBatchesConcurrentWriters(t *testing.T) {
	engines(t, testBatchesConcurrentWriters)
}

func testBatchesConcurrentWriters(t *testing.T, d *db.DB) {
	ctx := context.Background()
	before := d.GroupCommitStats()
	const writers, each = 64, 20
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := d.InTx(ctx, func(tx *db.Tx) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, $2)`, fmt.Sprint(w, "-", i), tx.Now.UnixMicro())
					return err
				}); err != nil {
					failed.Add(1)
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	stats := d.GroupCommitStats()
	commits, txs := stats.Commits-before.Commits, stats.Transactions-before.Transactions
	t.Logf("%d transactions in %d commits (%.1f per commit)", txs, commits, float64(txs)/float64(commits))
	if txs != writers*each {
		t.Errorf("transactions = %d, want %d", txs, writers*each)
	}
	if commits*2 > txs {
		t.Errorf("%d commits for %d transactions: want at least two transactions per commit on average", commits, txs)
	}
	if got := len(rowIDs(t, d)); got != writers*each {
		t.Errorf("rows = %d, want %d", got, writers*each)
	}
}

// TestGroupCommitTransactionRolledBackByTheDatabase has one member of a batch fire a trigger
// that makes SQLite roll back the whole transaction (RAISE(ROLLBACK)), as it does by itself on a
// full disk or an I/O error. That member gets its own error; the members that ran before it in
// the batch lost their work and get a commit error; the ones after it commit in a new batch.
func TestGroupCommitTransactionRolledBackByTheDatabase(t *testing.T) {
	ctx := context.Background()
	d := open(t, db.Options{DataDir: t.TempDir()})
	exec(t, d, `CREATE TABLE gc_doomed (id TEXT PRIMARY KEY)`)
	exec(t, d, `CREATE TRIGGER gc_doom BEFORE INSERT ON gc_doomed BEGIN SELECT RAISE(ROLLBACK, 'doomed'); END`)
	release, held := holdWriter(t, d)
	const n, doomed = 8, 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
				if i == doomed {
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_doomed (id) VALUES ('x')`)
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i))
				return err
			})
		}()
	}
	apitest.WhenQueued(t, n)
	release()
	heldErr := <-held
	wg.Wait()
	t.Logf("held: %v; others: %v", heldErr, errs)
	ids := rowIDs(t, d)
	if heldErr == nil || !strings.Contains(heldErr.Error(), "commit") || ids["holder"] {
		t.Errorf("held transaction, first of the batch: got %v (row present %v), want a commit error and no row", heldErr, ids["holder"])
	}
	if err := errs[doomed]; err == nil || !strings.Contains(err.Error(), "doomed") {
		t.Errorf("doomed transaction: got %v, want its own error", err)
	}
	for i, err := range errs {
		if i == doomed {
			continue
		}
		id := fmt.Sprint("row-", i)
		switch {
		case err == nil && !ids[id]:
			t.Errorf("transaction %d succeeded but its row is missing", i)
		case err != nil && (ids[id] || !strings.Contains(err.Error(), "commit")):
			t.Errorf("transaction %d: got %v (row present %v), want success or a commit error and no row", i, err, ids[id])
		}
	}
	exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
}

// TestExecAtEndRunsLastAndFailsItsOwnTransaction queues statements with ExecAtEnd in the members
// of one batch: they run after fn and its BeforeCommit work (a queued insert is not there while
// fn runs), and one that fails (a duplicate id) fails its own transaction only, with the error
// named by what it does and nothing of that transaction left; the others of the batch commit.
func TestExecAtEndRunsLastAndFailsItsOwnTransaction(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('taken', 0)`)
		release, held := holdWriter(t, d)
		const n = 6
		errs := make([]error, n)
		seenEarly := make([]bool, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = d.InTx(auditContext(fmt.Sprint("at-end-", i)), func(tx *db.Tx) error {
					id := fmt.Sprint("queued-", i)
					if i == 3 {
						id = "taken"
					}
					tx.ExecAtEnd("queue the row", `INSERT INTO gc_rows (id, at) VALUES ($1, 1)`, id)
					tx.BeforeCommit(func() error {
						var c int
						err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM gc_rows WHERE id = $1`, id).Scan(&c)
						seenEarly[i] = c > 0 && id != "taken"
						return err
					})
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("direct-", i))
					return err
				})
			}()
		}
		apitest.WhenQueued(t, n)
		release()
		if err := <-held; err != nil {
			t.Fatalf("held transaction: %v", err)
		}
		wg.Wait()
		ids := rowIDs(t, d)
		records := auditRows(t, d)
		for i, err := range errs {
			if seenEarly[i] {
				t.Errorf("transaction %d: its queued row was there before the end", i)
			}
			direct, queued, recorded := ids[fmt.Sprint("direct-", i)], ids[fmt.Sprint("queued-", i)], records[fmt.Sprint("at-end-", i)] != nil
			if i == 3 {
				if err == nil || !strings.Contains(err.Error(), "queue the row") || db.Translate(err) == nil {
					t.Errorf("transaction %d: got %v, want the queued statement's error", i, err)
				}
				if direct || recorded {
					t.Errorf("transaction %d failed but left its row (%v) or its audit record (%v)", i, direct, recorded)
				}
				continue
			}
			if err != nil || !direct || !queued || !recorded {
				t.Errorf("transaction %d: error %v, direct row %v, queued row %v, record %v; want all", i, err, direct, queued, recorded)
			}
		}
	})
}

// TestLazyCommitsNeverCarryAWriteThatWaitsForTheDisk has lazy and ordinary writers commit at once
// on SQLite, and each reads, inside its own transaction, the synchronous level its COMMIT will
// run at: FULL (2) for every ordinary member, however the batches mix them (a lazy member may
// ride on an ordinary batch's fsync). A lazy transaction alone commits at NORMAL (1, no fsync),
// and the ordinary one after it at FULL again. All of their rows are kept.
func TestLazyCommitsNeverCarryAWriteThatWaitsForTheDisk(t *testing.T) {
	d := open(t, db.Options{DataDir: t.TempDir()})
	level := func(ctx context.Context, id string) (int, error) {
		var level int
		err := d.InTx(ctx, func(tx *db.Tx) error {
			if err := tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, $2)`, id, tx.Now.UnixMicro())
			return err
		})
		return level, err
	}
	const writers, each = 32, 20
	var wg sync.WaitGroup
	var lazyAtNormal atomic.Int64
	for w := range writers {
		lazy := w%2 == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if lazy {
				ctx = db.WithLazyCommit(ctx)
			}
			for i := range each {
				got, err := level(ctx, fmt.Sprint(w, "-", i))
				switch {
				case err != nil:
					t.Error(err)
				case lazy && got == 1:
					lazyAtNormal.Add(1)
				case got != 2:
					t.Errorf("writer %d (lazy %v): its transaction ran at synchronous level %d", w, lazy, got)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d lazy transactions committed without an fsync", lazyAtNormal.Load(), writers/2*each)
	if got := len(rowIDs(t, d)); got != writers*each {
		t.Errorf("rows = %d, want %d", got, writers*each)
	}
	for i, lazy := range []bool{true, false, true, true, false} {
		ctx := context.Background()
		want := 2
		if lazy {
			ctx, want = db.WithLazyCommit(ctx), 1
		}
		if got, err := level(ctx, fmt.Sprint("alone-", i)); err != nil || got != want {
			t.Errorf("transaction %d alone (lazy %v): synchronous level %d (%v), want %d", i, lazy, got, err, want)
		}
	}
}

// TestLazyCommitsKeepEveryRow has lazy and ordinary writers commit at once on both engines (on
// PostgreSQL a batch of lazy members only commits with synchronous_commit off): every
// transaction's row is kept, and a lazy transaction alone is committed when InTx returns.
func TestLazyCommitsKeepEveryRow(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		const writers, each = 16, 10
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				if w%2 == 0 {
					ctx = db.WithLazyCommit(ctx)
				}
				for i := range each {
					if err := d.InTx(ctx, func(tx *db.Tx) error {
						_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, $2)`, fmt.Sprint(w, "-", i), tx.Now.UnixMicro())
						return err
					}); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		lazy := db.WithLazyCommit(context.Background())
		if err := d.InTx(lazy, func(tx *db.Tx) error {
			_, err := tx.ExecContext(lazy, `INSERT INTO gc_rows (id, at) VALUES ('alone', 0)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := len(rowIDs(t, d)); got != writers*each+1 {
			t.Errorf("rows = %d, want %d", got, writers*each+1)
		}
	})
}
