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
func (d *DB) inTxRetried(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := d.inPgTx(ctx, fn)
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

// rolledBackForTiming says whether err is PostgreSQL's deadlock or serialization failure.
func rolledBackForTiming(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
