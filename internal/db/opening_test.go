package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// openingKind says what the i-th transaction of TestInTxOpeningInABatch does. They queue about
// in their order, and an opening runs ahead only after a member that did not fail: one whose
// context ends as its opening is built follows one that succeeds.
func openingKind(i int) string {
	switch i % 6 {
	case 1:
		return "cancelled-in-opening" // its context ends as its opening is built
	case 2:
		return "no-row" // its opening updates no row
	case 3:
		return "opening-fails" // its opening breaks a uniqueness rule
	case 4:
		return "fails-after" // its opening counts, then it returns an error
	default:
		return "succeeds"
	}
}

// TestInTxOpeningInABatch queues 48 transactions whose first statement is an opening behind a
// held writer, so that they share batches, where on PostgreSQL each one's opening runs in the
// message that ends the member before it. Each opening counts on one counter and returns the
// count. The ones that fail (their opening finds no row, breaks a rule, or they fail after it)
// leave nothing and get their own error, and the transactions after them are not disturbed; a
// transaction whose context ends once its opening was built still runs to its end. The counts
// the others saw are 1 to their number, each once, each transaction's time is the one its opening
// was built with, and on PostgreSQL openings did run ahead.
func TestInTxOpeningInABatch(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		const n = 48
		ctx := context.Background()
		exec(t, d, `INSERT INTO gc_rows (id, at) VALUES ('taken', 0)`)
		before := d.GroupCommitStats()
		counts := make([]int, n)
		errs, heldErr := queueBehindHeldWriter(t, d, n, func(i int) error {
			kind := openingKind(i)
			txCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			var built time.Time
			opening := func(now time.Time) (string, []any) {
				built = now
				switch kind {
				case "no-row":
					return `UPDATE gc_counter SET n = n + 1 WHERE id = $1 RETURNING n`, []any{2}
				case "opening-fails":
					return `INSERT INTO gc_rows (id, at) VALUES ($1, 0) RETURNING at`, []any{"taken"}
				case "cancelled-in-opening":
					cancel()
				}
				return `UPDATE gc_counter SET n = n + 1 WHERE id = $1 RETURNING n`, []any{1}
			}
			return d.InTxOpening(txCtx, opening, func(tx *db.Tx, first db.Row) error {
				if !tx.Now.Equal(built) {
					return fmt.Errorf("the transaction's time %v is not its opening's %v", tx.Now, built)
				}
				var count int
				if err := first.Scan(&count); err != nil {
					return err
				}
				counts[i] = count
				if kind == "fails-after" {
					return errors.New("refused after its opening")
				}
				_, err := tx.ExecContext(txCtx, `INSERT INTO gc_rows (id, at) VALUES ($1, $2)`, fmt.Sprint("row-", i), count)
				return err
			})
		})
		if heldErr != nil {
			t.Fatalf("held transaction: %v", heldErr)
		}

		ids := rowIDs(t, d)
		seen := map[int]bool{}
		succeeded := 0
		for i, err := range errs {
			kind, id := openingKind(i), fmt.Sprint("row-", i)
			var wrong bool
			switch kind {
			case "succeeds", "cancelled-in-opening":
				wrong = err != nil || !ids[id] || seen[counts[i]]
				seen[counts[i]] = true
				succeeded++
			case "no-row":
				wrong = !errors.Is(err, sql.ErrNoRows) || ids[id]
			case "opening-fails":
				wrong = !db.IsConflict(err) || ids[id]
			case "fails-after":
				wrong = err == nil || err.Error() != "refused after its opening" || ids[id]
			}
			if wrong {
				t.Errorf("transaction %d (%s): error %v, its row there: %v, count %d", i, kind, err, ids[id], counts[i])
			}
		}
		for c := 1; c <= succeeded; c++ {
			if !seen[c] {
				t.Errorf("no transaction that succeeded saw count %d (%d succeeded)", c, succeeded)
			}
		}
		if got := counter(t, d); got != succeeded {
			t.Errorf("counter = %d, want %d (one per transaction that succeeded)", got, succeeded)
		}
		if ahead := d.GroupCommitStats().OpeningsAhead - before.OpeningsAhead; d.Engine == db.Postgres && ahead < n/4 {
			t.Errorf("%d openings of %d ran in the message of the member before them, want at least %d", ahead, n, n/4)
		}
	})
}
