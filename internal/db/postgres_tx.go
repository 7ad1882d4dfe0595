package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// inPgTx runs fn in a transaction of its own on a connection of the PostgreSQL pool, which it
// drives with BEGIN, COMMIT and ROLLBACK statements of its own instead of a *sql.Tx, so that the
// audit record and the COMMIT go in one message: one round trip fewer per audited write, and
// row locks taken by fn (a case, a team's policy count) are held for one round trip less.
//
// The record's INSERT and the COMMIT are sent as one simple-protocol query, the arguments
// quoted by pgx (which requires standard_conforming_strings, PostgreSQL's default); PostgreSQL
// runs the COMMIT only when the INSERT succeeded. Any failure is followed by a ROLLBACK; a
// connection whose transaction could not be ended is discarded by the pool (pgx's stdlib refuses
// to hand out a connection in a transaction).
func (d *DB) inPgTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	conn, err := d.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	rollback := func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`) }
	tx := &Tx{q: conn, Now: d.Now(), Engine: d.Engine, newID: d.newID}
	tx.startAudit(ctx)
	defer func() {
		if p := recover(); p != nil {
			rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		rollback()
		return err
	}
	for _, before := range tx.beforeCommit {
		if err := before(); err != nil {
			rollback()
			return err
		}
	}
	if err := commitWithAudit(ctx, conn, tx); err != nil {
		rollback()
		return err
	}
	return nil
}

// commitWithAudit commits the transaction on conn, with its audit record in the same message when
// it has one. A COMMIT that PostgreSQL answers with ROLLBACK (a statement of the transaction
// failed and fn went on) is an error: nothing was committed.
func commitWithAudit(ctx context.Context, conn *sql.Conn, tx *Tx) error {
	args, err := tx.auditArgs()
	if err != nil {
		return err
	}
	query := `COMMIT`
	if args != nil {
		query = auditInsert + `; COMMIT`
		args = append([]any{pgx.QueryExecModeSimpleProtocol}, args...)
	}
	err = conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", driverConn)
		}
		tag, err := pc.Conn().Exec(ctx, query, args...)
		if err == nil && tag.String() != "COMMIT" {
			err = errors.New("the transaction was rolled back by the database")
		}
		return err
	})
	if err != nil {
		return &commitError{err}
	}
	return nil
}

// commitError is a failure of the COMMIT message itself, after which the transaction may or may
// not have been committed: it is never run again (see inTxRetried).
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }
