package db

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgAttempts is how many times a PostgreSQL write transaction is tried when PostgreSQL rolls it
// back for a deadlock or a serialization failure.
const pgAttempts = 3

// inTxRetried is InTx on PostgreSQL: fn in a transaction of its own, run again (up to pgAttempts
// in all, a millisecond more apart each time) when PostgreSQL rolls it back for a deadlock
// (40P01) or a serialization failure (40001), which are outcomes of timing between concurrent
// transactions (of this replica or another), not of the request. fn may therefore run more than
// once: it must set, not accumulate, what it hands out of the transaction.
func (d *DB) inTxRetried(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := d.inOwnTx(ctx, fn)
		if err == nil || attempt == pgAttempts || !rolledBackForTiming(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// rolledBackForTiming says whether err is PostgreSQL's deadlock or serialization failure.
func rolledBackForTiming(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
