package db

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgAttempts is how many times a PostgreSQL write transaction is tried when PostgreSQL rolls it
// back for a deadlock or a serialization failure.
const pgAttempts = 4

// pgRetryDelay is the base of the wait before running a transaction again: attempt n waits n
// times a random duration between it and twice it. A transaction run again at once can lock its
// first row before the transaction that won the deadlock takes it, and deadlock with it again
// (seen on the loaded 2-core machine with a 1 ms wait).
const pgRetryDelay = 5 * time.Millisecond

// inTxRetried is InTx on PostgreSQL: fn in a member of a batch (see groupCommitter), run again
// when the outcome was a matter of timing, not of the request:
//   - PostgreSQL rolled it back for a deadlock (40P01) or a serialization failure (40001), outcomes
//     of timing between concurrent transactions (of this replica or another): up to pgAttempts in
//     all, further apart each time (see pgRetryDelay);
//   - the connection failed after BEGIN and before the COMMIT was sent (PostgreSQL closed it: a
//     restart, a terminated backend, a reset): once. Nothing of the transaction was committed,
//     and the writer begins the next batch on another connection (see groupCommitter.begin),
//     which waits for PostgreSQL to accept connections again (see patientConnector). A BEGIN
//     that fails has had its second try there already.
//
// A failure of the COMMIT itself is never run again: the transaction may have been committed. fn
// may therefore run more than once: it must set, not accumulate, what it hands out of the
// transaction.
func (d *DB) inTxRetried(ctx context.Context, opening Opening, fn func(tx *Tx) error) error {
	timingAttempts, retriedLost := 1, false
	for {
		err := d.inTxOnce(ctx, opening, fn)
		switch {
		case err == nil || ctx.Err() != nil:
			return err
		case lostBeforeCommit(err) && !retriedLost:
			retriedLost = true
		case rolledBackForTiming(err) && timingAttempts < pgAttempts:
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(timingAttempts) * (pgRetryDelay + rand.N(pgRetryDelay))):
			}
			timingAttempts++
		default:
			return err
		}
	}
}

// lostBeforeCommit says whether err is the connection failing (FaultUnavailable) after the
// batch's BEGIN and before its COMMIT was sent. A BEGIN that failed is not: the writer already
// tried it again on a fresh connection (see groupCommitter.begin).
func lostBeforeCommit(err error) bool {
	var commit *commitError
	var begin *beginError
	return FaultOf(err) == FaultUnavailable && !errors.As(err, &commit) && !errors.As(err, &begin)
}

// rolledBackForTiming says whether err is PostgreSQL's deadlock or serialization failure.
func rolledBackForTiming(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
