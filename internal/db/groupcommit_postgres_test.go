package db_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

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

// holdCommitters holds every PostgreSQL committer of d in a batch of its own (rows holder-0,
// holder-1, …), so that the transactions started meanwhile queue; release lets the held batches
// commit and returns their answers.
func holdCommitters(t *testing.T, d *db.DB) (release func() []error) {
	t.Helper()
	n := db.Committers(d)
	if n == 0 {
		t.Skip("no group commit on this PostgreSQL database")
	}
	gate := make(chan struct{})
	answers := make([]chan error, n)
	for i := range n {
		running := make(chan struct{})
		var started sync.Once
		answers[i] = make(chan error, 1)
		go func() {
			answers[i] <- d.InTx(context.Background(), func(tx *db.Tx) error {
				// A batch that runs its members again alone runs this again.
				started.Do(func() { close(running) })
				<-gate
				_, err := tx.ExecContext(context.Background(), `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("holder-", i))
				return err
			})
		}()
		<-running
	}
	return func() []error {
		close(gate)
		errs := make([]error, n)
		for i := range n {
			errs[i] = <-answers[i]
		}
		return errs
	}
}

// TestPostgresGroupCommitMixedBatch queues 40 transactions behind the held committers, so that
// they run in shared batches: the ones that fail (an error, a broken uniqueness rule, which
// aborts PostgreSQL's transaction until the savepoint is rolled back) leave nothing and get their
// own error; the others commit, fewer commits than transactions.
func TestPostgresGroupCommitMixedBatch(t *testing.T) {
	d := open(t, db.Options{URL: postgresURL(t)})
	db.EnablePgGroupCommit(d, 1)
	ctx := context.Background()
	release := holdCommitters(t, d)
	before := d.GroupCommitStats()
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("row-", i)
			errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `UPDATE gc_counter SET n = n + 1 WHERE id = 1`); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return errors.New("refused")
				case 2:
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id)
					return db.Translate(err)
				}
				return nil
			})
		}()
	}
	whenQueued(t, n)
	for i, err := range release() {
		if err != nil {
			t.Errorf("held transaction %d: %v", i, err)
		}
	}
	wg.Wait()
	ids := rowIDs(t, d)
	succeeded := 0
	for i, err := range errs {
		id := fmt.Sprint("row-", i)
		switch i % 4 {
		case 1, 2:
			want := map[int]string{1: "refused", 2: "conflict"}[i%4]
			if err == nil || !strings.Contains(err.Error(), want) || ids[id] {
				t.Errorf("transaction %d: got %v (row present %v), want %q and no row", i, err, ids[id], want)
			}
		default:
			if err != nil || !ids[id] {
				t.Errorf("transaction %d: got %v (row present %v), want success and its row", i, err, ids[id])
			}
			succeeded++
		}
	}
	if got := counter(t, d); got != succeeded {
		t.Errorf("counter = %d, want %d", got, succeeded)
	}
	stats := d.GroupCommitStats()
	commits, txs := stats.Commits-before.Commits, stats.Transactions-before.Transactions
	t.Logf("%d transactions in %d commits", txs, commits)
	if want := int64(succeeded + db.Committers(d)); txs != want || commits*2 > txs {
		t.Errorf("%d commits for %d transactions, want %d transactions, at least two per commit", commits, txs, want)
	}
	exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
}

// TestPostgresGroupCommitRefusedCommitRunsMembersAlone makes PostgreSQL refuse a batch's COMMIT:
// one member breaks a deferred foreign key, checked only at COMMIT. Every member runs again
// alone: the offender gets its own error, the others commit.
func TestPostgresGroupCommitRefusedCommitRunsMembersAlone(t *testing.T) {
	d := open(t, db.Options{URL: postgresURL(t)})
	db.EnablePgGroupCommit(d, 1)
	ctx := context.Background()
	exec(t, d, `CREATE TABLE gc_parent (id TEXT PRIMARY KEY)`)
	exec(t, d, `CREATE TABLE gc_child (id TEXT PRIMARY KEY,
		parent_id TEXT REFERENCES gc_parent (id) DEFERRABLE INITIALLY DEFERRED)`)
	release := holdCommitters(t, d)
	const n, offender = 8, 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.InTx(ctx, func(tx *db.Tx) error {
				if i == offender {
					_, err := tx.ExecContext(ctx, `INSERT INTO gc_child (id, parent_id) VALUES ('orphan', 'missing')`)
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i))
				return err
			})
		}()
	}
	whenQueued(t, n)
	for i, err := range release() {
		if err != nil {
			t.Errorf("held transaction %d: %v", i, err)
		}
	}
	wg.Wait()
	var pgErr *pgconn.PgError
	if err := errs[offender]; !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Errorf("offender: got %v, want its foreign key violation (23503)", err)
	}
	ids := rowIDs(t, d)
	for i, err := range errs {
		if i != offender && (err != nil || !ids[fmt.Sprint("row-", i)]) {
			t.Errorf("transaction %d: got %v (row present %v), want success and its row", i, err, ids[fmt.Sprint("row-", i)])
		}
	}
}

// TestPostgresGroupCommitDeadlockAcrossReplicas has two replicas (two DBs on one schema) each run
// a transaction that locks one row, waits until the other locked the other row, then locks the
// other's row: a deadlock, between two batches with group commit. Both answer success (the one
// PostgreSQL or the batch's lock timeout picks runs again, alone) and both increments are there.
func TestPostgresGroupCommitDeadlockAcrossReplicas(t *testing.T) {
	for _, committers := range []int{0, 2} {
		t.Run(fmt.Sprint("committers=", committers), func(t *testing.T) { deadlockAcrossReplicas(t, committers) })
	}
}

func deadlockAcrossReplicas(t *testing.T, committers int) {
	url := postgresURL(t)
	a := open(t, db.Options{URL: url})
	b, err := db.Open(context.Background(), db.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if committers > 0 {
		db.EnablePgGroupCommit(a, committers)
		db.EnablePgGroupCommit(b, committers)
	}
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

// TestPostgresGroupCommitSerializeHoldsToTheBatchCommit checks that Serialize keeps a limit
// across two replicas while their transactions ride in batches: 64 transactions split between
// the replicas each insert a row only while fewer than 20 exist, under the same Serialize key.
func TestPostgresGroupCommitSerializeHoldsToTheBatchCommit(t *testing.T) {
	url := postgresURL(t)
	a := open(t, db.Options{URL: url})
	b, err := db.Open(context.Background(), db.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	db.EnablePgGroupCommit(a, 2)
	db.EnablePgGroupCommit(b, 2)
	ctx := context.Background()
	const n, limit = 64, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for i := range n {
		d := a
		if i%2 == 1 {
			d = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			full := errors.New("full")
			err := d.InTx(ctx, func(tx *db.Tx) error {
				if err := tx.Serialize(ctx, "gc_rows"); err != nil {
					return err
				}
				var count int
				if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM gc_rows`).Scan(&count); err != nil {
					return err
				}
				if count >= limit {
					return full
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, fmt.Sprint("row-", i))
				return err
			})
			switch {
			case err == nil:
				mu.Lock()
				accepted++
				mu.Unlock()
			case !errors.Is(err, full):
				t.Errorf("transaction %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if got := len(rowIDs(t, a)); got != limit || accepted != limit {
		t.Errorf("rows = %d, accepted = %d, want %d each", got, accepted, limit)
	}
}
