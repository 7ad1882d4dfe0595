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

// inTxRetried is InTx on PostgreSQL: fn in a transaction of its own, run again (up to pgAttempts
// in all, further apart each time, see pgRetryDelay) when PostgreSQL rolls it back for a deadlock
// (40P01) or a serialization failure (40001), which are outcomes of timing between concurrent
// transactions (of this replica or another), not of the request. fn may therefore run more than
// once: it must set, not accumulate, what it hands out of the transaction.
//
// It is also run again, once, when the connection failed before the COMMIT was sent (PostgreSQL
// closed it: a restart, a terminated backend, a connection reset): nothing of the transaction
// was committed, and the pool hands the second try another connection (see discardClosedConn),
// so that a PostgreSQL restart between two requests is not seen by the second. A failure of the
// COMMIT itself is never tried again: the transaction may have been committed.
func (d *DB) inTxRetried(ctx context.Context, fn func(tx *Tx) error) error {
	retriedLost := false
	for attempt := 1; ; attempt++ {
		err := d.inPgTx(ctx, fn)
		if err != nil && !retriedLost && lostBeforeCommit(err) && ctx.Err() == nil {
			retriedLost = true
			attempt--
			continue
		}
		if err == nil || attempt == pgAttempts || !rolledBackForTiming(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * (pgRetryDelay + rand.N(pgRetryDelay))):
		}
	}
}

// lostBeforeCommit says whether err is the connection failing (FaultUnavailable) before the
// transaction's COMMIT was sent.
func lostBeforeCommit(err error) bool {
	var commit *commitError
	return FaultOf(err) == FaultUnavailable && !errors.As(err, &commit)
}

// rolledBackForTiming says whether err is PostgreSQL's deadlock or serialization failure.
func rolledBackForTiming(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
